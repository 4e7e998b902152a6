"""Where a snapshot's bytes are written, until it is frozen into an immutable snapshot.

Mirrors: org.apache.kafka.snapshot.RawSnapshotWriter (raft/src/main/java/org/apache/kafka/snapshot/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: one ``append`` takes both aligned ``MemoryRecords`` (a snapshot this replica writes) and the
         unaligned bytes of a FetchSnapshot response (Kafka's ``UnalignedMemoryRecords``).

A snapshot is written whole, then frozen; until then nobody can read it, and closing a writer that was
not frozen aborts the snapshot. So a crash mid-write leaves no half snapshot that looks whole.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.common.record import MemoryRecords
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch


class RawSnapshotWriter(ABC):
    @abstractmethod
    def snapshot_id(self) -> OffsetAndEpoch: ...

    @abstractmethod
    def size_in_bytes(self) -> int: ...

    @abstractmethod
    def append(self, records: MemoryRecords | bytes | bytearray | memoryview) -> None:
        """Append all of ``records``; raises ``IllegalStateException`` once the snapshot is frozen."""

    @abstractmethod
    def is_frozen(self) -> bool: ...

    @abstractmethod
    def freeze(self) -> None:
        """Make the snapshot immutable and visible to the log."""

    @abstractmethod
    def close(self) -> None:
        """Release the writer; without ``freeze`` first, the snapshot is discarded."""

    def __enter__(self) -> RawSnapshotWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
