"""KStream: a stream of facts, and each of its operators as the processor it adds to the topology.

Mirrors: org.apache.kafka.streams.kstream.KStream and internals.KStreamImpl
         (streams/src/main/java/org/apache/kafka/streams/kstream/, Kafka 0.10.1)
Book:    chapter 9, 9.2.1 (KStream and KTable), 9.2.2 (grouping and repartitioning)
Differs: keyword arguments replace Kafka's overloads (``to(topic, key_serde=, value_serde=,
         partitioner=)``, Kafka's topic comes last). No ``print``/``write_as_text``, ``transform``,
         ``process``, ``merge``, joins. A serde left out means the key or value is already bytes
         (Kafka falls back to the config's default serdes).

Every operator adds one node named ``<KIND>-<10-digit counter>`` (``KStreamBuilder.new_name``) and
returns a stream naming that node, so a chain of calls writes the graph from the source down::

    builder.stream("lines")              KSTREAM-SOURCE-0000000000
        .flat_map_values(split)          KSTREAM-FLATMAPVALUES-0000000001
        .group_by(lambda k, w: w)        KSTREAM-KEY-SELECT-0000000002
        .count("counts")                 KSTREAM-AGGREGATE-0000000003, named first, and before it
                                         KSTREAM-FILTER-0000000005 -> KSTREAM-SINK-0000000004
                                         -> topic <application.id>-counts-repartition ->
                                         KSTREAM-SOURCE-0000000006 -> the aggregate

``repartition_required`` is the stream's memory that its key may have changed since the source (a
``map``, ``flat_map``, ``select_key`` or ``group_by`` upstream), so records with one key may sit in
different partitions, hence in different tasks. An aggregation needs all of a key's records in one
task, so ``KGroupedStreamImpl`` then writes the stream through a repartition topic keyed by the new
key (``create_repartitioned_source``) and aggregates what it reads back. ``filter`` and
``map_values`` keep the key, so they keep the flag as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kafka_lite.streams.kstream.internals.abstract_stream import AbstractStream
from kafka_lite.streams.kstream.internals.kstream_stateless import (
    KStreamBranch,
    KStreamFilter,
    KStreamFlatMap,
    KStreamFlatMapValues,
    KStreamForeach,
    KStreamMap,
    KStreamMapValues,
    KStreamPassThrough,
)
from kafka_lite.streams.serialization import Serde
from kafka_lite.streams.state.key_value_store import KeyValue

if TYPE_CHECKING:
    from kafka_lite.streams.kstream.internals.kgrouped_stream_impl import KGroupedStreamImpl
    from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder

BRANCH_NAME = "KSTREAM-BRANCH-"
BRANCHCHILD_NAME = "KSTREAM-BRANCHCHILD-"
FILTER_NAME = "KSTREAM-FILTER-"
FLATMAP_NAME = "KSTREAM-FLATMAP-"
FLATMAPVALUES_NAME = "KSTREAM-FLATMAPVALUES-"
MAP_NAME = "KSTREAM-MAP-"
MAPVALUES_NAME = "KSTREAM-MAPVALUES-"
KEY_SELECT_NAME = "KSTREAM-KEY-SELECT-"
SINK_NAME = "KSTREAM-SINK-"
SOURCE_NAME = "KSTREAM-SOURCE-"
FOREACH_NAME = "KSTREAM-FOREACH-"
REPARTITION_TOPIC_SUFFIX = "-repartition"


class KStreamImpl(AbstractStream):
    """Kafka's ``KStreamImpl``: a node of the topology that carries a stream of records."""

    def __init__(
        self, topology: KStreamBuilder, name: str, source_nodes: frozenset[str], repartition_required: bool
    ) -> None:
        super().__init__(topology, name, source_nodes)
        self.repartition_required = repartition_required

    def _add(self, prefix: str, supplier: Any, repartition_required: bool) -> KStreamImpl:
        """Add ``supplier``'s processor under this node; the stream that reads from it."""
        name = self.topology.new_name(prefix)
        self.topology.add_processor(name, supplier, self.name)
        return KStreamImpl(self.topology, name, self.source_nodes, repartition_required)

    # -- stateless operators ---------------------------------------------------------------------------

    def filter(self, predicate: Callable[[Any, Any], bool]) -> KStreamImpl:
        """The records for which ``predicate(key, value)`` holds."""
        require_non_null(predicate, "predicate")
        return self._add(FILTER_NAME, KStreamFilter(predicate, False), self.repartition_required)

    def filter_not(self, predicate: Callable[[Any, Any], bool]) -> KStreamImpl:
        """The records for which ``predicate(key, value)`` does not hold."""
        require_non_null(predicate, "predicate")
        return self._add(FILTER_NAME, KStreamFilter(predicate, True), self.repartition_required)

    def select_key(self, mapper: Callable[[Any, Any], Any]) -> KStreamImpl:
        """Each record re-keyed by ``mapper(key, value)``; the value unchanged."""
        require_non_null(mapper, "mapper")
        return KStreamImpl(self.topology, self._internal_select_key(mapper), self.source_nodes, True)

    def _internal_select_key(self, mapper: Callable[[Any, Any], Any]) -> str:
        name = self.topology.new_name(KEY_SELECT_NAME)
        self.topology.add_processor(name, KStreamMap(lambda k, v: KeyValue(mapper(k, v), v)), self.name)
        return name

    def map(self, mapper: Callable[[Any, Any], KeyValue]) -> KStreamImpl:
        """Each record replaced by ``mapper(key, value)``, a ``KeyValue``."""
        require_non_null(mapper, "mapper")
        return self._add(MAP_NAME, KStreamMap(mapper), True)

    def map_values(self, mapper: Callable[[Any], Any]) -> KStreamImpl:
        """Each value replaced by ``mapper(value)``; the key kept."""
        require_non_null(mapper, "mapper")
        return self._add(MAPVALUES_NAME, KStreamMapValues(mapper), self.repartition_required)

    def flat_map(self, mapper: Callable[[Any, Any], Iterable[KeyValue]]) -> KStreamImpl:
        """Each record replaced by the ``KeyValue`` records of ``mapper(key, value)`` (zero or more)."""
        require_non_null(mapper, "mapper")
        return self._add(FLATMAP_NAME, KStreamFlatMap(mapper), True)

    def flat_map_values(self, mapper: Callable[[Any], Iterable[Any]]) -> KStreamImpl:
        """Each record replaced by one record per value of ``mapper(value)``, all with its key."""
        require_non_null(mapper, "mapper")
        return self._add(FLATMAPVALUES_NAME, KStreamFlatMapValues(mapper), self.repartition_required)

    def branch(self, *predicates: Callable[[Any, Any], bool]) -> list[KStreamImpl]:
        """One stream per predicate; a record goes to the first whose predicate holds, or nowhere."""
        if not predicates:
            raise ValueError("you must provide at least one predicate")
        for predicate in predicates:
            require_non_null(predicate, "predicates can't have null values; predicate")
        branch_name = self.topology.new_name(BRANCH_NAME)
        self.topology.add_processor(branch_name, KStreamBranch(tuple(predicates)), self.name)
        branch_children = []
        for _ in predicates:
            child_name = self.topology.new_name(BRANCHCHILD_NAME)
            self.topology.add_processor(child_name, KStreamPassThrough(), branch_name)
            branch_children.append(
                KStreamImpl(self.topology, child_name, self.source_nodes, self.repartition_required)
            )
        return branch_children

    def foreach(self, action: Callable[[Any, Any], None]) -> None:
        """Call ``action(key, value)`` for each record; the stream ends here."""
        require_non_null(action, "action")
        self.topology.add_processor(self.topology.new_name(FOREACH_NAME), KStreamForeach(action), self.name)

    # -- to and from topics ----------------------------------------------------------------------------

    def to(
        self,
        topic: str,
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
        partitioner: Any = None,
    ) -> None:
        """Write the stream to ``topic`` with the serdes' serializers."""
        require_non_null(topic, "topic")
        self.topology.add_sink(
            self.topology.new_name(SINK_NAME),
            topic,
            self.name,
            key_serializer=_serializer(key_serde),
            value_serializer=_serializer(value_serde),
            partitioner=partitioner,
        )

    def through(
        self,
        topic: str,
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
        partitioner: Any = None,
    ) -> KStreamImpl:
        """Write the stream to ``topic`` and read it back: a new source, so the stream is
        partitioned by its current key from here on."""
        self.to(topic, key_serde, value_serde, partitioner)
        return self.topology.stream(topic, key_serde=key_serde, value_serde=value_serde)

    # -- grouping --------------------------------------------------------------------------------------

    def group_by_key(
        self, key_serde: Serde | None = None, value_serde: Serde | None = None
    ) -> KGroupedStreamImpl:
        """Group by the current key (repartitioned first only if the key may have changed)."""
        # Imported here: a grouped stream's aggregation returns a KTable, whose to_stream returns a
        # KStream, so the three modules refer to one another.
        from kafka_lite.streams.kstream.internals.kgrouped_stream_impl import KGroupedStreamImpl

        return KGroupedStreamImpl(
            self.topology, self.name, self.source_nodes, key_serde, value_serde, self.repartition_required
        )

    def group_by(
        self,
        selector: Callable[[Any, Any], Any],
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
    ) -> KGroupedStreamImpl:
        """Group by ``selector(key, value)``: a new key, so always repartitioned before aggregating."""
        from kafka_lite.streams.kstream.internals.kgrouped_stream_impl import KGroupedStreamImpl

        require_non_null(selector, "selector")
        select_name = self._internal_select_key(selector)
        return KGroupedStreamImpl(self.topology, select_name, self.source_nodes, key_serde, value_serde, True)


