"""A key-value store with the thread's record cache in front: puts stay in the cache until a flush.

Mirrors: org.apache.kafka.streams.state.internals.CachingKeyValueStore
         (streams/src/main/java/.../state/internals/CachingKeyValueStore.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache, KIP-63)
Differs: the flush writes the entries below one by one, each in its own record context (as Kafka
         1.0 does), where 0.10.1 forwards them all, then ``putAll``s them in the context the task
         has at the flush. kafka_lite's task clears its context after each record, and so each
         changelog record carries the timestamp of the update that made it.

The stack a cached store is (``Stores...enable_caching()``, as 0.10.1's
``RocksDBKeyValueStoreSupplier`` builds it)::

    CachingKeyValueStore            typed keys and values <-> bytes; puts go to the ThreadCache
      MeteredKeyValueStore          bytes in, bytes out (Serdes.ByteArray)
        ChangeLoggingKeyValueBytesStore   each write also to <application.id>-<name>-changelog
          RocksDBStore | InMemoryKeyValueStore

``put`` serializes and puts a *dirty* entry, stamped with the record context, into this store's
named cache (``<task id>-<store>``); nothing reaches the store below, its changelog or the
processors downstream. The store's flush listener runs when the cache flushes this store (the task
commits: ``flush``) or evicts a dirty entry of it. For each dirty entry, in the order their keys
were last written, it forwards ``(key, new, old)`` to the processor's ``CacheFlushListener``, the old
value read from the store below (which has not seen the new one yet), then writes the entry there,
so to the changelog; both with the entry's record context set.
Ten thousand updates of one key between two commits are one put below, one changelog record and
one record downstream.

``get`` looks in the cache first; on a miss it reads the store below and, on the stream thread,
puts the value in the cache as a clean entry (a later get is a hit; an eviction drops it without a
flush). A read from another thread (an Interactive Query) does not fill the cache: it must not
evict, and so flush, on the stream thread's behalf. ``range`` and ``all`` merge the cache with the
store below (``MergedSortedCacheKeyValueStoreIterator``).

The methods Kafka makes ``synchronized`` (``flush``, ``get``, the writes, ``approximate_num_entries``)
hold the store's lock: a query's ``get`` then never runs between the stream thread's read of the
old value and its write of the new one (``put_if_absent``, ``delete``), nor inside a flush. ``range``
and ``all`` take no lock, as in Kafka: the cache's keys are copied under the cache's own lock and
the store below guards its own iterators.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from kafka_lite.streams.processor.internals.processor_state_manager import store_changelog_topic
from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.serialization import Serde
from kafka_lite.streams.state.internals.cached_state_store import CacheFlushListener
from kafka_lite.streams.state.internals.lru_cache_entry import LRUCacheEntry
from kafka_lite.streams.state.internals.merged_sorted_cache_key_value_store_iterator import (
    DelegatingPeekingKeyValueIterator,
    MergedSortedCacheKeyValueStoreIterator,
)
from kafka_lite.streams.state.internals.named_cache import DirtyEntry
from kafka_lite.streams.state.internals.thread_cache import ThreadCache
from kafka_lite.streams.state.internals.wrapped_state_store import WrappedStateStore
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator, KeyValueStore
from kafka_lite.streams.state.state_serdes import StateSerdes


class CachingKeyValueStore(WrappedStateStore, KeyValueStore[Any, Any]):
    def __init__(self, underlying: KeyValueStore[bytes, bytes], key_serde: Serde, value_serde: Serde) -> None:
        super().__init__(underlying)
        self.underlying = underlying
        self._key_serde = key_serde
        self._value_serde = value_serde
        self.flush_listener: CacheFlushListener | None = None
        self.cache_name = ""
        self.cache: ThreadCache | None = None
        self.context: Any = None
        self.serdes: StateSerdes | None = None
        self._stream_thread: threading.Thread | None = None
        self._lock = threading.RLock()  # Kafka's synchronized methods

    def init(self, context: Any, root: StateStore) -> None:
        self.underlying.init(context, root)
        self._init_internal(context)
        # Only the stream thread may fill the cache on a read (a fill may evict, and so flush).
        self._stream_thread = threading.current_thread()

    def _init_internal(self, context: Any) -> None:
        self.context = context
        topic = store_changelog_topic(context.application_id(), self.underlying.name)
        self.serdes = StateSerdes(topic, self._key_serde, self._value_serde)
        self.cache_name = f"{context.task_id()}-{self.underlying.name}"
        self.cache = context.get_cache()
        self.cache.add_dirty_entry_flush_listener(self.cache_name, self._apply)

    # --8<-- [start:flush_listener]
    def _apply(self, entries: list[DirtyEntry]) -> None:
        """The cache's flush listener: each entry forwarded, then written to the store below."""
        for entry in entries:
            self._forward_and_put(entry)

    def _forward_and_put(self, entry: DirtyEntry) -> None:
        # Downstream and the changelog see the context of the update that made this value.
        current = self.context.record_context
        self.context.set_record_context(entry.record_context)
        try:
            if self.flush_listener is not None:
                self.flush_listener(
                    self.serdes.key_from(entry.key),
                    self.serdes.value_from(entry.new_value),
                    self.serdes.value_from(self.underlying.get(entry.key)),  # not yet overwritten
                )
            self.underlying.put(entry.key, entry.new_value)
        finally:
            self.context.set_record_context(current)

    # --8<-- [end:flush_listener]

    def set_flush_listener(self, flush_listener: CacheFlushListener) -> None:
        self.flush_listener = flush_listener

    def flush(self) -> None:
        with self._lock:
            self.cache.flush(self.cache_name)
            self.underlying.flush()

    def close(self) -> None:
        self.flush()
        self.underlying.close()

    # --8<-- [start:get_put]
    def get(self, key: Any) -> Any:
        with self._lock:
            return self._get(self.serdes.raw_key(key))

    def _get(self, raw_key: bytes) -> Any:
        entry = self.cache.get(self.cache_name, raw_key)
        if entry is None:
            raw_value = self.underlying.get(raw_key)
            if raw_value is None:
                return None
            if threading.current_thread() is self._stream_thread:
                self.cache.put(self.cache_name, raw_key, LRUCacheEntry(raw_value))  # clean
            return self.serdes.value_from(raw_value)
        if entry.value is None:
            return None  # deleted, not yet flushed
        return self.serdes.value_from(entry.value)

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._put(self.serdes.raw_key(key), value)

    def _put(self, raw_key: bytes, value: Any) -> None:
        context = self.context
        entry = LRUCacheEntry(
            self.serdes.raw_value(value),
            True,
            context.offset(),
            context.timestamp(),
            context.partition(),
            context.topic(),
        )
        self.cache.put(self.cache_name, raw_key, entry)

    # --8<-- [end:get_put]

    def put_if_absent(self, key: Any, value: Any) -> Any:
        with self._lock:
            raw_key = self.serdes.raw_key(key)
            v = self._get(raw_key)
            if v is None:
                self._put(raw_key, value)
            return v

    def put_all(self, entries: Iterable[KeyValue | tuple[Any, Any]]) -> None:
        with self._lock:
            for key, value in entries:
                self.put(key, value)

    def delete(self, key: Any) -> Any:
        """Put a None entry: the delete reaches the store, its changelog and downstream on flush."""
        with self._lock:
            raw_key = self.serdes.raw_key(key)
            v = self._get(raw_key)
            self._put(raw_key, None)
            return v

    def range(self, from_key: Any, to_key: Any) -> KeyValueIterator[Any, Any]:
        raw_from = self.serdes.raw_key(from_key)
        raw_to = self.serdes.raw_key(to_key)
        store_iterator = DelegatingPeekingKeyValueIterator(self.underlying.range(raw_from, raw_to))
        cache_iterator = self.cache.range(self.cache_name, raw_from, raw_to)
        return MergedSortedCacheKeyValueStoreIterator(cache_iterator, store_iterator, self.serdes)

    def all(self) -> KeyValueIterator[Any, Any]:
        store_iterator = DelegatingPeekingKeyValueIterator(self.underlying.all())
        cache_iterator = self.cache.all(self.cache_name)
        return MergedSortedCacheKeyValueStoreIterator(cache_iterator, store_iterator, self.serdes)

    def approximate_num_entries(self) -> int:
        """The store's count, as Kafka's: the keys only in the cache are not counted yet."""
        with self._lock:
            return self.underlying.approximate_num_entries()
