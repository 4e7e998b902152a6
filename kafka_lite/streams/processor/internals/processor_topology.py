"""One sub-topology, instantiated for one task: its nodes in order, sources and sinks by topic, stores.

Mirrors: org.apache.kafka.streams.processor.internals.ProcessorTopology
         (streams/src/main/java/org/apache/kafka/streams/processor/internals/ProcessorTopology.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.2 (from the builder's description to a running topology)

``processors`` is in the order the nodes were added to the builder, which is a topological order
(a node can only name parents that exist): the task initialises them in that order, so a parent
is ready before its children. ``source(topic)`` tells a task's ``RecordQueue`` which node reads a
topic; ``state_stores`` are new stores, made for this task by their suppliers.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.processor.internals.processor_node import ProcessorNode
from kafka_lite.streams.processor.internals.sink_node import SinkNode
from kafka_lite.streams.processor.internals.source_node import SourceNode


class ProcessorTopology:
    """Kafka's ``ProcessorTopology``."""

    def __init__(
        self,
        processor_nodes: list[ProcessorNode],
        source_by_topics: dict[str, SourceNode],
        sink_by_topics: dict[str, SinkNode],
        state_stores: list[Any],
        store_to_processor_node: dict[str, ProcessorNode],
        source_store_to_source_topic: dict[str, str] | None = None,
    ) -> None:
        self.processor_nodes = processor_nodes
        self.source_by_topics = source_by_topics
        self.sink_by_topics = sink_by_topics
        self._state_stores = state_stores
        self.store_to_processor_node = store_to_processor_node  # by store name (Kafka keys by store)
        # A table's store restores from the table's source topic, which is its changelog.
        self.source_store_to_source_topic = dict(source_store_to_source_topic or {})

    def source_topics(self) -> set[str]:
        return set(self.source_by_topics)

    def source(self, topic: str) -> SourceNode | None:
        return self.source_by_topics.get(topic)

    def sources(self) -> list[SourceNode]:
        return list(dict.fromkeys(self.source_by_topics.values()))

    def sink_topics(self) -> set[str]:
        return set(self.sink_by_topics)

    def sink(self, topic: str) -> SinkNode | None:
        return self.sink_by_topics.get(topic)

    def processors(self) -> list[ProcessorNode]:
        return self.processor_nodes

    def state_stores(self) -> list[Any]:
        return self._state_stores

    def initialize_state_stores(self, context: Any) -> None:
        """Open every store of the topology for a task (Kafka's ``AbstractTask.initializeStateStores``,
        shared by active and standby tasks): each store's ``init`` registers it with the task's state
        manager, which restores it from its changelog."""
        for store in self._state_stores:
            store.init(context, store)

    def __repr__(self) -> str:
        lines = ["ProcessorTopology:"]
        for source in self.sources():
            lines.append(f"\t\t\t\t{source!r}")
            lines.extend(self._children(source, depth=5))
        return "\n".join(lines)

    def _children(self, node: ProcessorNode, depth: int) -> list[str]:
        lines = []
        for child in node.children:
            lines.append("\t" * depth + repr(child))
            lines.extend(self._children(child, depth + 1))
        return lines
