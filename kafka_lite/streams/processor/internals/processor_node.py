"""A node of an instantiated topology: a processor, its children, and the stores it may use.

Mirrors: org.apache.kafka.streams.processor.internals.ProcessorNode
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/ProcessorNode.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.2 (the processor graph)

``TopologyBuilder`` holds *descriptions* of nodes (names, parents, suppliers); ``build`` turns them
into ``ProcessorNode`` objects, one set per task, each wrapping a new processor. The children are
kept in the order they were connected, which is the order ``forward`` visits them and the index
``forward(key, value, child=i)`` uses. ``state_stores`` are the names the node was connected to:
the context lets the node's processor reach only these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor.processor import Processor

if TYPE_CHECKING:
    from kafka_lite.streams.processor.processor_context import ProcessorContext


class ProcessorNode:
    """Kafka's ``ProcessorNode``: a named processor and its downstream nodes."""

    def __init__(
        self, name: str, processor: Processor | None = None, state_stores: set[str] | None = None
    ) -> None:
        self.name = name
        self.processor = processor
        self.children: list[ProcessorNode] = []
        self.state_stores: set[str] = set() if state_stores is None else state_stores

    def add_child(self, child: ProcessorNode) -> None:
        self.children.append(child)

    def init(self, context: ProcessorContext) -> None:
        try:
            self.processor.init(context)
        except Exception as e:
            raise StreamsException(f"failed to initialize processor {self.name}") from e

    def close(self) -> None:
        try:
            self.processor.close()
        except Exception as e:
            raise StreamsException(f"failed to close processor {self.name}") from e

    def process(self, key: Any, value: Any) -> None:
        self.processor.process(key, value)

    def __repr__(self) -> str:
        stores = f"stateStores [{','.join(sorted(self.state_stores))}] " if self.state_stores else ""
        return f"{self.name}: {stores}"
