"""Describing a topology: sources, processors, sinks and state stores, by name, before anything runs.

Mirrors: org.apache.kafka.streams.processor.TopologyBuilder
         (streams/src/main/java/org/apache/kafka/streams/processor/TopologyBuilder.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.2 (building the topology), 9.1.3 (sub-topologies become tasks)
Differs: no regex sources (``add_source(name, pattern)``), no ``connect_processors``. Naming a
         sink as a parent fails when the node is added ("... cannot be a child of sink ..."); in
         0.10.1 it fails only at ``build``, in ``SinkNode.addChild``. Keyword arguments replace
         Kafka's overloads (``add_sink(name, topic, *parents, key_serializer=..., partitioner=...)``).

The builder holds *factories*, not nodes: a topology runs as many tasks, and ``build`` makes each
task its own nodes, processors (from the suppliers) and stores. Adding a node checks it against what
is there already, so a mistake is reported at the line that makes it, with the node's name:

    builder.add_source("src", "words")
    builder.add_processor("count", WordCount, "src")
    builder.add_state_store(counts_supplier, "count")
    builder.add_sink("out", "counts", "count")

Every node is united with its parents, and processors sharing a store with each other (union-find).
The connected components are the *node groups*, the sub-topologies; ``topic_groups`` lists each
one's topics, and each group runs as one task per partition of its source topics (``TaskId``
``"<group>_<partition>"``). Groups are numbered by their sorted source names, then the others, so
the numbering is the same on every instance of the application.

An *internal topic* (``add_internal_topic``, which the DSL uses to repartition) is named in the
builder without the application's prefix; every node, ``topic_groups`` and ``source_topics`` see it
decorated as ``<application.id>-<topic>``, so two applications never share one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.streams.errors import TopologyBuilderException
from kafka_lite.streams.processor.internals.processor_node import ProcessorNode
from kafka_lite.streams.processor.internals.processor_state_manager import store_changelog_topic
from kafka_lite.streams.processor.internals.processor_topology import ProcessorTopology
from kafka_lite.streams.processor.internals.quick_union import QuickUnion
from kafka_lite.streams.processor.internals.sink_node import SinkNode
from kafka_lite.streams.processor.internals.source_node import SourceNode
from kafka_lite.streams.processor.processor import ProcessorSupplier
from kafka_lite.streams.processor.state_store import StateStoreSupplier


@dataclass
class _ProcessorNodeFactory:
    name: str
    parents: tuple[str, ...]
    supplier: ProcessorSupplier
    state_store_names: set[str] = field(default_factory=set)

    def build(self) -> ProcessorNode:
        return ProcessorNode(self.name, self.supplier(), set(self.state_store_names))


# The source and sink factories reach the builder's internal topics, as Kafka's inner classes do,
# through ``decorate_topic``: the builder's ``_maybe_decorate_topic``, read when the node is built.
@dataclass
class _SourceNodeFactory:
    name: str
    topics: tuple[str, ...]
    key_deserializer: Any
    value_deserializer: Any
    decorate_topic: Callable[[str], str]

    def build(self) -> SourceNode:
        topics = [self.decorate_topic(topic) for topic in self.topics]
        return SourceNode(self.name, topics, self.key_deserializer, self.value_deserializer)


@dataclass
class _SinkNodeFactory:
    name: str
    parents: tuple[str, ...]
    topic: str
    key_serializer: Any
    value_serializer: Any
    partitioner: Any
    decorate_topic: Callable[[str], str]

    def build(self) -> SinkNode:
        topic = self.decorate_topic(self.topic)
        return SinkNode(self.name, topic, self.key_serializer, self.value_serializer, self.partitioner)


@dataclass
class _StateStoreFactory:
    supplier: StateStoreSupplier
    users: list[str] = field(default_factory=list)  # the processors connected to the store, in order


@dataclass(frozen=True)
class TopicsInfo:
    """One sub-topology's topics (Kafka's ``TopologyBuilder.TopicsInfo``); ``inter_source_topics``
    maps each internal topic it reads to that topic's config, ``state_changelog_topics`` each
    changelog topic to the log config its store's supplier asks for."""

    sink_topics: frozenset[str]
    source_topics: frozenset[str]
    inter_source_topics: dict[str, dict[str, str]]
    state_changelog_topics: dict[str, dict[str, str]]


