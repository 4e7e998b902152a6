"""A snapshot as the state machine loads it: its batches of records, without the header and footer.

Mirrors: org.apache.kafka.snapshot.SnapshotReader and RecordsSnapshotReader
         (raft/src/main/java/org/apache/kafka/snapshot/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: an iterator of ``Batch`` (Kafka's ``hasNext``/``next``); the batches are decoded by the
         serde as the log's committed batches are, without Kafka's RecordsIterator and buffer pool.

The reader skips the control batches (the header and the footer carry no state) and yields each
batch of state records in order. ``last_contained_log_timestamp`` comes from the first batch, the
header, as Kafka's reader takes it ("the append time of the first batch").
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.record import MemoryRecords, codec
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_client import Batch, RecordSerde
from kafka_lite.raft.raw_snapshot_reader import RawSnapshotReader


class RecordsSnapshotReader:
    def __init__(self, snapshot_id: OffsetAndEpoch, batches: Iterator[Batch]) -> None:
        self._snapshot_id = snapshot_id
        self._batches = batches
        self._next_batch: Batch | None = None
        self._last_contained_log_timestamp: int | None = None

    @classmethod
    def of(cls, snapshot: RawSnapshotReader, serde: RecordSerde) -> RecordsSnapshotReader:
        def batches() -> Iterator[Batch]:
            records = snapshot.records()
            if isinstance(records, FileRecords):  # a snapshot file, read into memory to decode
                records = MemoryRecords(records.read_bytes())
            for batch in records.batches():
                values = (
                    []
                    if batch.is_control_batch
                    else [serde.deserialize(r.value) for r in codec.records(batch)]
                )
                yield Batch(batch.base_offset, batch.partition_leader_epoch, batch.max_timestamp,
                            batch.last_offset, values, batch.is_control_batch)  # fmt: skip

        return cls(snapshot.snapshot_id(), batches())

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def last_contained_log_offset(self) -> int:
        return self._snapshot_id.offset - 1

    def last_contained_log_epoch(self) -> int:
        return self._snapshot_id.epoch

    def last_contained_log_timestamp(self) -> int:
        if self._last_contained_log_timestamp is None:
            if self._next_batch is not None:
                raise IllegalStateException(
                    "nextBatch was present when last contained log timestamp was not present"
                )
            self._next_batch = self._read_next_batch()
        if self._last_contained_log_timestamp is None:
            raise IllegalStateException(f"Snapshot {self._snapshot_id} has no batches")
        return self._last_contained_log_timestamp

    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        batch = self._next_batch if self._next_batch is not None else self._read_next_batch()
        self._next_batch = None
        if batch is None:
            raise StopIteration
        return batch

    def _read_next_batch(self) -> Batch | None:
        for batch in self._batches:
            if self._last_contained_log_timestamp is None:
                # The header's batch: Kafka takes its append time for the contained log's.
                self._last_contained_log_timestamp = batch.append_timestamp
            if batch.records:
                return batch
        return None

    def close(self) -> None:
        pass  # the raw reader belongs to the log, which closes it
