"""A fetch offset is outside its partition's log, and ``auto.offset.reset`` is ``none``.

Mirrors: org.apache.kafka.clients.consumer.OffsetOutOfRangeException
         (clients/src/main/java/org/apache/kafka/clients/consumer/OffsetOutOfRangeException.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.1.5 (the consumer getting records: a partition's error decides what happens)

The ``Fetcher`` raises it when a partition answers OFFSET_OUT_OF_RANGE for the offset that is
still its position; it carries each such partition with the offset that was fetched.
"""

from __future__ import annotations

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.invalid_offset_exception import InvalidOffsetException


class OffsetOutOfRangeException(InvalidOffsetException):
    """A fetch offset is outside the partition's log and ``auto.offset.reset`` is ``none``."""

    def __init__(self, offset_out_of_range_partitions: dict[TopicPartition, int]) -> None:
        self.offset_out_of_range_partitions = dict(offset_out_of_range_partitions)
        where = ", ".join(
            f"{tp[0]}-{tp[1]}={offset}" for tp, offset in sorted(self.offset_out_of_range_partitions.items())
        )
        super().__init__(f"Offsets out of range with no configured reset policy for partitions: {{{where}}}")
