"""The record collector over a producer: it serializes, asks a stream partitioner for the partition,
remembers the acknowledged offsets, and raises a failed send at the next call."""

from __future__ import annotations

import pytest

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.default_partitioner import murmur2, to_positive
from kafka_lite.producer.future_record_metadata import FutureRecordMetadata, ProduceRequestResult
from kafka_lite.producer.producer_record import ProducerRecord
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.record_collector_impl import RecordCollectorImpl
from kafka_lite.streams.test_utils.topology_test_driver import DriverProducer

pytestmark = pytest.mark.unit


class FailingProducer(DriverProducer):
    """Every send fails, as a send the broker refuses: the callback and the future get the error."""

    def send(self, topic, value=None, key=None, partition=None, timestamp_ms=None, callback=None):
        error = RuntimeError("broker said no")
        result = ProduceRequestResult(TopicPartition(topic, 0))
        result.set(-1, -1, error)
        result.done()
        if callback is not None:
            callback(None, error)
        return FutureRecordMetadata(result, 0, timestamp_ms, None, -1, -1, -1)


class ByLength:
    def partition(self, key, value, num_partitions):
        return len(key) % num_partitions


def test_send_serializes_partitions_and_remembers_the_acknowledged_offsets():
    producer = DriverProducer(num_partitions=4)
    collector = RecordCollectorImpl(producer, "0_0")
    collector.send(
        "out",
        "abc",
        7,
        timestamp=5,
        key_serializer=str.encode,
        value_serializer=lambda n: bytes([n]),
        partitioner=ByLength(),
    )
    collector.send("out", b"k", b"v", partition=0)
    collector.send("out", b"k", b"w", partition=0)
    assert list(producer.history["out"]) == [
        ProducerRecord("out", b"\x07", b"abc", 3, 5),
        ProducerRecord("out", b"v", b"k", 0, None),
        ProducerRecord("out", b"w", b"k", 0, None),
    ]
    assert collector.offsets() == {TopicPartition("out", 3): 0, TopicPartition("out", 0): 1}


def test_a_failed_send_is_raised_at_the_next_call():
    collector = RecordCollectorImpl(FailingProducer(1), "1_2")
    collector.send("out", b"k", b"v")
    assert collector.offsets() == {}
    with pytest.raises(StreamsException, match=r"task \[1_2\] exception caught when producing") as error:
        collector.flush()
    assert str(error.value.__cause__) == "broker said no"


class CountingProducer(DriverProducer):
    """Counts the metadata look-ups: a stream partitioner needs the partition count, nothing else does."""

    def __init__(self, num_partitions):
        super().__init__(num_partitions)
        self.partitions_for_calls = 0

    def partitions_for(self, topic):
        self.partitions_for_calls += 1
        return super().partitions_for(topic)


def test_only_a_stream_partitioner_asks_the_producer_for_the_partitions():
    producer = CountingProducer(4)
    collector = RecordCollectorImpl(producer, "0_0")
    collector.send("out", b"k", b"v")  # the producer's partitioner decides
    collector.send("out", b"k", b"v", partition=2, partitioner=ByLength())  # the caller's partition
    assert producer.partitions_for_calls == 0
    collector.send("out", b"abc", b"v", partitioner=ByLength())
    assert producer.partitions_for_calls == 1
    assert [r.partition for r in producer.history["out"]] == [
        to_positive(murmur2(b"k")) % 4,
        2,
        3,
    ]


class FailsValue(DriverProducer):
    """Acknowledges every record but the one whose value is ``failing``, which the broker refuses."""

    def __init__(self, failing):
        super().__init__(1)
        self.failing = failing

    def send(self, topic, value=None, key=None, partition=None, timestamp_ms=None, callback=None):
        if value == self.failing:
            return FailingProducer(1).send(topic, value, key, partition, timestamp_ms, callback)
        return super().send(topic, value, key, partition, timestamp_ms, callback)


def test_a_refused_record_records_no_offset_and_is_raised_at_the_next_send():
    collector = RecordCollectorImpl(FailsValue(b"refused"), "0_0")
    collector.send("out", b"k", b"first", partition=0)
    collector.send("out", b"k", b"refused", partition=0)
    assert collector.offsets() == {TopicPartition("out", 0): 0}
    with pytest.raises(StreamsException, match="exception caught when producing"):
        collector.send("out", b"k", b"after", partition=0)
