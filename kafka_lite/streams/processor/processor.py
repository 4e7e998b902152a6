"""A processor: one node of a topology's graph, handed one record at a time.

Mirrors: org.apache.kafka.streams.processor.Processor, AbstractProcessor and ProcessorSupplier
         (streams/src/main/java/org/apache/kafka/streams/processor/, Kafka 0.10.1)
Book:    chapter 9, 9.1.1 (an application's processors), 9.1.2 (processors and the topology)
Differs: a ``ProcessorSupplier`` is any zero-argument callable that returns a new ``Processor``
         (a class is one); Kafka's is an interface with ``get()``.

The life of a processor, as a task drives it: ``init(context)`` once, when the task is created
(look up state stores and call ``context.schedule`` here); ``process(key, value)`` for every record
that reaches the node; ``punctuate(timestamp)`` each time a scheduled interval of *stream time*
passes; ``close()`` when the task closes. A processor passes results on with ``context.forward``.

Why a supplier and not a processor: one topology is instantiated once per task (per partition of
its input), and each task needs processors of its own, because a processor keeps per-task state
(its context, its stores). ``TopologyBuilder.build`` calls the supplier once per node per task.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafka_lite.streams.processor.processor_context import ProcessorContext


class Processor(ABC):
    """The four calls a task makes on a processor (Kafka's ``Processor<K, V>``)."""

    @abstractmethod
    def init(self, context: ProcessorContext) -> None:
        """Called once before any record; keep ``context``, look up stores, schedule punctuation."""

    @abstractmethod
    def process(self, key: Any, value: Any) -> None:
        """Handle one record; ``context.forward`` sends results to this node's children."""

    @abstractmethod
    def punctuate(self, timestamp: int) -> None:
        """Called when stream time has passed the interval given to ``context.schedule``."""

    @abstractmethod
    def close(self) -> None:
        """Called once when the task closes; release what ``init`` took (not the stores: the task
        closes those)."""


class AbstractProcessor(Processor):
    """A processor that keeps its context and does nothing on punctuate or close, so a subclass
    writes only ``process`` (Kafka's ``AbstractProcessor``)."""

    def __init__(self) -> None:
        self._context: ProcessorContext | None = None

    def init(self, context: ProcessorContext) -> None:
        self._context = context

    def punctuate(self, timestamp: int) -> None:
        pass

    def close(self) -> None:
        pass

    def context(self) -> ProcessorContext:
        """The context given to ``init`` (Kafka's ``context()``)."""
        assert self._context is not None, "context() is only set once init(context) has been called"
        return self._context


# Kafka's ProcessorSupplier<K, V> { Processor<K, V> get(); }: here, any callable that makes one.
ProcessorSupplier = Callable[[], Processor]
