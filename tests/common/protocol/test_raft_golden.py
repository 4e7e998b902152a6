"""The Raft RPCs and data messages (flexible versions, KIP-482): golden bytes worked by hand from Kafka
3.3.0's message specs, one line per field, independently of kafka_lite's schemas; each case is decoded
from its bytes and encoded back to them."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.messages import REQUESTS, RESPONSES
from kafka_lite.common.protocol.raft_messages import (
    LEADER_CHANGE_MESSAGE_V0,
    QUORUM_STATE_DATA_V0,
    SNAPSHOT_FOOTER_RECORD_V0,
    SNAPSHOT_HEADER_RECORD_V0,
    RaftApiKeys,
    encode_raft_request,
    encode_raft_response,
    parse_raft_request,
    parse_raft_response,
)
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.protocol.types import decode, encode

pytestmark = pytest.mark.unit


def h(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields))


TOPIC_ID = uuid.UUID("0102030405060708090a0b0c0d0e0f10")

VOTE_REQUEST = (
    {"cluster_id": "ab", "topics": [{"topic_name": "m", "partitions": [
        {"partition_index": 0, "candidate_epoch": 5, "candidate_id": 2, "last_offset_epoch": 4, "last_offset": 100}]}]},
    h(
        "03 6162",  # cluster_id: compact nullable string, length 2 + 1, "ab"
        "02",  # topics: compact array, 1 + 1
        "02 6d",  # topic_name: compact string "m"
        "02",  # partitions: 1 + 1
        "00000000",  # partition_index
        "00000005",  # candidate_epoch
        "00000002",  # candidate_id
        "00000004",  # last_offset_epoch
        "0000000000000064",  # last_offset 100
        "00",  # the partition's tagged fields: none
        "00",  # the topic's tagged fields: none
        "00",  # the request's tagged fields: none
    ),
)  # fmt: skip
VOTE_RESPONSE = (
    {"error_code": 0, "topics": [{"topic_name": "m", "partitions": [
        {"partition_index": 0, "error_code": 0, "leader_id": -1, "leader_epoch": 5, "vote_granted": True}]}]},
    h(
        "0000",  # error_code
        "02",  # topics: 1 + 1
        "02 6d",  # topic_name "m"
        "02",  # partitions: 1 + 1
        "00000000",  # partition_index
        "0000",  # error_code
        "ffffffff",  # leader_id -1: unknown
        "00000005",  # leader_epoch
        "01",  # vote_granted
        "00", "00", "00",  # tagged fields of the partition, the topic, the response
    ),
)  # fmt: skip
BEGIN_QUORUM_EPOCH_REQUEST = (
    {"cluster_id": None, "topics": [{"topic_name": "m", "partitions": [
        {"partition_index": 0, "leader_id": 1, "leader_epoch": 6}]}]},
    h(
        "ffff",  # cluster_id: NOT compact (BeginQuorumEpoch v0 is not flexible), null
        "00000001",  # topics: int32 count
        "0001 6d",  # topic_name: int16 length, "m"
        "00000001",  # partitions
        "00000000",  # partition_index
        "00000001",  # leader_id
        "00000006",  # leader_epoch; no tagged fields anywhere
    ),
)  # fmt: skip
LEADER_RESPONSE = (
    {"error_code": 0, "topics": [{"topic_name": "m", "partitions": [
        {"partition_index": 0, "error_code": 0, "leader_id": 1, "leader_epoch": 6}]}]},
    h(
        "0000",  # error_code
        "00000001",  # topics
        "0001 6d",  # topic_name "m"
        "00000001",  # partitions
        "00000000",  # partition_index
        "0000",  # error_code
        "00000001",  # leader_id
        "00000006",  # leader_epoch
    ),
)  # fmt: skip
END_QUORUM_EPOCH_REQUEST = (
    {"cluster_id": "ab", "topics": [{"topic_name": "m", "partitions": [
        {"partition_index": 0, "leader_id": 1, "leader_epoch": 6, "preferred_successors": [2, 3]}]}]},
    h(
        "0002 6162",  # cluster_id: int16 length, "ab"
        "00000001",  # topics
        "0001 6d",  # topic_name
        "00000001",  # partitions
        "00000000",  # partition_index
        "00000001",  # leader_id
        "00000006",  # leader_epoch
        "00000002 00000002 00000003",  # preferred_successors: [2, 3]
    ),
)  # fmt: skip
DESCRIBE_QUORUM_REQUEST = (
    {"topics": [{"topic_name": "m", "partitions": [{"partition_index": 0}]}]},
    h(
        "02",  # topics
        "02 6d",  # topic_name
        "02",  # partitions
        "00000000",  # partition_index
        "00", "00", "00",  # tagged fields: partition, topic, request
    ),
)  # fmt: skip
_DQ_PARTITION = {
    "partition_index": 0,
    "error_code": 0,
    "leader_id": 1,
    "leader_epoch": 6,
    "high_watermark": 10,
}
DESCRIBE_QUORUM_RESPONSE_V0 = (
    {"error_code": 0, "topics": [{"topic_name": "m", "partitions": [
        {**_DQ_PARTITION, "current_voters": [{"replica_id": 1, "log_end_offset": 10}], "observers": []}]}]},
    h(
        "0000",  # error_code
        "02 02 6d 02",  # topics [1], topic_name "m", partitions [1]
        "00000000 0000",  # partition_index, error_code
        "00000001 00000006",  # leader_id, leader_epoch
        "000000000000000a",  # high_watermark
        "02",  # current_voters: 1 + 1
        "00000001 000000000000000a 00",  # replica_id, log_end_offset, its tagged fields
        "01",  # observers: empty (0 + 1)
        "00", "00", "00",  # tagged fields: partition, topic, response
    ),
)  # fmt: skip
DESCRIBE_QUORUM_RESPONSE_V1 = (
    {"error_code": 0, "topics": [{"topic_name": "m", "partitions": [
        {**_DQ_PARTITION, "current_voters": [{"replica_id": 1, "log_end_offset": 10, "last_fetch_timestamp": -1,
                                              "last_caught_up_timestamp": 100}], "observers": []}]}]},
    h(
        "0000",  # error_code
        "02 02 6d 02",  # topics [1], topic_name "m", partitions [1]
        "00000000 0000",  # partition_index, error_code
        "00000001 00000006",  # leader_id, leader_epoch
        "000000000000000a",  # high_watermark
        "02",  # current_voters: 1 + 1
        "00000001 000000000000000a",  # replica_id, log_end_offset
        "ffffffffffffffff",  # last_fetch_timestamp -1 (v1, KIP-836)
        "0000000000000064",  # last_caught_up_timestamp 100 (v1)
        "00",  # the replica's tagged fields
        "01",  # observers: empty
        "00", "00", "00",  # tagged fields: partition, topic, response
    ),
)  # fmt: skip
FETCH_SNAPSHOT_REQUEST = (
    {"cluster_id": "ab", "replica_id": 2, "max_bytes": 0x7FFFFFFF, "topics": [{"name": "m", "partitions": [
        {"partition": 0, "current_leader_epoch": 6, "snapshot_id": {"end_offset": 100, "epoch": 5}, "position": 0}]}]},
    h(
        "00000002",  # replica_id
        "7fffffff",  # max_bytes
        "02 02 6d 02",  # topics [1], name "m", partitions [1]
        "00000000",  # partition
        "00000006",  # current_leader_epoch
        "0000000000000064 00000005 00",  # snapshot_id: end_offset 100, epoch 5, its (empty) tagged fields
        "0000000000000000",  # position
        "00", "00",  # tagged fields: partition, topic
        "01",  # the request's tagged fields: one
        "00",  # tag 0: cluster_id (a tagged field, though first in the spec)
        "03",  # its size: 3 bytes
        "03 6162",  # compact nullable string "ab"
    ),
)  # fmt: skip
FETCH_SNAPSHOT_RESPONSE = (
    {"throttle_time_ms": 0, "error_code": 0, "topics": [{"name": "m", "partitions": [
        {"index": 0, "error_code": 0, "snapshot_id": {"end_offset": 100, "epoch": 5}, "size": 3, "position": 0,
         "unaligned_records": b"\x01\x02\x03", "current_leader": {"leader_id": 1, "leader_epoch": 6}}]}]},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "02 02 6d 02",  # topics [1], name "m", partitions [1]
        "00000000",  # index
        "0000",  # error_code
        "0000000000000064 00000005 00",  # snapshot_id: end_offset, epoch, tagged fields
        "0000000000000003",  # size
        "0000000000000000",  # position
        "04 010203",  # unaligned_records: compact bytes, 3 + 1
        "01",  # the partition's tagged fields: one
        "00 09",  # tag 0 (current_leader), 9 bytes
        "00000001 00000006 00",  # leader_id 1, leader_epoch 6, the struct's own tagged fields
        "00", "00",  # tagged fields: topic, response
    ),
)  # fmt: skip
FETCH_REQUEST_V13 = (
    {"cluster_id": None, "replica_id": 2, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 0x7FFFFFFF,
     "isolation_level": 0, "session_id": 0, "session_epoch": -1,
     "topics": [{"topic_id": TOPIC_ID, "partitions": [
         {"partition": 0, "current_leader_epoch": 6, "fetch_offset": 100, "last_fetched_epoch": 5,
          "log_start_offset": -1, "partition_max_bytes": 1048576}]}],
     "forgotten_topics_data": [], "rack_id": ""},
    h(
        "00000002",  # replica_id
        "000001f4",  # max_wait_ms 500
        "00000001",  # min_bytes
        "7fffffff",  # max_bytes
        "00",  # isolation_level
        "00000000",  # session_id
        "ffffffff",  # session_epoch -1
        "02",  # topics [1]
        "0102030405060708090a0b0c0d0e0f10",  # topic_id: 16 bytes (v13 replaced the name, KIP-516)
        "02",  # partitions [1]
        "00000000",  # partition
        "00000006",  # current_leader_epoch
        "0000000000000064",  # fetch_offset 100
        "00000005",  # last_fetched_epoch (v12+): how the leader detects a diverged log
        "ffffffffffffffff",  # log_start_offset -1
        "00100000",  # partition_max_bytes 1 MiB
        "00", "00",  # tagged fields: partition, topic
        "01",  # forgotten_topics_data: empty
        "01",  # rack_id: "" (0 + 1)
        "00",  # the request's tagged fields: cluster_id is null, its default, so not written
    ),
)  # fmt: skip
FETCH_RESPONSE_V13 = (
    {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [{"topic_id": TOPIC_ID, "partitions": [
        {"partition_index": 0, "error_code": 0, "high_watermark": 100, "last_stable_offset": -1,
         "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1, "records": b"",
         "diverging_epoch": {"epoch": 4, "end_offset": 80}, "current_leader": {"leader_id": 1, "leader_epoch": 6},
         "snapshot_id": {"end_offset": -1, "epoch": -1}}]}]},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code
        "00000000",  # session_id
        "02",  # responses [1]
        "0102030405060708090a0b0c0d0e0f10",  # topic_id
        "02",  # partitions [1]
        "00000000",  # partition_index
        "0000",  # error_code
        "0000000000000064",  # high_watermark
        "ffffffffffffffff",  # last_stable_offset -1
        "0000000000000000",  # log_start_offset
        "00",  # aborted_transactions: null
        "ffffffff",  # preferred_read_replica -1
        "01",  # records: empty compact records (0 + 1)
        "02",  # the partition's tagged fields: two (snapshot_id is its default, so absent)
        "00 0d",  # tag 0 diverging_epoch, 13 bytes
        "00000004 0000000000000050 00",  # epoch 4, end_offset 80, tagged fields
        "01 09",  # tag 1 current_leader, 9 bytes
        "00000001 00000006 00",  # leader_id 1, leader_epoch 6, tagged fields
        "00", "00",  # tagged fields: topic, response
    ),
)  # fmt: skip

RPC_CASES = [
    (RaftApiKeys.VOTE, 0, "request", *VOTE_REQUEST),
    (RaftApiKeys.VOTE, 0, "response", *VOTE_RESPONSE),
    (RaftApiKeys.BEGIN_QUORUM_EPOCH, 0, "request", *BEGIN_QUORUM_EPOCH_REQUEST),
    (RaftApiKeys.BEGIN_QUORUM_EPOCH, 0, "response", *LEADER_RESPONSE),
    (RaftApiKeys.END_QUORUM_EPOCH, 0, "request", *END_QUORUM_EPOCH_REQUEST),
    (RaftApiKeys.END_QUORUM_EPOCH, 0, "response", *LEADER_RESPONSE),
    (RaftApiKeys.DESCRIBE_QUORUM, 0, "request", *DESCRIBE_QUORUM_REQUEST),
    (RaftApiKeys.DESCRIBE_QUORUM, 1, "request", *DESCRIBE_QUORUM_REQUEST),
    (RaftApiKeys.DESCRIBE_QUORUM, 0, "response", *DESCRIBE_QUORUM_RESPONSE_V0),
    (RaftApiKeys.DESCRIBE_QUORUM, 1, "response", *DESCRIBE_QUORUM_RESPONSE_V1),
    (RaftApiKeys.FETCH_SNAPSHOT, 0, "request", *FETCH_SNAPSHOT_REQUEST),
    (RaftApiKeys.FETCH_SNAPSHOT, 0, "response", *FETCH_SNAPSHOT_RESPONSE),
    (RaftApiKeys.FETCH, 13, "request", *FETCH_REQUEST_V13),
    (RaftApiKeys.FETCH, 13, "response", *FETCH_RESPONSE_V13),
]


def _plain(value):
    """Decoded values with memoryviews as bytes, to compare with the expected dicts."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return bytes(value) if isinstance(value, memoryview) else value


