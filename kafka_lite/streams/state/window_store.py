"""The window store interface: values per key and timestamp, fetched by key and time range.

Mirrors: org.apache.kafka.streams.state.WindowStore, ReadOnlyWindowStore, WindowStoreIterator
         (streams/src/main/java/org/apache/kafka/streams/state/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4 (window stores behind windowed aggregations and joins)
Differs: no ``fetch(from_key, to_key, time_from, time_to)`` over a key range.

A windowed aggregation keeps one value per (key, window start); a stream-stream join keeps every
record of the join window, duplicates included. Both need "this key's values between two times",
which the window store answers from a few time segments instead of scanning everything.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Generic, TypeVar

from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.state.key_value_store import KeyValueIterator

K = TypeVar("K")
V = TypeVar("V")

# A WindowStoreIterator yields KeyValue(timestamp, value), in timestamp order (Kafka's
# WindowStoreIterator<V> extends KeyValueIterator<Long, V>).
WindowStoreIterator = KeyValueIterator


class WindowStore(StateStore, Generic[K, V]):
    @abstractmethod
    def put(self, key: K, value: V | None, timestamp: int | None = None) -> None:
        """Store ``value`` for ``key`` at ``timestamp`` (the record's, ``context.timestamp()``, if None)."""

    @abstractmethod
    def fetch(self, key: K, time_from: int, time_to: int) -> WindowStoreIterator[int, V]:
        """``key``'s entries with ``time_from <= timestamp <= time_to``, as ``KeyValue(timestamp, value)``."""
