"""A frozen snapshot, read whole (to load the state machine) or in slices (to serve FetchSnapshot).

Mirrors: org.apache.kafka.snapshot.RawSnapshotReader (raft/src/main/java/org/apache/kafka/snapshot/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A leader sends a snapshot in slices of at most the fetch size, each named by its byte position, so a
slice may cut a batch in two: the follower appends the bytes as they come and reads batches only once
the whole snapshot is frozen.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch


class RawSnapshotReader(ABC):
    @abstractmethod
    def snapshot_id(self) -> OffsetAndEpoch: ...

    @abstractmethod
    def size_in_bytes(self) -> int: ...

    @abstractmethod
    def slice(self, position: int, size: int) -> bytes:
        """At most ``size`` bytes from ``position``, whether or not they end on a batch boundary."""

    @abstractmethod
    def records(self) -> MemoryRecords | FileRecords:
        """All of the snapshot's batches."""

    def close(self) -> None:  # noqa: B027 - a reader over memory holds nothing to release
        pass
