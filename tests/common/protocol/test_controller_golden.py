"""The quorum controller's RPCs (flexible from v0): golden bytes worked by hand from Kafka 3.3.0's message
specs, one line per field, independently of kafka_lite's schemas; each case is decoded from its bytes and
encoded back to them. Then the frames: headers, and the one lookup over Raft's table and this one."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.protocol.controller_messages import (
    CONTROLLER_LISTENER_APIS,
    ControllerApiKeys,
    encode_controller_request,
    encode_controller_response,
    parse_controller_request,
    parse_controller_response,
)
from kafka_lite.common.protocol.messages import REQUESTS
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.protocol.types import SchemaException, decode, encode

pytestmark = pytest.mark.unit


def h(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields))


TOPIC_ID = uuid.UUID("0102030405060708090a0b0c0d0e0f10")
INCARNATION = uuid.UUID("1112131415161718191a1b1c1d1e1f20")

BROKER_REGISTRATION_REQUEST = (
    {"broker_id": 1, "cluster_id": "c1", "incarnation_id": INCARNATION,
     "listeners": [{"name": "PLAINTEXT", "host": "h", "port": 9092, "security_protocol": 0}],
     "features": [{"name": "metadata.version", "min_supported_version": 1, "max_supported_version": 7}],
     "rack": None},
    h(
        "00000001",  # broker_id
        "03 6331",  # cluster_id: compact string, 2 + 1, "c1"
        "1112131415161718191a1b1c1d1e1f20",  # incarnation_id: uuid
        "02",  # listeners: compact array, 1 + 1
        "0a 504c41494e54455854",  # name: 9 + 1, "PLAINTEXT"
        "02 68",  # host "h"
        "2384",  # port 9092: uint16
        "0000",  # security_protocol 0
        "00",  # the listener's tagged fields: none
        "02",  # features: 1 + 1
        "11 6d657461646174612e76657273696f6e",  # name: 16 + 1, "metadata.version"
        "0001",  # min_supported_version
        "0007",  # max_supported_version
        "00",  # the feature's tagged fields
        "00",  # rack: compact nullable string, null
        "00",  # the request's tagged fields
    ),
)  # fmt: skip
BROKER_REGISTRATION_RESPONSE = (
    {"throttle_time_ms": 0, "error_code": 0, "broker_epoch": 42},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "000000000000002a",  # broker_epoch 42: int64
        "00",  # tagged fields
    ),
)
BROKER_HEARTBEAT_REQUEST = (
    {"broker_id": 1, "broker_epoch": 42, "current_metadata_offset": 100, "want_fence": False,
     "want_shut_down": True},
    h(
        "00000001",  # broker_id
        "000000000000002a",  # broker_epoch 42
        "0000000000000064",  # current_metadata_offset 100
        "00",  # want_fence false
        "01",  # want_shut_down true
        "00",  # tagged fields
    ),
)  # fmt: skip
BROKER_HEARTBEAT_RESPONSE = (
    {
        "throttle_time_ms": 0,
        "error_code": 0,
        "is_caught_up": True,
        "is_fenced": False,
        "should_shut_down": False,
    },
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "01",  # is_caught_up true
        "00",  # is_fenced false
        "00",  # should_shut_down false
        "00",  # tagged fields
    ),
)
UNREGISTER_BROKER_REQUEST = (
    {"broker_id": 3},
    h(
        "00000003",  # broker_id
        "00",  # tagged fields
    ),
)
UNREGISTER_BROKER_RESPONSE = (
    {"throttle_time_ms": 0, "error_code": 102, "error_message": "Broker 3 not found."},
    h(
        "00000000",  # throttle_time_ms
        "0066",  # error_code 102: BROKER_ID_NOT_REGISTERED
        "14 42726f6b65722033206e6f7420666f756e642e",  # error_message: 19 + 1, "Broker 3 not found."
        "00",  # tagged fields
    ),
)
ALTER_PARTITION_REQUEST_V0 = (
    {"broker_id": 1, "broker_epoch": 42, "topics": [{"topic_name": "t", "partitions": [
        {"partition_index": 0, "leader_epoch": 5, "new_isr": [1, 2], "partition_epoch": 7}]}]},
    h(
        "00000001",  # broker_id
        "000000000000002a",  # broker_epoch 42
        "02",  # topics: 1 + 1
        "02 74",  # topic_name "t"
        "02",  # partitions: 1 + 1
        "00000000",  # partition_index
        "00000005",  # leader_epoch
        "03 00000001 00000002",  # new_isr: 2 + 1
        "00000007",  # partition_epoch
        "00",  # the partition's tagged fields
        "00",  # the topic's tagged fields
        "00",  # the request's tagged fields
    ),
)  # fmt: skip
ALTER_PARTITION_REQUEST_V1 = (
    {"broker_id": 1, "broker_epoch": 42, "topics": [{"topic_name": "t", "partitions": [
        {"partition_index": 0, "leader_epoch": 5, "new_isr": [1, 2], "leader_recovery_state": 1,
         "partition_epoch": 7}]}]},
    h(
        "00000001",  # broker_id
        "000000000000002a",  # broker_epoch
        "02",  # topics
        "02 74",  # topic_name "t"
        "02",  # partitions
        "00000000",  # partition_index
        "00000005",  # leader_epoch
        "03 00000001 00000002",  # new_isr
        "01",  # leader_recovery_state 1 (RECOVERING): new in v1, an int8 field (not tagged)
        "00000007",  # partition_epoch
        "00", "00", "00",  # tagged fields: partition, topic, request
    ),
)  # fmt: skip
ALTER_PARTITION_REQUEST_V2 = (
    {"broker_id": 1, "broker_epoch": 42, "topics": [{"topic_id": TOPIC_ID, "partitions": [
        {"partition_index": 0, "leader_epoch": 5, "new_isr": [1], "leader_recovery_state": 0,
         "partition_epoch": 7}]}]},
    h(
        "00000001",  # broker_id
        "000000000000002a",  # broker_epoch
        "02",  # topics
        "0102030405060708090a0b0c0d0e0f10",  # topic_id: uuid, in place of the name from v2
        "02",  # partitions
        "00000000",  # partition_index
        "00000005",  # leader_epoch
        "02 00000001",  # new_isr [1]
        "00",  # leader_recovery_state 0
        "00000007",  # partition_epoch
        "00", "00", "00",  # tagged fields: partition, topic, request
    ),
)  # fmt: skip
ALTER_PARTITION_RESPONSE_V0 = (
    {"throttle_time_ms": 0, "error_code": 0, "topics": [{"topic_name": "t", "partitions": [
        {"partition_index": 0, "error_code": 0, "leader_id": 1, "leader_epoch": 5, "isr": [1, 2],
         "partition_epoch": 8}]}]},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "02",  # topics
        "02 74",  # topic_name "t"
        "02",  # partitions
        "00000000",  # partition_index
        "0000",  # error_code
        "00000001",  # leader_id
        "00000005",  # leader_epoch
        "03 00000001 00000002",  # isr
        "00000008",  # partition_epoch 8: one more than the request named
        "00", "00", "00",  # tagged fields: partition, topic, response
    ),
)  # fmt: skip
ALTER_PARTITION_RESPONSE_V1 = (
    {"throttle_time_ms": 0, "error_code": 0, "topics": [{"topic_name": "t", "partitions": [
        {"partition_index": 0, "error_code": 0, "leader_id": 1, "leader_epoch": 5, "isr": [1, 2],
         "leader_recovery_state": 0, "partition_epoch": 8}]}]},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "02",  # topics
        "02 74",  # topic_name "t"
        "02",  # partitions
        "00000000",  # partition_index
        "0000",  # error_code
        "00000001",  # leader_id
        "00000005",  # leader_epoch
        "03 00000001 00000002",  # isr
        "00",  # leader_recovery_state: new in v1
        "00000008",  # partition_epoch
        "00", "00", "00",  # tagged fields
    ),
)  # fmt: skip
ALTER_PARTITION_RESPONSE_V2 = (
    {"throttle_time_ms": 0, "error_code": 0, "topics": [{"topic_id": TOPIC_ID, "partitions": [
        {"partition_index": 0, "error_code": 107, "leader_id": 0, "leader_epoch": 0, "isr": [],
         "leader_recovery_state": 0, "partition_epoch": 0}]}]},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "02",  # topics
        "0102030405060708090a0b0c0d0e0f10",  # topic_id
        "02",  # partitions
        "00000000",  # partition_index
        "006b",  # error_code 107: INELIGIBLE_REPLICA (KIP-841, with v2)
        "00000000",  # leader_id
        "00000000",  # leader_epoch
        "01",  # isr: empty, 0 + 1
        "00",  # leader_recovery_state
        "00000000",  # partition_epoch
        "00", "00", "00",  # tagged fields
    ),
)  # fmt: skip
ALLOCATE_PRODUCER_IDS_REQUEST = (
    {"broker_id": 2, "broker_epoch": 42},
    h(
        "00000002",  # broker_id
        "000000000000002a",  # broker_epoch
        "00",  # tagged fields
    ),
)
ALLOCATE_PRODUCER_IDS_RESPONSE = (
    {"throttle_time_ms": 0, "error_code": 0, "producer_id_start": 1000, "producer_id_len": 1000},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "00000000000003e8",  # producer_id_start 1000: int64
        "000003e8",  # producer_id_len 1000: int32
        "00",  # tagged fields
    ),
)
# DescribeCluster v1 from Kafka 3.7's spec (KIP-919): what an admin asks a controller directly.
DESCRIBE_CLUSTER_REQUEST_V1 = (
    {"include_cluster_authorized_operations": False, "endpoint_type": 2},
    h(
        "00",  # include_cluster_authorized_operations: false
        "02",  # endpoint_type: int8, 2 = controllers
        "00",  # tagged fields
    ),
)  # fmt: skip
DESCRIBE_CLUSTER_RESPONSE_V1 = (
    {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "endpoint_type": 2, "cluster_id": "c1",
     "controller_id": 1, "brokers": [{"broker_id": 1, "host": "h", "port": 9093, "rack": None}],
     "cluster_authorized_operations": -(2**31)},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "00",  # error_message: compact nullable string, null
        "02",  # endpoint_type
        "03 6331",  # cluster_id "c1"
        "00000001",  # controller_id
        "02",  # brokers: compact array, 1 + 1
        "00000001",  # broker_id
        "02 68",  # host "h"
        "00002385",  # port 9093: int32
        "00",  # rack: null
        "00",  # the node's tagged fields
        "80000000",  # cluster_authorized_operations: INT32_MIN, "not asked for"
        "00",  # tagged fields
    ),
)  # fmt: skip
# Envelope v0 (KIP-590): a forwarded request's bytes, the client's principal, its address.
ENVELOPE_REQUEST = (
    {"request_data": bytes.fromhex("0013000500000007"), "request_principal": bytes.fromhex(
        "0000" "05 55736572" "06 616c696365" "00" "00"), "client_host_address": bytes([127, 0, 0, 1])},
    h(
        "09 0013000500000007",  # request_data: compact bytes, 8 + 1 (an embedded header's start)
        "10 0000 0555736572 06616c696365 00 00",  # request_principal: 15 + 1, DefaultPrincipalData v0
        "05 7f000001",  # client_host_address: 4 + 1, 127.0.0.1
        "00",  # tagged fields
    ),
)  # fmt: skip
ENVELOPE_RESPONSE = (
    {"response_data": None, "error_code": 41},
    h(
        "00",  # response_data: compact nullable bytes, null
        "0029",  # error_code 41: NOT_CONTROLLER
        "00",  # tagged fields
    ),
)

A = ControllerApiKeys
RPC_CASES = [
    (A.BROKER_REGISTRATION, 0, "request", *BROKER_REGISTRATION_REQUEST),
    (A.BROKER_REGISTRATION, 0, "response", *BROKER_REGISTRATION_RESPONSE),
    (A.BROKER_HEARTBEAT, 0, "request", *BROKER_HEARTBEAT_REQUEST),
    (A.BROKER_HEARTBEAT, 0, "response", *BROKER_HEARTBEAT_RESPONSE),
    (A.UNREGISTER_BROKER, 0, "request", *UNREGISTER_BROKER_REQUEST),
    (A.UNREGISTER_BROKER, 0, "response", *UNREGISTER_BROKER_RESPONSE),
    (A.ALTER_PARTITION, 0, "request", *ALTER_PARTITION_REQUEST_V0),
    (A.ALTER_PARTITION, 1, "request", *ALTER_PARTITION_REQUEST_V1),
    (A.ALTER_PARTITION, 2, "request", *ALTER_PARTITION_REQUEST_V2),
    (A.ALTER_PARTITION, 0, "response", *ALTER_PARTITION_RESPONSE_V0),
    (A.ALTER_PARTITION, 1, "response", *ALTER_PARTITION_RESPONSE_V1),
    (A.ALTER_PARTITION, 2, "response", *ALTER_PARTITION_RESPONSE_V2),
    (A.ALLOCATE_PRODUCER_IDS, 0, "request", *ALLOCATE_PRODUCER_IDS_REQUEST),
    (A.ALLOCATE_PRODUCER_IDS, 0, "response", *ALLOCATE_PRODUCER_IDS_RESPONSE),
    (A.DESCRIBE_CLUSTER, 1, "request", *DESCRIBE_CLUSTER_REQUEST_V1),
    (A.DESCRIBE_CLUSTER, 1, "response", *DESCRIBE_CLUSTER_RESPONSE_V1),
    (A.ENVELOPE, 0, "request", *ENVELOPE_REQUEST),
    (A.ENVELOPE, 0, "response", *ENVELOPE_RESPONSE),
]


def test_an_envelopes_principal_is_kafkas_default_principal_data_behind_its_version():
    from kafka_lite.common.protocol.controller_messages import deserialize_principal, serialize_principal
    from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal

    golden = ENVELOPE_REQUEST[0]["request_principal"]
    assert serialize_principal(KafkaPrincipal("User", "alice")) == golden
    assert deserialize_principal(golden) == KafkaPrincipal("User", "alice")
    with pytest.raises(SchemaException, match="principal data version 1 is not supported"):
        deserialize_principal(b"\x00\x01" + golden[2:])


@pytest.mark.parametrize(
    ("api", "version", "kind", "value", "golden"), RPC_CASES, ids=lambda c: getattr(c, "name", None)
)
def test_rpc_golden_bytes_both_ways(api, version, kind, value, golden):
    schema = api.request_schema(version) if kind == "request" else api.response_schema(version)
    assert encode(schema, value) == golden
    assert decode(schema, golden) == value


def test_every_request_and_response_version_has_a_golden_case():
    covered = {(api, version, kind) for api, version, kind, _, _ in RPC_CASES}
    expected = {
        (api, version, kind)
        for api in ControllerApiKeys
        for version in range(api.oldest_version, api.latest_version + 1)
        for kind in ("request", "response")
    }
    assert covered == expected


def test_defaults_are_the_specs():
    # Fields a caller leaves out take the spec's defaults: broker epoch -1, fenced true.
    assert decode(A.BROKER_HEARTBEAT.response_schema(0), encode(A.BROKER_HEARTBEAT.response_schema(0), {})) == {
        "throttle_time_ms": 0, "error_code": 0, "is_caught_up": False, "is_fenced": True, "should_shut_down": False,
    }  # fmt: skip
    assert (
        decode(
            A.ALLOCATE_PRODUCER_IDS.request_schema(0), encode(A.ALLOCATE_PRODUCER_IDS.request_schema(0), {})
        )["broker_epoch"]
        == -1
    )


def test_requests_travel_with_header_v2_and_responses_with_v1():
    frame = encode_controller_request(RequestHeader(63, 0, 7, "b"), BROKER_HEARTBEAT_REQUEST[0])
    assert (
        frame
        == h(
            "003f 0000",  # api key 63, version 0
            "00000007",  # correlation_id
            "0001 62",  # client_id "b": a non-compact nullable string, in every header version
            "00",  # header v2's tagged fields
        )
        + BROKER_HEARTBEAT_REQUEST[1]
    )
    assert parse_controller_request(frame) == (RequestHeader(63, 0, 7, "b"), BROKER_HEARTBEAT_REQUEST[0])
    response = encode_controller_response(63, 0, 7, BROKER_HEARTBEAT_RESPONSE[0])
    assert (
        response == h("00000007", "00") + BROKER_HEARTBEAT_RESPONSE[1]
    )  # correlation_id, header tagged fields
    assert parse_controller_response(63, 0, response) == (7, BROKER_HEARTBEAT_RESPONSE[0])


def test_one_lookup_serves_the_raft_table_too():
    vote = {"cluster_id": None, "topics": []}
    frame = encode_controller_request(RequestHeader(RaftApiKeys.VOTE, 0, 1, "r"), vote)
    assert parse_controller_request(frame) == (RequestHeader(52, 0, 1, "r"), vote)
    begin = {"error_code": 0, "topics": []}
    # BeginQuorumEpoch is not flexible: response header v0, the correlation id alone.
    assert encode_controller_response(53, 0, 9, begin) == h("00000009", "0000", "00000000")
    assert CONTROLLER_LISTENER_APIS[56] is A.ALTER_PARTITION
    assert CONTROLLER_LISTENER_APIS[1] is RaftApiKeys.FETCH


def test_an_api_or_version_the_listener_does_not_speak_is_refused():
    with pytest.raises(SchemaException, match="api key 19 is not an API of the controller listener"):
        parse_controller_request(h("0013 0000", "00000001", "0000", "00"))
    with pytest.raises(SchemaException, match=r"AlterPartition v3 is not supported \(versions 0-2\)"):
        encode_controller_request(RequestHeader(56, 3, 1, "b"), {})
    with pytest.raises(SchemaException, match="api_key"):
        parse_controller_request(h("00"))


def test_the_broker_tables_do_not_hold_the_controller_apis():
    assert not set(REQUESTS) & set(ControllerApiKeys)


def test_header_versions_follow_kafkas_flexible_versions():
    assert {api.request_header_version(api.latest_version) for api in ControllerApiKeys} == {2}
    assert {api.response_header_version(api.latest_version) for api in ControllerApiKeys} == {1}
    assert A.ALTER_PARTITION.api_name == "AlterPartition"
