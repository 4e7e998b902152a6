"""The snapshot registry: the epochs at which the controller may need to read or revert its state,
and the timeline structures that hold that state.

Mirrors: org.apache.kafka.timeline.SnapshotRegistry
         (metadata/src/main/java/org/apache/kafka/timeline/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the snapshots are a Python list in epoch order rather than Kafka's circular linked list
         with a sentinel head; ``iterator(epoch)`` returns the list from that snapshot on.

Why the controller needs this. The active controller replays its records into its managers as soon
as it appends them, before the quorum commits them, so the next request already sees the topic it
just created. If it loses the leadership, those records may never commit, and its state must go
back to the last committed offset. So, before it replays a batch, it takes an in-memory snapshot at
that batch's offset (``get_or_create_snapshot``); once the batch commits it deletes the snapshots
up to the committed offset (``delete_snapshots_up_to``); and on resignation it goes back
(``revert_to_snapshot``). Reading at an epoch (``TimelineHashMap.get(key, epoch)``) lets it answer
with committed state only.

An in-memory snapshot is cheap: it copies nothing when taken. A structure records its old value in
the newest snapshot the first time it changes after that snapshot (see ``TimelineObject.set``).
Deleting the oldest snapshot drops its deltas; deleting any other merges them into the snapshot
before it, which then stands for both intervals.
"""

from __future__ import annotations

import bisect
import logging

from kafka_lite.metadata.timeline.revertable import Revertable
from kafka_lite.metadata.timeline.snapshot import Snapshot

log = logging.getLogger(__name__)

# The epoch that names the current state rather than any snapshot (Kafka: Long.MAX_VALUE).
LATEST_EPOCH = 2**63 - 1


class SnapshotRegistry:
    def __init__(self) -> None:
        self._snapshots: list[Snapshot] = []  # in increasing epoch order
        self._by_epoch: dict[int, Snapshot] = {}
        self._revertables: list[Revertable] = []

    def iterator(self, epoch: int | None = None) -> list[Snapshot]:
        """The snapshots in epoch order: all of them, or from the snapshot at ``epoch`` on."""
        if epoch is None:
            return list(self._snapshots)
        return self._snapshots[self._index_of(self.get_snapshot(epoch)) :]

    def reverse_iterator(self) -> list[Snapshot]:
        return self._snapshots[::-1]

    def latest_snapshot(self) -> Snapshot | None:
        """The newest snapshot, the one a change records its old value in (None if there is none)."""
        return self._snapshots[-1] if self._snapshots else None

    def epochs_list(self) -> list[int]:
        return [snapshot.epoch() for snapshot in self._snapshots]

    def has_snapshot(self, epoch: int) -> bool:
        return epoch in self._by_epoch

    def get_snapshot(self, epoch: int) -> Snapshot:
        snapshot = self._by_epoch.get(epoch)
        if snapshot is None:
            epochs = ", ".join(str(e) for e in self.epochs_list())
            raise RuntimeError(f"No in-memory snapshot for epoch {epoch}. Snapshot epochs are: {epochs}")
        return snapshot

    def get_or_create_snapshot(self, epoch: int) -> Snapshot:
        """The snapshot at ``epoch``, taken now if the newest is older. Epochs only grow: the
        state before the newest snapshot is not the current state, so a snapshot of it cannot be
        taken now."""
        last = self.latest_snapshot()
        if last is not None and last.epoch() > epoch:
            raise RuntimeError(
                f"Can't create a new in-memory snapshot at epoch {epoch} because there is "
                f"already a snapshot with epoch {last.epoch()}"
            )
        if last is not None and last.epoch() == epoch:
            return last
        snapshot = Snapshot(epoch)
        self._snapshots.append(snapshot)
        self._by_epoch[epoch] = snapshot
        log.debug("Creating in-memory snapshot %d", epoch)
        return snapshot

    def revert_to_snapshot(self, target_epoch: int) -> None:
        """Undo every change made since ``target_epoch``'s snapshot was taken. The later snapshots
        are deleted first, which merges their deltas into the target's, so that the target's
        deltas hold the old value of everything changed since; then each structure reverts."""
        target = self.get_snapshot(target_epoch)
        for snapshot in self._snapshots[self._index_of(target) + 1 :]:
            log.debug(
                "Deleting in-memory snapshot %d because we are reverting to %d",
                snapshot.epoch(),
                target_epoch,
            )
            self._delete(snapshot)
        target.handle_revert()

    def delete_snapshot(self, epoch: int) -> None:
        self._delete(self.get_snapshot(epoch))

    def delete_snapshots_up_to(self, target_epoch: int) -> None:
        """Delete every snapshot older than ``target_epoch`` (the one at it stays)."""
        while self._snapshots and self._snapshots[0].epoch() < target_epoch:
            self._delete(self._snapshots[0])

    def latest_epoch(self) -> int:
        """The newest snapshot's epoch; Kafka's sentinel head has Long.MIN_VALUE, so a new value
        written with no snapshot at all starts at an epoch below every snapshot's."""
        last = self.latest_snapshot()
        return -(2**63) if last is None else last.epoch()

    def register(self, revertable: Revertable) -> None:
        self._revertables.append(revertable)

    def reset(self) -> None:
        """Delete every snapshot and take every registered structure back to its initial value
        (a controller that loads a metadata snapshot starts from nothing)."""
        self.delete_snapshots_up_to(LATEST_EPOCH)
        for revertable in self._revertables:
            revertable.reset()

    def _delete(self, snapshot: Snapshot) -> None:
        index = self._index_of(snapshot)
        if index > 0:
            self._snapshots[index - 1].merge_from(snapshot)
        else:
            snapshot.erase()
        log.debug("Deleting snapshot %d", snapshot.epoch())
        del self._snapshots[index]
        del self._by_epoch[snapshot.epoch()]

    def _index_of(self, snapshot: Snapshot) -> int:
        return bisect.bisect_left(self._snapshots, snapshot.epoch(), key=Snapshot.epoch)
