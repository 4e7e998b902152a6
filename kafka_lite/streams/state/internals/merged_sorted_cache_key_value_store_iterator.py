"""A range over a cached key-value store: the cache's entries and the store's, merged in key order.

Mirrors: org.apache.kafka.streams.state.internals.MergedSortedCacheKeyValueStoreIterator and
         DelegatingPeekingKeyValueIterator
         (streams/src/main/java/.../state/internals/, Kafka 0.10.1)
Book:    chapter 9, 9.1.4 (the record cache: reads)

The store under the cache has not seen the dirty entries yet, and the cache holds only some keys,
so neither alone answers a range. Both iterators are sorted by key bytes; each step takes the
smaller next key. When both have the same key, the cache's value is the newer one: the store's
entry is skipped. A cache entry whose value is None is a delete not yet flushed: it is skipped,
and so is the store's entry for that key, which it hides::

    cache:  b:2      d:None          store:  a:1  b:1  d:1  e:1
    range:  a:1 (store)  b:2 (cache)  e:1 (store)       d is deleted, waiting for the flush
"""

from __future__ import annotations

from typing import Any

from kafka_lite.streams.state.internals.thread_cache import MemoryLRUCacheBytesIterator
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator
from kafka_lite.streams.state.state_serdes import StateSerdes


class DelegatingPeekingKeyValueIterator:
    """A store's iterator with a look at its next entry (Kafka's ``DelegatingPeekingKeyValueIterator``)."""

    def __init__(self, underlying: KeyValueIterator) -> None:
        self._underlying = underlying
        self._next: KeyValue | None = None

    def has_next(self) -> bool:
        if self._next is None:
            self._next = next(self._underlying, None)
        return self._next is not None

    def peek_next(self) -> KeyValue:
        if not self.has_next():
            raise StopIteration
        return self._next

    def peek_next_key(self) -> Any:
        return self.peek_next().key

    def next(self) -> KeyValue:
        result = self.peek_next()
        self._next = None
        return result

    def close(self) -> None:
        self._underlying.close()


class MergedSortedCacheKeyValueStoreIterator(KeyValueIterator[Any, Any]):
    def __init__(
        self,
        cache_iterator: MemoryLRUCacheBytesIterator,
        store_iterator: DelegatingPeekingKeyValueIterator,
        serdes: StateSerdes,
    ) -> None:
        self.cache_iterator = cache_iterator
        self.store_iterator = store_iterator
        self.serdes = serdes

    def has_next(self) -> bool:
        # Skip the deletes waiting in the cache, and the store's entries they hide.
        while self.cache_iterator.has_next() and self.cache_iterator.peek_next().value.value is None:
            if (
                self.store_iterator.has_next()
                and self.store_iterator.peek_next_key() == self.cache_iterator.peek_next_key()
            ):
                self.store_iterator.next()
            self.cache_iterator.next()
        return self.cache_iterator.has_next() or self.store_iterator.has_next()

    def __next__(self) -> KeyValue:
        if not self.has_next():
            raise StopIteration
        if not self.cache_iterator.has_next():
            return self._next_store_value()
        if not self.store_iterator.has_next():
            return self._next_cache_value()
        cache_key = self.cache_iterator.peek_next_key()
        store_key = self.store_iterator.peek_next_key()
        if cache_key > store_key:
            return self._next_store_value()
        if cache_key < store_key:
            return self._next_cache_value()
        self.store_iterator.next()  # the same key: the cache's value is the newer
        return self._next_cache_value()

    def _next_cache_value(self) -> KeyValue:
        key, entry = self.cache_iterator.next()
        return KeyValue(self.serdes.key_from(key), self.serdes.value_from(entry.value))

    def _next_store_value(self) -> KeyValue:
        key, value = self.store_iterator.next()
        return KeyValue(self.serdes.key_from(key), self.serdes.value_from(value))

    def close(self) -> None:
        self.cache_iterator.close()
        self.store_iterator.close()
