"""A sink task: handed batches of records by the worker, asked before each commit which offsets are safe.

Mirrors: org.apache.kafka.connect.sink.SinkTask and SinkTaskContext
         (connect/api/src/main/java/org/apache/kafka/connect/sink/SinkTask.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: none.

The delivery guarantee lives in the order of two steps: before committing, the worker calls
``pre_commit(current_offsets)``, and it commits only what that returns. The default is the
flush-then-commit of the first Connect: ``pre_commit`` calls ``flush(current_offsets)`` and returns
the offsets unchanged, so a task that wrote everything it was given by then loses nothing in a
crash; it may see records again (at-least-once).

A task that writes asynchronously, or keeps its offsets in the sink itself (in the same
transaction as its rows, say), overrides ``pre_commit`` (KIP-89, Kafka 0.10.2): it returns the
offsets of what is really durable, which may be behind what it was given, or ``{}`` to have
the worker commit nothing at all. Such a task reads its offsets back in ``open`` and hands them
to ``context.offset(...)``, and the worker seeks there before it fetches.
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
        """Make everything ``put`` so far durable; ``current_offsets`` are the offsets after it."""

    def pre_commit(
        self, current_offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Before each commit: return the offsets safe to commit, or ``{}`` to commit none.

        ``current_offsets`` holds, for each assigned partition, the offset after the last record
        ``put``. The default flushes and returns them all, since after ``flush`` every record up to
        there is durable.
        """
        self.flush(current_offsets)
        return current_offsets

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """The task now owns ``partitions`` (after a rebalance)."""

    def close(self, partitions: Collection[TopicPartition]) -> None:
        """The task no longer owns ``partitions``: their offsets were just committed."""