@pytest.mark.parametrize(
    ("api", "version", "kind", "value", "golden"), RPC_CASES, ids=lambda c: getattr(c, "name", None)
)
def test_rpc_golden_bytes_both_ways(api, version, kind, value, golden):
    schema = api.request_schema(version) if kind == "request" else api.response_schema(version)
    assert encode(schema, value) == golden
    assert _plain(decode(schema, golden)) == value


DATA_CASES = [
    (
        QUORUM_STATE_DATA_V0,
        {"cluster_id": "", "leader_id": 1, "leader_epoch": 6, "voted_id": -1, "applied_offset": 0,
         "current_voters": [{"voter_id": 1}, {"voter_id": 2}]},
        h(
            "01",  # cluster_id: "" (0 + 1)
            "00000001",  # leader_id
            "00000006",  # leader_epoch
            "ffffffff",  # voted_id -1: voted for no one
            "0000000000000000",  # applied_offset
            "03",  # current_voters: 2 + 1
            "00000001 00", "00000002 00",  # voter_id and its (empty) tagged fields, twice
            "00",  # tagged fields
        ),
    ),
    (
        QUORUM_STATE_DATA_V0,
        {"cluster_id": "c", "leader_id": -1, "leader_epoch": -1, "voted_id": -1, "applied_offset": 0,
         "current_voters": None},
        h("02 63", "ffffffff", "ffffffff", "ffffffff", "0000000000000000",
          "00",  # current_voters: null (nullable in the spec)
          "00"),
    ),
    (
        LEADER_CHANGE_MESSAGE_V0,
        {"version": 0, "leader_id": 1, "voters": [{"voter_id": 1}, {"voter_id": 2}],
         "granting_voters": [{"voter_id": 1}]},
        h(
            "0000",  # version
            "00000001",  # leader_id
            "03 0000000100 0000000200",  # voters: 2 + 1, each voter_id + empty tagged fields
            "02 0000000100",  # granting_voters: 1 + 1
            "00",  # tagged fields
        ),
    ),
    (
        SNAPSHOT_HEADER_RECORD_V0,
        {"version": 0, "last_contained_log_timestamp": 1000},
        h("0000", "00000000000003e8", "00"),  # version, last_contained_log_timestamp, tagged fields
    ),
    (SNAPSHOT_FOOTER_RECORD_V0, {"version": 0}, h("0000", "00")),  # version, tagged fields
]  # fmt: skip


