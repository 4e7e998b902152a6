"""kafka-python's shapes, without a broker: a program written for kafka-python reads kafka_lite's
records, offsets and partitions by the same field names and types. The named tuples are compared
with kafka-python's own; every partition a public method hands out is a ``TopicPartition``, fed
through the parsing of the responses that carry them (plain ``(topic, partition)`` pairs in)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kafka.consumer.fetcher import ConsumerRecord as KafkaPythonConsumerRecord
from kafka.structs import OffsetAndMetadata as KafkaPythonOffsetAndMetadata
from kafka.structs import TopicPartition as KafkaPythonTopicPartition

from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.consumer import (
    ConsumerRecord,
    KafkaConsumer,
    OffsetAndMetadata,
    OffsetAndTimestamp,
    TopicPartition,
)
from kafka_lite.consumer.internals.consumer_protocol import (
    Assignment,
    deserialize_assignment,
    serialize_assignment,
)
from kafka_lite.consumer.internals.fetcher import _ListOffsetResponseHandler
from kafka_lite.consumer.internals.request_future import RequestFuture
from kafka_lite.consumer.range_assignor import RangeAssignor
from kafka_lite.consumer.round_robin_assignor import RoundRobinAssignor

pytestmark = pytest.mark.unit
NOWHERE = "127.0.0.1:1"  # never contacted: every response here is handed to the parsing code


def test_the_named_tuples_have_kafka_pythons_fields_in_its_order():
    assert ConsumerRecord._fields == KafkaPythonConsumerRecord._fields
    assert OffsetAndMetadata._fields == KafkaPythonOffsetAndMetadata._fields
    assert TopicPartition._fields == KafkaPythonTopicPartition._fields


def test_offset_and_metadata_defaults_as_kafka_python_and_keeps_none_as_empty():
    assert OffsetAndMetadata(42) == (42, "", -1) == OffsetAndMetadata(42, "", -1)
    assert OffsetAndMetadata(42, None).metadata == "", "a null metadata is stored as the empty string"
    offset, metadata, leader_epoch = OffsetAndMetadata(7, "m", 3)
    assert (offset, metadata, leader_epoch) == (7, "m", 3)


def _fetch_response(topic: str, partition: int, values: list[bytes]) -> ClientResponse:
    """A Fetch v5 response body for one partition, as the network client hands it over."""
    records = MemoryRecords.with_records(
        [(1_600_000_000_000 + i, None, v) for i, v in enumerate(values)], base_offset=0
    )
    header = {"partition": partition, "error_code": 0, "high_watermark": len(values)}
    body = {
        "responses": [
            {
                "topic": topic,
                "partition_responses": [{"partition_header": header, "record_set": bytes(records.buffer())}],
            }
        ]
    }
    return ClientResponse(SimpleNamespace(created_ms=0), 0, body)


@pytest.fixture
def consumer():
    c = KafkaConsumer(
        bootstrap_servers=NOWHERE,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        value_deserializer=bytes.decode,
        consumer_timeout_ms=50,
    )
    yield c
    c.close(timeout_ms=0)


def test_assignment_paused_poll_and_iteration_give_topic_partitions_and_records(consumer):
    consumer.assign([("orders", 0), ("orders", 1)])  # plain pairs in, as a caller may pass them
    assert consumer.assignment() == {TopicPartition("orders", 0), TopicPartition("orders", 1)}
    assert all(type(tp) is TopicPartition for tp in consumer.assignment())
    consumer.pause(("orders", 1))
    assert [type(tp) for tp in consumer.paused()] == [TopicPartition]
    consumer.seek(("orders", 0), 0)
    consumer.seek(("orders", 1), 0)

    consumer.fetcher._on_fetch_response(_fetch_response("orders", 0, [b"a", b"b", b"c"]), {("orders", 0): 0})
    records = consumer.poll(timeout_ms=0, max_records=2)
    assert [type(tp) for tp in records] == [TopicPartition]
    ((tp, got),) = records.items()
    assert (tp.topic, tp.partition) == ("orders", 0)
    first = got[0]
    assert isinstance(first, ConsumerRecord)
    assert (first.topic, first.partition, first.leader_epoch, first.offset, first.value) == (
        "orders",
        0,
        -1,
        0,
        "a",
    )
    assert (
        first.headers,
        first.serialized_key_size,
        first.serialized_value_size,
        first.serialized_header_size,
    ) == ((), -1, 1, -1)
    assert consumer.position(TopicPartition("orders", 0)) == 2
    assert [r.value for r in consumer] == ["c"], "iteration hands out what is left, then stops"


def test_list_offsets_answers_are_keyed_by_topic_partition():
    future: RequestFuture = RequestFuture()
    body = {
        "responses": [
            {
                "topic": "t",
                "partition_responses": [{"partition": 3, "error_code": 0, "offset": 17, "timestamp": 5}],
            }
        ]
    }
    _ListOffsetResponseHandler(None, {("t", 3): -1}).on_success(ClientResponse(None, 0, body), future)
    ((tp, found),) = future.value().items()
    assert type(tp) is TopicPartition and found == OffsetAndTimestamp(17, 5)


def test_assignments_and_assignors_give_topic_partitions():
    partitions = deserialize_assignment(serialize_assignment(Assignment([("t", 0), ("t", 1)]))).partitions
    assert [type(tp) for tp in partitions] == [TopicPartition, TopicPartition]
    for assignor in (RangeAssignor(), RoundRobinAssignor()):
        assigned = assignor.assign_partitions({"t": 4}, {"m1": ["t"], "m2": ["t"]})
        assert all(type(tp) is TopicPartition for tps in assigned.values() for tp in tps), assignor.name()
