"""Which APIs a listener serves: the broker's listeners, or the controller's.

Mirrors: org.apache.kafka.common.message.ApiMessageType.ListenerType and ApiKeys.apisForListener
         (clients/src/main/java/org/apache/kafka/common/protocol/ApiKeys.java, Kafka 3.3.0), which
         read each API's ``"listeners"`` from its JSON spec
Book:    beyond the book: chapter 12 (KRaft)
Differs: the table is written here, not generated from the specs' ``"listeners"`` lists, and holds
         only what kafka_lite has: the broker's table stays ``ApiKeys`` as it is, a KRaft broker's
         with DescribeQuorum beside it; the controller's is Raft's RPCs, the controller's RPCs, the
         four admin APIs a KRaft broker forwards and ApiVersions.

In Kafka 3.3 every API's spec says which listeners take it: ``"listeners": ["zkBroker", "broker"]``
for Produce, ``["controller"]`` for Vote, ``["zkBroker", "broker", "controller"]`` for CreateTopics
(a KRaft broker forwards it to the controller, which does the work). A ``SocketServer`` is built for
one ``ListenerType``, and its processors (chapter 2, 2.3.2) parse a request only if its api key is
one of that type's: a Vote sent to a broker's client port is an unknown API there, and a Produce sent
to a controller is one too. The ApiVersions answer of the listener lists exactly the same table (Kafka's
``SimpleApiVersionManager(ListenerType.CONTROLLER)``), so a client learns the truth of what it may
send.

A KRaft broker's listener (``BROKER``) reads the client table and one api key of Raft's:
DescribeQuorum (``"listeners": ["broker", "controller"]``), which the broker forwards to the active
controller. A ZooKeeper broker's (``ZK_BROKER``) reads the client table alone, so a DescribeQuorum
sent to it closes the connection, as a 3.3 ZooKeeper broker's ``SocketServer`` refuses an API its
listener does not enable.

Three tables of schemas meet on the controller's listener, each answering the same questions (which
versions, which schema, which header):

- ``RaftApiKeys`` (raft_messages.py): Fetch v13, Vote, BeginQuorumEpoch, EndQuorumEpoch,
  DescribeQuorum, FetchSnapshot;
- ``ControllerApiKeys`` (controller_messages.py): AlterPartition, Envelope, BrokerRegistration,
  BrokerHeartbeat, UnregisterBroker, AllocateProducerIds;
- ``ApiKeys`` (the client table): ApiVersions, CreateTopics, DeleteTopics, AlterConfigs,
  CreatePartitions, CreateAcls and DeleteAcls at the versions kafka_lite's broker speaks, so that
  a broker can forward a client's request to the controller, inside an Envelope.

``ClientApi`` gives an ``ApiKeys`` member the two header questions the other tables answer
themselves; none of the client table's versions is flexible, so they are the book's headers.
"""

from __future__ import annotations

import enum
from typing import Any

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import ControllerApiKeys
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.protocol.requests import (
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    RequestHeader,
    UnknownApiKeyException,
    client_response_header_version,
    decode_request_body,
    parse_response_header,
    request_header_version,
)
from kafka_lite.common.protocol.types import INT16, Field, Reader, Schema, decode, encode


class ListenerType(enum.Enum):
    """Kafka 3.3's listener types: a ZooKeeper-mode broker's, a KRaft broker's, a controller's."""

    ZK_BROKER = "zkBroker"
    BROKER = "broker"
    CONTROLLER = "controller"


class ClientApi:
    """An API of the client table (``ApiKeys``) as the controller's listener serves it: the same
    schemas and versions, with the header versions the other two tables answer for themselves."""

    def __init__(self, api: ApiKeys) -> None:
        self.api = api

    def __int__(self) -> int:
        return int(self.api)

    def __repr__(self) -> str:
        return f"ClientApi({self.api.api_name})"

    @property
    def api_name(self) -> str:
        return self.api.api_name

    @property
    def oldest_version(self) -> int:
        return self.api.oldest_version

    @property
    def latest_version(self) -> int:
        return self.api.latest_version

    def is_version_supported(self, version: int) -> bool:
        return self.api.is_version_supported(version)

    def request_schema(self, version: int) -> Schema:
        return self.api.request_schema(version)

    def response_schema(self, version: int) -> Schema:
        return self.api.response_schema(version)

    def request_header_version(self, version: int) -> int:
        return request_header_version(self.api, version)

    def response_header_version(self, version: int) -> int:
        return client_response_header_version(self.api, version)


# The client APIs a controller serves (their specs list "controller" among their listeners in Kafka
# 3.3, and kafka_lite has them): ApiVersions, and the admin requests a KRaft broker forwards.
CONTROLLER_CLIENT_APIS = (
    ApiKeys.API_VERSIONS,
    ApiKeys.CREATE_TOPICS,
    ApiKeys.DELETE_TOPICS,
    ApiKeys.ALTER_CONFIGS,
    ApiKeys.CREATE_PARTITIONS,
    ApiKeys.CREATE_ACLS,
    ApiKeys.DELETE_ACLS,
)

# --8<-- [start:controller_table]
CONTROLLER_APIS: dict[int, Any] = {
    **{int(api): api for api in RaftApiKeys},
    **{int(api): api for api in ControllerApiKeys},
    **{int(api): ClientApi(api) for api in CONTROLLER_CLIENT_APIS},
}
# --8<-- [end:controller_table]
if len(CONTROLLER_APIS) != len(RaftApiKeys) + len(ControllerApiKeys) + len(CONTROLLER_CLIENT_APIS):
    raise ValueError("an api key is in two of the controller listener's tables")


