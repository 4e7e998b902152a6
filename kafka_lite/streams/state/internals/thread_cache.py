"""The record cache of a stream thread, shared by its tasks' stores (KIP-63).

Mirrors: org.apache.kafka.streams.state.internals.ThreadCache (and its MemoryLRUCacheBytesIterator)
         (streams/src/main/java/.../state/internals/ThreadCache.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache)
Differs: no metrics; ``maybe_evict`` stops when the namespace it evicts from is empty, where Kafka's
         loop would spin (it cannot happen while every put goes through the loop).

Why a cache: a word count sees "the" a thousand times a second. Without a cache each update is a
put to the store, a record to the store's changelog and a record downstream: three sends, of which
all but the last are overwritten a moment later. The cache sits in front of the store and keeps the
latest value per key; only when the task commits (or the cache is full) does each key's last value
go to the store, to the changelog and downstream, once.

One cache per thread, with the budget ``cache.max.bytes.buffering / num.stream.threads``, split into
one ``NamedCache`` per store of each task, named ``<task id>-<store>``::

    ThreadCache (budget)
      "0_0-counts"   NamedCache   LRU entries, dirty keys, flush listener -> CachingKeyValueStore 0_0
      "0_1-counts"   NamedCache   ...
      "1_0-windowed" NamedCache   ...

The budget is the thread's, not the store's: after a put, while all the named caches together hold
more than the budget, the cache that was just put into evicts its least recently used entry
(``NamedCache.evict``, which flushes that cache if the entry is dirty). A budget of 0 evicts
every put at once: each update is written and forwarded as it is made, as without a cache.

Each ``NamedCache`` guards itself; the map of them is guarded by this cache's lock, as Kafka's
``getCache`` and ``getOrCreateCache`` are ``synchronized``: the stream thread adds a store's cache
when a task starts while a query on another thread looks one up, and ``size_bytes`` sums them.
"""

from __future__ import annotations

import logging
import threading

from kafka_lite.streams.state.internals.lru_cache_entry import LRUCacheEntry
from kafka_lite.streams.state.internals.named_cache import DirtyEntry, DirtyEntryFlushListener, NamedCache
from kafka_lite.streams.state.key_value_store import KeyValue

log = logging.getLogger(__name__)

__all__ = ["DirtyEntry", "MemoryLRUCacheBytesIterator", "ThreadCache"]


class ThreadCache:
    def __init__(self, name: str | None, max_cache_size_bytes: int) -> None:
        self.name = name
        self.max_cache_size_bytes = max_cache_size_bytes
        self.caches: dict[str, NamedCache] = {}
        self._lock = threading.Lock()  # Kafka's synchronized getCache and getOrCreateCache
        # Kafka's internal stats, logged on each flush.
        self.num_puts = 0
        self.num_gets = 0
        self.num_evicts = 0
        self.num_flushes = 0

    def add_dirty_entry_flush_listener(self, namespace: str, listener: DirtyEntryFlushListener) -> None:
        """Called each time dirty entries of ``namespace`` leave the cache: on flush and on eviction."""
        self._get_or_create_cache(namespace).set_listener(listener)

    def flush(self, namespace: str) -> None:
        self.num_flushes += 1
        cache = self._get_cache(namespace)
        if cache is None:
            return
        cache.flush()
        log.debug("Thread %s cache stats on flush: #puts=%d, #gets=%d, #evicts=%d, #flushes=%d",
                  self.name, self.num_puts, self.num_gets, self.num_evicts, self.num_flushes)  # fmt: skip

    def get(self, namespace: str, key: bytes) -> LRUCacheEntry | None:
        self.num_gets += 1
        cache = self._get_cache(namespace)
        return None if cache is None else cache.get(key)

    # --8<-- [start:put]
    def put(self, namespace: str, key: bytes, value: LRUCacheEntry) -> None:
        self.num_puts += 1
        self._get_or_create_cache(namespace).put(key, value)
        self._maybe_evict(namespace)

    def _maybe_evict(self, namespace: str) -> None:
        # The thread's budget is checked against all its caches, but the one just written pays.
        while self.size_bytes() > self.max_cache_size_bytes:
            cache = self._get_or_create_cache(namespace)
            if cache.size() == 0:
                return
            cache.evict()
            self.num_evicts += 1

    # --8<-- [end:put]

    def put_if_absent(self, namespace: str, key: bytes, value: LRUCacheEntry) -> LRUCacheEntry | None:
        return self._get_or_create_cache(namespace).put_if_absent(key, value)

    def put_all(self, namespace: str, entries: list[KeyValue]) -> None:
        cache = self._get_or_create_cache(namespace)
        for key, value in entries:
            cache.put(key, value)

    def delete(self, namespace: str, key: bytes) -> LRUCacheEntry | None:
        cache = self._get_cache(namespace)
        return None if cache is None else cache.delete(key)

    def range(self, namespace: str, from_key: bytes, to_key: bytes) -> MemoryLRUCacheBytesIterator:
        cache = self._get_cache(namespace)
        if cache is None:
            return MemoryLRUCacheBytesIterator(iter(()), NamedCache(namespace))
        return MemoryLRUCacheBytesIterator(cache.key_range(from_key, to_key), cache)

    def all(self, namespace: str) -> MemoryLRUCacheBytesIterator:
        cache = self._get_cache(namespace)
        if cache is None:
            return MemoryLRUCacheBytesIterator(iter(()), NamedCache(namespace))
        return MemoryLRUCacheBytesIterator(cache.all_keys(), cache)

    def size(self) -> int:
        """How many entries all the named caches hold."""
        return sum(cache.size() for cache in self._all_caches())

    def size_bytes(self) -> int:
        return sum(cache.size_in_bytes() for cache in self._all_caches())

    def named_cache(self, namespace: str) -> NamedCache | None:
        """The cache of one store of one task (``<task id>-<store>``), to look at its entries."""
        return self._get_cache(namespace)

    def _get_cache(self, namespace: str) -> NamedCache | None:
        with self._lock:
            return self.caches.get(namespace)

    def _get_or_create_cache(self, name: str) -> NamedCache:
        with self._lock:
            cache = self.caches.get(name)
            if cache is None:
                cache = self.caches[name] = NamedCache(name)
            return cache

    def _all_caches(self) -> list[NamedCache]:
        with self._lock:
            return list(self.caches.values())


class MemoryLRUCacheBytesIterator:
    """The cache's entries of a range, in key order, with a look at the next one before taking it
    (the merged iterators compare it with the store's next key). Keys are a copy taken when the
    iterator was made; an entry evicted since is skipped."""

    def __init__(self, keys: object, cache: NamedCache) -> None:
        self._keys = keys
        self._cache = cache
        self._next_entry: KeyValue | None = None

    def has_next(self) -> bool:
        while self._next_entry is None:
            key = next(self._keys, None)
            if key is None:
                return False
            # A get: reading the range makes its keys the most recently used, as in Kafka.
            entry = self._cache.get(key)
            if entry is not None:
                self._next_entry = KeyValue(key, entry)
        return True

    def peek_next_key(self) -> bytes:
        return self.peek_next().key

    def peek_next(self) -> KeyValue:
        if not self.has_next():
            raise StopIteration
        return self._next_entry

    def next(self) -> KeyValue:
        result = self.peek_next()
        self._next_entry = None
        return result

    def close(self) -> None:
        pass  # nothing pinned: the keys are a copy
