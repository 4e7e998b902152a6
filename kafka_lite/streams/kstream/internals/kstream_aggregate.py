"""Aggregating a grouped stream into a table: one store entry per key, updated record by record.

Mirrors: org.apache.kafka.streams.kstream.internals.KStreamAggregate, KStreamReduce and
         KStreamAggProcessorSupplier
         (streams/src/main/java/org/apache/kafka/streams/kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.2 (aggregation: a stream becomes a table)
Differs: no record cache, so each update is forwarded downstream as it is made, as 0.10.0 does
         (and 0.10.1 with ``cache.max.bytes.buffering`` 0); 0.10.1 puts into a caching store and
         forwards when the cache flushes or evicts the key (``ForwardingCacheFlushListener``).

The processor is the whole algorithm: read the key's aggregate from the store (or start one with the
initializer), fold the value in, put it back, and forward ``Change(new, old)``, the old aggregate
only if a downstream table asked for old values. The old aggregate is what the store held, None for
a key seen first, as 0.10.1's cache reports it (not the initializer's value, which it never stored). The store is the table: it is logged to
``<application.id>-<store>-changelog``, so the aggregate survives the task moving elsewhere.

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