@pytest.mark.parametrize(("schema", "value", "golden"), DATA_CASES)
def test_data_message_golden_bytes_both_ways(schema, value, golden):
    assert encode(schema, value) == golden
    assert decode(schema, golden) == value


def test_flexible_requests_travel_with_header_v2_and_the_others_with_v1():
    vote = encode_raft_request(RequestHeader(52, 0, 7, "r"), VOTE_REQUEST[0])
    assert (
        vote
        == h(
            "0034 0000",  # api_key 52 (Vote), api_version 0
            "00000007",  # correlation_id
            "0001 72",  # client_id "r": a NON-compact nullable string, in every header version
            "00",  # header v2's tagged fields
        )
        + VOTE_REQUEST[1]
    )
    begin = encode_raft_request(RequestHeader(53, 0, 8, "r"), BEGIN_QUORUM_EPOCH_REQUEST[0])
    assert begin == h("0035 0000", "00000008", "0001 72") + BEGIN_QUORUM_EPOCH_REQUEST[1]  # header v1
    assert parse_raft_request(vote) == (RequestHeader(52, 0, 7, "r"), VOTE_REQUEST[0])
    assert parse_raft_request(begin) == (RequestHeader(53, 0, 8, "r"), BEGIN_QUORUM_EPOCH_REQUEST[0])


