"""A snapshot file found in a log directory: its path, its id, and whether it is whole.

Mirrors: org.apache.kafka.snapshot.SnapshotPath (raft/src/main/java/org/apache/kafka/snapshot/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

``partial``: a ``.checkpoint.part`` file, a snapshot being written (or abandoned by a crash);
``deleted``: a ``.checkpoint.deleted`` file, a snapshot already given up. On opening, the log deletes
both kinds and keeps only the whole snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch


@dataclass(frozen=True)
class SnapshotPath:
    path: Path
    snapshot_id: OffsetAndEpoch
    partial: bool
    deleted: bool
