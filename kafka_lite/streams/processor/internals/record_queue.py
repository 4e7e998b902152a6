"""The records of one partition, deserialized and stamped, waiting for their task to process them.

Mirrors: org.apache.kafka.streams.processor.internals.RecordQueue
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/RecordQueue.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (each partition of a task has a queue; its time is its smallest timestamp)
Differs: deserialization goes through Kafka 1.0's ``RecordDeserializer`` (KIP-161), so a record that
         cannot be read is skipped or fails as ``default.deserialization.exception.handler`` says.

The consumer hands a task raw records (bytes). Each is deserialized here, with the deserializers
of the source node that reads its topic (a record the handler skips goes no further), stamped by
the timestamp extractor, and appended. The
queue's ``timestamp()`` is its *partition time*: the smallest timestamp among the buffered records
(``MinTimestampTracker``), and it only moves forward. A late record, older than records already
processed, does not pull the partition's time back.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.streams.deserialization_exception_handler import DeserializationExceptionHandler
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.internals.min_timestamp_tracker import NOT_KNOWN, MinTimestampTracker
from kafka_lite.streams.processor.internals.record_deserializer import RecordDeserializer
from kafka_lite.streams.processor.internals.stamped_record import StampedRecord
from kafka_lite.streams.processor.timestamp_extractor import TimestampExtractor

if TYPE_CHECKING:
    from kafka_lite.streams.processor.internals.source_node import SourceNode
    from kafka_lite.streams.processor.processor_context import ProcessorContext


class RecordQueue:
    """Kafka's ``RecordQueue``: a FIFO of stamped records for one partition, and its partition time."""

    def __init__(
        self,
        partition: TopicPartition,
        source: SourceNode,
        deserialization_exception_handler: DeserializationExceptionHandler,
        processor_context: ProcessorContext,
    ) -> None:
        self.partition = partition
        self.source = source
        self.record_deserializer = RecordDeserializer(source, deserialization_exception_handler)
        self.processor_context = processor_context  # what the handler is told the record's task is
        self.fifo_queue: deque[StampedRecord] = deque()
        self.time_tracker = MinTimestampTracker()
        self.partition_time = NOT_KNOWN

    def add_raw_records(
        self, raw_records: Iterable[ConsumerRecord], timestamp_extractor: TimestampExtractor
    ) -> int:
        """Deserialize, stamp and append; return the queue's new size."""
        for raw in raw_records:
            record = self.record_deserializer.deserialize(self.processor_context, raw)
            if record is None:
                continue  # the handler skipped it, and has logged why
            timestamp = timestamp_extractor.extract(record)
            if timestamp < 0:
                raise StreamsException("Extracted timestamp value is negative, which is not allowed.")
            stamped = StampedRecord(record, timestamp)
            self.fifo_queue.append(stamped)
            self.time_tracker.add_element(stamped)
        # Only moves forward; in practice this matters for the first batch, which sets the time.
        self.partition_time = max(self.partition_time, self.time_tracker.get())
        return self.size()

    def poll(self) -> StampedRecord | None:
        """The oldest buffered record (first in, first out), or None."""
        if not self.fifo_queue:
            return None
        elem = self.fifo_queue.popleft()
        self.time_tracker.remove_element(elem)
        self.partition_time = max(self.partition_time, self.time_tracker.get())
        return elem

    def size(self) -> int:
        return len(self.fifo_queue)

    def is_empty(self) -> bool:
        return not self.fifo_queue

    def timestamp(self) -> int:
        """The partition time: NOT_KNOWN (-1) until the first record arrives."""
        return self.partition_time
