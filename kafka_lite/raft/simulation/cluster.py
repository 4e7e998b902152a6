"""The simulated cluster: each node's persistent state, the running Raft clients, kill and restart.

Mirrors: org.apache.kafka.raft.RaftEventSimulationTest (Cluster, PersistentState and RaftNode)
         (raft/src/test/java/org/apache/kafka/raft/RaftEventSimulationTest.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: each node draws from its own ``random.Random``, derived from the seed, the node id and how
         often the node has started, where Kafka shares one.

What a node keeps across a crash is its ``PersistentState``: the MockLog and the quorum state
store. ``kill`` drops the running client and nothing else; ``start`` builds a fresh client over the
same persistent state after ``MockLog.reopen``, which loses every entry not flushed, as a power cut
would. ``kill_and_delete_persistent_state`` is the disk lost with the machine. Given a directory, the nodes
keep their state on disk instead (``DiskPersistentState``: KafkaMetadataLog and the quorum-state
file), as Kafka's simulation can.

Nodes ``0 .. num_voters - 1`` are the voters; the ids after them are observers, as in Kafka's
simulation: an observer is configured with the same voter set, is in none of it, and so never
stands for election and never counts toward the high watermark. It finds the leader by fetching
from a voter and then replicates from the leader like a follower, which is how a broker that is not
a controller reads the metadata log. Its committed data must end up the same as every voter's.

The timeouts are Kafka's simulation's: an election timeout of 1 s, a fetch timeout of 3 s, and a
short backoff, so that elections happen within a few simulated seconds.
"""

from __future__ import annotations

import itertools
import random as _random
import shutil
from pathlib import Path

from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.raft.file_based_state_store import FileBasedStateStore
from kafka_lite.raft.kafka_metadata_log import KafkaMetadataLog
from kafka_lite.raft.kafka_raft_client import KafkaRaftClient
from kafka_lite.raft.raft_config import InetAddressSpec, RaftConfig
from kafka_lite.raft.simulation.mock_expiration_service import MockExpirationService
from kafka_lite.raft.simulation.mock_log import MockLog
from kafka_lite.raft.simulation.mock_message_queue import MockMessageQueue
from kafka_lite.raft.simulation.mock_network_channel import MockNetworkChannel
from kafka_lite.raft.simulation.mock_quorum_state_store import MockQuorumStateStore
from kafka_lite.raft.simulation.replicated_counter import IntSerde, ReplicatedCounter

METADATA_PARTITION = TopicPartition("__cluster_metadata", 0)
ELECTION_TIMEOUT_MS = 1000
ELECTION_JITTER_MS = 100
FETCH_TIMEOUT_MS = 3000
RETRY_BACKOFF_MS = 50
REQUEST_TIMEOUT_MS = 3000
FETCH_MAX_WAIT_MS = 100
LINGER_MS = 0
SHUTDOWN_TIMEOUT_MS = 500


class NodeCrashed(RuntimeError):
    """An exception thrown out of a node's poll, tagged with the node."""

    def __init__(self, node_id: int, cause: Exception) -> None:
        super().__init__(f"Uncaught exception during poll of node {node_id}: {cause!r}")
        self.node_ids = [node_id]


class PersistentState:
    """What survives a crash: the log (up to its last flush) and the election state."""

    def __init__(self) -> None:
        self.store = MockQuorumStateStore()
        self.log = MockLog(METADATA_PARTITION)

    def reopen(self) -> None:
        self.log.reopen()

    def delete(self) -> None:
        pass  # nothing outside this object to remove


class DiskPersistentState:
    """The real thing, as Kafka's simulation can run it: the node's KafkaMetadataLog and its
    quorum-state file in a directory of its own. A crash is the process dying: on restart the log
    is opened again from its files (its recovery runs, its snapshots are found again), and what the
    operating system had been given survives, flushed or not."""

    def __init__(self, node_dir: Path, time: MockTime) -> None:
        self._node_dir = node_dir
        self._time = time
        node_dir.mkdir(parents=True, exist_ok=True)
        self.store = FileBasedStateStore(node_dir / "quorum-state")
        self.log = self._open_log()

    def _open_log(self) -> KafkaMetadataLog:
        log_dir = self._node_dir / f"{METADATA_PARTITION.topic}-{METADATA_PARTITION.partition}"
        return KafkaMetadataLog.create(METADATA_PARTITION, log_dir, self._time)

    def reopen(self) -> None:
        self.log.close()
        self.log = self._open_log()

    def delete(self) -> None:
        self.log.close()
        shutil.rmtree(self._node_dir)


