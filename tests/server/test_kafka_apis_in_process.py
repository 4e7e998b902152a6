"""KafkaApis in process, over a KRaft broker's metadata cache and a recording forwarding channel.

A KRaft broker hands a DescribeQuorum to its forwarding manager and sends the controller's answer
back behind the flexible response header; ApiVersions lists it only then. A ZooKeeper broker (no
forwarding manager) has no handler and closes the connection. tests/compat/test_describe_quorum.py
asks real brokers. And a Metadata request's version chooses the partition rule
(tests/server/test_partition_metadata.py): v0 leaves out a replica no client can reach."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.controller_messages import ControllerApiKeys, deserialize_principal
from kafka_lite.common.protocol.listener_type import (
    ListenerType,
    encode_listener_response,
    parse_listener_request_body,
    parse_listener_request_header,
)
from kafka_lite.common.protocol.raft_messages import RaftApiKeys, parse_raft_response
from kafka_lite.common.protocol.requests import RequestHeader, parse_response
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.time import MockTime
from kafka_lite.network.request_channel import Request, RequestChannel, ResponseAction
from kafka_lite.server import quota_factory
from kafka_lite.server.forwarding_manager import ForwardingManager
from kafka_lite.server.kafka_apis import KafkaApis
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from tests.server.metadata.records import image_of, partition, register, topic

pytestmark = pytest.mark.unit

QUORUM_ANSWER = {
    "error_code": 0,
    "topics": [{"topic_name": "__cluster_metadata", "partitions": [{
        "partition_index": 0, "error_code": 0, "leader_id": 1, "leader_epoch": 4, "high_watermark": 120,
        "current_voters": [{"replica_id": 1, "log_end_offset": 120, "last_fetch_timestamp": 5,
                            "last_caught_up_timestamp": 5}],
        "observers": [],
    }]}],
}  # fmt: skip


class RecordingChannel:
    """The forwarding channel's ``send_request``: what was sent, and the handler to answer it with."""

    def __init__(self) -> None:
        self.sent: list[tuple] = []

    def send_request(self, api, body, handler) -> None:
        self.sent.append((api, body, handler))


def _apis(forwarding: ForwardingManager | None, *records) -> tuple[KafkaApis, RequestChannel]:
    time = MockTime()
    config = KafkaConfig({"broker.id": 0, "zookeeper.connect": "127.0.0.1:2181", "log.dirs": "/tmp/unused"})
    cache = KRaftMetadataCache(0)
    cache.set_image(image_of(register(0), *records))  # requests do not wait for a first image
    channel = RequestChannel(1, 10, time)
    apis = KafkaApis(
        channel, None, None, None, None, None, cache, None, quota_factory.instantiate(config, time),
        config, "cluster", time, forwarding_manager=forwarding,
    )  # fmt: skip
    return apis, channel


def _request(api, version: int, body: dict) -> Request:
    return Request(0, "c1", RequestHeader(api, version, 7, "tool"), body, 0, "127.0.0.1", 0, api=api)


def test_a_kraft_broker_forwards_describe_quorum_and_answers_behind_header_v1():
    controller = RecordingChannel()
    apis, channel = _apis(ForwardingManager(controller))
    body = {"topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]}
    apis.handle(_request(RaftApiKeys.DESCRIBE_QUORUM, 1, body))
    [(api, sent, handler)] = controller.sent
    assert api is ControllerApiKeys.ENVELOPE, "sent on to the controller in an Envelope"
    header, inner_api, start = parse_listener_request_header(ListenerType.CONTROLLER, sent["request_data"])
    assert (inner_api, parse_listener_request_body(inner_api, header, sent["request_data"], start)) == (
        RaftApiKeys.DESCRIBE_QUORUM,
        body,
    ), "the request inside as it came"
    assert deserialize_principal(sent["request_principal"]) == KafkaPrincipal.ANONYMOUS

    inner = encode_listener_response(inner_api, header.api_version, header.correlation_id, QUORUM_ANSWER)
    handler.on_complete(SimpleNamespace(body={"response_data": inner, "error_code": 0}))
    response = channel.receive_response(0)
    assert response.action is ResponseAction.SEND
    correlation_id, answer = parse_raft_response(RaftApiKeys.DESCRIBE_QUORUM, 1, b"".join(response.pieces))
    assert correlation_id == 7 and answer == QUORUM_ANSWER

    apis.handle(_request(ApiKeys.API_VERSIONS, 0, {}))
    _, versions = parse_response(ApiKeys.API_VERSIONS, 0, b"".join(channel.receive_response(0).pieces))
    listed = {v["api_key"]: (v["min_version"], v["max_version"]) for v in versions["api_versions"]}
    assert listed[RaftApiKeys.DESCRIBE_QUORUM] == (0, 1)


def test_a_zookeeper_broker_has_no_describe_quorum_and_closes_the_connection():
    apis, channel = _apis(None)
    apis.handle(_request(RaftApiKeys.DESCRIBE_QUORUM, 1, {"topics": []}))
    assert channel.receive_response(0).action is ResponseAction.CLOSE

    apis.handle(_request(ApiKeys.API_VERSIONS, 0, {}))
    _, versions = parse_response(ApiKeys.API_VERSIONS, 0, b"".join(channel.receive_response(0).pieces))
    assert RaftApiKeys.DESCRIBE_QUORUM not in {v["api_key"] for v in versions["api_versions"]}


def test_the_metadata_version_chooses_whether_an_unreachable_replica_is_left_out():
    orders = uuid.UUID(int=1)
    records = (register(2, fenced=True), topic("orders", orders), partition(orders, 0, [0, 2]))
    apis, channel = _apis(None, *records)
    seen = {}
    for version in (0, 1):
        apis.handle(_request(ApiKeys.METADATA, version, {"topics": ["orders"]}))
        _, answer = parse_response(ApiKeys.METADATA, version, b"".join(channel.receive_response(0).pieces))
        [p] = answer["topic_metadata"][0]["partition_metadata"]
        seen[version] = (p["partition_error_code"], p["leader"], p["replicas"], p["isr"])
    assert seen == {0: (9, 0, [0], [0]), 1: (0, 0, [0, 2], [0, 2])}  # 9: REPLICA_NOT_AVAILABLE
