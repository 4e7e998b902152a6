"""What must hold in every state a simulated quorum passes through, and what the run must end with.

Mirrors: org.apache.kafka.raft.RaftEventSimulationTest (MonotonicHighWatermark, MonotonicEpoch,
         MajorityReachedHighWatermark, SingleLeader, SnapshotAtLogStart, LeaderNeverLoadSnapshot and
         ConsistentCommittedData)
         (raft/src/test/java/org/apache/kafka/raft/RaftEventSimulationTest.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Each is one of Raft's safety properties, read off the nodes from outside:

* ``SingleLeader``: at most one leader per epoch (the paper's Election Safety), read from what each
  node has stored, since a stored election is what a node acts on after a restart;
* ``MonotonicEpoch``: a node's stored epoch never goes back, and the running client agrees with it;
* ``MonotonicHighWatermark``: the leader's high watermark never goes back: committed stays committed;
* ``MajorityReachedHighWatermark``: a majority of voters' logs reach the leader's high watermark
  (Raft's definition of committed, checked against the logs rather than the leader's bookkeeping);
* ``SnapshotAtLogStart``: the log starts where its earliest snapshot ends;
* ``LeaderNeverLoadSnapshot``: a node whose state machine may write (it leads) has loaded no snapshot
  since it took the lead: a leader's log holds everything committed, so it never falls behind its
  own log start;
* ``ConsistentCommittedData`` (checked when a run ends): every offset below a node's high watermark
  holds the same value on every node that has it (the paper's State Machine Safety);
* ``CommittedValuesKept`` (the churn check of MIT's 6.5840 Raft lab, not Kafka's): every counter
  value a state machine was seen to apply is, at the end, in every node's log, in order.

A broken one raises ``SimulationFailure`` naming itself, the seed, the simulated time and the nodes.
"""

from __future__ import annotations

import struct

from kafka_lite.common.record import MemoryRecords
from kafka_lite.raft.isolation import Isolation
from kafka_lite.raft.kafka_metadata_log import KafkaMetadataLog
from kafka_lite.raft.simulation.cluster import Cluster, RaftNode
from kafka_lite.raft.simulation.event_scheduler import EventScheduler
from kafka_lite.raft.simulation.mock_log import MockLog
from kafka_lite.raft.valid_offset_and_epoch import Kind


class MonotonicHighWatermark:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._high_watermark = 0
        self._epoch = 0

    def verify(self, scheduler: EventScheduler) -> None:
        leader = self._cluster.leader_node()
        new_high_watermark = self._cluster.leader_high_watermark()
        if leader is None or new_high_watermark is None:
            return
        epoch = leader.client.quorum().epoch()
        if epoch < self._epoch:
            # A deposed leader cut off from the quorum still believes it leads; when the current
            # leader dies, it is the highest-epoch leader left running. Its stale high watermark is
            # not the quorum's (Kafka's scenarios never leave one running beside a crash; churn does).
            return
        self._epoch = epoch
        old_high_watermark, self._high_watermark = self._high_watermark, new_high_watermark
        if new_high_watermark < old_high_watermark:
            raise scheduler.fail(
                "MonotonicHighWatermark", [leader.node_id],
                f"Non-monotonic update of high watermark detected: {old_high_watermark} -> {new_high_watermark}",
            )  # fmt: skip


class MonotonicEpoch:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._node_epochs = dict.fromkeys(cluster.nodes, 0)

    def verify(self, scheduler: EventScheduler) -> None:
        for node_id, state in self._cluster.nodes.items():
            election = state.store.read_election_state()
            if election is None:
                continue
            old_epoch = self._node_epochs[node_id]
            if old_epoch > election.epoch:
                raise scheduler.fail(
                    "MonotonicEpoch", [node_id],
                    f"Non-monotonic update of epoch detected on node {node_id}: {old_epoch} -> {election.epoch}",
                )  # fmt: skip
            node = self._cluster.running.get(node_id)
            if node is not None and node.client.quorum().epoch() != election.epoch:
                raise scheduler.fail(
                    "MonotonicEpoch", [node_id],
                    f"node {node_id} runs in epoch {node.client.quorum().epoch()} but stored epoch "
                    f"{election.epoch}",
                )  # fmt: skip
            self._node_epochs[node_id] = election.epoch


