"""A partition needs a position, has no committed offset, and ``auto.offset.reset`` is ``none``.

Mirrors: org.apache.kafka.clients.consumer.NoOffsetForPartitionException
         (clients/src/main/java/org/apache/kafka/clients/consumer/NoOffsetForPartitionException.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.1.2 (resetting positions before the first fetch)
"""

from __future__ import annotations

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.invalid_offset_exception import InvalidOffsetException


class NoOffsetForPartitionException(InvalidOffsetException):
    """A partition needs a reset and ``auto.offset.reset`` is ``none``."""

    def __init__(self, partition: TopicPartition) -> None:
        self.partition = partition
        super().__init__(
            f"Undefined offset with no reset policy for partition: {partition[0]}-{partition[1]}"
        )
