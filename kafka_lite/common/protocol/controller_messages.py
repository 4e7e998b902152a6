"""The quorum controller's RPCs, from brokers to the active controller, as schemas in the style of
``raft_messages.py``.

Mirrors: org.apache.kafka.common.message.BrokerRegistrationRequestData, BrokerHeartbeatRequestData,
         UnregisterBrokerRequestData, AlterPartitionRequestData and AllocateProducerIdsRequestData,
         with their responses (generated from clients/src/main/resources/common/message/*.json,
         Kafka 3.3.0); DescribeClusterRequestData v1 from Kafka 3.7
Book:    beyond the book: chapter 12 (KRaft)
Differs: one table of schemas, read and written by ``types.Schema``'s walk, instead of one
         generated class per message; ``ControllerApiKeys`` is an enum of its own rather than
         entries in ``ApiKeys``, for the reason ``raft_messages.py`` gives for ``RaftApiKeys``.

What each RPC does, in the order a broker's life uses them:

- BrokerRegistration (62): a starting broker tells the controller who it is (id, incarnation id,
  cluster id), where it listens and which features it supports; the answer is its broker epoch.
- BrokerHeartbeat (63): then, every ``broker.heartbeat.interval.ms``, it says how far it has
  replayed the metadata log and whether it wants to be fenced or to shut down; the answer says
  whether it is caught up, fenced, and may shut down. A broker whose heartbeats stop for
  ``broker.session.timeout.ms`` is fenced.
- AlterPartition (56): a partition's leader asks to change its ISR (Kafka 2.7's AlterIsr, KIP-497,
  renamed in 3.2), naming the partition epoch it last saw, as chapter 7's leader wrote the ISR
  znode guarded by its version. v1 (KIP-704) adds the leader recovery state; v2 (KIP-841) names
  topics by id instead of by name.
- AllocateProducerIds (67): a broker's transaction coordinator asks for a block of producer ids
  (KIP-730), which the controller records (ProducerIdsRecord) instead of a znode.
- UnregisterBroker (64): an admin removes a broker that will not come back.
- Envelope (58): a client's admin request a broker forwards (KIP-590), with the principal the
  broker authenticated, so that the controller authorizes the client and not the broker.
- DescribeCluster (60), v1: not a broker's but an admin's, asked of a controller directly (Kafka
  3.7's ``--bootstrap-controller``, KIP-919): the cluster id, the active controller and the
  controllers. Kafka 3.3's controllers do not answer it.

All of them are flexible from v0 (compact strings and arrays, tagged fields), so they travel with
request header v2 and response header v1.

The controller's listener serves these and the Raft quorum's RPCs on one socket. ``controller_api``
is the one lookup over both tables, and the encode and parse functions here take either: an api key
of Raft's table is read and written with ``RaftApiKeys``' schemas, one of this table with
``ControllerApiKeys``'.

Field names are the specs' names in snake_case (``CurrentMetadataOffset`` -> ``current_metadata_offset``).
"""

from __future__ import annotations

import enum
from typing import Any

from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.protocol.requests import (
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    RequestHeader,
    SchemaTableApi,
    parse_response_header,
)
from kafka_lite.common.protocol.types import (
    BOOLEAN,
    COMPACT_BYTES,
    COMPACT_NULLABLE_BYTES,
    COMPACT_NULLABLE_STRING,
    COMPACT_STRING,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT16,
    UUID,
    ZERO_UUID,
    CompactArrayOf,
    Field,
    FlexibleSchema,
    Reader,
    Schema,
    SchemaException,
    decode,
    encode,
)
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal

F = Field
FS = FlexibleSchema
CA = CompactArrayOf

THROTTLE_TIME_MS = F("throttle_time_ms", INT32, "How long the response was delayed by a quota (ms).", 0)
ERROR_CODE = F("error_code", INT16, "The error code, or 0 if there was no error.", 0)
BROKER_ID = F("broker_id", INT32, "The id of the requesting broker.", 0)
BROKER_EPOCH = F("broker_epoch", INT64, "The epoch of the requesting broker.", -1)