class MajorityReachedHighWatermark:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    def verify(self, scheduler: EventScheduler) -> None:
        high_watermark = self._cluster.leader_high_watermark()
        if high_watermark is None:
            return
        reached = [
            node_id for node_id, state in self._cluster.nodes.items()
            if node_id in self._cluster.voters and state.log.end_offset().offset >= high_watermark
        ]  # fmt: skip
        if len(reached) < self._cluster.majority_size():
            leader = self._cluster.leader_node()
            raise scheduler.fail(
                "MajorityReachedHighWatermark", [leader.node_id, *reached],
                f"Insufficient nodes have reached current high watermark {high_watermark}: only {reached} "
                f"of voters {sorted(self._cluster.voters)}",
            )  # fmt: skip


class SingleLeader:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._epoch = 0
        self._leader_id: int | None = None

    def verify(self, scheduler: EventScheduler) -> None:
        for node_id, state in self._cluster.nodes.items():
            election = state.store.read_election_state()
            if election is None or election.epoch < self._epoch or not election.has_leader():
                continue
            if election.epoch == self._epoch and self._leader_id is not None:
                if election.leader_id() != self._leader_id:
                    raise scheduler.fail(
                        "SingleLeader", [node_id, self._leader_id, election.leader_id()],
                        f"two leaders in epoch {self._epoch}: {self._leader_id} and {election.leader_id()} "
                        f"(stored by node {node_id})",
                    )  # fmt: skip
            else:
                self._epoch = election.epoch
                self._leader_id = election.leader_id()


class SnapshotAtLogStart:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    def verify(self, scheduler: EventScheduler) -> None:
        for node_id, state in self._cluster.nodes.items():
            log = state.log
            snapshot_id = log.earliest_snapshot_id()
            if snapshot_id is None:
                continue
            log_start_offset = log.start_offset()
            if log_start_offset > snapshot_id.offset:
                raise scheduler.fail(
                    "SnapshotAtLogStart", [node_id],
                    f"invalid log start offset ({log_start_offset}) and snapshotId offset ({snapshot_id.offset})",
                )  # fmt: skip
            valid = log.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
            if valid.kind is not Kind.VALID or valid.offset_and_epoch != snapshot_id:
                raise scheduler.fail("SnapshotAtLogStart", [node_id], f"invalid leader epoch cache: {valid}")
            if log_start_offset > 0 and log_start_offset != snapshot_id.offset:
                raise scheduler.fail(
                    "SnapshotAtLogStart", [node_id],
                    f"missing snapshot at log start offset {log_start_offset} (earliest is {snapshot_id})",
                )  # fmt: skip


class LeaderNeverLoadSnapshot:
    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    def verify(self, scheduler: EventScheduler) -> None:
        for node_id in sorted(self._cluster.running):
            counter = self._cluster.running[node_id].counter
            # The counter resets its count on every leader change, so a writable counter with a
            # load counted loaded it while leading.
            if counter.is_writable() and counter.handle_snapshot_calls() != 0:
                raise scheduler.fail(
                    "LeaderNeverLoadSnapshot", [node_id],
                    f"node {node_id} leads and loaded {counter.handle_snapshot_calls()} snapshot(s) in its epoch",
                )  # fmt: skip


