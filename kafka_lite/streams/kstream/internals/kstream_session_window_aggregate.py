"""Session-windowed aggregation: a record extends, starts or merges its key's sessions.

Mirrors: org.apache.kafka.streams.kstream.internals.KStreamSessionWindowAggregate
         (streams/src/main/java/.../kstream/internals/, Kafka 0.10.2, where sessions begin)
Book:    chapter 9, 9.2.4 (session windows)
Differs: the session store is not cached (0.10.2 has a ``CachingSessionStore``; kafka_lite's
         record cache covers 0.10.1's key-value and window stores): removals and the merged
         session are forwarded as they happen, as 0.10.2's ``TupleForwarder`` does when caching
         is off. The store is kafka_lite's ``InMemorySessionStore``; the initializer, aggregator
         and merger are Python callables.

A record at t belongs to every session of its key that ends at or after ``t - gap`` and starts at or
before ``t + gap``. The processor finds them, merges their aggregates into one (``session_merger``,
starting from the initializer) and their windows into one spanning them all and t, and folds the
record in. If that window is larger than ``[t, t]``, the old sessions are removed from the store and
each removal is forwarded as a delete (``Change(None, old)``, the old aggregate only if old values
are sent), a tombstone downstream; then the new
session is put and forwarded. So a record that lands in the gap between two sessions turns them
into one, and downstream sees two deletes and one new row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.streams.kstream.internals.change import Change
from kafka_lite.streams.kstream.internals.kstream_aggregate import KStreamAggProcessorSupplier
from kafka_lite.streams.kstream.internals.ktable_processors import StoreProcessor
from kafka_lite.streams.kstream.windows import SessionWindow, SessionWindows, Windowed
from kafka_lite.streams.processor.processor import Processor


class KStreamSessionWindowAggregate(KStreamAggProcessorSupplier):
    def __init__(
        self,
        windows: SessionWindows,
        store_name: str,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        session_merger: Callable[[Any, Any, Any], Any],
    ) -> None:
        super().__init__(store_name)
        self.windows = windows
        self.initializer = initializer
        self.aggregator = aggregator
        self.session_merger = session_merger

    def __call__(self) -> Processor:
        return _KStreamSessionWindowAggregateProcessor(self)

    def view(self) -> Any:
        raise NotImplementedError("a session-windowed table has no value getter in kafka_lite")


class _KStreamSessionWindowAggregateProcessor(StoreProcessor):
    def process(self, key: Any, value: Any) -> None:
        if key is None:
            return
        supplier = self.supplier
        timestamp = self.context().timestamp()
        gap = supplier.windows.inactivity_gap
        new_session_window = SessionWindow(timestamp, timestamp)
        merged_window = new_session_window
        agg = supplier.initializer()
        with self.store.find_sessions(key, timestamp - gap, timestamp + gap) as found:
            merged = list(found)
        for session in merged:
            agg = supplier.session_merger(key, agg, session.value)
            merged_window = _merge_session_window(merged_window, session.key.window)
        agg = supplier.aggregator(key, value, agg)
        session_key = Windowed(key, merged_window)
        if merged_window != new_session_window:
            for session in merged:
                self.store.remove(session.key)
                self._forward(session.key, None, session.value)
        self.store.put(session_key, agg)
        self._forward(session_key, agg, None)

    def _forward(self, session_key: Windowed, new_value: Any, old_value: Any) -> None:
        sent_old = old_value if self.supplier.send_old_values else None
        self.context().forward(session_key, Change(new_value, sent_old))


def _merge_session_window(one: SessionWindow, two: SessionWindow) -> SessionWindow:
    return SessionWindow(min(one.start, two.start), max(one.end, two.end))