# --- BrokerRegistration (62), v0 ------------------------------------------------------------------------
BROKER_REGISTRATION_REQUEST_V0 = FS(
    BROKER_ID,
    F("cluster_id", COMPACT_STRING, "The cluster id of the broker process.", ""),
    F("incarnation_id", UUID, "The incarnation id of the broker process (new at every start).", ZERO_UUID),
    F("listeners", CA(FS(
        F("name", COMPACT_STRING, "The name of the endpoint (the listener).", ""),
        F("host", COMPACT_STRING, "The hostname.", ""),
        F("port", UINT16, "The port.", 0),
        F("security_protocol", INT16, "The security protocol's id.", 0),
    )), "The listeners of this broker.", []),
    F("features", CA(FS(
        F("name", COMPACT_STRING, "The feature name.", ""),
        F("min_supported_version", INT16, "The minimum supported feature level.", 0),
        F("max_supported_version", INT16, "The maximum supported feature level.", 0),
    )), "The features on this broker.", []),
    F("rack", COMPACT_NULLABLE_STRING, "The rack which this broker is in.", None),
)  # fmt: skip
BROKER_REGISTRATION_RESPONSE_V0 = FS(
    THROTTLE_TIME_MS,
    ERROR_CODE,
    F("broker_epoch", INT64, "The broker's assigned epoch, or -1 if none was assigned.", -1),
)

# --- BrokerHeartbeat (63), v0 ---------------------------------------------------------------------------
BROKER_HEARTBEAT_REQUEST_V0 = FS(
    BROKER_ID,
    F("broker_epoch", INT64, "The broker epoch.", -1),
    F("current_metadata_offset", INT64, "The highest metadata offset which the broker has reached.", 0),
    F("want_fence", BOOLEAN, "True if the broker wants to be fenced.", False),
    F("want_shut_down", BOOLEAN, "True if the broker wants to be shut down.", False),
)
BROKER_HEARTBEAT_RESPONSE_V0 = FS(
    THROTTLE_TIME_MS,
    ERROR_CODE,
    F(
        "is_caught_up",
        BOOLEAN,
        "True if the broker has approximately caught up with the latest metadata.",
        False,
    ),
    F("is_fenced", BOOLEAN, "True if the broker is fenced.", True),
    F("should_shut_down", BOOLEAN, "True if the broker should proceed with its shutdown.", False),
)

# --- UnregisterBroker (64), v0 --------------------------------------------------------------------------
UNREGISTER_BROKER_REQUEST_V0 = FS(F("broker_id", INT32, "The broker id to unregister.", 0))
UNREGISTER_BROKER_RESPONSE_V0 = FS(
    THROTTLE_TIME_MS,
    ERROR_CODE,
    F("error_message", COMPACT_NULLABLE_STRING, "The top-level error message, or null.", None),
)

# --- AlterPartition (56), v0-2 --------------------------------------------------------------------------
# How a version names a topic: by name up to v1, by id from v2 (KIP-841: a topic deleted and re-created
# under the same name must not take the old one's ISR change).
_TOPIC_NAME = F("topic_name", COMPACT_STRING, "The name of the topic.", "")
_TOPIC_ID = F("topic_id", UUID, "The id of the topic.", ZERO_UUID)
_LEADER_RECOVERY_STATE = F(
    "leader_recovery_state",
    INT8,
    "1 if the partition is recovering from an unclean leader election; 0 otherwise.",
    0,
)


def _alter_partition_request(topic: Field, with_recovery_state: bool) -> FlexibleSchema:
    partition = (
        F("partition_index", INT32, "The partition index.", 0),
        F("leader_epoch", INT32, "The leader epoch of this partition.", 0),
        F("new_isr", CA(INT32), "The ISR the leader asks for.", []),
        *((_LEADER_RECOVERY_STATE,) if with_recovery_state else ()),
        F(
            "partition_epoch",
            INT32,
            "The partition epoch the leader last saw (the ZK version in ZK mode).",
            0,
        ),
    )
    return FS(
        BROKER_ID, BROKER_EPOCH, F("topics", CA(FS(topic, F("partitions", CA(FS(*partition))))), "", [])
    )