class RaftNode:
    """One running incarnation of a node: its client, its channel and its counter."""

    def __init__(
        self, node_id: int, client: KafkaRaftClient, log: MockLog, channel: MockNetworkChannel,
        store: MockQuorumStateStore, expiration_service: MockExpirationService,
    ) -> None:  # fmt: skip
        self.node_id = node_id
        self.client = client
        self.expiration_service = expiration_service
        self.log = log
        self.channel = channel
        self.store = store
        self.counter = ReplicatedCounter(node_id, client)
        self.shutting_down = False
        # Set once a graceful shutdown completes: the client then no longer takes messages.
        self.stopped = False

    def initialize(self) -> None:
        self.client.register(self.counter)
        self.client.initialize()

    def poll(self) -> None:
        # As Kafka's: poll until the message queue is empty, so a burst of messages is handled
        # in one event rather than one per poll interval.
        try:
            # Kafka's MockExpirationService hears the simulated clock move and fails every held
            # Fetch whose max wait has passed; ours is told. Without it a leader whose log stands
            # still (its listener catching up before its counter may append) would hold its
            # followers' Fetches until their fetch timeout, and they would elect another leader.
            self.expiration_service.tick()
            self.client.poll()
            while not self.stopped and self.client.message_queue_size() > 0:
                self.client.poll()
        except Exception as e:
            raise NodeCrashed(self.node_id, e) from e

    def high_watermark(self) -> int:
        high_watermark = self.client.quorum().high_watermark()
        return high_watermark.offset if high_watermark is not None else 0

    def log_end_offset(self) -> int:
        return self.log.end_offset().offset

    def __repr__(self) -> str:
        return f"Node(id={self.node_id}, hw={self.high_watermark()}, logEndOffset={self.log_end_offset()})"