class TopologyBuilder:
    """Kafka's ``TopologyBuilder``: the graph by name, checked as it is added, built per task."""

    def __init__(self) -> None:
        self.node_factories: dict[str, Any] = {}  # in the order added: a topological order
        self.state_factories: dict[str, _StateStoreFactory] = {}
        self.source_topic_names: set[str] = set()
        self.node_to_source_topics: dict[str, tuple[str, ...]] = {}
        self.node_to_sink_topic: dict[str, str] = {}
        self.internal_topic_names: set[str] = set()
        self.source_store_to_source_topic: dict[str, str] = {}
        self.node_grouper = QuickUnion()
        self.copartition_source_groups: list[frozenset[str]] = []
        self.application_id: str | None = None
        self._node_groups: dict[int, set[str]] | None = None

    def set_application_id(self, application_id: str) -> TopologyBuilder:
        """The ``application.id``, which names the changelog topics."""
        if application_id is None:
            raise ValueError("applicationId can't be null")
        self.application_id = application_id
        return self

    # -- adding nodes ----------------------------------------------------------------------------------

    def add_source(
        self, name: str, *topics: str, key_deserializer: Any = None, value_deserializer: Any = None
    ) -> TopologyBuilder:
        """A source node reading ``topics``; a topic may be read by one source only."""
        if not topics:
            raise TopologyBuilderException("You must provide at least one topic")
        self._check_new_node(name)
        for topic in topics:
            if topic in self.source_topic_names:
                raise TopologyBuilderException(
                    f"Topic {topic} has already been registered by another source."
                )
        self.source_topic_names.update(topics)
        self.node_factories[name] = _SourceNodeFactory(
            name, topics, key_deserializer, value_deserializer, self._maybe_decorate_topic
        )
        self.node_to_source_topics[name] = topics
        self.node_grouper.add(name)
        self._node_groups = None
        return self

    def add_sink(
        self,
        name: str,
        topic: str,
        *parent_names: str,
        key_serializer: Any = None,
        value_serializer: Any = None,
        partitioner: Any = None,
    ) -> TopologyBuilder:
        """A sink node writing what its parents forward to ``topic``."""
        if topic is None:
            raise ValueError("topic must not be null")
        self._check_new_node(name)
        self._check_parents(name, parent_names)
        self.node_factories[name] = _SinkNodeFactory(
            name,
            parent_names,
            topic,
            key_serializer,
            value_serializer,
            partitioner,
            self._maybe_decorate_topic,
        )
        self.node_to_sink_topic[name] = topic
        self.node_grouper.add(name)
        self.node_grouper.unite(name, *parent_names)
        self._node_groups = None
        return self

    def add_processor(self, name: str, supplier: ProcessorSupplier, *parent_names: str) -> TopologyBuilder:
        """A processor node; ``supplier()`` makes its processor, once per task."""
        if supplier is None:
            raise ValueError("supplier must not be null")
        self._check_new_node(name)
        self._check_parents(name, parent_names)
        self.node_factories[name] = _ProcessorNodeFactory(name, parent_names, supplier)
        self.node_grouper.add(name)
        self.node_grouper.unite(name, *parent_names)
        self._node_groups = None
        return self

    def add_internal_topic(self, topic_name: str) -> TopologyBuilder:
        """Mark ``topic_name`` as the application's own: nodes read and write it as
        ``<application.id>-<topic_name>``, and ``topic_groups`` lists it for creation."""
        if topic_name is None:
            raise ValueError("topicName can't be null")
        self.internal_topic_names.add(topic_name)
        return self

    def connect_source_store_and_topic(self, source_store_name: str, topic: str) -> TopologyBuilder:
        """Note that store ``source_store_name`` is a copy of the user topic ``topic`` (a
        ``KStreamBuilder.table``), which therefore serves as its changelog."""
        if source_store_name in self.source_store_to_source_topic:
            raise TopologyBuilderException(f"Source store {source_store_name} is already added.")
        self.source_store_to_source_topic[source_store_name] = topic
        return self

    def _maybe_decorate_topic(self, topic: str) -> str:
        if topic not in self.internal_topic_names:
            return topic
        return self._require_application_id() + "-" + topic

    def _check_new_node(self, name: str) -> None:
        if name is None:
            raise ValueError("name must not be null")
        if name in self.node_factories:
            raise TopologyBuilderException(f"Processor {name} is already added.")

    def _check_parents(self, name: str, parent_names: tuple[str, ...]) -> None:
        for parent in parent_names:
            if parent == name:
                raise TopologyBuilderException(f"Processor {name} cannot be a parent of itself.")
            if parent not in self.node_factories:
                raise TopologyBuilderException(f"Parent processor {parent} is not added yet.")
            if isinstance(self.node_factories[parent], _SinkNodeFactory):
                raise TopologyBuilderException(
                    f"Processor {name} cannot be a child of sink {parent}: sink node does not allow addChild."
                )

    # -- state stores ----------------------------------------------------------------------------------

    def add_state_store(self, supplier: StateStoreSupplier, *processor_names: str) -> TopologyBuilder:
        """A store (one per task, from ``supplier.get()``), connected to ``processor_names``."""
        if supplier is None:
            raise ValueError("supplier can't be null")
        if supplier.name in self.state_factories:
            raise TopologyBuilderException(f"StateStore {supplier.name} is already added.")
        self.state_factories[supplier.name] = _StateStoreFactory(supplier)
        for processor_name in processor_names:
            self._connect_processor_and_state_store(processor_name, supplier.name)
        return self

    def connect_processor_and_state_stores(
        self, processor_name: str, *state_store_names: str
    ) -> TopologyBuilder:
        """Let ``processor_name`` use stores added before (two processors sharing a store)."""
        if processor_name is None:
            raise ValueError("processorName can't be null")
        for state_store_name in state_store_names:
            self._connect_processor_and_state_store(processor_name, state_store_name)
        return self

    def _connect_processor_and_state_store(self, processor_name: str, state_store_name: str) -> None:
        if state_store_name not in self.state_factories:
            raise TopologyBuilderException(f"StateStore {state_store_name} is not added yet.")
        if processor_name not in self.node_factories:
            raise TopologyBuilderException(f"Processor {processor_name} is not added yet.")
        factory = self.state_factories[state_store_name]
        node_factory = self.node_factories[processor_name]
        if not isinstance(node_factory, _ProcessorNodeFactory):
            raise TopologyBuilderException(
                f"cannot connect a state store {state_store_name} to a source node or a sink node."
            )
        # A store lives in one task, so every processor using it must be in the same sub-topology.
        if factory.users:
            self.node_grouper.unite(factory.users[0], processor_name)
        factory.users.append(processor_name)
        node_factory.state_store_names.add(state_store_name)
        self._node_groups = None

    # -- sub-topologies --------------------------------------------------------------------------------

    def node_groups(self) -> dict[int, set[str]]:
        """The sub-topologies: group id -> the names of its nodes (Kafka's ``nodeGroups``)."""
        if self._node_groups is None:
            self._node_groups = self._make_node_groups()
        return self._node_groups

    # --8<-- [start:node_groups]
    def _make_node_groups(self) -> dict[int, set[str]]:
        node_groups: dict[int, set[str]] = {}
        root_to_node_group: dict[str, set[str]] = {}
        # Sources first, by name: this makes the group ids predictable (the same on every instance).
        sources = sorted(self.node_to_source_topics)
        others = sorted(n for n in self.node_factories if n not in self.node_to_source_topics)
        for node_name in sources + others:
            root = self.node_grouper.root(node_name)
            if root not in root_to_node_group:
                root_to_node_group[root] = set()
                node_groups[len(node_groups)] = root_to_node_group[root]
            root_to_node_group[root].add(node_name)
        return node_groups

    # --8<-- [end:node_groups]

    def topic_groups(self) -> dict[int, TopicsInfo]:
        """Each sub-topology's source, sink and changelog topics (Kafka's ``topicGroups``)."""
        topic_groups = {}
        for group_id, nodes in self.node_groups().items():
            sink_topics: set[str] = set()
            source_topics: set[str] = set()
            inter_source_topics: dict[str, dict[str, str]] = {}
            state_changelog_topics: dict[str, dict[str, str]] = {}
            for node in nodes:
                for topic in self.node_to_source_topics.get(node, ()):
                    source_topics.add(self._maybe_decorate_topic(topic))
                    if topic in self.internal_topic_names:
                        # A repartition topic is read once and then useless: deleted, not compacted.
                        inter_source_topics[self._maybe_decorate_topic(topic)] = {"cleanup.policy": "delete"}
                if node in self.node_to_sink_topic:
                    sink_topics.add(self._maybe_decorate_topic(self.node_to_sink_topic[node]))
                for state_factory in self.state_factories.values():
                    supplier = state_factory.supplier
                    if supplier.logging_enabled() and node in state_factory.users:
                        name = store_changelog_topic(self._require_application_id(), supplier.name)
                        state_changelog_topics[name] = dict(supplier.log_config())
            topic_groups[group_id] = TopicsInfo(
                frozenset(sink_topics), frozenset(source_topics), inter_source_topics, state_changelog_topics
            )
        return topic_groups

    def _require_application_id(self) -> str:
        if self.application_id is None:
            raise TopologyBuilderException(
                "there are internal topics and applicationId hasn't been set. Call setApplicationId first"
            )
        return self.application_id

    def source_topics(self) -> set[str]:
        return {self._maybe_decorate_topic(topic) for topic in self.source_topic_names}

    def copartition_sources(self, source_nodes: Iterable[str]) -> TopologyBuilder:
        """Ask that these source nodes' topics be co-partitioned (a join's two sides): the partition
        assignor checks it, and gives a repartition topic among them the same count."""
        self.copartition_source_groups.append(frozenset(source_nodes))
        return self

    def copartition_groups(self) -> list[frozenset[str]]:
        """Each co-partitioned group of source nodes as its topics, internal ones decorated (Kafka's
        ``copartitionGroups``)."""
        return [
            frozenset(
                self._maybe_decorate_topic(topic)
                for node in node_names
                for topic in self.node_to_source_topics.get(node, ())
            )
            for node_names in self.copartition_source_groups
        ]

    # -- building --------------------------------------------------------------------------------------

    def build(self, topic_group_id: int | None = None) -> ProcessorTopology:
        """New nodes, processors and stores for one task of sub-topology ``topic_group_id`` (the whole
        topology if None, as Kafka's tests and its test driver use it)."""
        node_group = None if topic_group_id is None else self.node_groups()[topic_group_id]
        processor_nodes: list[ProcessorNode] = []
        processor_map: dict[str, ProcessorNode] = {}
        topic_source_map: dict[str, SourceNode] = {}
        topic_sink_map: dict[str, SinkNode] = {}
        state_store_map: dict[str, Any] = {}
        store_to_processor_node: dict[str, ProcessorNode] = {}
        # node_factories is in the order added, so every parent is built before its children.
        for factory in self.node_factories.values():
            if node_group is not None and factory.name not in node_group:
                continue
            node = factory.build()
            processor_nodes.append(node)
            processor_map[node.name] = node
            if isinstance(factory, _ProcessorNodeFactory):
                for parent in factory.parents:
                    processor_map[parent].add_child(node)
                for store_name in sorted(factory.state_store_names):
                    if store_name not in state_store_map:
                        state_store_map[store_name] = self.state_factories[store_name].supplier.get()
                        store_to_processor_node[store_name] = node
            elif isinstance(factory, _SourceNodeFactory):
                for topic in node.topics:  # internal topics already decorated
                    topic_source_map[topic] = node
            else:
                for parent in factory.parents:
                    processor_map[parent].add_child(node)
                topic_sink_map[node.topic] = node
        return ProcessorTopology(
            processor_nodes,
            topic_source_map,
            topic_sink_map,
            list(state_store_map.values()),
            store_to_processor_node,
            {
                store: self._maybe_decorate_topic(topic)
                for store, topic in self.source_store_to_source_topic.items()
                if store in state_store_map
            },
        )
