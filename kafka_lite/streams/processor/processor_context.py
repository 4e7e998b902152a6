"""What a processor sees of its task: the record in hand, its stores, and the way downstream.

Mirrors: org.apache.kafka.streams.processor.ProcessorContext
         (streams/src/main/java/org/apache/kafka/streams/processor/ProcessorContext.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.2 (forwarding between processors), 9.1.4 (registering state stores)
Differs: no ``key_serde``/``value_serde``/``metrics``/``app_configs``: kafka_lite's
         topologies name their (de)serializers on each source and sink, and have no metrics yet.
         One ``forward(key, value, child=None)`` stands for Kafka's three overloads (all
         children, a child by index, a child by name).

The task's implementation is ``internals.processor_context_impl.ProcessorContextImpl``. One context
serves every processor of a task; what it answers (the current topic, offset and timestamp, the
node that ``forward`` starts from) changes as the task moves from record to record and from node to
node, which is why a processor reads it inside ``process`` rather than remembering the values.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_lite.streams.processor.task_id import TaskId


class ProcessorContext(ABC):
    """The processor's view of its task (Kafka's ``ProcessorContext``)."""

    @abstractmethod
    def application_id(self) -> str:
        """The ``application.id``: the consumer group's id and the prefix of internal topics."""

    @abstractmethod
    def task_id(self) -> TaskId:
        """The task this context belongs to."""

    @abstractmethod
    def state_dir(self) -> Path:
        """The task's state directory, where persistent stores keep their files."""

    @abstractmethod
    def register(
        self, store: Any, logging_enabled: bool, state_restore_callback: Callable[[bytes, bytes | None], None]
    ) -> None:
        """Called by a store from its ``init``: hand it to the task's state manager, which flushes and
        closes it with the task and (with ``logging_enabled``) restores it through the callback."""

    @abstractmethod
    def get_state_store(self, name: str) -> Any:
        """The store ``name``, if the current processor was connected to it when the topology was built."""

    @abstractmethod
    def schedule(self, interval_ms: int) -> None:
        """Ask for ``punctuate`` on the current processor every ``interval_ms`` of stream time."""

    @abstractmethod
    def forward(self, key: Any, value: Any, child: int | str | None = None) -> None:
        """Pass a record to every child of the current node, or to one child by index or by name."""

    @abstractmethod
    def commit(self) -> None:
        """Ask the task to commit soon: a request, honoured by the thread after the current record."""

    @abstractmethod
    def topic(self) -> str | None:
        """The topic of the record being processed (None during punctuate)."""

    @abstractmethod
    def partition(self) -> int:
        """The partition of the record being processed."""

    @abstractmethod
    def offset(self) -> int:
        """The offset of the record being processed."""

    @abstractmethod
    def timestamp(self) -> int:
        """The timestamp the extractor gave the record being processed (the stream time, in punctuate)."""
