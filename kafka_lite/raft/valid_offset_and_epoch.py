"""The log's answer to a follower's fetch position: go on, truncate to here, or fetch a snapshot.

Mirrors: org.apache.kafka.raft.ValidOffsetAndEpoch (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A follower's Fetch names the offset it wants next and the epoch of the entry just before it. The
leader checks that pair against its own log (``ReplicatedLog.validate_offset_and_epoch``) and
answers with one of three kinds, each carrying the offset and epoch that matter:

    VALID      the follower's log matches the leader's up to ``offset``: send records from there
    DIVERGING  it does not; the largest position both logs agree on is ``offset_and_epoch``, so the
               follower truncates there (the Fetch response's ``DivergingEpoch``)
    SNAPSHOT   the records the follower needs are gone, folded into a snapshot: fetch the snapshot
               ``offset_and_epoch`` names (the Fetch response's ``SnapshotId``)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch


class Kind(enum.Enum):
    DIVERGING = "DIVERGING"
    SNAPSHOT = "SNAPSHOT"
    VALID = "VALID"


@dataclass(frozen=True)
class ValidOffsetAndEpoch:
    kind: Kind
    offset_and_epoch: OffsetAndEpoch

    @staticmethod
    def diverging(offset_and_epoch: OffsetAndEpoch) -> ValidOffsetAndEpoch:
        return ValidOffsetAndEpoch(Kind.DIVERGING, offset_and_epoch)

    @staticmethod
    def snapshot(offset_and_epoch: OffsetAndEpoch) -> ValidOffsetAndEpoch:
        return ValidOffsetAndEpoch(Kind.SNAPSHOT, offset_and_epoch)

    @staticmethod
    def valid(offset_and_epoch: OffsetAndEpoch | None = None) -> ValidOffsetAndEpoch:
        # Kafka's no-argument ``valid()`` carries (-1, -1): "nothing to correct".
        return ValidOffsetAndEpoch(Kind.VALID, offset_and_epoch or OffsetAndEpoch(-1, -1))

    def __str__(self) -> str:
        return f"ValidOffsetAndEpoch(kind={self.kind.value}, offsetAndEpoch={self.offset_and_epoch})"
