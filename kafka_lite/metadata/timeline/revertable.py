"""What a timeline structure gives the snapshot registry: a way to go back, and a record of the
past that two snapshots can share.

Mirrors: org.apache.kafka.timeline.Revertable and org.apache.kafka.timeline.Delta
         (metadata/src/main/java/org/apache/kafka/timeline/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Every timeline structure registers itself with its ``SnapshotRegistry`` as a ``Revertable``. Each
snapshot keeps, per structure that changed after it was taken, one ``Delta``: what that structure
looked like at the snapshot's epoch, for the parts of it that have changed since. The registry
never looks inside a delta; it hands it back to its owner to revert with (``execute_revert``) and
asks two deltas to merge when a snapshot between them is deleted (``merge_from``).
"""

from __future__ import annotations

from typing import Protocol


class Delta(Protocol):
    def merge_from(self, destination_epoch: int, source: Delta) -> None:
        """Fold ``source``, the delta of the snapshot just after this one, into this delta, which
        now speaks for both intervals. What this delta already holds is older, so it wins."""


class Revertable(Protocol):
    def execute_revert(self, target_epoch: int, delta: Delta) -> None:
        """Put the structure back as it was at ``target_epoch``, using the delta that snapshot
        holds for it (every later snapshot's delta has already been merged into it)."""

    def reset(self) -> None:
        """Go back to the initial, empty value (all snapshots are gone when this is called)."""
