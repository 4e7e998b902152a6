"""A frozen snapshot file, opened read-only.

Mirrors: org.apache.kafka.snapshot.FileRawSnapshotReader (raft/src/main/java/org/apache/kafka/snapshot/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: ``slice`` copies the bytes out (Kafka hands a file region to sendfile).

The file is the batches the writer appended, back to back, the same format as a log segment, so
``FileRecords`` reads it as it reads a segment.
"""

from __future__ import annotations

from pathlib import Path

from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.raft import snapshots
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raw_snapshot_reader import RawSnapshotReader


class FileRawSnapshotReader(RawSnapshotReader):
    def __init__(self, file_records: FileRecords, snapshot_id: OffsetAndEpoch) -> None:
        self._file_records = file_records
        self._snapshot_id = snapshot_id

    @classmethod
    def open(cls, log_dir: Path, snapshot_id: OffsetAndEpoch) -> FileRawSnapshotReader:
        """Open ``snapshot_id``'s file; ``FileNotFoundError`` if there is none."""
        path = snapshots.snapshot_path(log_dir, snapshot_id)
        return cls(FileRecords.open(path, mutable=False, create=False), snapshot_id)

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return self._file_records.size_in_bytes()

    def slice(self, position: int, size: int) -> bytes:
        return self._file_records.read(position, size).read_bytes()

    def records(self) -> FileRecords:
        return self._file_records

    def close(self) -> None:
        self._file_records.close()
