"""A grouped stream: records by key, waiting for an aggregation to turn them into a table.

Mirrors: org.apache.kafka.streams.kstream.KGroupedStream and internals.KGroupedStreamImpl
         (streams/src/main/java/org/apache/kafka/streams/kstream/, Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (aggregation)
Differs: ``windows=`` replaces Kafka's windowed overloads. A serde left out means bytes
         (``Serdes.ByteArray()``). Session stores (0.10.2's) are not cached.

``count``, ``reduce`` and ``aggregate`` are one method, ``_do_aggregate``, with different
processors: name the aggregate node, repartition if the key may have changed (the repartition
topic is named after the store, ``<application.id>-<store>-repartition``), add the processor
reading from there, and give it its key-value store, RocksDB (``persistent()``), cached
(``enable_caching()``, as 0.10.1's ``storeFactory``) and logged to
``<application.id>-<store>-changelog``.
The result is a ``KTable`` whose rows are the store's entries. ``_do_aggregate`` is given the
processor and the store supplier, so it does not care whether the store is a key-value or a window
store: given ``windows``, each method adds ``KStreamWindowAggregate``/``KStreamWindowReduce`` over a
window store whose retention is ``windows.maintain_ms()``, and the table's keys are ``Windowed``.
Given ``SessionWindows``, they add ``KStreamSessionWindowAggregate`` over an in-memory session store
(``InMemorySessionStore``, by ``_session_aggregate``), and ``aggregate`` needs a ``session_merger``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka_lite.streams.kstream.internals.abstract_stream import AbstractStream
from kafka_lite.streams.kstream.internals.kstream_aggregate import (
    KStreamAggProcessorSupplier,
    KStreamAggregate,
    KStreamReduce,
)
from kafka_lite.streams.kstream.internals.kstream_impl import create_repartitioned_source, require_non_null
from kafka_lite.streams.kstream.internals.kstream_session_window_aggregate import (
    KStreamSessionWindowAggregate,
)
from kafka_lite.streams.kstream.internals.kstream_window_aggregate import (
    KStreamWindowAggregate,
    KStreamWindowReduce,
)
from kafka_lite.streams.kstream.internals.ktable_impl import KTableImpl
from kafka_lite.streams.kstream.windows import SessionWindows, Windows
from kafka_lite.streams.serialization import Serde, Serdes
from kafka_lite.streams.state.internals.in_memory_session_store import InMemorySessionStoreSupplier
from kafka_lite.streams.state.stores import AbstractStoreSupplier, Stores

if TYPE_CHECKING:
    from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder

REDUCE_NAME = "KSTREAM-REDUCE-"
AGGREGATE_NAME = "KSTREAM-AGGREGATE-"


class KGroupedStreamImpl(AbstractStream):
    """Kafka's ``KGroupedStreamImpl``: the node to aggregate from, the serdes of its records, and
    whether the aggregation must repartition first."""

    def __init__(
        self,
        topology: KStreamBuilder,
        name: str,
        source_nodes: frozenset[str],
        key_serde: Serde | None,
        value_serde: Serde | None,
        repartition_required: bool,
    ) -> None:
        super().__init__(topology, name, source_nodes)
        self.key_serde = key_serde
        self.value_serde = value_serde
        self.repartition_required = repartition_required

    def reduce(
        self,
        reducer: Callable[[Any, Any], Any],
        store_name: str,
        windows: Windows | SessionWindows | None = None,
    ) -> KTableImpl:
        """Per key (and window, given ``windows``), ``reducer(aggregate, value)`` over its values;
        the first value starts it."""
        require_non_null(reducer, "reducer")
        require_non_null(store_name, "storeName")
        if isinstance(windows, SessionWindows):
            # A session's first value is its aggregate, and two sessions merge by the reducer.
            return self._session_aggregate(
                windows,
                store_name,
                lambda: None,
                lambda key, value, agg: value if agg is None else reducer(agg, value),
                lambda key, agg1, agg2: agg2 if agg1 is None else reducer(agg1, agg2),
            )
        if windows is not None:
            return self._do_aggregate(
                KStreamWindowReduce(windows, store_name, reducer),
                REDUCE_NAME,
                self._window_store(self.value_serde, store_name, windows),
            )
        return self._do_aggregate(
            KStreamReduce(store_name, reducer),
            REDUCE_NAME,
            self._key_value_store(self.value_serde, store_name),
        )

    def aggregate(
        self,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        agg_value_serde: Serde | None,
        store_name: str,
        windows: Windows | SessionWindows | None = None,
        session_merger: Callable[[Any, Any, Any], Any] | None = None,
    ) -> KTableImpl:
        """Per key (and window, given ``windows``), ``aggregator(key, value, aggregate)`` over its
        values, from ``initializer()``."""
        require_non_null(initializer, "initializer")
        require_non_null(aggregator, "aggregator")
        require_non_null(store_name, "storeName")
        if isinstance(windows, SessionWindows):
            require_non_null(session_merger, "sessionMerger")
            return self._session_aggregate(windows, store_name, initializer, aggregator, session_merger)
        if windows is not None:
            return self._do_aggregate(
                KStreamWindowAggregate(windows, store_name, initializer, aggregator),
                AGGREGATE_NAME,
                self._window_store(agg_value_serde, store_name, windows),
            )
        return self._do_aggregate(
            KStreamAggregate(store_name, initializer, aggregator),
            AGGREGATE_NAME,
            self._key_value_store(agg_value_serde, store_name),
        )

    def count(self, store_name: str, windows: Windows | SessionWindows | None = None) -> KTableImpl:
        """Per key (and window), the number of records: ``aggregate`` from 0, adding 1, as longs;
        two sessions merge by adding their counts."""
        return self.aggregate(
            lambda: 0,
            lambda key, value, aggregate: aggregate + 1,
            Serdes.Long(),
            store_name,
            windows,
            lambda key, count1, count2: count1 + count2,
        )

    def _session_aggregate(
        self,
        windows: SessionWindows,
        store_name: str,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        session_merger: Callable[[Any, Any, Any], Any],
    ) -> KTableImpl:
        """Kafka 0.10.2's session windows (KIP-94), which 0.10.1 has not: the book's 9.2.4 teaches
        them beside the fixed windows. The store is in memory and not cached (the header says why)."""
        return self._do_aggregate(
            KStreamSessionWindowAggregate(windows, store_name, initializer, aggregator, session_merger),
            AGGREGATE_NAME,
            InMemorySessionStoreSupplier(store_name),
        )

    def _key_value_store(self, agg_value_serde: Serde | None, store_name: str) -> AbstractStoreSupplier:
        return (
            Stores.create(store_name)
            .with_keys(self.key_serde or Serdes.ByteArray())
            .with_values(agg_value_serde or Serdes.ByteArray())
            .persistent()  # RocksDB, as Kafka's aggregations: checkpointed, kept warm by standbys
            .enable_caching()  # one update per key per commit downstream and to the changelog
            .build()
        )

    def _window_store(
        self, agg_value_serde: Serde | None, store_name: str, windows: Windows
    ) -> AbstractStoreSupplier:
        return (
            Stores.create(store_name)
            .with_keys(self.key_serde or Serdes.ByteArray())
            .with_values(agg_value_serde or Serdes.ByteArray())
            .persistent()
            .windowed(windows.size(), windows.maintain_ms(), windows.segments, False)
            .enable_caching()
            .build()
        )

    def _do_aggregate(
        self, aggregate_supplier: KStreamAggProcessorSupplier, function_name: str, store_supplier: Any
    ) -> KTableImpl:
        agg_function_name = self.topology.new_name(function_name)
        source_name = self._repartition_if_required(store_supplier.name)
        self.topology.add_processor(agg_function_name, aggregate_supplier, source_name)
        self.topology.add_state_store(store_supplier, agg_function_name)
        source_nodes = self.source_nodes if source_name == self.name else frozenset({source_name})
        return KTableImpl(
            self.topology, agg_function_name, aggregate_supplier, source_nodes, store_supplier.name
        )

    def _repartition_if_required(self, store_name: str) -> str:
        if not self.repartition_required:
            return self.name
        return create_repartitioned_source(self, self.key_serde, self.value_serde, store_name)
