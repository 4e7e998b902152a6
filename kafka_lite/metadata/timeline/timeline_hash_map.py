"""A dict with a history: every snapshot epoch can still be read, and every change since a
snapshot can be undone.

Mirrors: org.apache.kafka.timeline.TimelineHashMap and SnapshottableHashTable
         (metadata/src/main/java/org/apache/kafka/timeline/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: Kafka's own hash table with a start epoch in every entry and per-snapshot "hash tiers" is
         replaced by a dict and, per snapshot, a dict of the old values; the reasoning is below.

What Kafka does. ``SnapshottableHashTable`` is a hash table of its own (``BaseHashTable``) whose
entries carry the epoch they were written at (``startEpoch``). When an entry that was present at
the newest snapshot is replaced or removed, the old entry moves into that snapshot's ``HashTier``,
a small hash table of its own; the tier also remembers the size at the snapshot. Reading at an
epoch takes the current entry if it started at or before the epoch, or else the first tier from
that snapshot on that holds the key. Writing entries into one table by slot lets the historical
iterator walk the current table and the tiers slot by slot.

What we do. The current state is a plain dict. Each snapshot's delta (``_MapDelta``) holds the
size at the snapshot and, for each key first changed after it, the value the key had then, or
``_ABSENT`` if it had none. That one marker stands in for Kafka's start epochs: a key added after
the snapshot is recorded as absent instead of being recognised by its epoch.

Why they are equivalent. A snapshot's delta covers the interval from its epoch to the next
snapshot's and holds, for every key first changed in that interval, its value at the interval's
start. To read key k at epoch E, walk the snapshots from E on: if k changed at all after E, its
first change fell in one of those intervals, and the delta of that interval holds k's value at its
start, which is k's value at E because nothing changed k in the intervals before it; if no delta
has k, k has not changed since E and the current dict holds the answer. Deleting a snapshot merges
its delta into the previous one, keeping the previous one's entries (older) and adding the others,
whose values held unchanged from the previous epoch. Reverting merges every later snapshot into the
target and writes its old values back (removing the ``_ABSENT`` ones). These are Kafka's reads,
merges and reverts, on a representation a reader can print; the property test in
tests/metadata/timeline/ holds them equal to a model that copies the whole map at every snapshot.

As Kafka's, the map holds no ``None`` key or value, so ``get`` returning ``None`` means "absent".
The views (``keys``, ``values``, ``items``) are lists, so a caller may change the map while it
walks one (Kafka's iterators allow ``remove``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

from kafka_lite.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry

K = TypeVar("K")
V = TypeVar("V")

# The old value of a key that was not in the map at the snapshot's epoch.
_ABSENT = object()


class _MapDelta:
    """A TimelineHashMap's record in one snapshot (Kafka's HashTier): its size at the snapshot's
    epoch, and the value then of each key changed since (``_ABSENT`` for keys added since)."""

    __slots__ = ("old_values", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.old_values: dict = {}

    def merge_from(self, destination_epoch: int, source: _MapDelta) -> None:
        # Ours are older: keep them, and add the source's for keys we have no record of.
        for key, value in source.old_values.items():
            self.old_values.setdefault(key, value)


class TimelineHashMap(Generic[K, V]):
    def __init__(self, snapshot_registry: SnapshotRegistry, expected_size: int = 0) -> None:
        # ``expected_size`` is Kafka's initial capacity; a dict sizes itself, so it is unused and
        # accepted only so that a call ported from Kafka reads the same.
        self._snapshot_registry = snapshot_registry
        self._current: dict[K, V] = {}
        snapshot_registry.register(self)

    # -- reading ---------------------------------------------------------------------------------

    def get(self, key: K, epoch: int = LATEST_EPOCH) -> V | None:
        if epoch == LATEST_EPOCH:
            return self._current.get(key)
        for snapshot in self._snapshot_registry.iterator(epoch):
            delta = snapshot.get_delta(self)
            if delta is not None and key in delta.old_values:
                old = delta.old_values[key]
                return None if old is _ABSENT else old
        return self._current.get(key)

    def contains_key(self, key: K, epoch: int = LATEST_EPOCH) -> bool:
        return self.get(key, epoch) is not None

    def size(self, epoch: int = LATEST_EPOCH) -> int:
        if epoch != LATEST_EPOCH:
            for snapshot in self._snapshot_registry.iterator(epoch):
                delta = snapshot.get_delta(self)
                if delta is not None:
                    return delta.size
        return len(self._current)

    def is_empty(self, epoch: int = LATEST_EPOCH) -> bool:
        return self.size(epoch) == 0

    def items(self, epoch: int = LATEST_EPOCH) -> list[tuple[K, V]]:
        return list(self._as_of(epoch).items())

    def keys(self, epoch: int = LATEST_EPOCH) -> list[K]:
        return list(self._as_of(epoch))

    def values(self, epoch: int = LATEST_EPOCH) -> list[V]:
        return list(self._as_of(epoch).values())

    def contains_value(self, value: V, epoch: int = LATEST_EPOCH) -> bool:
        return value in self._as_of(epoch).values()

    def __contains__(self, key: object) -> bool:
        return key in self._current

    def __len__(self) -> int:
        return len(self._current)

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def __eq__(self, other: object) -> bool:
        # As Kafka's (an AbstractMap): equal contents now, whatever the histories.
        if isinstance(other, TimelineHashMap):
            return self._current == other._current
        if isinstance(other, dict):
            return self._current == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable; snapshots key their deltas by id

    def __repr__(self) -> str:
        return f"TimelineHashMap({self._current!r})"

    def _as_of(self, epoch: int) -> dict[K, V]:
        """The whole map as it was at ``epoch``: the current dict, with every key changed since
        put back to its value then. The first record of a key from ``epoch`` on is the one that
        counts, so later snapshots' records of it are skipped."""
        if epoch == LATEST_EPOCH:
            return self._current
        old: dict = {}
        for snapshot in self._snapshot_registry.iterator(epoch):
            delta = snapshot.get_delta(self)
            if delta is not None:
                for key, value in delta.old_values.items():
                    old.setdefault(key, value)
        result = {k: v for k, v in self._current.items() if k not in old}
        result.update((k, v) for k, v in old.items() if v is not _ABSENT)
        return result

    # -- writing ---------------------------------------------------------------------------------

    def put(self, key: K, value: V) -> V | None:
        """Set ``key`` to ``value``; the old value, or None."""
        if key is None or value is None:
            raise TypeError("A TimelineHashMap holds no None keys or values")
        self._record_old_value(key)
        old = self._current.get(key)
        self._current[key] = value
        return old

    def put_if_absent(self, key: K, value: V) -> V | None:
        existing = self._current.get(key)
        if existing is None:
            self.put(key, value)
        return existing

    def put_all(self, other: dict[K, V]) -> None:
        for key, value in other.items():
            self.put(key, value)

    def remove(self, key: K) -> V | None:
        """Remove ``key``; its value, or None if it was not there."""
        if key not in self._current:
            return None
        self._record_old_value(key)
        return self._current.pop(key)

    def clear(self) -> None:
        for key in list(self._current):
            self.remove(key)

    def _record_old_value(self, key: K) -> None:
        """Before ``key`` changes, note its value in the newest snapshot, unless it has changed
        since that snapshot already (then the value noted is the one at the snapshot)."""
        snapshot = self._snapshot_registry.latest_snapshot()
        if snapshot is None:
            return
        delta = snapshot.get_delta(self)
        if delta is None:
            delta = _MapDelta(len(self._current))
            snapshot.set_delta(self, delta)
        delta.old_values.setdefault(key, self._current.get(key, _ABSENT))

    # -- Revertable ------------------------------------------------------------------------------

    def execute_revert(self, target_epoch: int, delta: _MapDelta) -> None:
        for key, old in delta.old_values.items():
            if old is _ABSENT:
                self._current.pop(key, None)
            else:
                self._current[key] = old

    def reset(self) -> None:
        self._current.clear()
