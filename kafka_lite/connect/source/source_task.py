"""A source task: polled by the worker for records, told when they are safely in Kafka.

Mirrors: org.apache.kafka.connect.source.SourceTask and SourceTaskContext
         (connect/api/src/main/java/org/apache/kafka/connect/source/SourceTask.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

``poll`` may block, but briefly: the worker's thread calls it in a loop and can only stop the task
between calls (``stop`` is called from another thread, and must wake a waiting ``poll``). It
returns ``None`` or an empty list when there is nothing new.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.connect.connector.task import Task
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.storage.offset_storage_reader import OffsetStorageReader


class SourceTaskContext(ABC):
    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Where the task finds the last offset committed for each of its source partitions."""


class SourceTask(Task):
    def __init__(self) -> None:
        self.context: SourceTaskContext | None = None

    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """New records, or None; called again and again on the worker's thread."""

    def commit(self) -> None:
        """The worker committed the offsets of every record returned so far."""

    def commit_record(self, record: SourceRecord) -> None:
        """``record`` was written to Kafka (called on the producer's thread)."""
