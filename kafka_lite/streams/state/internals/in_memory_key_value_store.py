"""A key-value store in memory: bytes to bytes, sorted by key bytes, gone when the process is.

Mirrors: org.apache.kafka.streams.state.internals.InMemoryKeyValueStore
         (streams/src/main/java/.../state/internals/InMemoryKeyValueStore.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4
Differs: keys and values are bytes, ordered by the bytes (Kafka's keeps typed keys in a ``TreeMap``
         in their natural order, and the layer above serializes): so in-memory and RocksDB stores
         iterate in the same order. Python has no sorted map, so a dict holds the entries and a
         sorted list of keys, kept with ``bisect``, gives the order. ``range`` and ``all`` iterate
         a snapshot, so a processor may write to the store while it iterates.

Not persistent: after a restart the task restores it by replaying its whole changelog, which is why
the change-logging layer matters most for this store.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

from kafka_lite.streams.processor.state_store import StateStore
from kafka_lite.streams.state.key_value_store import KeyValue, KeyValueIterator, KeyValueStore


class InMemoryKeyValueIterator(KeyValueIterator[bytes, bytes]):
    """Entries from a list, already in order; ``close`` lets them go."""

    def __init__(self, entries: list[KeyValue]) -> None:
        self._entries = iter(entries)

    def __next__(self) -> KeyValue:
        return next(self._entries)

    def close(self) -> None:
        self._entries = iter(())


class InMemoryKeyValueStore(KeyValueStore[bytes, bytes]):
    def __init__(self, name: str, logged: bool = False) -> None:
        self._name = name
        # Passed to context.register: whether the task has a changelog to restore this store from.
        self._logged = logged
        self._map: dict[bytes, bytes] = {}
        self._sorted_keys: list[bytes] = []
        self._open = False

    @property
    def name(self) -> str:
        return self._name

    def init(self, context: Any, root: StateStore) -> None:
        context.register(root, self._logged, self._restore)
        self._open = True

    def _restore(self, key: bytes, value: bytes | None) -> None:
        self.put(key, value)

    def persistent(self) -> bool:
        return False

    def is_open(self) -> bool:
        return self._open

    def get(self, key: bytes) -> bytes | None:
        return self._map.get(key)

    def put(self, key: bytes, value: bytes | None) -> None:
        if value is None:
            self.delete(key)
            return
        if key not in self._map:
            bisect.insort(self._sorted_keys, key)
        self._map[key] = value

    def put_all(self, entries: Iterable[KeyValue | tuple[bytes, bytes]]) -> None:
        for key, value in entries:
            self.put(key, value)

    def delete(self, key: bytes) -> bytes | None:
        value = self._map.pop(key, None)
        if value is not None:
            del self._sorted_keys[bisect.bisect_left(self._sorted_keys, key)]
        return value

    def range(self, from_key: bytes, to_key: bytes) -> KeyValueIterator[bytes, bytes]:
        lo = bisect.bisect_left(self._sorted_keys, from_key)
        hi = bisect.bisect_right(self._sorted_keys, to_key)
        return InMemoryKeyValueIterator([KeyValue(k, self._map[k]) for k in self._sorted_keys[lo:hi]])

    def all(self) -> KeyValueIterator[bytes, bytes]:
        return InMemoryKeyValueIterator([KeyValue(k, self._map[k]) for k in self._sorted_keys])

    def approximate_num_entries(self) -> int:
        return len(self._map)

    def flush(self) -> None:
        """Nothing to write: the store is its memory."""

    def close(self) -> None:
        self._map.clear()
        self._sorted_keys.clear()
        self._open = False