def test_flexible_responses_travel_with_header_v1_and_the_others_with_v0():
    vote = encode_raft_response(52, 0, 7, VOTE_RESPONSE[0])
    assert vote == h("00000007", "00") + VOTE_RESPONSE[1]  # correlation_id, header v1's tagged fields
    begin = encode_raft_response(53, 0, 8, LEADER_RESPONSE[0])
    assert begin == h("00000008") + LEADER_RESPONSE[1]  # header v0: the correlation id alone
    assert parse_raft_response(52, 0, vote) == (7, VOTE_RESPONSE[0])
    assert parse_raft_response(53, 0, begin) == (8, LEADER_RESPONSE[0])


def test_header_versions_follow_kafkas_flexible_versions():
    assert [api.request_header_version(api.latest_version) for api in RaftApiKeys] == [2, 2, 1, 1, 2, 2]
    assert [api.response_header_version(api.latest_version) for api in RaftApiKeys] == [1, 1, 0, 0, 1, 1]


def test_the_broker_tables_do_not_hold_the_raft_apis():
    """The quorum's RPCs are scoped to the controller listener: a broker neither advertises nor serves
    them, and its Fetch stays at the versions its clients speak."""
    for api in RaftApiKeys:
        if api is not RaftApiKeys.FETCH:
            assert ApiKeys.for_id(api) is None and api not in REQUESTS and api not in RESPONSES
    assert ApiKeys.FETCH.latest_version < RaftApiKeys.FETCH.oldest_version == 13


