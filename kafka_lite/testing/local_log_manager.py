"""A Raft client with no network: several controllers share one in-memory log, and the test decides
who leads and when records commit.

Mirrors: org.apache.kafka.metalog.LocalLogManager and LocalLogManagerTestEnv
         (metadata/src/test/java/org/apache/kafka/metalog/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: nothing runs by itself: ``poll()`` delivers to the listeners on the caller's thread, where
         Kafka's manager has an event queue of its own. Leadership is not a batch in the log but the
         shared state the listeners are told about once they have read every committed batch. An
         election drops the uncommitted tail (the new leader never received it, which Raft allows
         for entries no majority holds); Kafka's shared log keeps every batch.

The quorum controller sees only ``RaftClient``: it appends in its epoch and hears back through its
listener's ``handle_commit``, ``handle_snapshot`` and ``handle_leader_change``. Here the quorum is a
``SharedLogData`` the test drives:

* ``elect_leader(node_id)`` starts a new epoch led by that node;
* appends are committed at once, or, after ``set_auto_commit(False)``, only when ``commit_up_to`` or
  ``commit_all`` says (so a test can look at the controller between append and commit);
* a frozen snapshot compacts the log before it, so a listener that starts later loads the snapshot
  and then reads only the tail, as a Raft follower behind the log start does.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.time import Time
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_client import Batch, LeaderAndEpoch, Listener, NotLeaderException, RaftClient


@dataclass(frozen=True)
class LocalSnapshot:
    snapshot_id: OffsetAndEpoch
    last_contained_log_timestamp: int
    batches: tuple[tuple[Any, ...], ...]


class LocalSnapshotReader:
    """A frozen snapshot as the listener loads it (the RecordsSnapshotReader interface)."""

    def __init__(self, snapshot: LocalSnapshot) -> None:
        self._snapshot = snapshot

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot.snapshot_id

    def last_contained_log_offset(self) -> int:
        return self._snapshot.snapshot_id.offset - 1

    def last_contained_log_epoch(self) -> int:
        return self._snapshot.snapshot_id.epoch

    def last_contained_log_timestamp(self) -> int:
        return self._snapshot.last_contained_log_timestamp

    def __iter__(self) -> Iterator[Batch]:
        offset = 0
        for records in self._snapshot.batches:
            yield Batch(offset, self.last_contained_log_epoch(), self.last_contained_log_timestamp(),
                        offset + len(records) - 1, list(records))  # fmt: skip
            offset += len(records)

    def close(self) -> None:
        pass


class LocalSnapshotWriter:
    """A snapshot being written (the RecordsSnapshotWriter interface): visible once frozen."""

    def __init__(
        self, shared: SharedLogData, snapshot_id: OffsetAndEpoch, last_contained_log_time: int
    ) -> None:
        self._shared = shared
        self._snapshot_id = snapshot_id
        self._last_contained_log_time = last_contained_log_time
        self._batches: list[tuple[Any, ...]] = []
        self._frozen = False

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def last_contained_log_offset(self) -> int:
        return self._snapshot_id.offset - 1

    def last_contained_log_epoch(self) -> int:
        return self._snapshot_id.epoch

    def is_frozen(self) -> bool:
        return self._frozen

    def append(self, records: list[Any]) -> None:
        if self._frozen:
            raise IllegalStateException(
                f"Append not supported. Snapshot is already frozen: id = '{self._snapshot_id}'."
            )
        if records:
            self._batches.append(tuple(records))

    def freeze(self) -> None:
        self._frozen = True
        self._shared.add_snapshot(
            LocalSnapshot(self._snapshot_id, self._last_contained_log_time, tuple(self._batches))
        )

    def close(self) -> None:
        pass


@dataclass
class _ListenerData:
    listener: Listener
    offset: int = -1  # the last offset delivered
    leader: LeaderAndEpoch = field(default_factory=lambda: LeaderAndEpoch(None, 0))


class SharedLogData:
    """The one log every LocalLogManager reads and the leader appends to."""

    def __init__(self, time: Time) -> None:
        self.time = time
        self.batches: list[Batch] = []  # in offset order, from the log start
        self.log_start_offset = 0
        self.end_offset = 0  # the next offset to assign
        self.high_watermark = 0  # offsets below it are committed
        self.leader = LeaderAndEpoch(None, 0)
        self.auto_commit = True
        self.snapshots: dict[OffsetAndEpoch, LocalSnapshot] = {}
        self.managers: list[LocalLogManager] = []

    # -- what the test does -----------------------------------------------------------------------------------

    def elect_leader(self, node_id: int | None) -> LeaderAndEpoch:
        """A new epoch led by ``node_id`` (None: no leader). The uncommitted tail is dropped."""
        self._truncate_uncommitted()
        self.leader = LeaderAndEpoch(node_id, self.leader.epoch + 1)
        return self.leader

    def set_auto_commit(self, auto_commit: bool) -> None:
        self.auto_commit = auto_commit
        if auto_commit:
            self.commit_all()

    def commit_up_to(self, offset: int) -> None:
        """Commit every batch whose last offset is at most ``offset`` (a batch commits whole)."""
        for batch in self.batches:
            if batch.last_offset <= offset:
                self.high_watermark = max(self.high_watermark, batch.last_offset + 1)

    def commit_all(self) -> None:
        self.high_watermark = self.end_offset

    def poll_all(self) -> int:
        """Deliver to every manager's listeners what they have not seen; how many callbacks ran."""
        return sum(manager.poll() for manager in list(self.managers))

    def latest_snapshot(self) -> LocalSnapshot | None:
        return self.snapshots[max(self.snapshots)] if self.snapshots else None

    def entries(self, start: int = 0) -> list[tuple[int, int, Any]]:
        """``(offset, epoch, record)`` of each record the log holds from offset ``start``; those below
        ``high_watermark`` are committed."""
        return [
            (batch.base_offset + i, batch.epoch, record.message)
            for batch in self.batches
            for i, record in enumerate(batch.records)
            if batch.base_offset + i >= start
        ]

    # -- what the managers do ---------------------------------------------------------------------------------

    def append(self, node_id: int, epoch: int, records: list[Any]) -> int:
        if not self.leader.is_leader(node_id) or epoch != self.leader.epoch:
            raise NotLeaderException(
                f"Append failed: node {node_id} is not the leader of epoch {epoch} (the leader is {self.leader})"
            )
        base_offset = self.end_offset
        last_offset = base_offset + len(records) - 1
        self.batches.append(Batch(base_offset, epoch, self.time.milliseconds(), last_offset, list(records)))
        self.end_offset = last_offset + 1
        if self.auto_commit:
            self.commit_all()
        return last_offset

    def add_snapshot(self, snapshot: LocalSnapshot) -> None:
        if snapshot.snapshot_id.offset > self.high_watermark:
            raise IllegalStateException(
                f"Snapshot {snapshot.snapshot_id} is above the high watermark {self.high_watermark}"
            )
        self.snapshots[snapshot.snapshot_id] = snapshot
        # Compact: the snapshot stands for everything before it.
        self.batches = [b for b in self.batches if b.last_offset >= snapshot.snapshot_id.offset]
        self.log_start_offset = max(self.log_start_offset, snapshot.snapshot_id.offset)

    def _truncate_uncommitted(self) -> None:
        self.batches = [b for b in self.batches if b.last_offset < self.high_watermark]
        self.end_offset = self.high_watermark


