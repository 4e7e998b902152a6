"""A set with a history: membership at every snapshot epoch can still be read, and every change
since a snapshot can be undone.

Mirrors: org.apache.kafka.timeline.TimelineHashSet
         (metadata/src/main/java/org/apache/kafka/timeline/TimelineHashSet.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a ``TimelineHashMap`` from each member to itself; Kafka's is a second subclass of
         SnapshottableHashTable. The map's history is the set's, so nothing else is needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from kafka_lite.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_lite.metadata.timeline.timeline_hash_map import TimelineHashMap

T = TypeVar("T")


class TimelineHashSet(Generic[T]):
    def __init__(self, snapshot_registry: SnapshotRegistry, expected_size: int = 0) -> None:
        # The map registers itself with the registry, and its reverts and resets are the set's.
        self._map: TimelineHashMap[T, T] = TimelineHashMap(snapshot_registry, expected_size)

    def add(self, item: T) -> bool:
        """Add ``item``; True if it was not there."""
        return self._map.put_if_absent(item, item) is None

    def add_all(self, items: Iterable[T]) -> bool:
        return any([self.add(item) for item in items])

    def remove(self, item: T) -> bool:
        """Remove ``item``; True if it was there."""
        return self._map.remove(item) is not None

    def clear(self) -> None:
        self._map.clear()

    def contains(self, item: T, epoch: int = LATEST_EPOCH) -> bool:
        return self._map.contains_key(item, epoch)

    def size(self, epoch: int = LATEST_EPOCH) -> int:
        return self._map.size(epoch)

    def is_empty(self, epoch: int = LATEST_EPOCH) -> bool:
        return self._map.is_empty(epoch)

    def items(self, epoch: int = LATEST_EPOCH) -> list[T]:
        """The members at ``epoch``, as a list (the set may change while a caller walks it)."""
        return self._map.keys(epoch)

    def __contains__(self, item: object) -> bool:
        return item in self._map

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self) -> Iterator[T]:
        return iter(self._map.keys())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TimelineHashSet):
            return set(self._map.keys()) == set(other._map.keys())
        if isinstance(other, set | frozenset):
            return set(self._map.keys()) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TimelineHashSet({set(self._map.keys())!r})"
