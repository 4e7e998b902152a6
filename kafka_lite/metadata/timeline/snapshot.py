"""One in-memory snapshot: an epoch, and for each timeline structure that changed after it was
taken, that structure's delta.

Mirrors: org.apache.kafka.timeline.Snapshot
         (metadata/src/main/java/org/apache/kafka/timeline/Snapshot.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: Kafka links snapshots into a doubly linked list through ``prev``/``next``; the registry here
         keeps them in a Python list in epoch order, so a snapshot holds only its epoch and deltas.
         After a revert the deltas are cleared (Kafka keeps them, equal by then to the current state).

The deltas are keyed by the identity of their owner, as Kafka's ``IdentityHashMap``: two timeline
maps with equal contents are still two structures with two histories.
"""

from __future__ import annotations

from kafka_lite.metadata.timeline.revertable import Delta, Revertable


class Snapshot:
    def __init__(self, epoch: int) -> None:
        self._epoch = epoch
        # id(owner) -> (owner, delta); the owner is kept so that a revert can call it back.
        self._deltas: dict[int, tuple[Revertable, Delta]] | None = {}

    def epoch(self) -> int:
        return self._epoch

    def get_delta(self, owner: Revertable) -> Delta | None:
        entry = self._live().get(id(owner))
        return None if entry is None else entry[1]

    def set_delta(self, owner: Revertable, delta: Delta) -> None:
        self._live()[id(owner)] = (owner, delta)

    def handle_revert(self) -> None:
        """Revert every structure that changed since this snapshot, then forget those changes:
        the state is once more what it was when the snapshot was taken, so the snapshot starts
        again with no deltas, exactly as a newly taken one."""
        deltas = self._live()
        for owner, delta in deltas.values():
            owner.execute_revert(self._epoch, delta)
        deltas.clear()

    def merge_from(self, source: Snapshot) -> None:
        """Take over the deltas of ``source``, the next snapshot, which is being deleted. A
        structure this snapshot has no delta for did not change between the two epochs, so the
        source's delta describes this epoch as well and moves over as it is; otherwise the two
        merge, ours winning."""
        deltas = self._live()
        for key, (owner, delta) in source._live().items():
            if key in deltas:
                deltas[key][1].merge_from(self._epoch, delta)
            else:
                deltas[key] = (owner, delta)
        source.erase()

    def erase(self) -> None:
        """Drop the deltas, so that a deleted snapshot cannot be used by mistake."""
        self._deltas = None

    def _live(self) -> dict[int, tuple[Revertable, Delta]]:
        if self._deltas is None:
            raise RuntimeError(f"Snapshot {self._epoch} has been deleted")
        return self._deltas

    def __repr__(self) -> str:
        return f"Snapshot(epoch={self._epoch})"
