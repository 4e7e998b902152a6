"""Aggregating a grouped stream into a table: one store entry per key, updated record by record.

Mirrors: org.apache.kafka.streams.kstream.internals.KStreamAggregate, KStreamReduce and
         KStreamAggProcessorSupplier
         (streams/src/main/java/org/apache/kafka/streams/kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (aggregation: a stream becomes a table)
Differs: a processor whose store is not cached forwards each update as it puts it (0.10.2's
         ``TupleForwarder``); the DSL's aggregation stores are always cached, as 0.10.1's.

The processor is the whole algorithm: read the key's aggregate from the store (or start one with the
initializer), fold the value in, put it back. The store has the thread's record cache in front
(``enable_caching()``), so the put stays in the cache, and the processor does not forward: the
store does, when its cache flushes (the task commits) or evicts the key, through the
``ForwardingCacheFlushListener`` the processor gave it in ``init``. It forwards ``Change(new, old)``
once per key per flush, the old aggregate (only if a downstream table asked for old values) being
what the store under the cache held, None for a key seen first. The store is the table: it is
logged to ``<application.id>-<store>-changelog`` (on flush too), so the aggregate survives the task
moving elsewhere. With ``cache.max.bytes.buffering`` 0 every put is evicted at once: each update is
forwarded and logged as it is made.

A record with a null key is dropped (it has no group); a record with a null value leaves the
aggregate as it is but is still put and forwarded, as Kafka does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.streams.kstream.internals.change import Change
from kafka_lite.streams.kstream.internals.ktable_processors import StoreProcessor
from kafka_lite.streams.kstream.internals.ktable_value_getter import KTableSourceValueGetterSupplier
from kafka_lite.streams.processor.processor import Processor


class KStreamAggProcessorSupplier:
    """What every aggregating supplier has: the store it writes and whether it sends old values."""

    def __init__(self, store_name: str) -> None:
        self.store_name = store_name
        self.send_old_values = False

    def enable_sending_old_values(self) -> None:
        self.send_old_values = True

    def view(self) -> KTableSourceValueGetterSupplier:
        """The aggregated table's value getters: reads of the store (a windowed aggregate, keyed
        by ``Windowed``, has none here)."""
        return KTableSourceValueGetterSupplier(self.store_name)


class _AggProcessor(StoreProcessor):
    """Kafka's ``KStreamAggregateProcessor``/``KStreamReduceProcessor``: the supplier's ``compute``
    between a ``get`` and a ``put`` of the store."""

    # --8<-- [start:process]
    def process(self, key: Any, value: Any) -> None:
        if key is None:
            return
        old_agg = self.store.get(key)
        new_agg = self.supplier.compute(key, value, old_agg)
        self.store.put(key, new_agg)
        if not self.cached:
            old_value = old_agg if self.supplier.send_old_values else None
            self.context().forward(key, Change(new_agg, old_value))

    # --8<-- [end:process]


class KStreamAggregate(KStreamAggProcessorSupplier):
    """``aggregator(key, value, aggregate)`` from ``initializer()``: the aggregate may be any type."""

    def __init__(
        self, store_name: str, initializer: Callable[[], Any], aggregator: Callable[[Any, Any, Any], Any]
    ) -> None:
        super().__init__(store_name)
        self.initializer = initializer
        self.aggregator = aggregator

    def __call__(self) -> Processor:
        return _AggProcessor(self)

    def compute(self, key: Any, value: Any, old_agg: Any) -> Any:
        agg = self.initializer() if old_agg is None else old_agg
        return agg if value is None else self.aggregator(key, value, agg)


class KStreamReduce(KStreamAggProcessorSupplier):
    """``reducer(aggregate, value)``: the first value is the aggregate, so it has the values' type."""

    def __init__(self, store_name: str, reducer: Callable[[Any, Any], Any]) -> None:
        super().__init__(store_name)
        self.reducer = reducer

    def __call__(self) -> Processor:
        return _AggProcessor(self)

    def compute(self, key: Any, value: Any, old_agg: Any) -> Any:
        if value is None:
            return old_agg
        return value if old_agg is None else self.reducer(old_agg, value)