def _alter_partition_response(topic: Field, with_recovery_state: bool) -> FlexibleSchema:
    partition = (
        F("partition_index", INT32, "The partition index.", 0),
        F("error_code", INT16, "The partition level error code.", 0),
        F("leader_id", INT32, "The broker id of the leader.", 0),
        F("leader_epoch", INT32, "The leader epoch.", 0),
        F("isr", CA(INT32), "The in-sync replica ids.", []),
        *((_LEADER_RECOVERY_STATE,) if with_recovery_state else ()),
        F("partition_epoch", INT32, "The current epoch of the partition.", 0),
    )
    return FS(
        THROTTLE_TIME_MS,
        F("error_code", INT16, "The top level response error code.", 0),
        F("topics", CA(FS(topic, F("partitions", CA(FS(*partition))))), "", []),
    )


ALTER_PARTITION_REQUEST_V0 = _alter_partition_request(_TOPIC_NAME, with_recovery_state=False)
ALTER_PARTITION_REQUEST_V1 = _alter_partition_request(_TOPIC_NAME, with_recovery_state=True)
ALTER_PARTITION_REQUEST_V2 = _alter_partition_request(_TOPIC_ID, with_recovery_state=True)
ALTER_PARTITION_RESPONSE_V0 = _alter_partition_response(_TOPIC_NAME, with_recovery_state=False)
ALTER_PARTITION_RESPONSE_V1 = _alter_partition_response(_TOPIC_NAME, with_recovery_state=True)
ALTER_PARTITION_RESPONSE_V2 = _alter_partition_response(_TOPIC_ID, with_recovery_state=True)

# --- AllocateProducerIds (67), v0 -----------------------------------------------------------------------
ALLOCATE_PRODUCER_IDS_REQUEST_V0 = FS(BROKER_ID, BROKER_EPOCH)
ALLOCATE_PRODUCER_IDS_RESPONSE_V0 = FS(
    THROTTLE_TIME_MS,
    F("error_code", INT16, "The top level response error code.", 0),
    F("producer_id_start", INT64, "The first producer id in this range, inclusive.", 0),
    F("producer_id_len", INT32, "The number of producer ids in this range.", 0),
)


# --- DescribeCluster (60), v1 on the controller listener (Kafka 3.7, KIP-919) ------------------------------
# v0 (Kafka 2.8, KIP-700) describes brokers and is a broker's; v1 adds the endpoint type, and a
# controller answers v1 asking for controllers (2). The controller listener takes v1 only.
ENDPOINT_TYPE_BROKERS = 1
ENDPOINT_TYPE_CONTROLLERS = 2
DESCRIBE_CLUSTER_REQUEST_V1 = FS(
    F("include_cluster_authorized_operations", BOOLEAN, "Whether to include cluster authorized operations.", False),
    F("endpoint_type", INT8, "The endpoint type to describe. 1=brokers, 2=controllers.", ENDPOINT_TYPE_BROKERS),
)  # fmt: skip
DESCRIBE_CLUSTER_RESPONSE_V1 = FS(
    THROTTLE_TIME_MS,
    ERROR_CODE,
    F("error_message", COMPACT_NULLABLE_STRING, "The top-level error message, or null.", None),
    F("endpoint_type", INT8, "The endpoint type that was described.", ENDPOINT_TYPE_BROKERS),
    F("cluster_id", COMPACT_STRING, "The cluster id that the responding node belongs to.", ""),
    F("controller_id", INT32, "The id of the controller (a controller answers the active one).", -1),
    F("brokers", CA(FS(
        F("broker_id", INT32, "The node's id.", 0),
        F("host", COMPACT_STRING, "The node's hostname.", ""),
        F("port", INT32, "The node's port.", 0),
        F("rack", COMPACT_NULLABLE_STRING, "The node's rack, or null.", None),
    )), "Each node described (a controller's answer: each controller).", []),
    F("cluster_authorized_operations", INT32, "The authorized operations' bitfield.", -(2**31)),
)  # fmt: skip


