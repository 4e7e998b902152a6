"""A window store with the thread's record cache in front: one entry per key and window until a flush.

Mirrors: org.apache.kafka.streams.state.internals.CachingWindowStore
         (streams/src/main/java/.../state/internals/CachingWindowStore.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache), 9.2.4 (windowed aggregation)
Differs: ``fetch`` keeps only the cache entries of the key asked for (0.10.1 does not check, and a
         shorter key's range can take in a longer key's windows; ``window_store_utils`` says how).
         The put below is made in the entry's record context too (Kafka 1.0's), as
         ``CachingKeyValueStore`` says why. An entry's timestamp is the record's, where 0.10.1
         stamps it with the window's start: so with ``cache.max.bytes.buffering=0`` a window's
         updates go out exactly as without a cache, each at its record's timestamp.

The stack (``Stores...windowed(...).enable_caching()``, as 0.10.1's ``RocksDBWindowStoreSupplier``)::

    CachingWindowStore          typed; puts go to the ThreadCache under key + window start + 0
      RocksDBWindowStore        bytes (Serdes.ByteArray)
        ChangeLoggingSegmentedBytesStore   (if logged)
          RocksDBSegmentedBytesStore

A put is stamped with the record context of the record in hand, its timestamp included: a windowed
aggregate forwarded on flush carries the timestamp of the record that made it. The flush listener, for each dirty entry in the order of its last update, forwards
``(Windowed(key, TimeWindow(start, start + window size)), new, old)`` with the old value fetched from
the store below, then puts the entry there. ``fetch`` merges the cache with the store below
(``MergedSortedCachedWindowStoreIterator``).

``flush``, ``put`` and ``fetch`` hold the store's lock, as Kafka's are ``synchronized``: a query's
``fetch`` lists the segments below and copies the cache's keys while no flush of the stream thread
is creating or dropping a segment, or moving entries from the cache down.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from kafka_lite.streams.processor.internals.processor_state_manager import store_changelog_topic
from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.serialization import Serde
from kafka_lite.streams.state.internals import window_store_utils
from kafka_lite.streams.state.internals.cached_state_store import CacheFlushListener
from kafka_lite.streams.state.internals.lru_cache_entry import LRUCacheEntry
from kafka_lite.streams.state.internals.merged_sorted_cache_key_value_store_iterator import (
    DelegatingPeekingKeyValueIterator,
)
from kafka_lite.streams.state.internals.merged_sorted_cached_window_store_iterator import (
    MergedSortedCachedWindowStoreIterator,
)
from kafka_lite.streams.state.internals.named_cache import DirtyEntry
from kafka_lite.streams.state.internals.thread_cache import MemoryLRUCacheBytesIterator, ThreadCache
from kafka_lite.streams.state.internals.wrapped_state_store import WrappedStateStore
from kafka_lite.streams.state.state_serdes import StateSerdes
from kafka_lite.streams.state.window_store import WindowStore, WindowStoreIterator

if TYPE_CHECKING:
    pass


class CachingWindowStore(WrappedStateStore, WindowStore[Any, Any]):
    def __init__(
        self, underlying: WindowStore[bytes, bytes], key_serde: Serde, value_serde: Serde, window_size: int
    ) -> None:
        super().__init__(underlying)
        self.underlying = underlying
        self._key_serde = key_serde
        self._value_serde = value_serde
        self.window_size = window_size
        self.flush_listener: CacheFlushListener | None = None
        self.cache_name = ""
        self.cache: ThreadCache | None = None
        self.context: Any = None
        self.serdes: StateSerdes | None = None
        self._lock = threading.RLock()  # Kafka's synchronized methods

    def init(self, context: Any, root: StateStore) -> None:
        self.underlying.init(context, root)
        self.context = context
        topic = store_changelog_topic(context.application_id(), self.underlying.name)
        self.serdes = StateSerdes(topic, self._key_serde, self._value_serde)
        self.cache_name = f"{context.task_id()}-{self.underlying.name}"
        self.cache = context.get_cache()
        self.cache.add_dirty_entry_flush_listener(self.cache_name, self._apply)

    # --8<-- [start:flush_listener]
    def _apply(self, entries: list[DirtyEntry]) -> None:
        """The cache's flush listener: per entry, forward it, then put it in the store below."""
        # Imported here: the kstream package imports the store factory, which imports this module.
        from kafka_lite.streams.kstream.windows import TimeWindow, Windowed

        for entry in entries:
            raw_key = window_store_utils.key_from_binary_key(entry.key)
            timestamp = window_store_utils.timestamp_from_binary_key(entry.key)
            windowed_key = Windowed(
                self.serdes.key_from(raw_key), TimeWindow(timestamp, timestamp + self.window_size)
            )
            current = self.context.record_context
            self.context.set_record_context(entry.record_context)
            try:
                if self.flush_listener is not None:
                    new_value = self.serdes.value_from(entry.new_value)
                    self.flush_listener(windowed_key, new_value, self._fetch_previous(raw_key, timestamp))
                self.underlying.put(raw_key, entry.new_value, timestamp)
            finally:
                self.context.set_record_context(current)

    # --8<-- [end:flush_listener]

    def _fetch_previous(self, raw_key: bytes, timestamp: int) -> Any:
        with self.underlying.fetch(raw_key, timestamp, timestamp) as found:
            previous = next(found, None)
        return None if previous is None else self.serdes.value_from(previous.value)

    def set_flush_listener(self, flush_listener: CacheFlushListener) -> None:
        self.flush_listener = flush_listener

    def flush(self) -> None:
        with self._lock:
            self.cache.flush(self.cache_name)
            self.underlying.flush()

    def close(self) -> None:
        self.flush()
        self.underlying.close()

    def put(self, key: Any, value: Any, timestamp: int | None = None) -> None:
        context = self.context
        if timestamp is None:
            timestamp = context.timestamp()
        binary_key = window_store_utils.to_binary_key(self.serdes.raw_key(key), timestamp, 0)
        entry = LRUCacheEntry(
            self.serdes.raw_value(value),
            True,
            context.offset(),
            context.timestamp(),  # the record's (0.10.1 stamps the window's start, ``timestamp``)
            context.partition(),
            context.topic(),
        )
        with self._lock:
            self.cache.put(self.cache_name, binary_key, entry)

    def fetch(self, key: Any, time_from: int, time_to: int) -> WindowStoreIterator[int, Any]:
        raw_key = self.serdes.raw_key(key)
        with self._lock:
            below = self.underlying.fetch(raw_key, time_from, time_to)
            cached = self._cache_range(raw_key, time_from, time_to)
        return MergedSortedCachedWindowStoreIterator(
            cached, DelegatingPeekingKeyValueIterator(below), self.serdes
        )

    def _cache_range(self, raw_key: bytes, time_from: int, time_to: int) -> MemoryLRUCacheBytesIterator:
        binary_from = window_store_utils.to_binary_key(raw_key, time_from, 0)
        binary_to = window_store_utils.to_binary_key(raw_key, time_to, 0)
        cache = self.cache.named_cache(self.cache_name)
        if cache is None:
            return self.cache.range(self.cache_name, binary_from, binary_to)
        own = (
            k
            for k in cache.key_range(binary_from, binary_to)
            if window_store_utils.key_from_binary_key(k) == raw_key
        )
        return MemoryLRUCacheBytesIterator(own, cache)