# The quorum's APIs a KRaft broker's listener takes too (their specs list "broker" in Kafka 3.3):
# DescribeQuorum, which the broker forwards to the active controller so that an admin tool needs
# only a broker's address. A ZooKeeper broker's listener has no quorum to ask and takes none.
BROKER_QUORUM_APIS: dict[int, RaftApiKeys] = {int(RaftApiKeys.DESCRIBE_QUORUM): RaftApiKeys.DESCRIBE_QUORUM}


def apis_for_listener(listener_type: ListenerType) -> dict[int, Any]:
    """The APIs a listener of this type serves, by api key (Kafka's ``ApiKeys.apisForListener``).
    A broker's listeners serve the whole client table, as kafka_lite's broker always has; a KRaft
    broker's also DescribeQuorum."""
    if listener_type is ListenerType.CONTROLLER:
        return CONTROLLER_APIS
    client_apis = {int(api): api for api in ApiKeys}
    return {**client_apis, **BROKER_QUORUM_APIS} if listener_type is ListenerType.BROKER else client_apis


def listener_api(listener_type: ListenerType, api_key: int) -> Any:
    """The API ``api_key`` names on a listener of this type; an ``UnknownApiKeyException`` if it
    serves no such API."""
    if listener_type is ListenerType.CONTROLLER:
        api = CONTROLLER_APIS.get(api_key)
    else:
        api = ApiKeys.for_id(api_key)
        if api is None and listener_type is ListenerType.BROKER:
            api = BROKER_QUORUM_APIS.get(api_key)
    if api is None:
        raise UnknownApiKeyException(
            f"api key {api_key} is not an API of the {listener_type.value} listener",
            field="api_key",
            position=0,
        )
    return api


# The first four bytes of every request header, read before the header's version is known.
_API_KEY_AND_VERSION = Schema(Field("api_key", INT16), Field("api_version", INT16))


def parse_listener_request_header(
    listener_type: ListenerType, frame: bytes | bytearray | memoryview
) -> tuple[RequestHeader, Any, int]:
    """The header of a request frame on a listener of this type, its API, and where the body
    starts: api key and version (the first four bytes of every header) choose the header version.
    A version the API lacks is left for ``parse_listener_request_body`` to refuse, so that an
    ApiVersions at a version we do not speak can still be answered."""
    first = _API_KEY_AND_VERSION.read(Reader(frame))
    api = listener_api(listener_type, first["api_key"])
    version = first["api_version"]
    header_version = api.request_header_version(version) if api.is_version_supported(version) else 1
    r = Reader(frame)
    value = REQUEST_HEADERS[header_version].read(r)
    header = RequestHeader(
        value["api_key"], value["api_version"], value["correlation_id"], value.get("client_id")
    )
    return header, api, r.pos


def parse_listener_request_body(api: Any, header: RequestHeader, frame, body_start: int) -> dict[str, Any]:
    """The body after ``header``, decoded with its API's schema at its version."""
    return decode_request_body(api, header, frame, body_start)


def encode_listener_request(
    listener_type: ListenerType, header: RequestHeader, body: dict[str, Any]
) -> bytes:
    """A request as a listener of this type reads it, header and body, without the size: what an
    Envelope embeds (a broker forwarding a client's request to a controller)."""
    api = listener_api(listener_type, header.api_key)
    version = header.api_version
    return header.encode(api.request_header_version(version)) + encode(api.request_schema(version), body)


def parse_listener_response(
    listener_type: ListenerType, api_key: int, version: int, frame: bytes | bytearray | memoryview
) -> tuple[int, dict[str, Any]]:
    """Correlation id and body of a response from a listener of this type (an Envelope's embedded
    response)."""
    api = listener_api(listener_type, api_key)
    correlation_id, body_start = parse_response_header(frame, api.response_header_version(version))
    return correlation_id, decode(api.response_schema(version), frame, body_start)


def encode_listener_response(api: Any, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    """Response header (as the API's version calls for) and body, without the size."""
    head = encode(RESPONSE_HEADERS[api.response_header_version(version)], {"correlation_id": correlation_id})
    return head + encode(api.response_schema(version), body)


def api_versions_for_listener(listener_type: ListenerType) -> list[dict[str, int]]:
    """The ``api_versions`` entries of a listener's ApiVersions answer: every API it serves, each
    with the version range read off its schemas (Kafka's ``ApiVersionsResponse.collectApis``)."""
    return [
        {"api_key": key, "min_version": api.oldest_version, "max_version": api.latest_version}
        for key, api in sorted(apis_for_listener(listener_type).items())
    ]


class SimpleApiVersionManager:
    """What a listener answers to ApiVersions: every API of its listener type (Kafka 3.3's
    ``SimpleApiVersionManager(listenerType)``, core/src/main/scala/kafka/server/ApiVersionManager.scala,
    which the controller uses; a broker's is the ``DefaultApiVersionManager``, and kafka_lite's
    broker keeps its own list in ``KafkaApis``)."""

    def __init__(self, listener_type: ListenerType) -> None:
        self.listener_type = listener_type
        self.enabled_apis = apis_for_listener(listener_type)
        self.api_versions = api_versions_for_listener(listener_type)

    def is_api_enabled(self, api_key: int) -> bool:
        return api_key in self.enabled_apis

    def api_versions_response(self, throttle_time_ms: int = 0) -> dict[str, Any]:
        return {"error_code": 0, "api_versions": self.api_versions, "throttle_time_ms": throttle_time_ms}