class ConsistentCommittedData:
    """Every value below a node's high watermark, remembered across checks and compared on all nodes."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._committed: dict[int, tuple[int, int]] = {}  # offset -> (value, the node it was first seen on)

    def validate(self, scheduler: EventScheduler) -> None:
        for node_id in sorted(self._cluster.running):
            self._check(scheduler, self._cluster.running[node_id])

    def _check(self, scheduler: EventScheduler, node: RaftNode) -> None:
        high_watermark = node.client.quorum().high_watermark()
        if high_watermark is None:
            return  # nothing is known committed on this node yet
        for offset, value in _committed_records(node.log, high_watermark.offset):
            first_value, first_node = self._committed.setdefault(offset, (value, node.node_id))
            if value != first_value:
                raise scheduler.fail(
                    "ConsistentCommittedData", [first_node, node.node_id],
                    f"Committed sequence at offset {offset} changed on node {node.node_id}: "
                    f"{first_value} (node {first_node}) -> {value}",
                )  # fmt: skip


class CommittedValuesKept:
    """What the state machines applied, sampled during the run, checked against the logs at the end.

    ``record`` notes the highest counter value any running node has applied; ``verify_kept`` reads
    each node's committed records and asks for the counter's sequence without a gap or a repeat,
    reaching every value seen. Where ConsistentCommittedData compares logs with logs, this compares
    the logs with what the application was told was committed: a value applied and later lost from
    every log is caught here even if all the logs agree."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self.max_applied = 0
        self._applied_by = -1

    def record(self) -> None:
        for node_id in sorted(self._cluster.running):
            applied = self._cluster.running[node_id].counter.committed
            if applied > self.max_applied:
                self.max_applied, self._applied_by = applied, node_id

    def verify_kept(self, scheduler: EventScheduler, max_applied: int) -> None:
        """Every node's committed log holds the counter's sequence up to ``max_applied`` at least
        (the highest value recorded when the wait for the end began)."""
        for node_id in sorted(self._cluster.running):
            node = self._cluster.running[node_id]
            values = _committed_values(node)
            # Below the log start the values are in the snapshot; the log must go on from there.
            first = values[0] if values else None
            expected_first = 1 if node.log.start_offset() == 0 else first
            if values and (first != expected_first or values != list(range(first, first + len(values)))):
                raise scheduler.fail(
                    "CommittedValuesKept", [node_id],
                    f"the committed values on node {node_id} are not the counter's sequence: {values[:20]}",
                )  # fmt: skip
            last = values[-1] if values else node.counter.committed
            if last < max_applied:
                raise scheduler.fail(
                    "CommittedValuesKept", [node_id, self._applied_by],
                    f"value {max_applied} was applied by node {self._applied_by} as committed, but the "
                    f"log of node {node_id} ends its committed values at {last}",
                )  # fmt: skip


def _committed_values(node: RaftNode) -> list[int]:
    high_watermark = node.client.quorum().high_watermark()
    if high_watermark is None:
        return []
    return [value for _, value in _committed_records(node.log, high_watermark.offset)]


def _committed_records(log: MockLog | KafkaMetadataLog, high_watermark: int) -> list[tuple[int, int]]:
    """(offset, counter value) of each state record from the log start up to ``high_watermark``:
    MockLog hands its batches over directly; a KafkaMetadataLog on disk is read as a follower
    reads it, one fetch after another."""
    found = []
    if isinstance(log, MockLog):
        batches = [MemoryRecords(b.data) for b in log.read_batches(log.start_offset(), high_watermark)
                   if not b.is_control_batch]  # fmt: skip
        records = (r for records in batches for r in records.records())
    else:
        records = _read_all(log, high_watermark)
    for record in records:
        if record.offset < high_watermark:
            found.append((record.offset, struct.unpack(">i", bytes(record.value))[0]))
    return found


def _read_all(log, high_watermark: int):
    offset = log.start_offset()
    while offset < high_watermark:
        info = log.read(offset, Isolation.UNCOMMITTED)
        batches = list(MemoryRecords(info.records.read_bytes()).batches())
        if not batches:
            return
        for batch in batches:
            if batch.last_offset >= high_watermark:
                return  # a batch not wholly committed, left out as MockLog's read_batches leaves it
            if not batch.is_control_batch:
                yield from batch
            offset = batch.last_offset + 1
