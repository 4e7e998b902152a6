"""A window fetch over a cached window store: the cache's windows and the store's, merged by time.

Mirrors: org.apache.kafka.streams.state.internals.MergedSortedCachedWindowStoreIterator
         (streams/src/main/java/.../state/internals/MergedSortedCachedWindowStoreIterator.java,
         Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache: reads)

Both sides hold one key's windows between two times; the cache's binary keys
(``key + timestamp + seqnum``) carry the window's start. Each step takes the earlier window; for
the same window the cache's value is the newer and the store's is skipped. Entries come out as
``KeyValue(window start, value)``, as a window store's fetch gives them.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.state.internals import window_store_utils
from kafka_lite.streams.state.internals.merged_sorted_cache_key_value_store_iterator import (
    DelegatingPeekingKeyValueIterator,
)
from kafka_lite.streams.state.internals.thread_cache import MemoryLRUCacheBytesIterator
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator
from kafka_lite.streams.state.state_serdes import StateSerdes


class MergedSortedCachedWindowStoreIterator(KeyValueIterator[int, Any]):
    def __init__(
        self,
        cache_iterator: MemoryLRUCacheBytesIterator,
        store_iterator: DelegatingPeekingKeyValueIterator,
        serdes: StateSerdes,
    ) -> None:
        """``store_iterator`` yields ``KeyValue(timestamp, value bytes)``: the fetch of the store below."""
        self.cache_iterator = cache_iterator
        self.store_iterator = store_iterator
        self.serdes = serdes

    def has_next(self) -> bool:
        return self.cache_iterator.has_next() or self.store_iterator.has_next()

    def __next__(self) -> KeyValue:
        if not self.has_next():
            raise StopIteration
        if not self.cache_iterator.has_next():
            return self._next_store_value()
        cache_timestamp = window_store_utils.timestamp_from_binary_key(self.cache_iterator.peek_next_key())
        if not self.store_iterator.has_next():
            return self._next_cache_value(cache_timestamp)
        store_timestamp = self.store_iterator.peek_next_key()
        if cache_timestamp > store_timestamp:
            return self._next_store_value()
        if cache_timestamp < store_timestamp:
            return self._next_cache_value(cache_timestamp)
        self.store_iterator.next()  # the same window: the cache's value is the newer
        return self._next_cache_value(cache_timestamp)

    def _next_cache_value(self, timestamp: int) -> KeyValue:
        entry = self.cache_iterator.next().value
        return KeyValue(timestamp, self.serdes.value_from(entry.value))

    def _next_store_value(self) -> KeyValue:
        timestamp, value = self.store_iterator.next()
        return KeyValue(timestamp, self.serdes.value_from(value))

    def close(self) -> None:
        self.cache_iterator.close()
        self.store_iterator.close()
