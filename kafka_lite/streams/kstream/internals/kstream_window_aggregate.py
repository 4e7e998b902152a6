"""Windowed aggregation: one aggregate per key and window, kept in a window store.

Mirrors: org.apache.kafka.streams.kstream.internals.KStreamWindowAggregate and KStreamWindowReduce
         (streams/src/main/java/.../kstream/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.2.4 (windowed aggregation)
Differs: no value getter, so a windowed table cannot be joined. A store that is not cached
         makes the processor forward each update as it puts it (0.10.2's ``TupleForwarder``).

For a record at time t, ``windows.windows_for(t)`` lists the windows it falls in (one if tumbling,
``size / advance`` if hopping). One ``fetch`` of the window store from the first start to the last
finds the aggregates those windows already have; each is updated and put back at its window's
start. Windows the fetch did not find start from the initializer (or, for reduce, from the value).
The window store has the record cache in front (``CachingWindowStore``), so the fetch sees the
updates not yet flushed, and the puts wait in the cache: each window's last aggregate is forwarded
as ``Windowed(key, window)`` with ``Change(new, old)`` when the cache flushes or evicts it, at the
timestamp of the record that made it.

The store's retention is the windows' ``until``: when its oldest segment is dropped, a late record
for a window in it finds nothing, and the put of its new aggregate is dropped too (the segment is
gone), so the old window's count is lost, and only the forwarded update says it was ever seen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.streams.kstream.internals.change import Change
from kafka_lite.streams.kstream.internals.kstream_aggregate import KStreamAggProcessorSupplier
from kafka_lite.streams.kstream.internals.ktable_processors import StoreProcessor
from kafka_lite.streams.kstream.windows import Windowed, Windows
from kafka_lite.streams.processor.processor import Processor


class _WindowAggProcessor(StoreProcessor):
    """Kafka's ``KStreamWindowAggregateProcessor``/``KStreamWindowReduceProcessor``."""

    # --8<-- [start:process]
    def process(self, key: Any, value: Any) -> None:
        if key is None:
            return
        matched_windows = self.supplier.windows.windows_for(self.context().timestamp())
        time_from, time_to = min(matched_windows), max(matched_windows)
        with self.store.fetch(key, time_from, time_to) as found:
            for entry in found:
                window = matched_windows.pop(entry.key, None)
                if window is not None:
                    self._update(key, value, window, entry.value)
        # The windows this key has no aggregate in yet.
        for window in matched_windows.values():
            self._update(key, value, window, None)

    # --8<-- [end:process]

    def _update(self, key: Any, value: Any, window: Any, old_agg: Any) -> None:
        new_agg = self.supplier.compute(key, value, old_agg)
        self.store.put(key, new_agg, window.start)
        if not self.cached:
            old_value = old_agg if self.supplier.send_old_values else None
            self.context().forward(Windowed(key, window), Change(new_agg, old_value))


class _WindowAggSupplier(KStreamAggProcessorSupplier):
    def view(self) -> Any:
        raise NotImplementedError("a windowed table has no value getter in kafka_lite: it cannot be joined")


class KStreamWindowAggregate(_WindowAggSupplier):
    """``aggregator(key, value, aggregate)`` per window, each window from ``initializer()``."""

    def __init__(
        self,
        windows: Windows,
        store_name: str,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
    ) -> None:
        super().__init__(store_name)
        self.windows = windows
        self.initializer = initializer
        self.aggregator = aggregator

    def __call__(self) -> Processor:
        return _WindowAggProcessor(self)

    def compute(self, key: Any, value: Any, old_agg: Any) -> Any:
        return self.aggregator(key, value, self.initializer() if old_agg is None else old_agg)


class KStreamWindowReduce(_WindowAggSupplier):
    """``reducer(aggregate, value)`` per window; a window's first value is its aggregate."""

    def __init__(self, windows: Windows, store_name: str, reducer: Callable[[Any, Any], Any]) -> None:
        super().__init__(store_name)
        self.windows = windows
        self.reducer = reducer

    def __call__(self) -> Processor:
        return _WindowAggProcessor(self)

    def compute(self, key: Any, value: Any, old_agg: Any) -> Any:
        return value if old_agg is None else self.reducer(old_agg, value)
