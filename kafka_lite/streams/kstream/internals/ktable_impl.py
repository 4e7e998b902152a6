"""KTable: a changelog stream read as a table, and its operators on ``Change`` records.

Mirrors: org.apache.kafka.streams.kstream.KTable and internals.KTableImpl
         (streams/src/main/java/org/apache/kafka/streams/kstream/, Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (KStream and KTable)
Differs: no ``print``/``write_as_text``/``foreach`` or ``group_by``. Keyword arguments replace
         Kafka's overloads. A join connects its nodes to the stores its value getters read
         (0.10.2's ``connectProcessorAndStateStores``), as kafka_lite's context requires.

A table's node forwards ``Change(new, old)``; the table's rows live in one store, ``store_name``:
the source's (``KStreamBuilder.table``) or the aggregate's. ``filter`` and ``map_values`` add
processors that transform each change and keep the store name (what they compute is not stored
again, as in 0.10.1). ``to_stream`` turns the changes back into records, ``(key, new value)``, so a
delete becomes a record with a None value: a tombstone in the topic written.

``processor_supplier`` is kept so that ``enable_sending_old_values`` can reach it: a table asked
for old values asks its own supplier, which asks its parent table, up to the source or aggregate
that reads them from the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka_lite.streams.kstream.internals.abstract_stream import AbstractStream
from kafka_lite.streams.kstream.internals.kstream_impl import KStreamImpl, require_non_null
from kafka_lite.streams.kstream.internals.kstream_kstream_join import reverse_joiner
from kafka_lite.streams.kstream.internals.kstream_stateless import KStreamMapValues
from kafka_lite.streams.kstream.internals.ktable_ktable_join import (
    INNER,
    LEFT,
    OUTER,
    RIGHT,
    KTableKTableJoin,
    KTableKTableJoinMerger,
)
from kafka_lite.streams.kstream.internals.ktable_processors import KTableFilter, KTableMapValues
from kafka_lite.streams.serialization import Serde

if TYPE_CHECKING:
    from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder

FILTER_NAME = "KTABLE-FILTER-"
MAPVALUES_NAME = "KTABLE-MAPVALUES-"
SOURCE_NAME = "KTABLE-SOURCE-"
JOINTHIS_NAME = "KTABLE-JOINTHIS-"
JOINOTHER_NAME = "KTABLE-JOINOTHER-"
LEFTTHIS_NAME = "KTABLE-LEFTTHIS-"
LEFTOTHER_NAME = "KTABLE-LEFTOTHER-"
OUTERTHIS_NAME = "KTABLE-OUTERTHIS-"
OUTEROTHER_NAME = "KTABLE-OUTEROTHER-"
MERGE_NAME = "KTABLE-MERGE-"
TOSTREAM_NAME = "KTABLE-TOSTREAM-"


class KTableImpl(AbstractStream):
    """Kafka's ``KTableImpl``: a node forwarding a table's changes, and the store holding its rows."""

    def __init__(
        self,
        topology: KStreamBuilder,
        name: str,
        processor_supplier: Any,
        source_nodes: frozenset[str],
        store_name: str | None,
    ) -> None:
        super().__init__(topology, name, source_nodes)
        self.processor_supplier = processor_supplier
        self.store_name = store_name
        self.send_old_values = False

    def get_store_name(self) -> str:
        """The store holding this table's rows, to query by name."""
        return self.store_name

    def _add(self, prefix: str, supplier: Any) -> KTableImpl:
        name = self.topology.new_name(prefix)
        self.topology.add_processor(name, supplier, self.name)
        return KTableImpl(self.topology, name, supplier, self.source_nodes, self.store_name)

    def filter(self, predicate: Callable[[Any, Any], bool]) -> KTableImpl:
        """The rows for which ``predicate(key, value)`` holds; a row that fails reads as deleted."""
        require_non_null(predicate, "predicate")
        return self._add(FILTER_NAME, KTableFilter(self, predicate, False))

    def filter_not(self, predicate: Callable[[Any, Any], bool]) -> KTableImpl:
        """The rows for which ``predicate(key, value)`` does not hold."""
        require_non_null(predicate, "predicate")
        return self._add(FILTER_NAME, KTableFilter(self, predicate, True))

    def map_values(self, mapper: Callable[[Any], Any]) -> KTableImpl:
        """Each row's value replaced by ``mapper(value)``."""
        require_non_null(mapper, "mapper")
        return self._add(MAPVALUES_NAME, KTableMapValues(self, mapper))

    def to_stream(self) -> KStreamImpl:
        """The table's changes as a stream of ``(key, new value)``; a delete is ``(key, None)``."""
        name = self.topology.new_name(TOSTREAM_NAME)
        self.topology.add_processor(name, KStreamMapValues(_new_value), self.name)
        return KStreamImpl(self.topology, name, self.source_nodes, False)

    def to(
        self,
        topic: str,
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
        partitioner: Any = None,
    ) -> None:
        """Write the table's changes to ``topic`` (``to_stream().to(...)``)."""
        self.to_stream().to(topic, key_serde, value_serde, partitioner)

    def through(
        self,
        topic: str,
        store_name: str,
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
        partitioner: Any = None,
    ) -> KTableImpl:
        """Write the table to ``topic`` and read it back as a new table kept in ``store_name``."""
        require_non_null(store_name, "storeName")
        self.to(topic, key_serde, value_serde, partitioner)
        return self.topology.table(topic, store_name, key_serde=key_serde, value_serde=value_serde)

    def value_getter_supplier(self) -> Any:
        """Getters that read this table's current value for a key (Kafka's ``valueGetterSupplier``)."""
        return self.processor_supplier.view()

    # -- joins -----------------------------------------------------------------------------------------

    def join(self, other: KTableImpl, joiner: Callable[[Any, Any], Any]) -> KTableImpl:
        """A row ``joiner(this, other)`` for each key both tables have."""
        return self._do_join(other, joiner, JOINTHIS_NAME, JOINOTHER_NAME, INNER, INNER)

    def left_join(self, other: KTableImpl, joiner: Callable[[Any, Any], Any]) -> KTableImpl:
        """A row ``joiner(this, other)`` for each key of this table; ``other`` None where it has none."""
        return self._do_join(other, joiner, LEFTTHIS_NAME, LEFTOTHER_NAME, LEFT, RIGHT)

    def outer_join(self, other: KTableImpl, joiner: Callable[[Any, Any], Any]) -> KTableImpl:
        """A row ``joiner(this, other)`` for each key of either table; None for the side without it."""
        return self._do_join(other, joiner, OUTERTHIS_NAME, OUTEROTHER_NAME, OUTER, OUTER)

    def _do_join(
        self,
        other: KTableImpl,
        joiner: Callable[[Any, Any], Any],
        this_prefix: str,
        other_prefix: str,
        this_kind: str,
        other_kind: str,
    ) -> KTableImpl:
        require_non_null(other, "other")
        require_non_null(joiner, "joiner")
        join_this_name = self.topology.new_name(this_prefix)
        join_other_name = self.topology.new_name(other_prefix)
        join_merge_name = self.topology.new_name(MERGE_NAME)
        join_this = KTableKTableJoin(self, other, joiner, this_kind)
        join_other = KTableKTableJoin(other, self, reverse_joiner(joiner), other_kind)
        join_merge = KTableKTableJoinMerger(
            KTableImpl(self.topology, join_this_name, join_this, self.source_nodes, self.store_name),
            KTableImpl(self.topology, join_other_name, join_other, other.source_nodes, other.store_name),
        )
        self.topology.add_processor(join_this_name, join_this, self.name)
        self.topology.add_processor(join_other_name, join_other, other.name)
        self.topology.add_processor(join_merge_name, join_merge, join_this_name, join_other_name)
        self.topology.connect_processor_and_state_stores(
            join_this_name, *other.value_getter_supplier().store_names()
        )
        self.topology.connect_processor_and_state_stores(
            join_other_name, *self.value_getter_supplier().store_names()
        )
        all_source_nodes = self.source_nodes | other.source_nodes
        return KTableImpl(self.topology, join_merge_name, join_merge, all_source_nodes, None)

    def enable_sending_old_values(self) -> None:
        """Make this table's node forward old values too (Kafka's package-private method, which joins
        and aggregations of a table call)."""
        if not self.send_old_values:
            self.processor_supplier.enable_sending_old_values()
            self.send_old_values = True


def _new_value(change: Any) -> Any:
    return change.new_value
