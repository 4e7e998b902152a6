"""Inter-broker APIs, which kafka-python does not implement: golden bytes written field by field from
Kafka's message definitions (Protocol.java, Kafka 0.11.0), independently of kafka_lite's schemas."""

from __future__ import annotations

import struct

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.types import decode, encode

pytestmark = pytest.mark.unit


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def s(text):
    data = text.encode()
    return i16(len(data)) + data


def ns(text):
    return i16(-1) if text is None else s(text)


def arr(items):
    return i32(len(items)) + b"".join(items)


PARTITION_STATE = {
    "topic": "orders", "partition": 2, "controller_epoch": 5, "leader": 1, "leader_epoch": 7,
    "isr": [1, 2], "zk_version": 3, "replicas": [1, 2, 0],
}  # fmt: skip
PARTITION_STATE_BYTES = (
    s("orders")
    + i32(2)
    + i32(5)
    + i32(1)
    + i32(7)
    + arr([i32(1), i32(2)])
    + i32(3)
    + arr([i32(1), i32(2), i32(0)])
)

CASES = [
    (
        ApiKeys.LEADER_AND_ISR, 0, "request",
        {"controller_id": 0, "controller_epoch": 5, "partition_states": [PARTITION_STATE],
         "live_leaders": [{"id": 1, "host": "127.0.0.1", "port": 9093}]},
        i32(0) + i32(5) + arr([PARTITION_STATE_BYTES]) + arr([i32(1) + s("127.0.0.1") + i32(9093)]),
    ),
    (
        ApiKeys.LEADER_AND_ISR, 0, "response",
        {"error_code": 0, "partitions": [{"topic": "orders", "partition": 2, "error_code": 6}]},
        i16(0) + arr([s("orders") + i32(2) + i16(6)]),
    ),
    (
        ApiKeys.STOP_REPLICA, 0, "request",
        {"controller_id": 0, "controller_epoch": 5, "delete_partitions": True,
         "partitions": [{"topic": "orders", "partition": 1}]},
        i32(0) + i32(5) + b"\x01" + arr([s("orders") + i32(1)]),
    ),
    (
        ApiKeys.UPDATE_METADATA, 0, "request",
        {"controller_id": 0, "controller_epoch": 5, "partition_states": [PARTITION_STATE],
         "live_brokers": [{"id": 1, "host": "h", "port": 9093}]},
        i32(0) + i32(5) + arr([PARTITION_STATE_BYTES]) + arr([i32(1) + s("h") + i32(9093)]),
    ),
    (
        # From v1 each broker lists end points, and an end point puts port before host.
        ApiKeys.UPDATE_METADATA, 1, "request",
        {"controller_id": 0, "controller_epoch": 5, "partition_states": [],
         "live_brokers": [{"id": 1, "end_points": [{"port": 9093, "host": "h", "security_protocol_type": 0}]}]},
        i32(0) + i32(5) + arr([]) + arr([i32(1) + arr([i32(9093) + s("h") + i16(0)])]),
    ),
    (
        ApiKeys.UPDATE_METADATA, 2, "request",
        {"controller_id": 0, "controller_epoch": 5, "partition_states": [],
         "live_brokers": [{"id": 1, "end_points": [{"port": 9093, "host": "h", "security_protocol_type": 0}],
                           "rack": None}]},
        i32(0) + i32(5) + arr([]) + arr([i32(1) + arr([i32(9093) + s("h") + i16(0)]) + ns(None)]),
    ),
    (
        ApiKeys.UPDATE_METADATA, 3, "request",
        {"controller_id": 0, "controller_epoch": 5, "partition_states": [],
         "live_brokers": [{"id": 1, "end_points": [{"port": 9093, "host": "h", "listener_name": "PLAINTEXT",
                                                     "security_protocol_type": 0}], "rack": "r1"}]},
        i32(0) + i32(5) + arr([]) + arr([i32(1) + arr([i32(9093) + s("h") + s("PLAINTEXT") + i16(0)]) + ns("r1")]),
    ),
    (ApiKeys.UPDATE_METADATA, 3, "response", {"error_code": 0}, i16(0)),
    (ApiKeys.CONTROLLED_SHUTDOWN, 0, "request", {"broker_id": 2}, i32(2)),
    (
        ApiKeys.CONTROLLED_SHUTDOWN, 0, "response",
        {"error_code": 0, "partitions_remaining": [{"topic": "orders", "partition": 0}]},
        i16(0) + arr([s("orders") + i32(0)]),
    ),
    (ApiKeys.CONTROLLED_SHUTDOWN, 1, "request", {"broker_id": 2}, i32(2)),
    (
        ApiKeys.CONTROLLED_SHUTDOWN, 1, "response",
        {"error_code": 0, "partitions_remaining": [{"topic": "orders", "partition": 0}]},
        i16(0) + arr([s("orders") + i32(0)]),
    ),
    (
        ApiKeys.OFFSETS_FOR_LEADER_EPOCH, 0, "request",
        {"topics": [{"topic": "orders", "partitions": [{"partition_id": 0, "leader_epoch": 3}]}]},
        arr([s("orders") + arr([i32(0) + i32(3)])]),
    ),
    (
        ApiKeys.OFFSETS_FOR_LEADER_EPOCH, 0, "response",
        {"topics": [{"topic": "orders", "partitions": [{"error_code": 0, "partition_id": 0, "end_offset": 1234}]}]},
        arr([s("orders") + arr([i16(0) + i32(0) + i64(1234)])]),
    ),
    (
        ApiKeys.WRITE_TXN_MARKERS, 0, "request",
        {"transaction_markers": [{"producer_id": 4000, "producer_epoch": 2, "transaction_result": True,
                                  "topics": [{"topic": "orders", "partitions": [0, 2]}], "coordinator_epoch": 9}]},
        arr([i64(4000) + i16(2) + b"\x01" + arr([s("orders") + arr([i32(0), i32(2)])]) + i32(9)]),
    ),
    (
        ApiKeys.WRITE_TXN_MARKERS, 0, "response",
        {"transaction_markers": [{"producer_id": 4000, "topics": [
            {"topic": "orders", "partitions": [{"partition": 0, "error_code": 0}, {"partition": 2, "error_code": 6}]}]}]},
        arr([i64(4000) + arr([s("orders") + arr([i32(0) + i16(0), i32(2) + i16(6)])])]),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("api", "version", "kind", "value", "golden"), CASES, ids=lambda c: str(c)[:40])
def test_inter_broker_golden_bytes(api, version, kind, value, golden):
    schema = api.request_schema(version) if kind == "request" else api.response_schema(version)
    assert encode(schema, value) == golden
    assert decode(schema, golden) == value


def test_every_inter_broker_api_version_has_a_golden_request():
    covered = {(api, v) for api, v, kind, _, _ in CASES if kind == "request"}
    expected = {
        (a, v) for a in ApiKeys if a.inter_broker for v in range(a.oldest_version, a.latest_version + 1)
    }
    assert expected == covered
