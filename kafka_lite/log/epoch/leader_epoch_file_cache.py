"""A log's leader epochs: which epoch began at which offset, kept in memory and in a checkpoint file.

Mirrors: kafka.server.epoch.LeaderEpochFileCache
         (core/src/main/scala/kafka/server/epoch/LeaderEpochFileCache.scala, Kafka 0.11.0)
Book:    chapter 6, 6.2 (after a leader change a follower truncates; 0.10, which the book describes,
         truncates to its high watermark, which can lose or diverge records: KIP-101 gives the
         follower the leader's answer instead)
Differs: one plain lock where Kafka has a read-write lock: every method is a few list operations,
         and the writers flush a small file.

The controller gives each partition a new leader epoch with each new leader. The leader stamps
its epoch into every batch it appends (``partitionLeaderEpoch`` in the v2 batch header) and
records here the first offset of each epoch; a follower records the epochs of the batches it
copies. So each replica knows, for each epoch, where it began, and the end of an epoch is where
the next one begins.

That is what a follower needs after a leader change. Instead of truncating to its high watermark,
it asks the new leader (OffsetsForLeaderEpoch) "where does my latest epoch end in your log?", and
truncates to that offset: everything it holds up to there is what the leader holds.

    entries  (0, 0) (2, 120) (5, 300)        LEO 420
    end_offset_for(0) = 120      the start of the next epoch (2)
    end_offset_for(1) = 120      no record under epoch 1 here: it ends where 0 ended
    end_offset_for(5) = 420      the latest epoch ends at the log end offset
    end_offset_for(7) = -1       unknown (UNDEFINED_EPOCH_OFFSET), as is any epoch before the first
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.epoch.leader_epoch_checkpoint_file import EpochEntry, LeaderEpochCheckpointFile

log = logging.getLogger(__name__)

# Kafka's EpochEndOffset.UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET.
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochFileCache:
    """The ``(epoch, start_offset)`` entries of one partition's replica, in increasing order of both.

    ``leo`` gives the log end offset, the end of the latest epoch. Every change is flushed to the
    checkpoint at once (a few lines, and epochs change only when leaders do), so after a crash the
    file holds at least what the log does; ``Log`` trims it to the log when it opens.
    """

    def __init__(
        self, topic_partition: TopicPartition, leo: Callable[[], int], checkpoint: LeaderEpochCheckpointFile
    ) -> None:
        self.topic_partition = topic_partition
        self.leo = leo
        self.checkpoint = checkpoint
        self._lock = threading.Lock()
        self._epochs: list[EpochEntry] = checkpoint.read()

    def assign(self, epoch: int, offset: int) -> None:
        """Record that ``epoch`` begins at ``offset``, if it is newer than the latest epoch and does not
        start before it; otherwise keep the entries as they are.

        An epoch is assigned once: the leader calls this on every append, and only the first append of
        an epoch adds an entry. As in Kafka, a new epoch may start at the latest entry's offset (the
        previous epoch then appended nothing).
        """
        if epoch < 0:
            raise ValueError(
                f"Received a PartitionLeaderEpoch assignment for an epoch < 0 ({epoch}) for partition "
                f"{self._name}: batches with no epoch (-1) assign nothing."
            )
        with self._lock:
            if epoch > self._latest_epoch() and offset >= self._latest_offset():
                self._epochs.append(EpochEntry(epoch, offset))
                self._flush()
                log.info(
                    "Updated PartitionLeaderEpoch of %s: epoch %d starts at offset %d; the cache now "
                    "holds %d entries.", self._name, epoch, offset, len(self._epochs),
                )  # fmt: skip
            elif epoch < self._latest_epoch():
                log.warning(
                    "Received a PartitionLeaderEpoch assignment for an epoch < latestEpoch. This implies "
                    "messages have arrived out of order. New: {epoch:%d, offset:%d}, Current: {epoch:%d, "
                    "offset:%d} for Partition: %s",
                    epoch, offset, self._latest_epoch(), self._latest_offset(), self._name,
                )  # fmt: skip
            elif offset < self._latest_offset():
                log.warning(
                    "Received a PartitionLeaderEpoch assignment for an offset < latest offset for the most "
                    "recent, stored PartitionLeaderEpoch. This implies messages have arrived out of order. "
                    "New: {epoch:%d, offset:%d}, Current: {epoch:%d, offset:%d} for Partition: %s",
                    epoch, offset, self._latest_epoch(), self._latest_offset(), self._name,
                )  # fmt: skip

    def latest_epoch(self) -> int:
        """The latest epoch that has records here, or ``UNDEFINED_EPOCH`` (-1) when there is none."""
        with self._lock:
            return self._latest_epoch()

    # --8<-- [start:end_offset_for]
    def end_offset_for(self, requested_epoch: int) -> int:
        """Where ``requested_epoch`` ends: the start offset of the first epoch after it, or the log end
        offset when it is the latest epoch; ``UNDEFINED_EPOCH_OFFSET`` (-1) for an epoch newer than
        the latest, or older than the first entry (its records are gone, or were never here)."""
        with self._lock:
            # BEGIN SOLUTION
            if requested_epoch == self._latest_epoch():
                return self.leo()
            subsequent = [e for e in self._epochs if e.epoch > requested_epoch]
            if not subsequent or requested_epoch < self._epochs[0].epoch:
                return UNDEFINED_EPOCH_OFFSET
            return subsequent[0].start_offset
            # END SOLUTION

    # --8<-- [end:end_offset_for]

    def clear_and_flush_latest(self, offset: int) -> None:
        """Drop the entries that start at or after ``offset`` (the log was truncated to ``offset``)."""
        with self._lock:
            if 0 <= offset <= self._latest_offset():
                before = len(self._epochs)
                self._epochs = [e for e in self._epochs if e.start_offset < offset]
                self._flush()
                log.info(
                    "Cleared %d latest entries from the epoch cache of %s at offset %d, leaving %d",
                    before - len(self._epochs), self._name, offset, len(self._epochs),
                )  # fmt: skip

    def clear_and_flush_earliest(self, offset: int) -> None:
        """Drop the entries before ``offset`` (the new log start offset), keeping the epoch that covers
        ``offset``: the last dropped entry moves up to start at ``offset``, unless an entry starts
        exactly there. So ``clear_and_flush_earliest(6)`` keeps an entry at offset 6."""
        with self._lock:
            if offset >= 0 and self._earliest_offset() < offset:
                earliest = [e for e in self._epochs if e.start_offset < offset]
                if earliest:
                    self._epochs = [e for e in self._epochs if e.start_offset >= offset]
                    # The epoch of the records at ``offset`` began before it: it now begins at ``offset``.
                    if not self._epochs or offset < self._epochs[0].start_offset:
                        self._epochs.insert(0, EpochEntry(earliest[-1].epoch, offset))
                    self._flush()
                    log.info(
                        "Cleared earliest entries from the epoch cache of %s below offset %d, leaving %d",
                        self._name, offset, len(self._epochs),
                    )  # fmt: skip

    def clear_and_flush(self) -> None:
        """Drop every entry, in memory and in the file (the log was emptied)."""
        with self._lock:
            self._epochs = []
            self._flush()

    def clear(self) -> None:
        """Drop every entry in memory only (the log and its directory are being deleted)."""
        with self._lock:
            self._epochs = []

    def epoch_entries(self) -> list[EpochEntry]:
        """A copy of the entries, oldest first."""
        with self._lock:
            return list(self._epochs)

    # -- helpers, called with the lock held ---------------------------------------------------------------

    @property
    def _name(self) -> str:
        return f"{self.topic_partition[0]}-{self.topic_partition[1]}"

    def _latest_epoch(self) -> int:
        return self._epochs[-1].epoch if self._epochs else UNDEFINED_EPOCH

    def _latest_offset(self) -> int:
        return self._epochs[-1].start_offset if self._epochs else -1

    def _earliest_offset(self) -> int:
        return self._epochs[0].start_offset if self._epochs else -1

    def _flush(self) -> None:
        self.checkpoint.write(self._epochs)

    def __repr__(self) -> str:
        return f"LeaderEpochFileCache({self._name}, {self._epochs})"