class Cluster:
    def __init__(
        self, num_voters: int, seed: int, time: MockTime | None = None, num_observers: int = 0,
        data_dir: Path | None = None,
    ) -> None:  # fmt: skip
        self.seed = seed
        self.time = time or MockTime()
        # With a directory, each node keeps its log and election on disk (DiskPersistentState).
        self._data_dir = data_dir
        # Shared by every channel: correlation ids never collide between nodes.
        self._correlation_ids = itertools.count()
        self.voters = set(range(num_voters))
        self.observers = set(range(num_voters, num_voters + num_observers))
        self.nodes: dict[int, PersistentState] = {
            node_id: self._new_persistent_state(node_id) for node_id in sorted(self.voters | self.observers)
        }
        self.running: dict[int, RaftNode] = {}
        self._starts: dict[int, int] = dict.fromkeys(self.nodes, 0)

    def _new_persistent_state(self, node_id: int) -> PersistentState | DiskPersistentState:
        if self._data_dir is None:
            return PersistentState()
        return DiskPersistentState(self._data_dir / f"node-{node_id}", self.time)

    # -- membership -------------------------------------------------------------------------------------

    def majority_size(self) -> int:
        return len(self.voters) // 2 + 1

    def start_all(self) -> None:
        for node_id in self.nodes:
            self.start(node_id)

    def start(self, node_id: int) -> RaftNode:
        state = self.nodes[node_id]
        # The crash happens here rather than in kill: until the restart the unflushed tail is
        # still in memory, which is what the MajorityReachedHighWatermark check reads.
        state.reopen()
        channel = MockNetworkChannel(self._correlation_ids)
        connections = {v: InetAddressSpec("localhost", 9990 + v) for v in sorted(self.voters)}
        for v, spec in connections.items():
            channel.update_endpoint(v, (spec.host, spec.port))
        config = RaftConfig(
            connections, REQUEST_TIMEOUT_MS, RETRY_BACKOFF_MS, ELECTION_TIMEOUT_MS, ELECTION_JITTER_MS,
            FETCH_TIMEOUT_MS, LINGER_MS,
        )  # fmt: skip
        self._starts[node_id] += 1
        node_random = _random.Random(f"{self.seed}/node-{node_id}/start-{self._starts[node_id]}")
        expiration_service = MockExpirationService(self.time)
        client = KafkaRaftClient(
            IntSerde(), channel, state.log, state.store, self.time, node_random, config, node_id,
            fetch_max_wait_ms=FETCH_MAX_WAIT_MS, message_queue=MockMessageQueue(),
            expiration_service=expiration_service,
        )  # fmt: skip
        node = RaftNode(node_id, client, state.log, channel, state.store, expiration_service)
        node.initialize()
        self.running[node_id] = node
        return node

    def kill(self, node_id: int) -> None:
        self.running.pop(node_id, None)

    def kill_all(self) -> None:
        self.running.clear()

    def kill_and_delete_persistent_state(self, node_id: int) -> None:
        self.kill(node_id)
        self.nodes[node_id].delete()
        self.nodes[node_id] = self._new_persistent_state(node_id)

    def shutdown(self, node_id: int) -> None:
        """A graceful shutdown: a leader resigns first; the node stops once that is done."""
        node = self.running[node_id]
        node.shutting_down = True
        node.client.shutdown(SHUTDOWN_TIMEOUT_MS).add_done_callback(lambda _: self._kill_if(node))

    def _kill_if(self, node: RaftNode) -> None:
        node.stopped = True
        if self.running.get(node.node_id) is node:
            self.kill(node.node_id)

    def clean_log_if_running(self, node_id: int) -> None:
        """Move the node's log start to its latest snapshot, once that snapshot is committed.

        Kafka's KafkaMetadataLog.maybeClean does this when the log outgrows its retention (bytes or
        time), every minute; the simulation's cleaner keeps no retention, so a log holds only what
        came after its latest snapshot, and a node that was away comes back behind the leader's log
        start and must fetch the snapshot."""
        node = self.running.get(node_id)
        if node is None:
            return
        snapshot_id = node.log.latest_snapshot_id()
        if (
            snapshot_id is not None
            and node.log.start_offset() < snapshot_id.offset <= node.log.high_watermark().offset
        ):
            node.log.delete_before_snapshot(snapshot_id)

    def poll_if_running(self, node_id: int) -> None:
        node = self.running.get(node_id)
        if node is not None:
            node.poll()

    # -- what the scenarios and invariants ask ----------------------------------------------------------

    def leader_node(self) -> RaftNode | None:
        """The running leader of the highest epoch, if any."""
        leaders = [n for n in self.running.values() if n.client.quorum().is_leader()]
        return max(leaders, key=lambda n: n.client.quorum().epoch(), default=None)

    def leader_high_watermark(self) -> int | None:
        leader = self.leader_node()
        if leader is None:
            return None
        high_watermark = leader.client.quorum().high_watermark()
        return high_watermark.offset if high_watermark is not None else None

    def latest_leader(self) -> int | None:
        """The leader of the highest epoch any running node knows of."""
        latest_leader, latest_epoch = None, 0
        for node in self.running.values():
            quorum = node.client.quorum()
            if quorum.epoch() > latest_epoch:
                latest_leader, latest_epoch = quorum.leader_id(), quorum.epoch()
            elif quorum.epoch() == latest_epoch and quorum.leader_id() is not None:
                latest_leader = quorum.leader_id()
        return latest_leader

    def has_leader(self, node_id: int) -> bool:
        return self.latest_leader() == node_id

    def has_consistent_leader(self, node_ids: set[int] | None = None) -> bool:
        """Every running node (of ``node_ids``) has stored the same election, and it names a leader."""
        elections = [node.store.read_election_state() for node in self.running.values()
                     if node_ids is None or node.node_id in node_ids]  # fmt: skip
        if not elections or elections[0] is None or not elections[0].has_leader():
            return False
        return all(election == elections[0] for election in elections)

    def max_log_end_offset(self) -> int:
        return max((n.log_end_offset() for n in self.running.values()), default=0)

    def max_high_watermark_reached(self, node_ids: set[int] | None = None) -> int:
        return max(
            (n.high_watermark() for n in self.running.values() if node_ids is None or n.node_id in node_ids),
            default=0,
        )

    def any_reached_high_watermark(self, offset: int) -> bool:
        return any(n.high_watermark() > offset for n in self.running.values())

    def all_reached_high_watermark(self, offset: int, node_ids: set[int] | None = None) -> bool:
        if node_ids is None:
            return all(n.high_watermark() >= offset for n in self.running.values())
        return all(node_id in self.running and self.running[node_id].high_watermark() >= offset
                   for node_id in node_ids)  # fmt: skip

    def random_running(self, random: _random.Random) -> RaftNode | None:
        nodes = [self.running[node_id] for node_id in sorted(self.running)]
        return random.choice(nodes) if nodes else None

    def with_current_leader(self, action) -> None:
        for node_id in sorted(self.running):
            node = self.running[node_id]
            if node.client.quorum().is_leader():
                action(node)


class SequentialAppendAction:
    """The workload: the leader's counter increments, when it has claimed its epoch."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    def __call__(self) -> None:
        def increment(node: RaftNode) -> None:
            if not node.shutting_down and node.counter.is_writable():
                node.counter.increment()

        self._cluster.with_current_leader(increment)
