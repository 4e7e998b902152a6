"""The replicated log on disk: a Raft replica's log kept in kafka_lite's own ``Log``, its snapshots
in the same directory.

Mirrors: kafka.raft.KafkaMetadataLog (core/src/main/scala/kafka/raft/KafkaMetadataLog.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the high watermark is kept here (Kafka 3.3's UnifiedLog holds it; 0.11's Log, which this
         wraps, leaves it to the partition); the leader epoch cache is read through
         ``end_offset_for_epoch`` below, 3.3's answer (epoch and offset), from 0.11's entries;
         an append must start exactly at the log end (UnifiedLog refuses only an offset below it);
         expired snapshots are removed at once, and no size or time retention (``maybe_clean``).

Kafka made the Raft log an ordinary partition log (``__cluster_metadata-0``) on purpose: segments,
indexes, recovery, the leader epoch cache and the v2 batch header were all there already. Each batch's
``partitionLeaderEpoch`` is the Raft epoch of the leader that wrote it, so the epoch cache knows
where every Raft epoch begins, which is what ``validate_offset_and_epoch`` asks.

What this class adds is what Raft needs and a partition does not:

- the leader builds its batches with their offsets and its epoch (the Raft client's accumulator
  numbers and stamps them), so an append never renumbers: its first batch must start at the log end
  offset, as a follower's must;
- ``truncate_to`` refuses to go below the high watermark: a committed entry is never removed;
- snapshots (KIP-630): a snapshot of the state machine at ``(end offset, epoch)`` replaces the log
  before it. ``delete_before_snapshot`` moves the log start there and deletes the segments below it.
  A follower too far behind fetches the leader's snapshot and ``truncate_to_latest_snapshot`` then
  empties its log to start at the snapshot's end.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from kafka_lite.common.errors import (
    IllegalArgumentException,
    IllegalStateException,
    KafkaException,
    OffsetOutOfRangeException,
)
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.epoch.leader_epoch_checkpoint_file import EpochEntry
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_segment import LogOffsetMetadata as SegmentLogOffsetMetadata
from kafka_lite.raft import snapshots
from kafka_lite.raft.file_raw_snapshot_reader import FileRawSnapshotReader
from kafka_lite.raft.file_raw_snapshot_writer import FileRawSnapshotWriter
from kafka_lite.raft.isolation import Isolation
from kafka_lite.raft.log_append_info import LogAppendInfo
from kafka_lite.raft.log_fetch_info import LogFetchInfo
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raw_snapshot_reader import RawSnapshotReader
from kafka_lite.raft.raw_snapshot_writer import RawSnapshotWriter
from kafka_lite.raft.replicated_log import ReplicatedLog

log = logging.getLogger(__name__)

# Kafka 3.3's KafkaRaftClient.MAX_FETCH_SIZE_BYTES and MAX_BATCH_SIZE_BYTES.
MAX_FETCH_SIZE_BYTES = 8 * 1024 * 1024
MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class SegmentPosition:
    """The log's metadata for an offset: its segment and byte position (Kafka's ``SegmentPosition``)."""

    base_offset: int
    relative_position: int


class KafkaMetadataLog(ReplicatedLog):
    def __init__(
        self,
        log: Log,
        time: Time,
        recovered_snapshots: dict[OffsetAndEpoch, FileRawSnapshotReader | None],
        topic_partition: TopicPartition,
        max_fetch_size_in_bytes: int = MAX_FETCH_SIZE_BYTES,
    ) -> None:
        self.log = log
        self.time = time
        # snapshot id -> its reader once opened, None until then (Kafka's TreeMap of Options)
        self._snapshots = recovered_snapshots
        # The Raft client's thread reads and deletes snapshots while the state machine's thread freezes
        # them (``on_snapshot_frozen``): the map is guarded, as Kafka's ``snapshots synchronized``.
        # Reentrant, since deleting asks for the latest snapshot id under it.
        self._snapshots_lock = threading.RLock()
        self._topic_partition = topic_partition
        self.max_fetch_size_in_bytes = max_fetch_size_in_bytes
        self._high_watermark = LogOffsetMetadata(log.log_start_offset)

    @classmethod
    def create(
        cls,
        topic_partition: TopicPartition,
        data_dir: Path,
        time: Time = SYSTEM,
        segment_bytes: int = 1024 * 1024 * 1024,
        max_batch_size_in_bytes: int = MAX_BATCH_SIZE_BYTES,
        max_fetch_size_in_bytes: int = MAX_FETCH_SIZE_BYTES,
    ) -> KafkaMetadataLog:
        """Open (or create) the log in ``data_dir`` (a ``<topic>-<partition>`` directory), recover its
        snapshots, and catch up with a snapshot a crash left ahead of the log (Kafka's ``apply``)."""
        config = LogConfig(
            {
                "max.message.bytes": max_batch_size_in_bytes,
                "segment.bytes": segment_bytes,
                # Only snapshots shorten a Raft log: a segment is never deleted for its age or size,
                # since the state it holds would be lost with it.
                "retention.ms": -1,
                "retention.bytes": -1,
            }
        )
        partition_log = Log(data_dir, config, time=time)
        metadata_log = cls(
            partition_log, time, _recover_snapshots(partition_log), topic_partition, max_fetch_size_in_bytes
        )
        # A follower may have crashed after fetching a snapshot but before emptying its log.
        metadata_log.truncate_to_latest_snapshot()
        return metadata_log

    # -- reading --------------------------------------------------------------------------------------------

    def read(self, start_offset: int, isolation: Isolation) -> LogFetchInfo:
        max_offset = self._high_watermark.offset if isolation == Isolation.COMMITTED else None
        fetch_info = self.log.read(
            start_offset, self.max_fetch_size_in_bytes, max_offset, min_one_message=True
        )
        return LogFetchInfo(fetch_info.records, _to_raft_metadata(fetch_info.fetch_offset_metadata))

    # -- appending -------------------------------------------------------------------------------------------

    def append_as_leader(self, records: MemoryRecords, epoch: int) -> LogAppendInfo:
        if records.size_in_bytes() == 0:
            raise IllegalArgumentException("Attempt to append an empty record set")
        # The leader's batches come numbered and stamped (Kafka's RaftLeader origin: the log neither
        # renumbers nor restamps them), so the epoch cache learns where the epoch begins from the
        # batches, as on a follower. A batch of another epoch is a bug in the leader.
        for batch in records.batches():
            if batch.partition_leader_epoch != epoch:
                raise IllegalArgumentException(
                    f"Append from Raft leader did not set the batch epoch correctly: the batch at offset "
                    f"{batch.base_offset} has epoch {batch.partition_leader_epoch}, the leader's is {epoch}"
                )
        return self._append(records)

    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        if records.size_in_bytes() == 0:
            raise IllegalArgumentException("Attempt to append an empty record set")
        return self._append(records)

    def _append(self, records: MemoryRecords) -> LogAppendInfo:
        first = next(records.batches())
        end_offset = self.log.log_end_offset
        if first.base_offset != end_offset:
            # Kafka's UnexpectedAppendOffsetException: a Raft log has no gaps and never overwrites
            raise KafkaException(
                f"Illegal append at offset {first.base_offset} with current end offset of {end_offset}"
            )
        # Not a client's append: the leader's LeaderChange record and a snapshot's neighbours are
        # control batches, which Kafka's log accepts from the RaftLeader origin and from followers.
        append_info = self.log.append(records, assign_offsets=False, is_from_client=False)
        return LogAppendInfo(append_info.first_offset, append_info.last_offset)

    # -- epochs and offsets -------------------------------------------------------------------------------

    def last_fetched_epoch(self) -> int:
        latest_epoch = self.log.leader_epoch_cache.latest_epoch()
        if latest_epoch >= 0:
            return latest_epoch
        snapshot_id = self.latest_snapshot_id()
        if snapshot_id is None:
            return 0
        log_end_offset = self.end_offset().offset
        if snapshot_id.offset == self.start_offset() and snapshot_id.offset == log_end_offset:
            return snapshot_id.epoch  # an empty log that starts at its snapshot
        raise KafkaException(
            f"Log doesn't have a last fetch epoch and there is a snapshot ({snapshot_id}). Expected the "
            f"snapshot's end offset to match the log's end offset ({log_end_offset}) and the log start "
            f"offset ({self.start_offset()})"
        )

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        found = _end_offset_for(self.log.leader_epoch_cache.epoch_entries(), epoch, self.log.log_end_offset)
        earliest_snapshot_id = self.earliest_snapshot_id()
        if found is None:
            return OffsetAndEpoch(self.end_offset().offset, self.last_fetched_epoch())
        if (
            earliest_snapshot_id is not None
            and found.offset == earliest_snapshot_id.offset
            and found.epoch == epoch
        ):
            # the epoch is older than any the log still holds: the snapshot at the log start stands
            # for everything before it, so it is where the two logs agree
            return earliest_snapshot_id
        return found

    def end_offset(self) -> LogOffsetMetadata:
        return _to_raft_metadata(self.log.log_end_offset_metadata)

    def start_offset(self) -> int:
        return self.log.log_start_offset

    def initialize_leader_epoch(self, epoch: int) -> None:
        self.log.leader_epoch_cache.assign(epoch, self.log.log_end_offset)

    # -- truncation ---------------------------------------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        if offset < self._high_watermark.offset:
            raise IllegalArgumentException(
                f"Attempt to truncate to offset {offset}, which is below the current high watermark "
                f"{self._high_watermark.offset}"
            )
        self.log.truncate_to(offset)

    def truncate_to_latest_snapshot(self) -> bool:
        latest_epoch = max(self.log.leader_epoch_cache.latest_epoch(), 0)
        snapshot_id = self.latest_snapshot_id()
        if snapshot_id is None or not (
            snapshot_id.epoch > latest_epoch
            or (snapshot_id.epoch == latest_epoch and snapshot_id.offset > self.end_offset().offset)
        ):
            return False
        # the snapshot is ahead of everything in the log: start the log afresh at its end
        self.log.truncate_fully_and_start_at(snapshot_id.offset)
        self._high_watermark = LogOffsetMetadata(snapshot_id.offset)
        with self._snapshots_lock:
            forgotten = self._forget_snapshots_before(snapshot_id)
        self._remove_snapshots(forgotten)
        return True

    # -- high watermark ----------------------------------------------------------------------------------

    def update_high_watermark(self, offset_metadata: LogOffsetMetadata) -> None:
        # As UnifiedLog.updateHighWatermark: held within [log start, log end], whatever is asked.
        offset = min(max(offset_metadata.offset, self.start_offset()), self.log.log_end_offset)
        metadata = offset_metadata.metadata if offset == offset_metadata.offset else None
        self._high_watermark = LogOffsetMetadata(offset, metadata)

    def high_watermark(self) -> LogOffsetMetadata:
        return self._high_watermark

    # -- flushing ------------------------------------------------------------------------------------------------

    def flush(self, force_flush_active_segment: bool = False) -> None:
        self.log.flush()

    def last_flushed_offset(self) -> int:
        return self.log.recovery_point

    def topic_partition(self) -> TopicPartition:
        return self._topic_partition

    # -- snapshots -------------------------------------------------------------------------------------------------

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter | None:
        with self._snapshots_lock:
            if snapshot_id in self._snapshots:
                return None
        return FileRawSnapshotWriter.create(self.log.dir, snapshot_id, self)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotReader | None:
        with self._snapshots_lock:
            if snapshot_id not in self._snapshots:
                return None
            reader = self._snapshots[snapshot_id]
            if reader is None:  # known, never opened: open it now
                try:
                    reader = FileRawSnapshotReader.open(self.log.dir, snapshot_id)
                except FileNotFoundError:
                    path = snapshots.snapshot_path(self.log.dir, snapshot_id)
                    log.warning("Couldn't read %s; expected to find snapshot file %s", snapshot_id, path)
                    del self._snapshots[snapshot_id]
                    return None
                self._snapshots[snapshot_id] = reader
            return reader

    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        with self._snapshots_lock:
            return max(self._snapshots) if self._snapshots else None

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        with self._snapshots_lock:
            return min(self._snapshots) if self._snapshots else None

    def on_snapshot_frozen(self, snapshot_id: OffsetAndEpoch) -> None:
        with self._snapshots_lock:
            self._snapshots[snapshot_id] = None

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        with self._snapshots_lock:
            latest_snapshot_id = self.latest_snapshot_id()
            if (
                latest_snapshot_id is None
                or snapshot_id not in self._snapshots
                or not self.start_offset() < snapshot_id.offset <= latest_snapshot_id.offset
            ):
                return False
            if snapshot_id.offset > self._high_watermark.offset:
                # UnifiedLog.maybeIncrementLogStartOffset's refusal: entries above the high watermark
                # are not committed, so no snapshot may stand for them
                raise OffsetOutOfRangeException(
                    f"Cannot increment the log start offset to {snapshot_id.offset} of partition "
                    f"{self.log.name} since it is larger than the high watermark {self._high_watermark.offset}"
                )
            self.log.maybe_increment_log_start_offset(snapshot_id.offset)
            # the segments wholly below the new log start hold only what the snapshot replaces
            self.log.delete_old_segments()
            forgotten = self._forget_snapshots_before(snapshot_id)
        # the files are removed outside the lock, as Kafka does on its scheduler
        self._remove_snapshots(forgotten)
        return True

    def _forget_snapshots_before(
        self, log_start_snapshot_id: OffsetAndEpoch
    ) -> dict[OffsetAndEpoch, FileRawSnapshotReader | None]:
        """Drop the snapshots older than ``log_start_snapshot_id`` from the map (the lock held)."""
        expired = {s: r for s, r in self._snapshots.items() if s < log_start_snapshot_id}
        for snapshot_id in expired:
            del self._snapshots[snapshot_id]
        return expired

    def _remove_snapshots(self, expired: dict[OffsetAndEpoch, FileRawSnapshotReader | None]) -> None:
        for snapshot_id, reader in sorted(expired.items()):
            log.info("Marking snapshot %s for deletion", snapshot_id)
            # renamed first, so a crash between the two steps leaves a file the next start deletes
            snapshots.mark_for_delete(self.log.dir, snapshot_id)
            if reader is not None:
                reader.close()
            snapshots.delete_if_exists(self.log.dir, snapshot_id)

    def close(self) -> None:
        self.log.close()
        with self._snapshots_lock:
            for reader in self._snapshots.values():
                if reader is not None:
                    reader.close()
            self._snapshots.clear()


def _to_raft_metadata(metadata: SegmentLogOffsetMetadata) -> LogOffsetMetadata:
    """The log's (offset, segment base, position) as the Raft layer's offset with its metadata."""
    if metadata.message_offset_only():
        return LogOffsetMetadata(metadata.message_offset)
    return LogOffsetMetadata(
        metadata.message_offset,
        SegmentPosition(metadata.segment_base_offset, metadata.relative_position_in_segment),
    )


def _end_offset_for(
    entries: list[EpochEntry], requested_epoch: int, log_end_offset: int
) -> OffsetAndEpoch | None:
    """Kafka 3.3's ``LeaderEpochFileCache.endOffsetFor`` over 0.11's entries: the largest epoch at or
    below ``requested_epoch`` and where it ends, or None when the log knows no epoch above it.

    0.11's cache keeps an epoch that began and wrote nothing (two entries at one offset); 3.3's
    replaces it with the next. Such an epoch has no entries, so it is skipped here, as 3.3 would.
    """
    entries = [
        e
        for i, e in enumerate(entries)
        if i + 1 == len(entries) or entries[i + 1].start_offset > e.start_offset
    ]
    if requested_epoch < 0 or not entries:
        return None
    if entries[-1].epoch == requested_epoch:
        return OffsetAndEpoch(log_end_offset, requested_epoch)  # the latest epoch ends at the log end
    higher = [e for e in entries if e.epoch > requested_epoch]
    if not higher:
        return None
    floor = [e for e in entries if e.epoch <= requested_epoch]
    if not floor:
        # older than every epoch here: its records are gone; it "ends" where the log's first epoch begins
        return OffsetAndEpoch(higher[0].start_offset, requested_epoch)
    return OffsetAndEpoch(higher[0].start_offset, floor[-1].epoch)


def _recover_snapshots(partition_log: Log) -> dict[OffsetAndEpoch, FileRawSnapshotReader | None]:
    """The whole snapshots in the log's directory from the log start on; partial ones, ones marked
    for deletion and ones below the log start are deleted (Kafka's ``recoverSnapshots``)."""
    to_retain: dict[OffsetAndEpoch, FileRawSnapshotReader | None] = {}
    to_delete = []
    for path in sorted(partition_log.dir.iterdir()):
        snapshot_path = snapshots.parse(path)
        if snapshot_path is None:
            continue
        if (
            snapshot_path.partial
            or snapshot_path.deleted
            or snapshot_path.snapshot_id.offset < partition_log.log_start_offset
        ):
            to_delete.append(snapshot_path)
        else:
            to_retain[snapshot_path.snapshot_id] = None
    # A log that starts past 0 had its prefix replaced by a snapshot: that snapshot must be here.
    if partition_log.log_start_offset > 0:
        latest = max(to_retain) if to_retain else None
        if latest is None or latest.offset < partition_log.log_start_offset:
            raise IllegalStateException(
                "Inconsistent snapshot state: there must be a snapshot at an offset larger then the current "
                f"log start offset {partition_log.log_start_offset}, but the latest snapshot is {latest}"
            )
    for snapshot_path in to_delete:
        snapshot_path.path.unlink(missing_ok=True)
        log.info("Deleted unneeded snapshot file with path %s", snapshot_path)
    log.info("Initialized snapshots with IDs %s from %s", sorted(to_retain), partition_log.dir)
    return to_retain
