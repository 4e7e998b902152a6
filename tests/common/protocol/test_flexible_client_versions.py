"""The client table's flexible versions, AddPartitionsToTxn v3 and v4 (Kafka 2.8 and 3.6, KIP-890 part 1),
EndTxn v5 (Kafka 4.0, KIP-890 part 2) and DescribeProducers v0 (Kafka 3.0, KIP-664):
golden bytes worked by hand from Kafka 3.6.0's message specs, one line per field; each case decoded
from its bytes and encoded back to them, and kafka-python's message classes (an independent codec)
writing the same bytes. Then the frames: header v2 on the request, v1 on the response."""

from __future__ import annotations

import pytest
from kafka.protocol.admin.transactions import DescribeProducersRequest as KpDescribeProducers
from kafka.protocol.admin.transactions import DescribeProducersResponse as KpDescribeProducersResponse
from kafka.protocol.producer.transaction import AddPartitionsToTxnRequest as KpRequest
from kafka.protocol.producer.transaction import AddPartitionsToTxnResponse as KpResponse
from kafka.protocol.producer.transaction import EndTxnRequest as KpEndTxn
from kafka.protocol.producer.transaction import EndTxnResponse as KpEndTxnResponse

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import (
    RequestHeader,
    encode_request,
    encode_response,
    parse_request,
    parse_response,
)
from kafka_lite.common.protocol.types import decode, encode

pytestmark = pytest.mark.unit

API = ApiKeys.ADD_PARTITIONS_TO_TXN


def h(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields).replace(" ", ""))


VERIFY_REQUEST_V4 = (
    {"transactions": [{"transactional_id": "txn", "producer_id": 7, "producer_epoch": 2, "verify_only": True,
                       "topics": [{"topic": "t", "partitions": [0, 1]}]}]},
    h(
        "02",  # transactions: compact array, 1 + 1
        "04 74786e",  # transactional_id: compact string, 3 + 1, "txn"
        "0000000000000007",  # producer_id: int64
        "0002",  # producer_epoch: int16
        "01",  # verify_only: true
        "02",  # topics: 1 + 1
        "02 74",  # name: 1 + 1, "t"
        "03 00000000 00000001",  # partitions: compact array of int32, 2 + 1
        "00",  # the topic's tagged fields: none
        "00",  # the transaction's tagged fields
        "00",  # the request's tagged fields
    ),
)  # fmt: skip
VERIFY_RESPONSE_V4 = (
    {"throttle_time_ms": 0, "error_code": 0, "results_by_transaction": [
        {"transactional_id": "txn", "topic_results": [
            {"topic": "t", "partition_errors": [{"partition": 0, "error_code": 0},
                                                {"partition": 1, "error_code": 48}]}]}]},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code: the request as a whole, NONE
        "02",  # results_by_transaction: 1 + 1
        "04 74786e",  # transactional_id "txn"
        "02",  # topic_results: 1 + 1
        "02 74",  # name "t"
        "03",  # results_by_partition: 2 + 1
        "00000000 0000 00",  # partition 0: NONE, no tagged fields
        "00000001 0030 00",  # partition 1: INVALID_TXN_STATE (48)
        "00",  # the topic result's tagged fields
        "00",  # the transaction result's tagged fields
        "00",  # the response's tagged fields
    ),
)  # fmt: skip
ADD_REQUEST_V3 = (
    {"transactional_id": "txn", "producer_id": 7, "producer_epoch": 2,
     "topics": [{"topic": "t", "partitions": [3]}]},
    h(
        "04 74786e",  # v3_and_below_transactional_id: compact string
        "0000000000000007",  # producer_id
        "0002",  # producer_epoch
        "02",  # topics: 1 + 1
        "02 74",  # name "t"
        "02 00000003",  # partitions: [3]
        "00",  # the topic's tagged fields
        "00",  # the request's tagged fields
    ),
)  # fmt: skip
ADD_RESPONSE_V3 = (
    {"throttle_time_ms": 5, "errors": [{"topic": "t", "partition_errors": [{"partition": 3, "error_code": 0}]}]},
    h(
        "00000005",  # throttle_time_ms
        "02",  # results_by_topic_v3_and_below: 1 + 1
        "02 74",  # name "t"
        "02",  # results_by_partition: 1 + 1
        "00000003 0000 00",  # partition 3: NONE
        "00",  # the topic result's tagged fields
        "00",  # the response's tagged fields
    ),
)  # fmt: skip

