"""A task's partitions together: which buffered record the task processes next, and the task's time.

Mirrors: org.apache.kafka.streams.processor.internals.PartitionGroup
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/PartitionGroup.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (choosing the next record by timestamp; stream time)

A task reads several partitions (partition 3 of each of its source topics). To process their
records roughly in time order, without waiting for all of them, the group keeps its non-empty
queues in a priority queue by each queue's partition time, and takes the next record from the
queue whose time is smallest. The *stream time* of the task is the smallest partition time over
all its partitions; since each partition time only moves forward, so does the stream time, and
punctuation, which follows stream time, never fires for a time that has passed.

    queue A (p0): ts 1, 5        queue B (p1): ts 3, 4
    next: A(1) -> B(3) -> B(4) -> A(5)      stream time after each: 3, 4, 4, 4

(B's time stays at 4 once B is drained, until B receives records again: the task waits, in stream
time, for its slowest partition.)

The heap here holds (partition time, arrival number, queue): the arrival number breaks ties in
the order queues were offered, which Java's ``PriorityQueue`` leaves unspecified. A queue's time
can change only when it is polled, and it is out of the heap then, so the keys in the heap stay true.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.streams.processor.internals.record_queue import RecordQueue
from kafka_lite.streams.processor.internals.source_node import SourceNode
from kafka_lite.streams.processor.internals.stamped_record import StampedRecord
from kafka_lite.streams.processor.timestamp_extractor import TimestampExtractor

MAX_TIMESTAMP = 2**63 - 1  # Java's Long.MAX_VALUE, the stream time of a group with no partitions


@dataclass
class RecordInfo:
    """Where the last ``next_record`` came from (Kafka's ``PartitionGroup.RecordInfo``)."""

    queue: RecordQueue | None = None

    def node(self) -> SourceNode:
        assert self.queue is not None
        return self.queue.source

    def partition(self) -> TopicPartition:
        assert self.queue is not None
        return self.queue.partition


class PartitionGroup:
    """Kafka's ``PartitionGroup``: the queues of one task, chosen from by smallest partition time."""

    def __init__(
        self, partition_queues: dict[TopicPartition, RecordQueue], timestamp_extractor: TimestampExtractor
    ) -> None:
        self.partition_queues = partition_queues
        self.timestamp_extractor = timestamp_extractor
        self.queues_by_time: list[tuple[int, int, RecordQueue]] = []
        self._arrivals = itertools.count()
        self.total_buffered = 0

    def _offer(self, queue: RecordQueue) -> None:
        heapq.heappush(self.queues_by_time, (queue.timestamp(), next(self._arrivals), queue))

    # --8<-- [start:next_record]
    def next_record(self, info: RecordInfo) -> StampedRecord | None:
        """Take the next record from the queue with the smallest partition time; note its queue in ``info``."""
        record = None
        queue = heapq.heappop(self.queues_by_time)[2] if self.queues_by_time else None
        if queue is not None:
            record = queue.poll()
            if not queue.is_empty():
                self._offer(queue)  # with its new (later or equal) time
        info.queue = queue
        if record is not None:
            self.total_buffered -= 1
        return record

    # --8<-- [end:next_record]

    def add_raw_records(self, partition: TopicPartition, raw_records: Iterable[ConsumerRecord]) -> int:
        """Buffer records of ``partition``; return the size of its queue."""
        record_queue = self.partition_queues[partition]
        old_size = record_queue.size()
        new_size = record_queue.add_raw_records(raw_records, self.timestamp_extractor)
        # An empty queue is not in the heap: it joins when it has something to offer.
        if old_size == 0 and new_size > 0:
            self._offer(record_queue)
        self.total_buffered += new_size - old_size
        return new_size

    def partitions(self) -> set[TopicPartition]:
        return set(self.partition_queues)

    def timestamp(self) -> int:
        """The stream time: the smallest partition time, so that the group's time never goes back."""
        return min((q.timestamp() for q in self.partition_queues.values()), default=MAX_TIMESTAMP)

    def num_buffered(self, partition: TopicPartition | None = None) -> int:
        """Records buffered in all queues, or in the queue of ``partition``."""
        if partition is None:
            return self.total_buffered
        if partition not in self.partition_queues:
            raise RuntimeError("Record's partition does not belong to this partition-group.")
        return self.partition_queues[partition].size()

    def close(self) -> None:
        self.queues_by_time.clear()
        self.partition_queues.clear()
