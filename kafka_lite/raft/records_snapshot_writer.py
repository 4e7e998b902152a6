"""A snapshot as the state machine writes it: its records in batches, between a header and a footer.

Mirrors: org.apache.kafka.snapshot.SnapshotWriter and RecordsSnapshotWriter
         (raft/src/main/java/org/apache/kafka/snapshot/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the header batch is built before the accumulator, which then starts at offset 1 (Kafka's
         accumulator appends the header itself, ``appendSnapshotHeaderRecord``); no memory pool.

A state machine that has applied everything up to some committed offset can write its whole state
as records and let the log forget what came before (KIP-630). The snapshot is a file of ordinary
record batches, numbered from offset 0 and stamped with the snapshot's epoch, framed by two control
records: SNAPSHOT_HEADER first (with the append time of the last entry the snapshot contains, so
time-based retention can judge it) and SNAPSHOT_FOOTER last. A snapshot without its footer was never
finished; ``freeze`` writes the footer and makes the snapshot immutable and visible, ``close``
without ``freeze`` discards it.

The records go through a ``BatchAccumulator`` as a leader's appends do, with no linger: a batch is
written to the raw snapshot as soon as it is full, so a snapshot larger than memory streams out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.record.control_record_utils import (
    SNAPSHOT_FOOTER_CURRENT_VERSION,
    SNAPSHOT_HEADER_CURRENT_VERSION,
    with_snapshot_footer_record,
    with_snapshot_header_record,
)
from kafka_lite.common.time import Time
from kafka_lite.raft.internals.batch_accumulator import BatchAccumulator, CompletedBatch
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_client import RecordSerde
from kafka_lite.raft.raw_snapshot_writer import RawSnapshotWriter
from kafka_lite.raft.timer import LONG_MAX


class RecordsSnapshotWriter:
    """Kafka's SnapshotWriter interface has this one implementation; the state machine sees only
    ``snapshot_id``, ``last_contained_log_offset``/``epoch``, ``append``, ``freeze`` and ``close``."""

    def __init__(
        self, snapshot: RawSnapshotWriter, max_batch_size: int, time: Time, last_contained_log_timestamp: int,
        serde: RecordSerde,
    ) -> None:  # fmt: skip
        self._snapshot = snapshot
        self._time = time
        self._last_contained_log_timestamp = last_contained_log_timestamp
        # Offsets inside a snapshot count from 0, the header's; the records follow it.
        self._accumulator = BatchAccumulator(
            snapshot.snapshot_id().epoch, 1, LONG_MAX, max_batch_size, time, serde.serialize
        )

    @classmethod
    def create_with_header(
        cls, supplier: Callable[[], RawSnapshotWriter | None], max_batch_size: int, time: Time,
        last_contained_log_timestamp: int, serde: RecordSerde,
    ) -> RecordsSnapshotWriter | None:  # fmt: skip
        """A writer over the raw snapshot ``supplier`` gives, its header written; None if the log
        gave no raw writer (the snapshot exists already, or is below the log start)."""
        snapshot = supplier()
        if snapshot is None:
            return None
        writer = cls(snapshot, max_batch_size, time, last_contained_log_timestamp, serde)
        writer._initialize_snapshot_with_header()
        return writer

    def _initialize_snapshot_with_header(self) -> None:
        if self._snapshot.size_in_bytes() != 0:
            raise IllegalStateException(
                f"Initializing writer with a non-empty snapshot: id = '{self._snapshot.snapshot_id()}'."
            )
        header = {
            "version": SNAPSHOT_HEADER_CURRENT_VERSION,
            "last_contained_log_timestamp": self._last_contained_log_timestamp,
        }
        self._snapshot.append(
            with_snapshot_header_record(0, self._time.milliseconds(), self.last_contained_log_epoch(), header)
        )

    def _finalize_snapshot_with_footer(self) -> None:
        self._append_batches(self._accumulator.drain())
        footer = {"version": SNAPSHOT_FOOTER_CURRENT_VERSION}
        self._snapshot.append(
            with_snapshot_footer_record(
                self._accumulator.next_offset(),
                self._time.milliseconds(),
                self.last_contained_log_epoch(),
                footer,
            )
        )

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot.snapshot_id()

    def last_contained_log_offset(self) -> int:
        # The id's offset is the first offset *not* in the snapshot, as a log end offset is.
        return self._snapshot.snapshot_id().offset - 1

    def last_contained_log_epoch(self) -> int:
        return self._snapshot.snapshot_id().epoch

    def is_frozen(self) -> bool:
        return self._snapshot.is_frozen()

    def append(self, records: list[Any]) -> None:
        if self._snapshot.is_frozen():
            raise IllegalStateException(
                f"Append not supported. Snapshot is already frozen: id = '{self._snapshot.snapshot_id()}'."
            )
        self._accumulator.append(self._snapshot.snapshot_id().epoch, records)
        if self._accumulator.needs_drain(self._time.milliseconds()):
            self._append_batches(self._accumulator.drain())

    def freeze(self) -> None:
        self._finalize_snapshot_with_footer()
        self._snapshot.freeze()
        self._accumulator.close()

    def close(self) -> None:
        self._snapshot.close()
        self._accumulator.close()

    def _append_batches(self, batches: list[CompletedBatch]) -> None:
        for batch in batches:
            self._snapshot.append(batch.data)

    def __enter__(self) -> RecordsSnapshotWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
