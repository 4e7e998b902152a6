"""A sink task: handed batches of records by the worker, asked to flush before offsets are committed.

Mirrors: org.apache.kafka.connect.sink.SinkTask and SinkTaskContext
         (connect/api/src/main/java/org/apache/kafka/connect/sink/SinkTask.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

The delivery guarantee lives in the order of two calls: the worker calls ``flush(offsets)`` and
only when it returns commits ``offsets`` to the consumer group. A task that wrote everything it
was given by then loses nothing in a crash; it may see records again (at-least-once).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.connect.connector.task import Task
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

TOPICS_CONFIG = "topics"


class SinkTaskContext(ABC):
    @abstractmethod
    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        """Rewind (or skip) the consumer to these offsets before the next batch."""

    @abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """After a ``RetriableException``, retry the batch in at most ``timeout_ms``."""

    @abstractmethod
    def assignment(self) -> set[TopicPartition]: ...

    @abstractmethod
    def pause(self, *partitions: TopicPartition) -> None: ...

    @abstractmethod
    def resume(self, *partitions: TopicPartition) -> None: ...


class SinkTask(Task):
    TOPICS_CONFIG = TOPICS_CONFIG

    def __init__(self) -> None:
        self.context: SinkTaskContext | None = None

    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    @abstractmethod
    def put(self, records: Collection[SinkRecord]) -> None:
        """Write (or buffer) ``records``; raise ``RetriableException`` to have them handed again."""

    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Make everything ``put`` so far durable: the worker commits ``current_offsets`` next."""

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """The task now owns ``partitions`` (after a rebalance)."""

    def close(self, partitions: Collection[TopicPartition]) -> None:
        """The task no longer owns ``partitions``: their offsets were just committed."""
