"""The simulation's state machine: a counter whose every increment is one record.

Mirrors: org.apache.kafka.raft.ReplicatedCounter
         (raft/src/main/java/org/apache/kafka/raft/ReplicatedCounter.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the snapshot interval is a constructor argument (Kafka's is fixed at 10 records), and
         ``snapshots_loaded`` counts every load where ``handle_snapshot_calls`` resets on each leader
         change, as Kafka's does.

Why a counter: the leader appends 1, 2, 3, ... so every committed record says which one must come
next. A node that applies 5 after 3 has lost a committed record, and one that applies 3 twice has
committed a record twice: the counter checks this on every commit, on every node.

Leadership is claimed from ``handle_leader_change``, which fires for this node's own election only
once the listener has applied everything before the epoch's start: so ``committed`` is the whole
committed state, and the next value is ``committed + 1``.
"""

from __future__ import annotations

import logging
import struct

from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_client import Batch, LeaderAndEpoch, Listener, NotLeaderException, RaftClient
from kafka_lite.raft.records_snapshot_reader import RecordsSnapshotReader

log = logging.getLogger(__name__)


class CounterError(AssertionError):
    """A committed value out of sequence: a committed record was lost or repeated."""

    def __init__(self, message: str, node_id: int) -> None:
        super().__init__(message)
        self.node_ids = [node_id]


class IntSerde:
    """Records are big-endian int32s, as Kafka's IntSerde writes them."""

    def serialize(self, record: int) -> bytes:
        return struct.pack(">i", record)

    def deserialize(self, data: bytes) -> int:
        return struct.unpack(">i", bytes(data))[0]


class ReplicatedCounter(Listener):
    def __init__(self, node_id: int, client: RaftClient, snapshot_delay_in_records: int = 10) -> None:
        self.node_id = node_id
        self._client = client
        self._snapshot_delay_in_records = snapshot_delay_in_records
        self.committed = 0
        self._uncommitted = 0
        self._last_offset_snapshotted = -1
        self.snapshots_loaded = 0
        self._claimed_epoch: int | None = None
        self._handle_snapshot_calls = 0

    def is_writable(self) -> bool:
        return self._claimed_epoch is not None

    def increment(self) -> None:
        if self._claimed_epoch is None:
            raise CounterError("Counter is not currently writable", self.node_id)
        epoch = self._claimed_epoch
        self._uncommitted += 1
        try:
            offset = self._client.schedule_append(epoch, [self._uncommitted])
            log.debug(
                "Scheduled append of record %d with epoch %d at offset %d", self._uncommitted, epoch, offset
            )
        except NotLeaderException:
            # The node lost the leadership between the leader change and this append: step down
            # for good in this epoch rather than keep trying.
            log.info("Appending failed, transition to resigned")
            self._client.resign(epoch)

    def handle_commit(self, batches: list[Batch]) -> None:
        last_committed_offset, last_committed_epoch, last_committed_timestamp = -1, 0, -1
        for batch in batches:
            for next_committed in batch.records:
                if next_committed != self.committed + 1:
                    raise CounterError(
                        f"Expected next committed value to be {self.committed + 1}, but instead found "
                        f"{next_committed} on node {self.node_id}",
                        self.node_id,
                    )
                self.committed = next_committed
            last_committed_offset = batch.last_offset
            last_committed_epoch = batch.epoch
            last_committed_timestamp = batch.append_timestamp
        if self._last_offset_snapshotted + self._snapshot_delay_in_records < last_committed_offset:
            self._snapshot(
                OffsetAndEpoch(last_committed_offset + 1, last_committed_epoch), last_committed_timestamp
            )

    def _snapshot(self, snapshot_id: OffsetAndEpoch, last_contained_log_time: int) -> None:
        log.debug("Generating new snapshot %s since the previous one includes %d", snapshot_id,
                  self._last_offset_snapshotted)  # fmt: skip
        snapshot = self._client.create_snapshot(snapshot_id, last_contained_log_time)
        if snapshot is not None:
            with snapshot:
                snapshot.append([self.committed])
                snapshot.freeze()
        # None: that snapshot exists already (this node loaded it or wrote it before a restart).
        self._last_offset_snapshotted = snapshot_id.offset - 1

    def handle_snapshot(self, reader: RecordsSnapshotReader) -> None:
        log.debug("Loading snapshot %s", reader.snapshot_id())
        for batch in reader:
            if len(batch.records) != 1:
                raise CounterError(
                    f"Expected the snapshot at {reader.snapshot_id()} to only contain one record {batch.records}",
                    self.node_id,
                )
            for value in batch.records:
                self.committed = value
                self._uncommitted = value
        self._last_offset_snapshotted = reader.last_contained_log_offset()
        self._handle_snapshot_calls += 1
        self.snapshots_loaded += 1
        log.debug("Finished loading snapshot. Set value: %d", self.committed)

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        if leader.is_leader(self.node_id):
            # Everything committed before our epoch is applied: continue the sequence from there.
            self._uncommitted = self.committed
            self._claimed_epoch = leader.epoch
        else:
            self._uncommitted = -1
            self._claimed_epoch = None
        self._handle_snapshot_calls = 0

    def handle_snapshot_calls(self) -> int:
        return self._handle_snapshot_calls