# --- Envelope (58), v0 (Kafka 2.8, KIP-590) -----------------------------------------------------------------
# A broker forwards a client's admin request inside an Envelope: the request's own bytes (header
# and body, as the client table encodes them), the principal the broker authenticated, and the
# client's address; the controller handles the inner request as that principal's and answers with
# the inner response's bytes.
ENVELOPE_REQUEST_V0 = FS(
    F("request_data", COMPACT_BYTES, "The embedded request header and data.", b""),
    F("request_principal", COMPACT_NULLABLE_BYTES, "The serialized principal of the client.", None),
    F("client_host_address", COMPACT_BYTES, "The client's address: 4 bytes (IPv4) or 16 (IPv6).", b""),
)
ENVELOPE_RESPONSE_V0 = FS(
    F("response_data", COMPACT_NULLABLE_BYTES, "The embedded response header and data.", None),
    F("error_code", INT16, "The error code, or 0 if there was no error.", 0),
)
# How an Envelope carries the principal (Kafka's DefaultPrincipalData v0, behind its version as
# MessageUtil.toVersionPrefixedBytes writes it).
DEFAULT_PRINCIPAL_DATA_V0 = FS(
    F("type", COMPACT_STRING, "The principal type.", ""),
    F("name", COMPACT_STRING, "The principal name.", ""),
    F("token_authenticated", BOOLEAN, "Whether the principal was authenticated by a delegation token.", False),
)  # fmt: skip
_PRINCIPAL_DATA_VERSION = Schema(F("version", INT16))


def serialize_principal(principal: KafkaPrincipal) -> bytes:
    """Kafka's ``DefaultKafkaPrincipalBuilder.serialize``: the principal as an Envelope carries it."""
    return encode(_PRINCIPAL_DATA_VERSION, {"version": 0}) + encode(
        DEFAULT_PRINCIPAL_DATA_V0,
        {"type": principal.principal_type, "name": principal.name, "token_authenticated": False},
    )


def deserialize_principal(data: bytes) -> KafkaPrincipal:
    """Kafka's ``DefaultKafkaPrincipalBuilder.deserialize``; a version it does not know is a
    ``SchemaException``."""
    version = _PRINCIPAL_DATA_VERSION.read(Reader(data))["version"]
    if version != 0:
        raise SchemaException(f"principal data version {version} is not supported (0 only)", field="version")
    value = decode(DEFAULT_PRINCIPAL_DATA_V0, data, 2)
    return KafkaPrincipal(value["type"], value["name"])


# --8<-- [start:tables]
class ControllerApiKeys(SchemaTableApi, enum.IntEnum):
    """The controller's APIs a broker calls, with Kafka's ids (``ApiKeys`` in Kafka 3.3)."""

    ALTER_PARTITION = 56
    ENVELOPE = 58  # a broker's forwarded request, with its client's principal
    DESCRIBE_CLUSTER = 60  # an admin's, not a broker's: Kafka 3.7's --bootstrap-controller asks it
    BROKER_REGISTRATION = 62
    BROKER_HEARTBEAT = 63
    UNREGISTER_BROKER = 64
    ALLOCATE_PRODUCER_IDS = 67

    def _tables(self) -> tuple[dict, dict]:
        return CONTROLLER_REQUESTS, CONTROLLER_RESPONSES


CONTROLLER_REQUESTS: dict[int, list[Schema | None]] = {
    ControllerApiKeys.ALTER_PARTITION: [
        ALTER_PARTITION_REQUEST_V0, ALTER_PARTITION_REQUEST_V1, ALTER_PARTITION_REQUEST_V2,
    ],
    ControllerApiKeys.ENVELOPE: [ENVELOPE_REQUEST_V0],
    ControllerApiKeys.DESCRIBE_CLUSTER: [None, DESCRIBE_CLUSTER_REQUEST_V1],
    ControllerApiKeys.BROKER_REGISTRATION: [BROKER_REGISTRATION_REQUEST_V0],
    ControllerApiKeys.BROKER_HEARTBEAT: [BROKER_HEARTBEAT_REQUEST_V0],
    ControllerApiKeys.UNREGISTER_BROKER: [UNREGISTER_BROKER_REQUEST_V0],
    ControllerApiKeys.ALLOCATE_PRODUCER_IDS: [ALLOCATE_PRODUCER_IDS_REQUEST_V0],
}  # fmt: skip
CONTROLLER_RESPONSES: dict[int, list[Schema | None]] = {
    ControllerApiKeys.ALTER_PARTITION: [
        ALTER_PARTITION_RESPONSE_V0, ALTER_PARTITION_RESPONSE_V1, ALTER_PARTITION_RESPONSE_V2,
    ],
    ControllerApiKeys.ENVELOPE: [ENVELOPE_RESPONSE_V0],
    ControllerApiKeys.DESCRIBE_CLUSTER: [None, DESCRIBE_CLUSTER_RESPONSE_V1],
    ControllerApiKeys.BROKER_REGISTRATION: [BROKER_REGISTRATION_RESPONSE_V0],
    ControllerApiKeys.BROKER_HEARTBEAT: [BROKER_HEARTBEAT_RESPONSE_V0],
    ControllerApiKeys.UNREGISTER_BROKER: [UNREGISTER_BROKER_RESPONSE_V0],
    ControllerApiKeys.ALLOCATE_PRODUCER_IDS: [ALLOCATE_PRODUCER_IDS_RESPONSE_V0],
}  # fmt: skip
# --8<-- [end:tables]

