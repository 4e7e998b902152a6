"""The key-value store interface, its entries and its iterator.

Mirrors: org.apache.kafka.streams.state.KeyValueStore, ReadOnlyKeyValueStore, KeyValueIterator,
         org.apache.kafka.streams.KeyValue
         (streams/src/main/java/org/apache/kafka/streams/, Kafka 0.11.0)
Book:    chapter 9, 9.1.4
Differs: a ``KeyValueIterator`` is a Python iterator (``for kv in store.all()``) and a context
         manager that closes it; Kafka's has ``hasNext``/``next``/``peekNextKey``/``close``.

Iteration is in the order of the *serialized* keys, byte by byte, unsigned: the order RocksDB keeps.
Ranges are inclusive at both ends, ``range(from_key, to_key)`` as Kafka's.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, Generic, NamedTuple, TypeVar

from kafka_lite.streams.processor.state_store import StateStore

K = TypeVar("K")
V = TypeVar("V")


class KeyValue(NamedTuple):
    """One entry (Kafka's ``KeyValue``); a tuple, so ``key, value = kv`` works."""

    key: Any
    value: Any


class KeyValueIterator(Iterator[KeyValue], Generic[K, V]):
    """Entries in key order; close it when done (a RocksDB iterator pins the data it reads)."""

    def __iter__(self) -> KeyValueIterator[K, V]:
        return self

    @abstractmethod
    def __next__(self) -> KeyValue: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> KeyValueIterator[K, V]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class KeyValueStore(StateStore, Generic[K, V]):
    """A store of one value per key; a None value is no value (``put(k, None)`` deletes ``k``)."""

    @abstractmethod
    def get(self, key: K) -> V | None: ...

    @abstractmethod
    def put(self, key: K, value: V | None) -> None: ...

    def put_if_absent(self, key: K, value: V) -> V | None:
        """Put ``value`` unless ``key`` has one; return the value it had (None if it had none).

        A ``get`` then a ``put`` of this store, as each of Kafka's stores writes it: a wrapping
        store's ``put`` (say, one that also logs the change) is the one called.
        """
        original = self.get(key)
        if original is None:
            self.put(key, value)
        return original

    @abstractmethod
    def put_all(self, entries: Iterable[KeyValue | tuple[K, V]]) -> None: ...

    @abstractmethod
    def delete(self, key: K) -> V | None:
        """Remove ``key``; return the value it had."""

    @abstractmethod
    def range(self, from_key: K, to_key: K) -> KeyValueIterator[K, V]:
        """Entries with ``from_key <= key <= to_key``, compared as serialized bytes."""

    @abstractmethod
    def all(self) -> KeyValueIterator[K, V]: ...

    @abstractmethod
    def approximate_num_entries(self) -> int:
        """The number of entries, exact in memory, RocksDB's estimate on disk."""
