"""Where a task's output goes: the interface a sink node (and a logging store) sends records through.

Mirrors: org.apache.kafka.streams.processor.internals.RecordCollector
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/RecordCollector.java,
         Kafka 0.11.0, the interface; 0.10.1 has the same calls on one concrete class)
Book:    chapter 9, 9.1.3 (a task's output), 9.1.4 (changelog records)

``RecordCollectorImpl`` sends through a ``KafkaProducer``; the test driver's collector captures
records in memory. A task depends only on this interface, so the same ``StreamTask`` runs in both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from kafka_lite.common.topic_partition import TopicPartition


class RecordCollector(ABC):
    """Kafka's ``RecordCollector``."""

    @abstractmethod
    def send(
        self,
        topic: str,
        key: Any,
        value: Any,
        partition: int | None = None,
        timestamp: int | None = None,
        key_serializer: Any = None,
        value_serializer: Any = None,
        partitioner: Any = None,
    ) -> None:
        """Serialize and send one record; ``partitioner.partition(key, value, num_partitions)`` picks
        the partition when ``partition`` is None and a partitioner is given."""

    @abstractmethod
    def flush(self) -> None:
        """Wait until everything sent so far is acknowledged (a commit calls this before committing offsets)."""

    @abstractmethod
    def close(self) -> None:
        """Stop sending."""

    @abstractmethod
    def offsets(self) -> dict[TopicPartition, int]:
        """The last acknowledged offset of each partition written (the state manager checkpoints these)."""