def create_repartitioned_source(
    stream: AbstractStream, key_serde: Serde | None, value_serde: Serde | None, topic_name_prefix: str
) -> str:
    """Write ``stream`` to the internal topic ``<topic_name_prefix>-repartition`` and read it back;
    the name of the new source node (Kafka's ``createReparitionedSource``).

    A null key cannot be partitioned by, so the filter before the sink drops those records. The
    sink and the source are not connected in the graph: the topic is between them, so they fall in
    different sub-topologies, and each partition of the topic is read by one task."""
    topology = stream.topology
    repartition_topic = topic_name_prefix + REPARTITION_TOPIC_SUFFIX
    sink_name = topology.new_name(SINK_NAME)
    filter_name = topology.new_name(FILTER_NAME)
    source_name = topology.new_name(SOURCE_NAME)
    topology.add_internal_topic(repartition_topic)
    topology.add_processor(filter_name, KStreamFilter(_has_key, False), stream.name)
    topology.add_sink(
        sink_name,
        repartition_topic,
        filter_name,
        key_serializer=_serializer(key_serde),
        value_serializer=_serializer(value_serde),
    )
    topology.add_source(
        source_name,
        repartition_topic,
        key_deserializer=_deserializer(key_serde),
        value_deserializer=_deserializer(value_serde),
    )
    return source_name


def _has_key(key: Any, value: Any) -> bool:
    return key is not None


def require_non_null(argument: Any, what: str) -> None:
    """Kafka's ``Objects.requireNonNull(argument, "<what> can't be null")``."""
    if argument is None:
        raise ValueError(f"{what} can't be null")


def _serializer(serde: Serde | None) -> Any:
    return None if serde is None else serde.serializer()


def _deserializer(serde: Serde | None) -> Any:
    return None if serde is None else serde.deserializer()