END_TXN_REQUEST_V5 = (
    {"transactional_id": "txn", "producer_id": 7, "producer_epoch": 2, "transaction_result": True},
    h(
        "04 74786e",  # transactional_id: compact string
        "0000000000000007",  # producer_id
        "0002",  # producer_epoch
        "01",  # committed: true
        "00",  # the request's tagged fields
    ),
)  # fmt: skip
END_TXN_RESPONSE_V5 = (
    {"throttle_time_ms": 0, "error_code": 0, "producer_id": 7, "producer_epoch": 3},
    h(
        "00000000",  # throttle_time_ms
        "0000",  # error_code NONE
        "0000000000000007",  # producer_id: the same id
        "0003",  # producer_epoch: the request's, bumped
        "00",  # the response's tagged fields
    ),
)  # fmt: skip
END_TXN_RESPONSE_V3 = (
    {"throttle_time_ms": 0, "error_code": 47},
    h(
        "00000000",  # throttle_time_ms
        "002f",  # error_code INVALID_PRODUCER_EPOCH (47)
        "00",  # the response's tagged fields
    ),
)  # fmt: skip

DESCRIBE_PRODUCERS_REQUEST_V0 = (
    {"topics": [{"topic": "t", "partition_indexes": [0]}]},
    h(
        "02",  # topics: 1 + 1
        "02 74",  # name "t"
        "02 00000000",  # partition_indexes: [0]
        "00",  # the topic's tagged fields
        "00",  # the request's tagged fields
    ),
)  # fmt: skip
DESCRIBE_PRODUCERS_RESPONSE_V0 = (
    {"throttle_time_ms": 0, "topics": [{"topic": "t", "partitions": [
        {"partition_index": 0, "error_code": 0, "error_message": None, "active_producers": [
            {"producer_id": 7, "producer_epoch": 1, "last_sequence": 3, "last_timestamp": 1000,
             "coordinator_epoch": 2, "current_txn_start_offset": 1}]}]}]},
    h(
        "00000000",  # throttle_time_ms
        "02",  # topics: 1 + 1
        "02 74",  # name "t"
        "02",  # partitions: 1 + 1
        "00000000",  # partition_index 0
        "0000",  # error_code NONE
        "00",  # error_message: compact nullable string, null
        "02",  # active_producers: 1 + 1
        "0000000000000007",  # producer_id
        "00000001",  # producer_epoch: int32 here, as the spec has it
        "00000003",  # last_sequence
        "00000000000003e8",  # last_timestamp 1000
        "00000002",  # coordinator_epoch
        "0000000000000001",  # current_txn_start_offset
        "00",  # the producer's tagged fields
        "00",  # the partition's tagged fields
        "00",  # the topic's tagged fields
        "00",  # the response's tagged fields
    ),
)  # fmt: skip

