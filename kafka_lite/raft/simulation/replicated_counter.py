"""The simulation's state machine: a counter whose every increment is one record.

Mirrors: org.apache.kafka.raft.ReplicatedCounter
         (raft/src/main/java/org/apache/kafka/raft/ReplicatedCounter.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no snapshots (the client has no createSnapshot here), so ``handle_snapshot`` only counts.

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

from kafka_lite.raft.raft_client import Batch, LeaderAndEpoch, Listener, NotLeaderException, RaftClient

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
    def __init__(self, node_id: int, client: RaftClient) -> None:
        self.node_id = node_id
        self._client = client
        self.committed = 0
        self._uncommitted = 0
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
        for batch in batches:
            for next_committed in batch.records:
                if next_committed != self.committed + 1:
                    raise CounterError(
                        f"Expected next committed value to be {self.committed + 1}, but instead found "
                        f"{next_committed} on node {self.node_id}",
                        self.node_id,
                    )
                self.committed = next_committed

    def handle_snapshot(self, reader) -> None:
        self._handle_snapshot_calls += 1

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
