"""A key-value store in memory: bytes to bytes, sorted by key bytes, gone when the process is.

Mirrors: org.apache.kafka.streams.state.internals.InMemoryKeyValueStore
         (streams/src/main/java/.../state/internals/InMemoryKeyValueStore.java, Kafka 0.11.0)
Book:    chapter 9, 9.1.4
Differs: keys and values are bytes, ordered by the bytes (Kafka's keeps typed keys in a ``TreeMap``
         in their natural order, and the layer above serializes): so in-memory and RocksDB stores
         iterate in the same order. ``range`` and ``all`` iterate a snapshot, so a processor may
         write to the store while it iterates.

Python has no sorted map of its own, so the map is ``sortedcontainers.SortedDict``, the sorted
mapping Python projects reach for: a dict for ``get`` and ``put`` of a key already there, and keys
kept sorted in a list of short lists, so a new key costs a search and an insert into one short list
(Kafka's ``TreeMap`` costs O(log n) for the same). ``irange`` walks the keys between two bounds, as
``TreeMap.subMap(from, true, to, true)`` does.

Each read and write holds the store's lock, as Kafka's are ``synchronized``: the stream thread
writes while an Interactive Query reads from its own thread, and a ``SortedDict`` walked while
another thread inserts or removes a key skips keys or repeats them. ``range`` and ``all`` copy
their entries under the lock, so the iterator they return needs none.

Not persistent: after a restart the task restores it by replaying its whole changelog, which is why
the change-logging layer matters most for this store.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from sortedcontainers import SortedDict

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
        self._map: SortedDict = SortedDict()  # bytes -> bytes, in key order (Kafka's TreeMap)
        self._open = False
        self._lock = threading.RLock()  # Kafka's synchronized methods

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
        with self._lock:
            return self._map.get(key)

    def put(self, key: bytes, value: bytes | None) -> None:
        with self._lock:
            if value is None:
                self._map.pop(key, None)
            else:
                self._map[key] = value

    def put_if_absent(self, key: bytes, value: bytes) -> bytes | None:
        with self._lock:
            return super().put_if_absent(key, value)

    def put_all(self, entries: Iterable[KeyValue | tuple[bytes, bytes]]) -> None:
        with self._lock:
            for key, value in entries:
                self.put(key, value)

    def delete(self, key: bytes) -> bytes | None:
        with self._lock:
            return self._map.pop(key, None)

    def range(self, from_key: bytes, to_key: bytes) -> KeyValueIterator[bytes, bytes]:
        """The entries with ``from_key <= key <= to_key``, both ends included, in key order."""
        with self._lock:
            entries = self._map
            return InMemoryKeyValueIterator(
                [KeyValue(k, entries[k]) for k in entries.irange(from_key, to_key)]
            )

    def all(self) -> KeyValueIterator[bytes, bytes]:
        with self._lock:
            return InMemoryKeyValueIterator([KeyValue(k, v) for k, v in self._map.items()])

    def approximate_num_entries(self) -> int:
        return len(self._map)

    def flush(self) -> None:
        """Nothing to write: the store is its memory."""

    def close(self) -> None:
        self._map.clear()
        self._open = False