class LocalLogManager(RaftClient):
    def __init__(self, node_id: int, shared: SharedLogData) -> None:
        self._node_id = node_id
        self._shared = shared
        self._listeners: list[_ListenerData] = []
        self._shut_down = False
        shared.managers.append(self)

    def initialize(self) -> None:
        pass

    def register(self, listener: Listener) -> None:
        self._listeners.append(_ListenerData(listener))

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return self._shared.leader

    def high_watermark(self) -> int:
        return self._shared.high_watermark

    def schedule_append(self, epoch: int, records: list[Any]) -> int:
        return self._shared.append(self._node_id, epoch, records)

    def schedule_atomic_append(self, epoch: int, records: list[Any]) -> int:
        return self._shared.append(self._node_id, epoch, records)  # every batch here is atomic

    def resign(self, epoch: int) -> None:
        """Step down from ``epoch``: the next epoch has no leader (as after a Raft resignation,
        until an election). An older epoch is ignored, as KafkaRaftClient ignores it."""
        if epoch == self._shared.leader.epoch and self._shared.leader.is_leader(self._node_id):
            self._shared.elect_leader(None)

    def create_snapshot(
        self, snapshot_id: OffsetAndEpoch, last_contained_log_time: int
    ) -> LocalSnapshotWriter | None:
        if snapshot_id in self._shared.snapshots:
            return None
        return LocalSnapshotWriter(self._shared, snapshot_id, last_contained_log_time)

    def shutdown(self, timeout_ms: int) -> Future:
        self._shut_down = True
        for data in self._listeners:
            data.listener.begin_shutdown()
        future: Future = Future()
        future.set_result(None)
        return future

    # --8<-- [start:poll]
    def poll(self) -> int:
        """Deliver to each listener, in Raft's order: a snapshot if it is behind the log start, the
        committed batches it has not seen, then the leader if it changed. The count of callbacks."""
        if self._shut_down:
            return 0
        calls = 0
        shared = self._shared
        for data in self._listeners:
            if data.offset + 1 < shared.log_start_offset:
                snapshot = shared.latest_snapshot()
                data.listener.handle_snapshot(LocalSnapshotReader(snapshot))
                data.offset = snapshot.snapshot_id.offset - 1
                calls += 1
            new = [b for b in shared.batches if data.offset < b.last_offset < shared.high_watermark]
            if new:
                data.listener.handle_commit(new)
                data.offset = new[-1].last_offset
                calls += 1
            if data.leader != shared.leader:
                data.leader = shared.leader
                data.listener.handle_leader_change(shared.leader)
                calls += 1
        return calls

    # --8<-- [end:poll]
