"""KTable: a changelog stream read as a table, and its operators on ``Change`` records.

Mirrors: org.apache.kafka.streams.kstream.KTable and internals.KTableImpl
         (streams/src/main/java/org/apache/kafka/streams/kstream/, Kafka 0.10.1)
Book:    chapter 9, 9.2.1 (KStream and KTable)
Differs: no ``print``/``write_as_text``/``foreach``, joins or ``group_by``; so no value getters.
         Keyword arguments replace Kafka's overloads.

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
from kafka_lite.streams.kstream.internals.kstream_stateless import KStreamMapValues
from kafka_lite.streams.kstream.internals.ktable_processors import KTableFilter, KTableMapValues
from kafka_lite.streams.serialization import Serde

if TYPE_CHECKING:
    from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder

FILTER_NAME = "KTABLE-FILTER-"
MAPVALUES_NAME = "KTABLE-MAPVALUES-"
SOURCE_NAME = "KTABLE-SOURCE-"
TOSTREAM_NAME = "KTABLE-TOSTREAM-"


class KTableImpl(AbstractStream):
    """Kafka's ``KTableImpl``: a node forwarding a table's changes, and the store holding its rows."""

    def __init__(
        self,
        topology: KStreamBuilder,
        name: str,
        processor_supplier: Any,
        source_nodes: frozenset[str],
        store_name: str,
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

    def enable_sending_old_values(self) -> None:
        """Make this table's node forward old values too (Kafka's package-private method, which joins
        and aggregations of a table call)."""
        if not self.send_old_values:
            self.processor_supplier.enable_sending_old_values()
            self.send_old_values = True


def _new_value(change: Any) -> Any:
    return change.new_value
