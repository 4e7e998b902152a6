"""A store that forwards what its cache flushes: the DSL's processors hand it their forwarding.

Mirrors: org.apache.kafka.streams.state.internals.CachedStateStore and
         org.apache.kafka.streams.kstream.internals.CacheFlushListener
         (streams/src/main/java/.../, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache)

With a cache in front of its store, an aggregation no longer forwards in ``process``: a put only
reaches the cache. The processor gives the store a ``CacheFlushListener`` in ``init`` instead, and
the store calls it with ``(key, new value, old value)`` for each entry its cache flushes or evicts.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


class CacheFlushListener(Protocol):
    def __call__(self, key: Any, new_value: Any, old_value: Any) -> None: ...


@runtime_checkable
class CachedStateStore(Protocol):
    def set_flush_listener(self, listener: CacheFlushListener) -> None: ...
