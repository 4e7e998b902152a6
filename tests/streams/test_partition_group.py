"""The record queues and the partition group: records are chosen by the smallest partition time, and
neither a partition's time nor the stream time ever goes back."""

from __future__ import annotations

import pytest

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.deserialization_exception_handler import LogAndFailExceptionHandler
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.min_timestamp_tracker import NOT_KNOWN, MinTimestampTracker
from kafka_lite.streams.processor.internals.partition_group import PartitionGroup, RecordInfo
from kafka_lite.streams.processor.internals.record_queue import RecordQueue
from kafka_lite.streams.processor.internals.source_node import SourceNode
from kafka_lite.streams.processor.internals.stamped_record import Stamped
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.processor.timestamp_extractor import ConsumerRecordTimestampExtractor
from tests.streams.support import raw

pytestmark = pytest.mark.unit

P0, P1 = TopicPartition("t", 0), TopicPartition("t", 1)
EXTRACTOR = ConsumerRecordTimestampExtractor()


class TaskContext:
    """The one thing a deserialization handler asks of its context: the task."""

    def task_id(self):
        return TaskId(0, 0)


def _queue(partition, source):
    return RecordQueue(partition, source, LogAndFailExceptionHandler(), TaskContext())


def _group():
    source = SourceNode("src", ["t"], value_deserializer=bytes.decode)
    return PartitionGroup({P0: _queue(P0, source), P1: _queue(P1, source)}, EXTRACTOR)


def test_the_tracker_keeps_the_minimum_of_what_is_buffered():
    tracker = MinTimestampTracker()
    assert tracker.get() == NOT_KNOWN
    elems = [Stamped(i, ts) for i, ts in enumerate([5, 3, 8, 4])]
    minima = []
    for e in elems:
        tracker.add_element(e)
        minima.append(tracker.get())
    assert minima == [5, 3, 3, 3]
    assert tracker.size() == 2, "only 3 and 4 can still become the minimum"
    removed = []
    for e in elems:  # oldest first, as a queue polls
        tracker.remove_element(e)
        removed.append(tracker.get())
    assert removed == [3, 4, 4, 4], "emptied, it remembers the last time it knew"


def test_the_group_picks_the_partition_with_the_smallest_time_and_stream_time_only_moves_forward():
    group = _group()
    group.add_raw_records(P0, [raw("t", 0, 0, 1), raw("t", 0, 1, 5)])
    assert group.timestamp() == NOT_KNOWN, "p1 has had no record yet"
    group.add_raw_records(P1, [raw("t", 1, 0, 3), raw("t", 1, 1, 4)])
    assert group.timestamp() == 1
    info = RecordInfo()
    picked, stream_times = [], []
    while (record := group.next_record(info)) is not None:
        picked.append((info.partition().partition, record.timestamp))
        stream_times.append(group.timestamp())
    assert picked == [(0, 1), (1, 3), (1, 4), (0, 5)]
    assert stream_times == [3, 4, 4, 4]
    assert group.num_buffered() == 0


def test_a_late_record_does_not_take_time_back():
    group = _group()
    group.add_raw_records(P0, [raw("t", 0, 0, 10)])
    group.add_raw_records(P1, [raw("t", 1, 0, 20)])
    group.next_record(RecordInfo())
    assert group.timestamp() == 10
    group.add_raw_records(P0, [raw("t", 0, 1, 2)])  # older than what p0 has already processed
    assert group.partition_queues[P0].timestamp() == 10
    assert group.timestamp() == 10
    info = RecordInfo()
    assert group.next_record(info).timestamp == 2, "the late record is processed, at its own timestamp"
    assert group.timestamp() == 10


def test_the_queue_deserializes_with_its_source_node():
    queue = _queue(
        P0, SourceNode("src", ["t"], key_deserializer=bytes.decode, value_deserializer=bytes.decode)
    )
    queue.add_raw_records([raw("t", 0, 7, 1, key=b"k", value=b"hello")], EXTRACTOR)
    record = queue.poll()
    assert (record.key(), record.value.value, record.offset()) == ("k", "hello", 7)


def test_a_record_that_cannot_be_read_fails_naming_its_offset():
    queue = _queue(P0, SourceNode("src", ["t"], value_deserializer=bytes.decode))
    with pytest.raises(
        StreamsException, match=r"Failed to deserialize the record at topic=t, partition=0, offset=9"
    ):
        queue.add_raw_records([raw("t", 0, 9, 1, value=b"\xff")], EXTRACTOR)


def test_a_negative_timestamp_is_refused():
    queue = _queue(P0, SourceNode("src", ["t"]))
    with pytest.raises(StreamsException, match="Extracted timestamp value is negative"):
        queue.add_raw_records([raw("t", 0, 0, -5)], EXTRACTOR)
