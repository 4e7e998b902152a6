"""A snapshot being written to a ``.checkpoint.part`` file, then frozen by an atomic rename.

Mirrors: org.apache.kafka.snapshot.FileRawSnapshotWriter (raft/src/main/java/org/apache/kafka/snapshot/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

``freeze`` fsyncs the file before renaming it, and the directory after: a snapshot that has its whole
name has all its bytes on disk, because the log deletes the records it replaces as soon as it knows
of it (``ReplicatedLog.delete_before_snapshot``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.raft import snapshots
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raw_snapshot_writer import RawSnapshotWriter

if TYPE_CHECKING:
    from kafka_lite.raft.replicated_log import ReplicatedLog


class FileRawSnapshotWriter(RawSnapshotWriter):
    def __init__(
        self,
        temp_snapshot_path: Path,
        fd: int,
        snapshot_id: OffsetAndEpoch,
        replicated_log: ReplicatedLog | None,
    ) -> None:
        self.temp_snapshot_path = temp_snapshot_path
        self._fd: int | None = fd
        self._snapshot_id = snapshot_id
        self._replicated_log = replicated_log
        self._size = 0
        self._frozen = False

    @classmethod
    def create(
        cls, log_dir: Path, snapshot_id: OffsetAndEpoch, replicated_log: ReplicatedLog | None = None
    ) -> FileRawSnapshotWriter:
        """A writer to a new partial file in ``log_dir``; ``replicated_log`` hears when it freezes."""
        path = snapshots.create_temp_file(log_dir, snapshot_id)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        return cls(path, fd, snapshot_id, replicated_log)

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return self._size

    def append(self, records: MemoryRecords | bytes | bytearray | memoryview) -> None:
        self._check_if_frozen("Append")
        data = memoryview(records.buffer() if isinstance(records, MemoryRecords) else records)
        while data:  # os.write may write less than asked: keep going until all of it is in
            written = os.write(self._fd, data)
            data = data[written:]
            self._size += written

    def is_frozen(self) -> bool:
        return self._frozen

    def freeze(self) -> None:
        self._check_if_frozen("Freeze")
        os.fsync(self._fd)
        self._close_fd()
        self._frozen = True
        # read-only, as Kafka makes it: a frozen snapshot never changes
        os.chmod(self.temp_snapshot_path, 0o444)
        destination = snapshots.move_rename(self.temp_snapshot_path, self._snapshot_id)
        os.replace(self.temp_snapshot_path, destination)
        _fsync_dir(destination.parent)
        if self._replicated_log is not None:
            self._replicated_log.on_snapshot_frozen(self._snapshot_id)

    def close(self) -> None:
        self._close_fd()
        # after a freeze the partial file is gone (renamed); otherwise this aborts the snapshot
        self.temp_snapshot_path.unlink(missing_ok=True)

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _check_if_frozen(self, operation: str) -> None:
        if self._frozen:
            raise IllegalStateException(
                f"{operation} is not supported. Snapshot is already frozen: id = {self._snapshot_id}; "
                f"temp path = {self.temp_snapshot_path}"
            )

    def __repr__(self) -> str:
        return (
            f"FileRawSnapshotWriter(path={self.temp_snapshot_path}, snapshotId={self._snapshot_id}, "
            f"frozen={self._frozen})"
        )


def _fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (Kafka's ``atomicMoveWithFallback`` flushes the parent)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