CASES = {
    "verify request v4": (API.request_schema(4), *VERIFY_REQUEST_V4),
    "verify response v4": (API.response_schema(4), *VERIFY_RESPONSE_V4),
    "add request v3": (API.request_schema(3), *ADD_REQUEST_V3),
    "add response v3": (API.response_schema(3), *ADD_RESPONSE_V3),
    # v3 and v4 ask the same as v5 (v4 only lets the answer be TRANSACTION_ABORTABLE) ...
    "end txn request v3": (ApiKeys.END_TXN.request_schema(3), *END_TXN_REQUEST_V5),
    "end txn request v4": (ApiKeys.END_TXN.request_schema(4), *END_TXN_REQUEST_V5),
    # ... and answer without the producer: its fields are v5's
    "end txn response v3": (ApiKeys.END_TXN.response_schema(3), *END_TXN_RESPONSE_V3),
    "end txn response v4": (ApiKeys.END_TXN.response_schema(4), *END_TXN_RESPONSE_V3),
    "end txn request v5": (ApiKeys.END_TXN.request_schema(5), *END_TXN_REQUEST_V5),
    "end txn response v5": (ApiKeys.END_TXN.response_schema(5), *END_TXN_RESPONSE_V5),
    "describe producers request v0": (
        ApiKeys.DESCRIBE_PRODUCERS.request_schema(0),
        *DESCRIBE_PRODUCERS_REQUEST_V0,
    ),
    "describe producers response v0": (
        ApiKeys.DESCRIBE_PRODUCERS.response_schema(0),
        *DESCRIBE_PRODUCERS_RESPONSE_V0,
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_golden_bytes_decode_and_encode_back(case):
    schema, value, wire = CASES[case]
    assert decode(schema, wire) == value
    assert encode(schema, value) == wire


def test_kafka_python_writes_the_same_bytes():
    tx = KpRequest.AddPartitionsToTxnTransaction
    topic = KpRequest.AddPartitionsToTxnTopic
    verify = KpRequest(transactions=[tx(transactional_id="txn", producer_id=7, producer_epoch=2, verify_only=True,
                                        topics=[topic(name="t", partitions=[0, 1])])])  # fmt: skip
    assert bytes(verify.encode(version=4)) == VERIFY_REQUEST_V4[1]
    add = KpRequest(v3_and_below_transactional_id="txn", v3_and_below_producer_id=7, v3_and_below_producer_epoch=2,
                    v3_and_below_topics=[topic(name="t", partitions=[3])])  # fmt: skip
    assert bytes(add.encode(version=3)) == ADD_REQUEST_V3[1]
    producers = KpDescribeProducers(
        topics=[KpDescribeProducers.TopicRequest(name="t", partition_indexes=[0])]
    )
    assert bytes(producers.encode(version=0)) == DESCRIBE_PRODUCERS_REQUEST_V0[1]
    (topic,) = KpDescribeProducersResponse.decode(DESCRIBE_PRODUCERS_RESPONSE_V0[1], version=0).topics
    assert topic.partitions[0].active_producers[0].current_txn_start_offset == 1
    end = KpEndTxn(transactional_id="txn", producer_id=7, producer_epoch=2, committed=True)
    assert bytes(end.encode(version=5)) == END_TXN_REQUEST_V5[1]
    ended = KpEndTxnResponse(throttle_time_ms=0, error_code=0, producer_id=7, producer_epoch=3)
    assert bytes(ended.encode(version=5)) == END_TXN_RESPONSE_V5[1]
    fenced = KpEndTxnResponse(throttle_time_ms=0, error_code=47)
    assert bytes(fenced.encode(version=3)) == END_TXN_RESPONSE_V3[1]
    answered = KpResponse.decode(VERIFY_RESPONSE_V4[1], version=4)
    (result,) = answered.results_by_transaction
    assert [p.partition_error_code for p in result.topic_results[0].results_by_partition] == [0, 48]


def test_a_flexible_version_travels_with_header_v2_and_answers_with_header_v1():
    header = RequestHeader(API, 4, 99, "broker-1")
    frame = encode_request(header, VERIFY_REQUEST_V4[0])
    # api key, version, correlation id, client id (a non-compact string in every header), no tags
    assert frame[: 2 + 2 + 4 + 2 + 8 + 1] == h("0018 0004 00000063 0008", "62726f6b65722d31", "00")
    assert parse_request(frame) == (header, VERIFY_REQUEST_V4[0])
    answer = encode_response(API, 4, 99, VERIFY_RESPONSE_V4[0])
    assert answer[:5] == h("00000063 00")  # correlation id, then the response header's tagged fields
    assert parse_response(API, 4, answer) == (99, VERIFY_RESPONSE_V4[0])
    # v1 is not flexible: header v1 (no tagged fields) and response header v0
    old = encode_request(RequestHeader(API, 1, 7, "c"), ADD_REQUEST_V3[0])
    assert old[:11] == h("0018 0001 00000007 0001 63")
    assert encode_response(API, 1, 7, ADD_RESPONSE_V3[0])[:4] == h("00000007")
