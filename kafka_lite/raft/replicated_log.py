"""The log a Raft replica keeps: appends stamped with the leader's epoch, reads up to the high
watermark, truncation to where the leader's log agrees, and the snapshots that replace its prefix.

Mirrors: org.apache.kafka.raft.ReplicatedLog (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: Java's ``Optional`` is ``None``; ``topic_id`` and ``maybe_clean`` (size and time retention of
         snapshots) are left out: the quorum here keeps every snapshot until ``delete_before_snapshot``.
Labs:    lab 18, stage 2 (``ReplicatedLog.validate_offset_and_epoch``, ``truncate_to_end_offset``)

Two classes implement it: ``KafkaMetadataLog`` over the broker's own ``Log`` (segments on disk, the
leader epoch cache), and ``MockLog``, in memory, for the simulator. Everything the Raft client knows
about its log goes through these methods, so the two are interchangeable under it.

Kafka replicates a Raft log the way it replicates a partition: followers pull. A follower's Fetch
names its next offset and the epoch of its last entry; the leader judges that position with
``validate_offset_and_epoch``, the heart of Kafka's log reconciliation (Raft's AppendEntries
consistency check, asked by the follower instead of pushed by the leader), and a follower told that
its log parts from the leader's truncates with ``truncate_to_end_offset``.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.raft.isolation import Isolation
from kafka_lite.raft.log_append_info import LogAppendInfo
from kafka_lite.raft.log_fetch_info import LogFetchInfo
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raw_snapshot_reader import RawSnapshotReader
from kafka_lite.raft.raw_snapshot_writer import RawSnapshotWriter
from kafka_lite.raft.valid_offset_and_epoch import Kind, ValidOffsetAndEpoch

log = logging.getLogger(__name__)


class ReplicatedLog(ABC):
    # -- appending and reading ----------------------------------------------------------------------------

    @abstractmethod
    def append_as_leader(self, records: MemoryRecords, epoch: int) -> LogAppendInfo:
        """Append at the log end as the leader of ``epoch``: the batches carry their offsets, from the
        log end offset on, and ``epoch`` as their ``partitionLeaderEpoch`` (the Raft client's
        accumulator builds them so). Raises ``IllegalArgumentException`` for an empty record set."""

    @abstractmethod
    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        """Append batches copied from the leader: they keep their offsets and epochs, and the first
        must start at the log end offset. Raises ``IllegalArgumentException`` for an empty record set."""

    @abstractmethod
    def read(self, start_offset: int, isolation: Isolation) -> LogFetchInfo:
        """Batches from the one holding ``start_offset``, up to the high watermark (COMMITTED) or the
        log end (UNCOMMITTED). An offset outside [start_offset, end_offset] raises
        ``OffsetOutOfRangeException``."""

    # -- epochs and offsets -------------------------------------------------------------------------------

    @abstractmethod
    def last_fetched_epoch(self) -> int:
        """The epoch of the last entry; for a log with no entries, the latest snapshot's epoch, else 0.

        Epoch 0 is the "primordial epoch": no leader ever has it (epochs start at 1), so it can stand
        for "nothing yet" without an Optional everywhere."""

    @abstractmethod
    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """The largest epoch at or below ``epoch`` this log knows, and the offset where it ends."""

    @abstractmethod
    def end_offset(self) -> LogOffsetMetadata:
        """One past the last entry; the start offset when the log is empty."""

    @abstractmethod
    def start_offset(self) -> int:
        """The first entry's offset, or the end offset when there is none."""

    @abstractmethod
    def high_watermark(self) -> LogOffsetMetadata: ...

    @abstractmethod
    def update_high_watermark(self, offset_metadata: LogOffsetMetadata) -> None:
        """Move the high watermark (with the log's metadata for it, when the caller has it)."""

    @abstractmethod
    def initialize_leader_epoch(self, epoch: int) -> None:
        """Begin ``epoch`` at the log end offset: called on becoming leader, so that
        ``end_offset_for_epoch`` answers for every earlier epoch even before the first append."""

    # -- truncation ------------------------------------------------------------------------------------------

    @abstractmethod
    def truncate_to(self, offset: int) -> None:
        """Remove every entry at or above ``offset``. Committed entries are never removed: an offset
        below the high watermark raises ``IllegalArgumentException``."""

    @abstractmethod
    def truncate_to_latest_snapshot(self) -> bool:
        """Empty the log and start it at the latest snapshot's end offset, if that snapshot is ahead of
        the log (a follower that fetched a snapshot from the leader); True when it did."""

    # --8<-- [start:validate_offset_and_epoch]
    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        """Check a follower's fetch position, ``offset`` and the ``epoch`` of the entry before it,
        against this log: VALID, DIVERGING with where to truncate, or SNAPSHOT with what to fetch."""
        # BEGIN SOLUTION
        # For example:
        #     leader   epochs (1 @ 0) (3 @ 4)   end 7          follower  epochs (1 @ 0) (2 @ 4)   end 6
        #     follower fetches offset 6, last epoch 2
        #     leader's end_offset_for_epoch(2) = (4, 1): epoch 2 is not in its log; epoch 1 ends at 4
        #     answer DIVERGING (4, 1): the follower truncates to offset 4 and fetches again from there
        if self.start_offset() == 0 and offset == 0:
            # an empty follower against a log that still begins at 0: nothing can disagree yet
            return ValidOffsetAndEpoch.valid(OffsetAndEpoch(0, 0))
        earliest_snapshot_id = self.earliest_snapshot_id()
        if earliest_snapshot_id is not None and (
            # what the follower needs next is no longer in the log, only in the snapshot
            offset < self.start_offset()
            # the follower is at the log start, but its last entry is not the snapshot's
            or (offset == self.start_offset() and epoch != earliest_snapshot_id.epoch)
            # the follower's last epoch is older than anything the log still holds
            or epoch < earliest_snapshot_id.epoch
        ):
            latest_snapshot_id = self.latest_snapshot_id()
            if latest_snapshot_id is None:
                raise IllegalStateException(
                    f"Log start offset ({self.start_offset()}) is greater than zero but latest snapshot "
                    "was not found"
                )
            # the latest snapshot, not the earliest: the follower skips as far ahead as it can
            return ValidOffsetAndEpoch.snapshot(latest_snapshot_id)
        end_offset_and_epoch = self.end_offset_for_epoch(epoch)
        if end_offset_and_epoch.epoch != epoch or end_offset_and_epoch.offset < offset:
            # the follower has entries of an epoch this log never had, or more entries of that
            # epoch than this log: both logs agree only up to where this log's epoch ends
            return ValidOffsetAndEpoch.diverging(end_offset_and_epoch)
        return ValidOffsetAndEpoch.valid(OffsetAndEpoch(offset, epoch))
        # END SOLUTION

    # --8<-- [end:validate_offset_and_epoch]

    def truncate_to_end_offset(self, end_offset: OffsetAndEpoch) -> int:
        """The follower's side of a DIVERGING answer: truncate to where the leader's ``end_offset``
        (an offset and epoch) and this log agree, and return that offset."""
        # BEGIN SOLUTION
        leader_epoch = end_offset.epoch
        if leader_epoch == 0:
            truncation_offset = min(end_offset.offset, self.end_offset().offset)
        else:
            local_end_offset = self.end_offset_for_epoch(leader_epoch)
            if local_end_offset.epoch == leader_epoch:
                # both logs have the epoch: they agree up to where the shorter one ends it
                truncation_offset = min(local_end_offset.offset, end_offset.offset)
            else:
                # this log never had the leader's epoch: keep what precedes it here
                truncation_offset = local_end_offset.offset
        self.truncate_to(truncation_offset)
        return truncation_offset
        # END SOLUTION

    # -- flushing ---------------------------------------------------------------------------------------

    @abstractmethod
    def flush(self, force_flush_active_segment: bool = False) -> None:
        """Make the entries durable. A voter flushes before it answers a Fetch or a vote for them:
        Raft counts only entries that survive a crash."""

    @abstractmethod
    def last_flushed_offset(self) -> int: ...

    @abstractmethod
    def topic_partition(self) -> TopicPartition: ...

    # -- snapshots (KIP-630) -----------------------------------------------------------------------------

    def create_new_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter | None:
        """A writer for a snapshot of the state up to ``snapshot_id`` (end offset, epoch), checked
        against the log: None if it exists or is below the log start; ``IllegalArgumentException`` if
        it is above the high watermark or not a position in this log. The caller closes the writer.

        The same rules in every log (Kafka writes them out in each of its two): a snapshot holds
        committed state only, since a later leader may never have what lies above the high
        watermark, and it must end at a position this log has, or a follower loading it would hold
        state no leader wrote."""
        if snapshot_id.offset < self.start_offset():
            log.info(
                "Cannot create a snapshot with an id (%s) less than the log start offset (%s)",
                snapshot_id, self.start_offset(),
            )  # fmt: skip
            return None
        high_watermark_offset = self.high_watermark().offset
        if snapshot_id.offset > high_watermark_offset:
            raise IllegalArgumentException(
                f"Cannot create a snapshot with an id ({snapshot_id}) greater than the high-watermark "
                f"({high_watermark_offset})"
            )
        valid_offset_and_epoch = self.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
        if valid_offset_and_epoch.kind != Kind.VALID:
            raise IllegalArgumentException(
                f"Snapshot id ({snapshot_id}) is not valid according to the log: {valid_offset_and_epoch}"
            )
        return self.store_snapshot(snapshot_id)

    @abstractmethod
    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotWriter | None:
        """A writer for ``snapshot_id`` checked against nothing (a snapshot fetched from the leader,
        which is trusted); None if it exists."""

    @abstractmethod
    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> RawSnapshotReader | None: ...

    def latest_snapshot(self) -> RawSnapshotReader | None:
        snapshot_id = self.latest_snapshot_id()
        return None if snapshot_id is None else self.read_snapshot(snapshot_id)

    @abstractmethod
    def latest_snapshot_id(self) -> OffsetAndEpoch | None: ...

    @abstractmethod
    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        """The oldest snapshot: when the log start is past 0, the one that ends at the log start."""

    @abstractmethod
    def on_snapshot_frozen(self, snapshot_id: OffsetAndEpoch) -> None:
        """A writer froze ``snapshot_id``: the log now knows it."""

    @abstractmethod
    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        """Move the log start to ``snapshot_id``'s end offset, drop the entries below it and the older
        snapshots: the snapshot now stands for them. True when the log now starts at that snapshot
        (``KafkaMetadataLog``, as Kafka's: only when the start moved now; the simulator's ``MockLog``,
        as Kafka's: whenever it holds the snapshot, its start already there or not)."""

    def close(self) -> None:  # noqa: B027 - Kafka's default close does nothing
        pass
