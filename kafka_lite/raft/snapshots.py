"""Snapshot file names: how a snapshot's id becomes a file in the log directory, and back.

Mirrors: org.apache.kafka.snapshot.Snapshots (raft/src/main/java/org/apache/kafka/snapshot/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``mark_for_delete`` and ``delete_if_exists`` are called one after the other by the log
         (Kafka schedules the second ``file.delete.delay.ms`` later, for readers still open).

A snapshot lives beside the log's segments, named by its id, the end offset in 20 digits and the
epoch in 10, as segment files are named by their base offset:

    00000000000000000010-0000000002.checkpoint                  whole, immutable
    00000000000000000010-0000000002-1234.checkpoint.part        being written (a random infix, so
                                                                two writers never share a file)
    00000000000000000010-0000000002.checkpoint.deleted          given up, about to be removed

Every step is a rename within one directory, which is atomic on POSIX: whatever the moment of a
crash, each snapshot is in exactly one of these states, and only the first is ever read.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.snapshot_path import SnapshotPath

log = logging.getLogger(__name__)

SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = f"{SUFFIX}.part"
DELETE_SUFFIX = f"{SUFFIX}.deleted"
OFFSET_WIDTH = 20
EPOCH_WIDTH = 10


def snapshot_dir(log_dir: Path) -> Path:
    # Snapshots sit in the log's own directory, so one directory holds all a replica's state.
    return Path(log_dir)


def filename_from_snapshot_id(snapshot_id: OffsetAndEpoch) -> str:
    return f"{snapshot_id.offset:0{OFFSET_WIDTH}d}-{snapshot_id.epoch:0{EPOCH_WIDTH}d}"


def move_rename(source: Path, snapshot_id: OffsetAndEpoch) -> Path:
    """Where a frozen partial file goes: its whole snapshot's name, in the same directory."""
    return source.parent / (filename_from_snapshot_id(snapshot_id) + SUFFIX)


def delete_rename_path(source: Path, snapshot_id: OffsetAndEpoch) -> Path:
    return source.parent / (filename_from_snapshot_id(snapshot_id) + DELETE_SUFFIX)


def snapshot_path(log_dir: Path, snapshot_id: OffsetAndEpoch) -> Path:
    return snapshot_dir(log_dir) / (filename_from_snapshot_id(snapshot_id) + SUFFIX)


def create_temp_file(log_dir: Path, snapshot_id: OffsetAndEpoch) -> Path:
    """A new, empty ``.checkpoint.part`` file for ``snapshot_id``."""
    directory = snapshot_dir(log_dir)
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(
        prefix=f"{filename_from_snapshot_id(snapshot_id)}-", suffix=PARTIAL_SUFFIX, dir=directory
    )
    os.close(fd)
    return Path(name)


def parse(path: Path) -> SnapshotPath | None:
    """The snapshot ``path`` names, or None for any other file (segments, indexes, checkpoints)."""
    name = Path(path).name
    partial = deleted = False
    if name.endswith(PARTIAL_SUFFIX):
        partial = True
    elif name.endswith(DELETE_SUFFIX):
        deleted = True
    elif not name.endswith(SUFFIX):
        return None
    try:
        end_offset = int(name[:OFFSET_WIDTH])
        epoch = int(name[OFFSET_WIDTH + 1 : OFFSET_WIDTH + EPOCH_WIDTH + 1])
    except ValueError:
        # Kafka's parse would throw here; a file that only ends like a snapshot (the broker's
        # ``recovery-point-offset-checkpoint``) is not one, and is left alone.
        return None
    if name[OFFSET_WIDTH : OFFSET_WIDTH + 1] != "-":
        return None
    return SnapshotPath(Path(path), OffsetAndEpoch(end_offset, epoch), partial, deleted)


def delete_if_exists(log_dir: Path, snapshot_id: OffsetAndEpoch) -> bool:
    """Remove the snapshot's file, whole or marked for deletion; True if one was there."""
    immutable_path = snapshot_path(log_dir, snapshot_id)
    deleted_path = delete_rename_path(immutable_path, snapshot_id)
    deleted = False
    for path in (immutable_path, deleted_path):
        try:
            path.unlink()
            deleted = True
        except FileNotFoundError:
            pass
    if deleted:
        log.info("Deleted snapshot files for snapshot %s.", snapshot_id)
    else:
        log.info("Did not delete snapshot files for snapshot %s since they did not exist.", snapshot_id)
    return deleted


def mark_for_delete(log_dir: Path, snapshot_id: OffsetAndEpoch) -> Path:
    """Rename the snapshot to ``.checkpoint.deleted``: from now on no one opens it, and a restart
    deletes it if the removal did not happen."""
    immutable_path = snapshot_path(log_dir, snapshot_id)
    deleted_path = delete_rename_path(immutable_path, snapshot_id)
    os.replace(immutable_path, deleted_path)
    return deleted_path
