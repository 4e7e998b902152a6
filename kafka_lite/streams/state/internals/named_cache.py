"""One store's part of a thread's record cache: its entries in key order and in LRU order, and the
keys written since the last flush.

Mirrors: org.apache.kafka.streams.state.internals.NamedCache
         (streams/src/main/java/.../state/internals/NamedCache.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache, KIP-63)
Differs: the LRU list is an ``OrderedDict`` (oldest first) where Kafka links its own nodes, and the
         key order a sorted list kept with ``bisect`` where Kafka has a ``TreeMap``: the two orders
         Kafka's one map of linked nodes gives. No hit-ratio sensor.

A named cache answers three questions with three structures::

    entries       key -> LRUCacheEntry, least recently used first (a get or a put moves a key last)
    sorted_keys   the same keys in byte order, for range queries merged with the store's
    dirty_keys    keys put since the last flush, in the order of their last put

``put`` makes the key the most recently used and, if the entry is dirty, moves it to the end of
``dirty_keys``: a key updated 1000 times between two flushes is one dirty key, flushed once, with
its last value. ``flush`` hands every dirty entry to the store's listener in ``dirty_keys`` order
(which writes them to the store under the cache and forwards them), then marks them clean.

``evict`` drops the least recently used entry. If it is dirty, its new value must not be lost, so
the whole cache is flushed first, every dirty key, not just the one leaving: Kafka's choice, which
keeps the store's changelog in the order the keys were last written. The entry's bytes leave the
count before the flush, as in Kafka, so a flush that leads to more puts sees the space freed.

Each method holds the cache's lock, as Kafka's are ``synchronized``: the stream thread writes, and
an Interactive Query on another thread may read at the same time.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kafka_lite.streams.processor.internals.processor_record_context import ProcessorRecordContext
from kafka_lite.streams.state.internals.lru_cache_entry import LRUCacheEntry

# key + references to the entry, the previous and the next node: LRUNode.size()'s estimate.
_NODE_OVERHEAD = 8 + 8 + 8


@dataclass(frozen=True)
class DirtyEntry:
    """What a flush hands the store's listener (Kafka's ``ThreadCache.DirtyEntry``)."""

    key: bytes
    new_value: bytes | None
    record_context: ProcessorRecordContext


DirtyEntryFlushListener = Callable[[list[DirtyEntry]], None]


def _node_size(key: bytes, entry: LRUCacheEntry) -> int:
    return len(key) + _NODE_OVERHEAD + entry.size()


class NamedCache:
    def __init__(self, name: str) -> None:
        self.name = name
        self.entries: OrderedDict[bytes, LRUCacheEntry] = OrderedDict()  # eldest first
        self.sorted_keys: list[bytes] = []
        self.dirty_keys: dict[bytes, None] = {}  # an ordered set: Kafka's LinkedHashSet
        self.listener: DirtyEntryFlushListener | None = None
        self.current_size_bytes = 0
        self.num_flushes = 0
        self._lock = threading.RLock()

    def set_listener(self, listener: DirtyEntryFlushListener) -> None:
        self.listener = listener

    # --8<-- [start:get_put]
    def get(self, key: bytes) -> LRUCacheEntry | None:
        with self._lock:
            entry = self.entries.get(key)
            if entry is not None:
                self.entries.move_to_end(key)  # now the most recently used
            return entry

    def put(self, key: bytes, value: LRUCacheEntry) -> None:
        with self._lock:
            old = self.entries.get(key)
            if old is not None:
                self.current_size_bytes -= _node_size(key, old)
                self.entries.move_to_end(key)
            else:
                bisect.insort(self.sorted_keys, key)
            self.entries[key] = value
            if value.is_dirty:
                # Remove, then add: the dirty keys stay in the order of their last update.
                self.dirty_keys.pop(key, None)
                self.dirty_keys[key] = None
            self.current_size_bytes += _node_size(key, value)

    # --8<-- [end:get_put]

    # --8<-- [start:flush_evict]
    def flush(self) -> None:
        with self._lock:
            self.num_flushes += 1
            if self.listener is None:
                raise ValueError(f"No listener for namespace {self.name} registered with cache")
            if not self.dirty_keys:
                return
            entries = []
            for key in self.dirty_keys:
                entry = self.entries.get(key)
                if entry is None:
                    raise RuntimeError("Key found in dirty key set, but entry is null")
                entries.append(DirtyEntry(key, entry.value, entry.record_context))
                entry.mark_clean()
            self.listener(entries)
            self.dirty_keys.clear()

    def evict(self) -> None:
        """Drop the least recently used entry, flushing the whole cache first if it is dirty."""
        with self._lock:
            if not self.entries:
                return
            eldest_key, eldest = next(iter(self.entries.items()))
            self.current_size_bytes -= _node_size(eldest_key, eldest)
            if eldest.is_dirty:
                self.flush()
            del self.entries[eldest_key]
            self._remove_sorted(eldest_key)

    # --8<-- [end:flush_evict]

    def put_if_absent(self, key: bytes, value: LRUCacheEntry) -> LRUCacheEntry | None:
        with self._lock:
            original = self.get(key)
            if original is None:
                self.put(key, value)
            return original

    def delete(self, key: bytes) -> LRUCacheEntry | None:
        """Forget ``key`` at once, dirty or not (the caching store deletes by putting None instead)."""
        with self._lock:
            entry = self.entries.pop(key, None)
            if entry is None:
                return None
            self._remove_sorted(key)
            self.dirty_keys.pop(key, None)
            self.current_size_bytes -= _node_size(key, entry)
            return entry

    def key_range(self, from_key: bytes, to_key: bytes) -> Iterator[bytes]:
        """The keys from ``from_key`` to ``to_key`` (both included), copied: the cache may change
        while the caller iterates, as Kafka's copy into a new ``TreeSet`` allows."""
        with self._lock:
            lo = bisect.bisect_left(self.sorted_keys, from_key)
            hi = bisect.bisect_right(self.sorted_keys, to_key)
            return iter(self.sorted_keys[lo:hi])

    def all_keys(self) -> Iterator[bytes]:
        with self._lock:
            return iter(list(self.sorted_keys))

    def size_in_bytes(self) -> int:
        return self.current_size_bytes

    def size(self) -> int:
        return len(self.entries)

    def _remove_sorted(self, key: bytes) -> None:
        i = bisect.bisect_left(self.sorted_keys, key)
        del self.sorted_keys[i]
