"""The record collector over a producer: it serializes, asks a stream partitioner for the partition,
remembers the acknowledged offsets, and raises a failed send at the next call."""

from __future__ import annotations

import pytest

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.producer.future_record_metadata import RecordMetadata
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.record_collector_impl import RecordCollectorImpl

pytestmark = pytest.mark.unit


class Future:
    """Completes at once, as a ``FutureRecordMetadata`` whose batch has been answered."""

    def __init__(self, metadata=None, error=None):
        self.metadata, self.error = metadata, error

    def add_callback(self, fn):
        if self.error is None:
            fn(self.metadata)
        return self

    def add_errback(self, fn):
        if self.error is not None:
            fn(self.error)
        return self


class ProducerDouble:
    """``send``, ``partitions_for`` and ``flush`` in ``KafkaProducer``'s shapes; each send gets the next offset."""

    def __init__(self, fail_with=None):
        self.sent, self.fail_with, self.flushes = [], fail_with, 0

    def partitions_for(self, topic):
        return [object()] * 4

    def send(self, topic, value=None, key=None, partition=None, timestamp_ms=None):
        self.sent.append((topic, key, value, partition, timestamp_ms))
        p = 0 if partition is None else partition
        metadata = RecordMetadata(
            topic, p, TopicPartition(topic, p), len(self.sent) - 1, timestamp_ms, None, -1, -1, -1
        )
        return Future(metadata, self.fail_with)

    def flush(self):
        self.flushes += 1


class ByLength:
    def partition(self, key, value, num_partitions):
        return len(key) % num_partitions


def test_send_serializes_partitions_and_remembers_the_acknowledged_offsets():
    producer = ProducerDouble()
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
    assert producer.sent == [("out", b"abc", b"\x07", 3, 5), ("out", b"k", b"v", 0, None)]
    assert collector.offsets() == {TopicPartition("out", 3): 0, TopicPartition("out", 0): 1}
    collector.flush()
    assert producer.flushes == 1


def test_a_failed_send_is_raised_at_the_next_call():
    collector = RecordCollectorImpl(ProducerDouble(fail_with=RuntimeError("broker said no")), "1_2")
    collector.send("out", b"k", b"v")
    assert collector.offsets() == {}
    with pytest.raises(StreamsException, match=r"task \[1_2\] exception caught when producing") as error:
        collector.flush()
    assert str(error.value.__cause__) == "broker said no"