# Every API the controller's listener speaks, by api key: Raft's and the controller's. The two enums
# answer the same questions (schemas, versions, header versions), so a caller needs only the member.
CONTROLLER_LISTENER_APIS: dict[int, RaftApiKeys | ControllerApiKeys] = {
    **{int(api): api for api in RaftApiKeys},
    **{int(api): api for api in ControllerApiKeys},
}
if len(CONTROLLER_LISTENER_APIS) != len(RaftApiKeys) + len(ControllerApiKeys):
    raise ValueError("an api key is in both the Raft table and the controller's")


def controller_api(api_key: int, version: int) -> RaftApiKeys | ControllerApiKeys:
    """The API of ``api_key`` on the controller's listener, checked to support ``version``."""
    api = CONTROLLER_LISTENER_APIS.get(api_key)
    if api is None:
        raise SchemaException(
            f"api key {api_key} is not an API of the controller listener", field="api_key", position=0
        )
    if not api.is_version_supported(version):
        raise SchemaException(
            f"{api.api_name} v{version} is not supported (versions {api.oldest_version}-{api.latest_version})",
            field="api_version",
            position=2,
        )
    return api


# The first four bytes of every request header, read before the header's version is known.
_API_KEY_AND_VERSION = Schema(F("api_key", INT16), F("api_version", INT16))


def encode_controller_request(header: RequestHeader, body: dict[str, Any]) -> bytes:
    """Header (as the version calls for) and body of a request to the controller's listener, without
    the size."""
    api = controller_api(header.api_key, header.api_version)
    return header.encode(api.request_header_version(header.api_version)) + encode(
        api.request_schema(header.api_version), body
    )


def parse_controller_request(frame: bytes | bytearray | memoryview) -> tuple[RequestHeader, dict[str, Any]]:
    """Header and body of a request frame on the controller's listener: api key and version choose
    the header version, then the body's schema."""
    first = _API_KEY_AND_VERSION.read(Reader(frame))
    api = controller_api(first["api_key"], first["api_version"])
    r = Reader(frame)
    value = REQUEST_HEADERS[api.request_header_version(first["api_version"])].read(r)
    header = RequestHeader(
        value["api_key"], value["api_version"], value["correlation_id"], value["client_id"]
    )
    return header, decode(api.request_schema(header.api_version), frame, r.pos)


def encode_controller_response(
    api_key: int, version: int, correlation_id: int, body: dict[str, Any]
) -> bytes:
    api = controller_api(api_key, version)
    head = encode(RESPONSE_HEADERS[api.response_header_version(version)], {"correlation_id": correlation_id})
    return head + encode(api.response_schema(version), body)


def parse_controller_response(
    api_key: int, version: int, frame: bytes | bytearray | memoryview
) -> tuple[int, dict[str, Any]]:
    """Correlation id and body of the response to a request of ``api_key`` at ``version``."""
    api = controller_api(api_key, version)
    correlation_id, body_start = parse_response_header(frame, api.response_header_version(version))
    return correlation_id, decode(api.response_schema(version), frame, body_start)
