"""A replicated log in memory, for the deterministic simulator and the lab: the same answers as
``KafkaMetadataLog``, no files, and a crash that loses what was not flushed.

Mirrors: org.apache.kafka.raft.MockLog and org.apache.kafka.snapshot.MockRawSnapshotWriter and
         org.apache.kafka.snapshot.MockRawSnapshotReader
         (raft/src/test/java/org/apache/kafka/raft/MockLog.java and .../snapshot/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a batch is kept as its bytes (epoch stamped in), where Kafka keeps its records and rebuilds
         the batch on each read; the snapshot writer and reader live here, not in modules of their own;
         a batch begins an epoch when its epoch is newer than the log's last (Kafka's MockLog also
         counts the snapshot's, so the first batch after a snapshot began no epoch);
         ``truncate_to_latest_snapshot`` compares a snapshot with the log's end before it was stored,
         where Kafka's MockLog compares it with ``endOffset()``, which for a log with no batches is
         that very snapshot's end (a follower whose log was emptied by its own snapshot then fails
         to install the leader's; KafkaMetadataLog, whose end a snapshot never moves, does not).
Labs:    lab 18, stage 4 (``MockLog.delete_before_snapshot``)

Kafka's Raft tests and its simulation run whole quorums in one thread on a mock clock; a log on disk
would make them slow and a crash hard to stage. MockLog keeps three lists: the batches, the epoch
start offsets (the leader epoch cache), and the snapshots, and a ``last_flushed_offset``.
``reopen`` is the crash: every batch from the last flush on is lost, and the high watermark is
forgotten (it is never persisted; the replica learns it again from the leader).

Every entry carries a ``MockOffsetMetadata`` with an id no other entry ever had. The high watermark
the leader hands back must carry the id of the entry at its offset: an entry truncated and written
again at the same offset has a new id, so a stale offset metadata is caught at once.

A read returns at most two batches: a small limit that makes the Raft client meet partial fetches
in every test, as it would with a real ``max.fetch.size``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_lite.common.errors import (
    IllegalArgumentException,
    IllegalStateException,
    KafkaException,
    OffsetOutOfRangeException,
)
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.default_record_batch import set_partition_leader_epoch
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.raft.isolation import Isolation
from kafka_lite.raft.log_append_info import LogAppendInfo
from kafka_lite.raft.log_fetch_info import LogFetchInfo
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raw_snapshot_reader import RawSnapshotReader
from kafka_lite.raft.raw_snapshot_writer import RawSnapshotWriter
from kafka_lite.raft.replicated_log import ReplicatedLog

log = logging.getLogger(__name__)

# Ids for MockOffsetMetadata, unique across every MockLog in the process, as Kafka's static counter.
_ID_GENERATOR = itertools.count()


@dataclass(frozen=True)
class MockOffsetMetadata:
    id: int


@dataclass(frozen=True)
class EpochStartOffset:
    epoch: int
    start_offset: int


@dataclass
class LogBatch:
    """One batch as appended: its epoch, its bytes, and one metadata id per record, in offset order."""

    epoch: int
    is_control_batch: bool
    base_offset: int
    data: bytes
    entry_ids: list[int] = field(repr=False)

    def first_offset(self) -> int:
        return self.base_offset

    def last_offset(self) -> int:
        return self.base_offset + len(self.entry_ids) - 1

    def metadata_for(self, offset: int) -> MockOffsetMetadata:
        return MockOffsetMetadata(self.entry_ids[offset - self.base_offset])


class MockLog(ReplicatedLog):
    def __init__(self, topic_partition: TopicPartition) -> None:
        self._topic_partition = topic_partition
        self._epoch_start_offsets: list[EpochStartOffset] = []
        self._batches: list[LogBatch] = []
        self._snapshots: dict[OffsetAndEpoch, MockRawSnapshotReader] = {}
        # the id the end offset carries: the next entry appended takes it
        self._next_id = next(_ID_GENERATOR)
        self._high_watermark = LogOffsetMetadata(0)
        self._last_flushed_offset = 0

    # -- truncation ---------------------------------------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        if offset < self._high_watermark.offset:
            raise IllegalArgumentException(
                f"Illegal attempt to truncate to offset {offset} which is below the current high "
                f"watermark {self._high_watermark}"
            )
        self._batches = [b for b in self._batches if b.last_offset() < offset]
        self._epoch_start_offsets = [e for e in self._epoch_start_offsets if e.start_offset < offset]

    def truncate_to_latest_snapshot(self) -> bool:
        snapshot_id = self.latest_snapshot_id()
        if snapshot_id is None:
            return False
        last_epoch = self._log_last_fetched_epoch() or 0
        if snapshot_id.epoch > last_epoch or (
            snapshot_id.epoch == last_epoch and snapshot_id.offset > self._log_end_offset_before(snapshot_id)
        ):
            self._batches.clear()
            self._epoch_start_offsets.clear()
            self._forget_snapshots_before(snapshot_id)
            self.update_high_watermark(LogOffsetMetadata(snapshot_id.offset))
            self.flush()
            return True
        return False

    def _log_end_offset_before(self, snapshot_id: OffsetAndEpoch) -> int:
        """The log's end as it stood before ``snapshot_id`` was stored. ``end_offset`` of a log with no
        batches is its latest snapshot's end, and once a fetched snapshot is frozen that is the fetched
        one: an emptied log (every batch deleted before a snapshot of its own) would then look as far
        along as the snapshot and never be truncated to it. KafkaMetadataLog has no such case: a
        snapshot never moves the end of its log."""
        if self._batches:
            return self._batches[-1].last_offset() + 1
        older = [s for s in self._snapshots if s < snapshot_id]
        return max(older).offset if older else 0

    # -- high watermark -------------------------------------------------------------------------------------

    def update_high_watermark(self, offset_metadata: LogOffsetMetadata) -> None:
        if self._high_watermark.offset > offset_metadata.offset:
            raise IllegalArgumentException(
                f"Non-monotonic update of current high watermark {self._high_watermark} to new value "
                f"{offset_metadata}"
            )
        if offset_metadata.offset > self.end_offset().offset:
            raise IllegalArgumentException(
                f"Attempt to update high watermark to {offset_metadata} which is larger than the current "
                f"end offset {self.end_offset()}"
            )
        if offset_metadata.offset < self.start_offset():
            raise IllegalArgumentException(
                f"Attempt to update high watermark to {offset_metadata} which is smaller than the current "
                f"start offset {self.start_offset()}"
            )
        self._assert_valid_high_watermark_metadata(offset_metadata)
        self._high_watermark = offset_metadata

    def high_watermark(self) -> LogOffsetMetadata:
        return self._high_watermark

    def topic_partition(self) -> TopicPartition:
        return self._topic_partition

    def _metadata_for_offset(self, offset: int) -> MockOffsetMetadata | None:
        if offset == self.end_offset().offset:
            return self.end_offset().metadata
        for batch in self._batches:
            if batch.first_offset() <= offset <= batch.last_offset():
                return batch.metadata_for(offset)
        return None

    def _assert_valid_high_watermark_metadata(self, offset_metadata: LogOffsetMetadata) -> None:
        if offset_metadata.metadata is None:
            return
        entry_metadata = self._metadata_for_offset(offset_metadata.offset)
        if entry_metadata is not None and entry_metadata != offset_metadata.metadata:
            raise IllegalArgumentException(
                f"High watermark {offset_metadata.offset} metadata uuid {offset_metadata.metadata.id} does "
                f"not match the log's record entry maintained uuid {entry_metadata.id}"
            )

    # -- epochs and offsets ---------------------------------------------------------------------------------

    def _log_last_fetched_epoch(self) -> int | None:
        return self._epoch_start_offsets[-1].epoch if self._epoch_start_offsets else None

    def last_fetched_epoch(self) -> int:
        epoch = self._log_last_fetched_epoch()
        if epoch is not None:
            return epoch
        snapshot_id = self.latest_snapshot_id()
        return snapshot_id.epoch if snapshot_id is not None else 0

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        return self._last_offset_and_epoch_filtered(lambda e: e.epoch <= epoch)

    def _last_offset_and_epoch_filtered(
        self, predicate: Callable[[EpochStartOffset], bool]
    ) -> OffsetAndEpoch:
        # Walk the epochs oldest first; the first that fails the predicate starts where the answer
        # ends, and the answer's epoch is the one before it (the snapshot's, before the first entry).
        earliest = self.earliest_snapshot_id()
        epoch_lower_bound = earliest.epoch if earliest is not None else 0
        for epoch_start_offset in self._epoch_start_offsets:
            if not predicate(epoch_start_offset):
                return OffsetAndEpoch(epoch_start_offset.start_offset, epoch_lower_bound)
            epoch_lower_bound = epoch_start_offset.epoch
        return OffsetAndEpoch(self.end_offset().offset, self.last_fetched_epoch())

    def end_offset(self) -> LogOffsetMetadata:
        if self._batches:
            next_offset = self._batches[-1].last_offset() + 1
        else:
            snapshot_id = self.latest_snapshot_id()
            next_offset = snapshot_id.offset if snapshot_id is not None else 0
        return LogOffsetMetadata(next_offset, MockOffsetMetadata(self._next_id))

    def start_offset(self) -> int:
        if self._batches:
            return self._batches[0].first_offset()
        snapshot_id = self.earliest_snapshot_id()
        return snapshot_id.offset if snapshot_id is not None else 0

    def initialize_leader_epoch(self, epoch: int) -> None:
        start_offset = self.end_offset().offset
        # an epoch that began here and wrote nothing, or any epoch not older, is replaced
        self._epoch_start_offsets = [
            e for e in self._epoch_start_offsets if e.start_offset < start_offset and e.epoch < epoch
        ]
        self._epoch_start_offsets.append(EpochStartOffset(epoch, start_offset))

    # -- appending ----------------------------------------------------------------------------------------------

    def append_as_leader(self, records: MemoryRecords, epoch: int) -> LogAppendInfo:
        return self._append(records, epoch)

    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        return self._append(records, None)

    def _append(self, records: MemoryRecords, epoch: int | None) -> LogAppendInfo:
        if records.size_in_bytes() == 0:
            raise IllegalArgumentException("Attempt to append an empty record set")
        base_offset = self.end_offset().offset
        last_offset = base_offset
        for batch in records.batches():
            if batch.base_offset != self.end_offset().offset:
                raise KafkaException(
                    f"Illegal append at offset {batch.base_offset} with current end offset of "
                    f"{self.end_offset().offset}"
                )
            batch_epoch = batch.partition_leader_epoch if epoch is None else epoch
            data = bytearray(batch.buffer())  # a copy: the caller may reuse its buffer
            set_partition_leader_epoch(data, 0, batch_epoch)
            entry_ids = [self._take_id() for _ in range(batch.last_offset_delta + 1)]
            self._append_batch(
                LogBatch(batch_epoch, batch.is_control_batch, batch.base_offset, bytes(data), entry_ids)
            )
            last_offset = batch.last_offset
        return LogAppendInfo(base_offset, last_offset)

    def _take_id(self) -> int:
        entry_id = self._next_id
        self._next_id = next(_ID_GENERATOR)
        return entry_id

    def _append_batch(self, batch: LogBatch) -> None:
        # Against the log's own epochs, not the snapshot's: the first batch after a snapshot must
        # begin an epoch here, or a later truncate_to_latest_snapshot would see a log with no epoch.
        latest = self._log_last_fetched_epoch()
        if latest is None or batch.epoch > latest:
            self._epoch_start_offsets.append(EpochStartOffset(batch.epoch, batch.first_offset()))
        self._batches.append(batch)

    # -- flushing and crashing -----------------------------------------------------------------------------------

    def flush(self, force_flush_active_segment: bool = False) -> None:
        self._last_flushed_offset = self.end_offset().offset

    def last_flushed_offset(self) -> int:
        return self._last_flushed_offset

    def reopen(self) -> None:
        """A crash and a restart: the batches from the last flush on, their epochs and the high
        watermark are lost; frozen snapshots survive (freezing one is durable)."""
        self._batches = [b for b in self._batches if b.first_offset() < self._last_flushed_offset]
        self._epoch_start_offsets = [
            e for e in self._epoch_start_offsets if e.start_offset < self._last_flushed_offset
        ]
        self._high_watermark = LogOffsetMetadata(0)

    # -- reading ---------------------------------------------------------------------------------------------------

    def read_batches(self, start_offset: int, max_offset: int | None = None) -> list[LogBatch]:
        """The whole batches ending in [start_offset, max_offset): what the simulator inspects."""
        self._verify_offset_in_range(start_offset)
        max_offset = self.end_offset().offset if max_offset is None else max_offset
        if start_offset == max_offset:
            return []
        return [b for b in self._batches if start_offset <= b.last_offset() < max_offset]

    def _verify_offset_in_range(self, offset: int) -> None:
        if offset > self.end_offset().offset:
            raise OffsetOutOfRangeException(
                f"Requested offset {offset} is larger than then log end offset {self.end_offset().offset}"
            )
        if offset < self.start_offset():
            raise OffsetOutOfRangeException(
                f"Requested offset {offset} is smaller than then log start offset {self.start_offset()}"
            )

    def read(self, start_offset: int, isolation: Isolation) -> LogFetchInfo:
        self._verify_offset_in_range(start_offset)
        max_offset = (
            self._high_watermark.offset if isolation == Isolation.COMMITTED else self.end_offset().offset
        )
        if start_offset >= max_offset:
            return LogFetchInfo(
                MemoryRecords(b""), LogOffsetMetadata(start_offset, self._metadata_for_offset(start_offset))
            )
        chosen: list[LogBatch] = []
        for batch in self._batches:
            # Only whole batches, and only those that end below max_offset: a committed read never
            # shows a batch the high watermark cuts, as a consumer drops an incomplete batch.
            if start_offset <= batch.last_offset() < max_offset:
                chosen.append(batch)
                if len(chosen) >= 2:
                    break
        if not chosen:
            raise RuntimeError(
                f"Expected to find at least one entry starting from offset {start_offset} but found none"
            )
        first = chosen[0]
        return LogFetchInfo(
            MemoryRecords(b"".join(b.data for b in chosen)),
            LogOffsetMetadata(first.first_offset(), first.metadata_for(first.first_offset())),
        )

    # -- snapshots -------------------------------------------------------------------------------------------------

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter | None:
        if snapshot_id in self._snapshots:
            return None

        def on_frozen(data: bytes) -> None:
            self._snapshots.setdefault(snapshot_id, MockRawSnapshotReader(snapshot_id, data))

        return MockRawSnapshotWriter(snapshot_id, on_frozen)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotReader | None:
        return self._snapshots.get(snapshot_id)

    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        return max(self._snapshots) if self._snapshots else None

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        return min(self._snapshots) if self._snapshots else None

    def on_snapshot_frozen(self, snapshot_id: OffsetAndEpoch) -> None:
        pass  # the writer's callback already put the snapshot in the map

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        # BEGIN SOLUTION
        # Never back (the entries below the start are gone) and never past the high watermark (a
        # snapshot stands for committed entries only). A snapshot the log holds answers True, even
        # one already at the start, as Kafka's MockLog does.
        if self.start_offset() > snapshot_id.offset:
            raise OffsetOutOfRangeException(
                f"New log start ({snapshot_id}) is less than the current log start offset ({self.start_offset()})"
            )
        if self._high_watermark.offset < snapshot_id.offset:
            raise OffsetOutOfRangeException(
                f"New log start ({snapshot_id}) is greater than the high watermark ({self._high_watermark.offset})"
            )
        if snapshot_id not in self._snapshots:
            return False
        self._forget_snapshots_before(snapshot_id)
        self._batches = [b for b in self._batches if b.last_offset() >= snapshot_id.offset]
        # The epoch covering the new log start now begins there: end_offset_for_epoch still answers
        # for it, and for the epochs before it the snapshot's epoch stands in.
        dropped = [e for e in self._epoch_start_offsets if e.start_offset <= snapshot_id.offset]
        self._epoch_start_offsets = [
            e for e in self._epoch_start_offsets if e.start_offset > snapshot_id.offset
        ]
        if dropped:
            self._epoch_start_offsets.insert(0, EpochStartOffset(dropped[-1].epoch, snapshot_id.offset))
        return True
        # END SOLUTION

    def _forget_snapshots_before(self, snapshot_id: OffsetAndEpoch) -> None:
        for older in [s for s in self._snapshots if s < snapshot_id]:
            del self._snapshots[older]


class MockRawSnapshotWriter(RawSnapshotWriter):
    """Bytes in memory; ``freeze`` hands them to the log."""

    def __init__(self, snapshot_id: OffsetAndEpoch, frozen_handler: Callable[[bytes], None]) -> None:
        self._snapshot_id = snapshot_id
        self._frozen_handler = frozen_handler
        self._data = bytearray()
        self._frozen = False

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return len(self._data)

    def append(self, records: MemoryRecords | bytes | bytearray | memoryview) -> None:
        if self._frozen:
            raise IllegalStateException(f"Snapshot is already frozen {self._snapshot_id}")
        self._data += records.buffer() if isinstance(records, MemoryRecords) else records

    def is_frozen(self) -> bool:
        return self._frozen

    def freeze(self) -> None:
        if self._frozen:
            raise IllegalStateException(f"Snapshot is already frozen {self._snapshot_id}")
        self._frozen = True
        self._frozen_handler(bytes(self._data))

    def close(self) -> None:
        pass  # an unfrozen snapshot was never handed to the log: nothing to discard


class MockRawSnapshotReader(RawSnapshotReader):
    def __init__(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        self._snapshot_id = snapshot_id
        self._data = data

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return len(self._data)

    def slice(self, position: int, size: int) -> bytes:
        return self._data[position : position + size]

    def records(self) -> MemoryRecords:
        return MemoryRecords(self._data)
