"""The consumer has no valid offset for some partitions, and no reset policy to find one.

Mirrors: org.apache.kafka.clients.consumer.InvalidOffsetException
         (clients/src/main/java/org/apache/kafka/clients/consumer/InvalidOffsetException.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.1.2 (resetting positions before the first fetch)

The parent of the two ways ``auto.offset.reset = none`` surfaces: ``OffsetOutOfRangeException``
(a fetch offset outside the log) and ``NoOffsetForPartitionException`` (no committed offset). An
application catches this one to handle both, and decides itself where to ``seek``.
"""

from __future__ import annotations

from kafka_lite.common.errors import KafkaException


class InvalidOffsetException(KafkaException):
    """The consumer has no valid offset for some partitions (Kafka's ``InvalidOffsetException``)."""
