"""KStream: a stream of facts, and each of its operators as the processor it adds to the topology.

Mirrors: org.apache.kafka.streams.kstream.KStream and internals.KStreamImpl
         (streams/src/main/java/org/apache/kafka/streams/kstream/, Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (KStream and KTable; grouping and repartitioning)
Differs: keyword arguments replace Kafka's overloads (``to(topic, key_serde=, value_serde=,
         partitioner=)``, Kafka's topic comes last). No ``print``/``write_as_text``, ``transform``,
         ``process``, ``merge``. ``join``/``left_join`` take a ``KTable`` or a ``KStream`` and
         ``JoinWindows`` (Kafka's overloads). A serde left out means the key or value is already bytes
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
``map_values`` keep the key, so they keep the flag as it was. A join needs the same: a stream whose
key may have changed is written through ``<its node name>-repartition`` first (Kafka's
``repartitionForJoin``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kafka_lite.streams.kstream.internals.abstract_stream import AbstractStream
from kafka_lite.streams.kstream.internals.kstream_kstream_join import (
    KStreamJoinWindow,
    KStreamKStreamJoin,
    reverse_joiner,
)
from kafka_lite.streams.kstream.internals.kstream_ktable_join import KStreamKTableJoin
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
from kafka_lite.streams.kstream.windows import JoinWindows
from kafka_lite.streams.serialization import Serde, Serdes
from kafka_lite.streams.state.key_value_store import KeyValue
from kafka_lite.streams.state.stores import AbstractStoreSupplier, Stores

if TYPE_CHECKING:
    from kafka_lite.streams.kstream.internals.kgrouped_stream_impl import KGroupedStreamImpl
    from kafka_lite.streams.kstream.internals.ktable_impl import KTableImpl
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
JOIN_NAME = "KSTREAM-JOIN-"
JOINTHIS_NAME = "KSTREAM-JOINTHIS-"
JOINOTHER_NAME = "KSTREAM-JOINOTHER-"
LEFTJOIN_NAME = "KSTREAM-LEFTJOIN-"
MERGE_NAME = "KSTREAM-MERGE-"
OUTERTHIS_NAME = "KSTREAM-OUTERTHIS-"
OUTEROTHER_NAME = "KSTREAM-OUTEROTHER-"
WINDOWED_NAME = "KSTREAM-WINDOWED-"
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

    # -- joins ---------------------------------------------------------------------------------------

    def join(
        self,
        other: KStreamImpl | KTableImpl,
        joiner: Callable[[Any, Any], Any],
        windows: JoinWindows | None = None,
        key_serde: Serde | None = None,
        this_value_serde: Serde | None = None,
        other_value_serde: Serde | None = None,
    ) -> KStreamImpl:
        """Records ``joiner(value, other_value)``: with a table, for each record whose key has a row;
        with a stream, for each pair of records of one key within ``windows``."""
        if not isinstance(other, KStreamImpl):
            return self._stream_table_join(other, joiner, False, key_serde, this_value_serde)
        return self._windowed_join(
            other, joiner, windows, key_serde, this_value_serde, other_value_serde, outer=False
        )

    def outer_join(
        self,
        other: KStreamImpl,
        joiner: Callable[[Any, Any], Any],
        windows: JoinWindows,
        key_serde: Serde | None = None,
        this_value_serde: Serde | None = None,
        other_value_serde: Serde | None = None,
    ) -> KStreamImpl:
        """As ``join`` of two streams, and ``joiner(value, None)`` for a record of either side that
        finds no partner when it arrives."""
        return self._windowed_join(
            other, joiner, windows, key_serde, this_value_serde, other_value_serde, outer=True
        )

    def left_join(
        self,
        other: KStreamImpl | KTableImpl,
        joiner: Callable[[Any, Any], Any],
        windows: JoinWindows | None = None,
        key_serde: Serde | None = None,
        this_value_serde: Serde | None = None,
        other_value_serde: Serde | None = None,
    ) -> KStreamImpl:
        """As ``join``, and ``joiner(value, None)`` for a record of this stream that finds nothing."""
        if not isinstance(other, KStreamImpl):
            return self._stream_table_join(other, joiner, True, key_serde, this_value_serde)
        join_this, join_other = self._co_partitioned(
            other, joiner, windows, key_serde, this_value_serde, other_value_serde
        )
        topology = self.topology
        other_window_stream_name = topology.new_name(WINDOWED_NAME)
        join_this_name = topology.new_name(LEFTJOIN_NAME)
        other_window = _join_window_store(windows, key_serde, other_value_serde, join_this_name + "-store")
        topology.add_processor(
            other_window_stream_name,
            KStreamJoinWindow(
                other_window.name, windows.before_ms + windows.after_ms + 1, windows.maintain_ms()
            ),
            join_other.name,
        )
        topology.add_processor(
            join_this_name,
            KStreamKStreamJoin(other_window.name, windows.before_ms, windows.after_ms, joiner, True),
            join_this.name,
        )
        topology.add_state_store(other_window, join_this_name, other_window_stream_name)
        return KStreamImpl(topology, join_this_name, join_this.source_nodes | join_other.source_nodes, False)

    def _windowed_join(
        self,
        other: KStreamImpl,
        joiner: Callable[[Any, Any], Any],
        windows: JoinWindows | None,
        key_serde: Serde | None,
        this_value_serde: Serde | None,
        other_value_serde: Serde | None,
        outer: bool,
    ) -> KStreamImpl:
        """Kafka's ``DefaultJoin``: a window store per side, a join node per side, and their merge."""
        join_this, join_other = self._co_partitioned(
            other, joiner, windows, key_serde, this_value_serde, other_value_serde
        )
        topology = self.topology
        this_window_stream_name = topology.new_name(WINDOWED_NAME)
        other_window_stream_name = topology.new_name(WINDOWED_NAME)
        join_this_name = topology.new_name(OUTERTHIS_NAME if outer else JOINTHIS_NAME)
        join_other_name = topology.new_name(OUTEROTHER_NAME if outer else JOINOTHER_NAME)
        join_merge_name = topology.new_name(MERGE_NAME)
        this_window = _join_window_store(windows, key_serde, this_value_serde, join_this_name + "-store")
        other_window = _join_window_store(windows, key_serde, other_value_serde, join_other_name + "-store")
        window_size = windows.before_ms + windows.after_ms + 1
        topology.add_processor(
            this_window_stream_name,
            KStreamJoinWindow(this_window.name, window_size, windows.maintain_ms()),
            join_this.name,
        )
        topology.add_processor(
            other_window_stream_name,
            KStreamJoinWindow(other_window.name, window_size, windows.maintain_ms()),
            join_other.name,
        )
        # This side's record looks back `before` and ahead `after` in the other's store; the other
        # side's record sees the same pairs the other way round.
        topology.add_processor(
            join_this_name,
            KStreamKStreamJoin(other_window.name, windows.before_ms, windows.after_ms, joiner, outer),
            this_window_stream_name,
        )
        topology.add_processor(
            join_other_name,
            KStreamKStreamJoin(
                this_window.name, windows.after_ms, windows.before_ms, reverse_joiner(joiner), outer
            ),
            other_window_stream_name,
        )
        topology.add_processor(join_merge_name, KStreamPassThrough(), join_this_name, join_other_name)
        topology.add_state_store(this_window, this_window_stream_name, join_other_name)
        topology.add_state_store(other_window, other_window_stream_name, join_this_name)
        return KStreamImpl(topology, join_merge_name, join_this.source_nodes | join_other.source_nodes, False)

    def _co_partitioned(
        self,
        other: KStreamImpl,
        joiner: Callable[[Any, Any], Any],
        windows: JoinWindows | None,
        key_serde: Serde | None,
        this_value_serde: Serde | None,
        other_value_serde: Serde | None,
    ) -> tuple[KStreamImpl, KStreamImpl]:
        """Both sides, each repartitioned by its key first if that key may have changed. That the
        two topics have as many partitions is checked by the partition assignor, not here."""
        require_non_null(other, "other")
        join_this = (
            self._repartition_for_join(key_serde, this_value_serde) if self.repartition_required else self
        )
        join_other = (
            other._repartition_for_join(key_serde, other_value_serde) if other.repartition_required else other
        )
        return join_this, join_other

    def _repartition_for_join(self, key_serde: Serde | None, value_serde: Serde | None) -> KStreamImpl:
        source_name = create_repartitioned_source(self, key_serde, value_serde, self.name)
        return KStreamImpl(self.topology, source_name, frozenset({source_name}), False)

    def _stream_table_join(
        self,
        table: KTableImpl,
        joiner: Callable[[Any, Any], Any],
        left_join: bool,
        key_serde: Serde | None,
        value_serde: Serde | None,
    ) -> KStreamImpl:
        require_non_null(table, "other")
        require_non_null(joiner, "joiner")
        stream = self._repartition_for_join(key_serde, value_serde) if self.repartition_required else self
        value_getter_supplier = table.value_getter_supplier()
        name = self.topology.new_name(LEFTJOIN_NAME if left_join else JOIN_NAME)
        self.topology.add_processor(
            name, KStreamKTableJoin(value_getter_supplier, joiner, left_join), stream.name
        )
        # The join reads the table's store, which puts it in the table's sub-topology (one task
        # holds both) and lets its context open the store.
        self.topology.connect_processor_and_state_stores(name, *value_getter_supplier.store_names())
        return KStreamImpl(self.topology, name, stream.source_nodes | table.source_nodes, False)

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


# --8<-- [start:create_repartitioned_source]
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


# --8<-- [end:create_repartitioned_source]


def _join_window_store(
    windows: JoinWindows, key_serde: Serde | None, value_serde: Serde | None, store_name: str
) -> AbstractStoreSupplier:
    """A side's window store: every record kept (duplicates too) for ``windows.maintain_ms()``."""
    return (
        Stores.create(store_name)
        .with_keys(key_serde or Serdes.ByteArray())
        .with_values(value_serde or Serdes.ByteArray())
        .persistent()
        .windowed(windows.size(), windows.maintain_ms(), windows.segments, True)
        .build()
    )


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
