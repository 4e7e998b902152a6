"""A map that keeps the most recently used entries up to a fixed number: transformations' schema caches.

Mirrors: org.apache.kafka.common.cache.LRUCache
         (clients/src/main/java/org/apache/kafka/common/cache/LRUCache.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book)
Differs: lives with the transformations, its only users; no ``SynchronizedCache`` around it, as a
         transformation instance serves one task, on the task's thread.

A transformation that changes a record's schema (``InsertField`` adding fields, ``ReplaceField``
dropping them) builds the new schema once per input schema and keeps it: the records of one
topic nearly always share a schema, and building it again for each record would also make every
output record carry a different (if equal) ``Schema`` object. Kafka keeps 16 per transformation.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    def __init__(self, max_size: int) -> None:
        self._max_size = max_size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)  # now the most recently used
        return value

    def put(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self._max_size:
            self._entries.popitem(last=False)  # the least recently used, as Kafka's removeEldestEntry

    def remove(self, key: K) -> bool:
        return self._entries.pop(key, None) is not None

    def size(self) -> int:
        return len(self._entries)
