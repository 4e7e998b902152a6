"""A single value with a history: what it holds now, and what it held at each snapshot.

Mirrors: org.apache.kafka.timeline.TimelineObject
         (metadata/src/main/java/org/apache/kafka/timeline/TimelineObject.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

The smallest timeline structure, and the pattern the others follow. ``set`` looks at the newest
snapshot: if this object has no delta there yet, it is changing for the first time since that
snapshot was taken, so the value it is about to overwrite is the value at that snapshot, and it
goes into a delta. Later sets before the next snapshot record nothing. ``get(epoch)`` walks the
snapshots from ``epoch`` on: the first one with a delta for this object holds the value it had at
``epoch`` (nothing changed it between ``epoch`` and that snapshot); if none has, it has not changed
since ``epoch`` and the current value is the answer.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from kafka_lite.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry

T = TypeVar("T")


class _ObjectContainer(Generic[T]):
    """The delta of a TimelineObject: its value at the snapshot's epoch. Merging keeps ours,
    which is older, so there is nothing to do."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def merge_from(self, destination_epoch: int, source: object) -> None:
        pass


class TimelineObject(Generic[T]):
    def __init__(self, snapshot_registry: SnapshotRegistry, initial_value: T) -> None:
        if initial_value is None:
            raise TypeError("A TimelineObject's initial value must not be None")
        self._snapshot_registry = snapshot_registry
        self._initial_value = initial_value
        self._value = initial_value
        snapshot_registry.register(self)

    # --8<-- [start:get_and_set]
    def get(self, epoch: int = LATEST_EPOCH) -> T:
        if epoch == LATEST_EPOCH:
            return self._value
        for snapshot in self._snapshot_registry.iterator(epoch):
            container = snapshot.get_delta(self)
            if container is not None:
                return container.value
        return self._value

    def set(self, new_value: T) -> None:
        if new_value is None:
            raise TypeError("A TimelineObject's value must not be None")
        snapshot = self._snapshot_registry.latest_snapshot()
        if snapshot is not None and snapshot.get_delta(self) is None:
            snapshot.set_delta(self, _ObjectContainer(self._value))
        self._value = new_value

    # --8<-- [end:get_and_set]

    def execute_revert(self, target_epoch: int, delta: _ObjectContainer[T]) -> None:
        self._value = delta.value

    def reset(self) -> None:
        self.set(self._initial_value)

    def __eq__(self, other: object) -> bool:
        # As Kafka's: two timeline objects are equal when they hold equal values now.
        if isinstance(other, TimelineObject):
            return self._value == other._value
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable; snapshots key their deltas by id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._value!r})"