def test_a_broker_request_header_encodes_as_before():
    header = RequestHeader(1, 5, 9, "c")
    assert header.encode() == h("0001 0005", "00000009", "0001 63")  # v1, no tagged fields


# kafka-python 3 reads and writes flexible versions from Kafka's JSON specs with a codec of its own; it
# has DescribeQuorum and Fetch (at the versions these cases use), so those cases' golden bytes are
# checked against it too: it decodes them to the same values and writes them back byte for byte.
def _kafka_python_classes():
    from kafka.protocol.admin.cluster import DescribeQuorumRequest, DescribeQuorumResponse
    from kafka.protocol.consumer import FetchRequest, FetchResponse

    return {
        (RaftApiKeys.DESCRIBE_QUORUM, "request"): DescribeQuorumRequest,
        (RaftApiKeys.DESCRIBE_QUORUM, "response"): DescribeQuorumResponse,
        (RaftApiKeys.FETCH, "request"): FetchRequest,
        (RaftApiKeys.FETCH, "response"): FetchResponse,
    }


def _as_kafka_python_dict(value, defaults):
    """Our decoded value as kafka-python's ``to_dict(json=False)`` shows it: records as bytes, and a
    tagged struct that was absent (its default here) as None."""
    if isinstance(value, dict):
        return {
            k: None if defaults.get(k) == v else _as_kafka_python_dict(v, defaults) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_as_kafka_python_dict(v, defaults) for v in value]
    return bytes(value) if isinstance(value, memoryview) else value


@pytest.mark.parametrize(
    ("api", "version", "kind", "value", "golden"),
    [c for c in RPC_CASES if c[0] in (RaftApiKeys.DESCRIBE_QUORUM, RaftApiKeys.FETCH)],
    ids=lambda c: getattr(c, "name", None),
)
def test_kafka_pythons_codec_reads_and_writes_the_same_bytes(api, version, kind, value, golden):
    theirs = _kafka_python_classes()[api, kind][version].decode(golden)
    assert bytes(theirs.encode()) == golden
    defaults = {"snapshot_id": {"end_offset": -1, "epoch": -1}}  # Fetch v13's tagged structs left at default
    assert theirs.to_dict(json=False) == _as_kafka_python_dict(value, defaults)


def test_kafka_pythons_codec_writes_the_same_flexible_headers():
    from kafka.protocol.admin.cluster import DescribeQuorumRequest, DescribeQuorumResponse

    theirs = DescribeQuorumRequest[0].decode(DESCRIBE_QUORUM_REQUEST[1])
    theirs.with_header(correlation_id=7, client_id="r")
    assert bytes(theirs.encode(header=True)) == encode_raft_request(
        RequestHeader(55, 0, 7, "r"), DESCRIBE_QUORUM_REQUEST[0]
    )
    response = DescribeQuorumResponse.decode(
        encode_raft_response(55, 1, 7, DESCRIBE_QUORUM_RESPONSE_V1[0]), version=1, header=True
    )
    assert (response._header.version, response._header.correlation_id) == (1, 7)
