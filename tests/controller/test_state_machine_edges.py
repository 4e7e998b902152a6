"""Every edge of the partition and replica state tables, crossed by the events that cross it in Kafka
0.10.1, and every pair the tables leave out refused with Kafka's message.

The controller runs against real ZooKeeper (its own chroot on the session's server) with a channel
manager that records the requests instead of sending them: no broker process is needed to see what
the controller decided. Brokers "start" and "die" by their ``/brokers/ids`` znode appearing and
going, and the test hands the controller the broker-change and topic-change events its watches
would queue (the event thread is not started, so each event is handled on the test's thread, in
order, as the event thread would handle it).

Reassignment and preferred replica election go through their znodes: the test writes
``/admin/reassign_partitions`` or ``/admin/preferred_replica_election`` (and a leader's ISR), waits
for the event the controller's watch queues and runs it (``run_events``). Topic deletion goes through
its real events too: the ``/admin/delete_topics`` listener, the StopReplica answers (which the
controller queues as events; the test runs them), the broker changes. A controlled shutdown goes
through ``shutdown_broker``, as a ControlledShutdown request's handler calls it: from another thread,
waiting while the test's thread handles the event.

A listener on both machines records every transition taken; the last test checks that the tests
above, together, crossed every edge of both tables. The module runs on one xdist worker, in order.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

import pytest

from kafka_lite.common.errors import BrokerNotAvailableException, Errors, IllegalStateException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.controller import kafka_controller
from kafka_lite.controller.kafka_controller import KafkaController
from kafka_lite.controller.partition_leader_selector import ReassignedPartitionsContext
from kafka_lite.controller.partition_state_machine import PARTITION_VALID_PREVIOUS_STATES, PartitionState
from kafka_lite.controller.replica_state_machine import (
    REPLICA_VALID_PREVIOUS_STATES,
    Callbacks,
    ReplicaState,
)
from kafka_lite.controller.topic_deletion_manager import TopicDeletionManager
from kafka_lite.zk.zk_utils import (
    BROKER_IDS_PATH,
    PREFERRED_REPLICA_ELECTION_PATH,
    REASSIGN_PARTITIONS_PATH,
    LeaderAndIsr,
    ZkUtils,
)

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("controller_state_machine_edges")]

P, R = PartitionState, ReplicaState

# Every transition any test below took: (machine, from, to).
CROSSED: set[tuple[str, PartitionState | ReplicaState, PartitionState | ReplicaState]] = set()


@dataclass
class Sent:
    broker_id: int
    api: ApiKeys
    body: dict
    callback: object


class RecordingChannelManager:
    """``ControllerChannelManager``'s interface; records each request instead of sending it."""

    sent: ClassVar[list[Sent]] = []

    def __init__(self, controller_id: int, timeout_ms: int = 30_000, time=None) -> None:
        self.brokers: set[int] = set()

    def add_broker(self, broker_id: int, host: str, port: int) -> None:
        self.brokers.add(broker_id)

    def remove_broker(self, broker_id: int) -> None:
        self.brokers.discard(broker_id)

    def send_request(self, broker_id, api, version, body, callback=None) -> None:
        RecordingChannelManager.sent.append(Sent(broker_id, api, body, callback))

    def shutdown(self) -> None:
        self.brokers.clear()


class Cluster:
    """A controller (broker 0) and the ``/brokers/ids`` znodes of brokers that come and go."""

    def __init__(self, zk: ZkUtils, delete_topic_enable: bool = True) -> None:
        self.zk = zk
        self.controller = KafkaController(0, zk, time=MockTime(), delete_topic_enable=delete_topic_enable)
        self.transitions: list[tuple[str, object, object, object]] = []
        self.controller.partition_state_machine.add_transition_listener(self._recorder("partition"))
        self.controller.replica_state_machine.add_transition_listener(self._recorder("replica"))

    def _recorder(self, machine: str):
        def record(key, source, target) -> None:
            self.transitions.append((machine, key, source, target))
            CROSSED.add((machine, source, target))

        return record

    # -- events ---------------------------------------------------------------------------------------------

    def elect(self) -> None:
        """The Startup event: broker 0 creates ``/controller`` and fails over."""
        self.controller._elect()
        assert self.controller.is_active()

    def failover_again(self) -> None:
        """A controller that lost its session and won the election again starts afresh."""
        self.controller.on_controller_failover()

    def start(self, *broker_ids: int) -> None:
        for b in broker_ids:
            self.zk.register_broker(b, "127.0.0.1", 9000 + b)
        self.broker_change()

    def kill(self, *broker_ids: int) -> None:
        for b in broker_ids:
            self.zk.client.delete(f"{BROKER_IDS_PATH}/{b}")
        self.broker_change()

    def broker_change(self) -> None:
        if self.controller.is_active():
            self.controller._on_broker_change(self.zk.client.get_children(BROKER_IDS_PATH))

    def create_topic(self, topic: str, assignment: dict[int, list[int]]) -> None:
        self.zk.create_topic(topic, assignment)
        self.controller._on_topic_change(self.zk.get_all_topics())

    def run_events(self, *names: str, timeout_s: float = 10) -> list[str]:
        """Run the events named ``names`` that the controller's ZooKeeper watches queued, in order,
        waiting (up to ``timeout_s``) for at least one; return the names run. Events of other names
        are dropped: the test hands the controller those itself, as they happen."""
        ran: list[str] = []
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                event = self.controller._events.get(timeout=0 if ran else 0.05)
            except queue.Empty:
                if ran:
                    return ran
                assert time.monotonic() < deadline, f"no {names} event within {timeout_s} s"
                continue
            name, action = event
            if name in names:
                action()
                ran.append(name)

    def delete_topic(self, topic: str) -> None:
        """``kafka-topics --delete``: the mark, and the DeleteTopicsListener's event."""
        self.zk.create_delete_topic_path(topic)
        if self.controller.delete_topic_enable:  # 0.10.1 watches the path only then
            self.controller.delete_topics_listener.handle_child_change(self.zk.get_topics_to_be_deleted())

    def brokers_answer(self, failing: set[tuple[str, int, int]], live: set[int] | None = None) -> None:
        """Each broker answers its StopReplica (delete), with an error for the replicas in ``failing``;
        then the controller handles the answers its callback queued, in order. Brokers not in ``live``
        (when given) died before answering: their requests are dropped."""
        for sent in [s for s in self.requests(ApiKeys.STOP_REPLICA) if s.body["delete_partitions"]]:
            if live is not None and sent.broker_id not in live:
                continue
            [p] = sent.body["partitions"]
            error = Errors.UNKNOWN if (p["topic"], p["partition"], sent.broker_id) in failing else Errors.NONE
            sent.callback({"error_code": 0, "partitions": [{**p, "error_code": error.code}]})
        self.forget_requests()
        self.run_stop_replica_answers()

    def run_stop_replica_answers(self) -> None:
        """The StopReplica answers the callbacks put on the event queue, run on this thread. The
        queue's other events (the kazoo watches') are dropped: this test hands the controller those
        events itself."""
        events = self.controller._events
        while not events.empty():
            event = events.get_nowait()
            if event is not None and event[0] == "TopicDeletionStopReplicaResult":
                event[1]()

    def controlled_shutdown(self, broker_id: int):
        """A ControlledShutdown request: its handler's thread calls ``shutdown_broker`` and waits;
        the test's thread handles the event it queued. Returns what ``shutdown_broker`` returned
        or raised."""
        outcome: list = []

        def handler() -> None:
            try:
                outcome.append(self.controller.shutdown_broker(broker_id, timeout_s=10))
            except Exception as e:
                outcome.append(e)

        caller = threading.Thread(target=handler)
        caller.start()
        self.handle_event("ControlledShutdown")
        caller.join(10)
        assert not caller.is_alive(), "shutdown_broker answered"
        return outcome[0]

    def handle_event(self, name: str) -> None:
        """Take events off the controller's queue until the one named ``name``, and handle it. The
        ones before it are what the watches queued, which this module hands over itself."""
        while True:
            event = self.controller._events.get(timeout=10)
            if event is not None and event[0] == name:
                event[1]()
                return

    # -- what the controller decided ----------------------------------------------------------------------

    def stop_replica_deletes(self) -> list[tuple[int, str, int]]:
        """(broker, topic, partition) of each StopReplica (delete) sent and not yet answered."""
        return [
            (s.broker_id, p["topic"], p["partition"])
            for s in self.requests(ApiKeys.STOP_REPLICA)
            if s.body["delete_partitions"]
            for p in s.body["partitions"]
        ]

    def taken(self, machine: str) -> list[tuple[object, object, object]]:
        return [(k, s.value, t.value) for m, k, s, t in self.transitions if m == machine]

    def leader_and_isr(self, topic: str, partition: int = 0) -> LeaderAndIsr:
        return self.zk.get_partition_state(topic, partition).leader_and_isr

    def partition_state(self, topic: str, partition: int = 0) -> PartitionState:
        return self.controller.partition_state_machine.states.get((topic, partition), P.NON_EXISTENT)

    def replica_state(self, topic: str, partition: int, broker: int) -> ReplicaState:
        return self.controller.replica_state_machine.states.get((topic, partition, broker), R.NON_EXISTENT)

    def requests(self, api: ApiKeys, broker_id: int | None = None) -> list[Sent]:
        return [s for s in RecordingChannelManager.sent if s.api is api and broker_id in (None, s.broker_id)]

    def forget_requests(self) -> None:
        RecordingChannelManager.sent.clear()

    def follower_catches_up(self, topic: str, partition: int, isr: list[int]) -> None:
        """The leader writes a larger ISR (as ``Partition.maybe_expand_isr`` does) and the controller
        re-reads it (its ISR-change notification listener)."""
        current = self.leader_and_isr(topic, partition)
        written, _ = self.zk.update_leader_and_isr(
            topic,
            partition,
            LeaderAndIsr(current.leader, current.leader_epoch, isr, current.zk_version),
            self.controller.epoch,
        )
        assert written
        self.controller.update_leader_and_isr_cache([(topic, partition)])


@contextmanager
def running_cluster(zookeeper, monkeypatch, make=None, name: str = "edges"):
    """Brokers 0-3 registered in a chroot of their own and the controller elected, its requests
    recorded instead of sent; ``make(zk)`` builds the cluster (``Cluster`` by default)."""
    monkeypatch.setattr(kafka_controller, "ControllerChannelManager", RecordingChannelManager)
    RecordingChannelManager.sent = []
    zk = ZkUtils(f"{zookeeper.connect_string}/{name}_{uuid.uuid4().hex}")
    zk.setup_common_paths()
    c = (make or Cluster)(zk)
    for b in (0, 1, 2, 3):
        zk.register_broker(b, "127.0.0.1", 9000 + b)
    c.elect()
    try:
        yield c
    finally:
        c.controller._running = False
        c.controller._resign()
        zk.close()


@pytest.fixture
def cluster(zookeeper, monkeypatch):
    with running_cluster(zookeeper, monkeypatch) as c:
        yield c


def _topic(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


# -- controller events -------------------------------------------------------------------------------------


def test_topic_creation_takes_partitions_and_replicas_from_nothing_to_online(cluster):
    """``onNewPartitionCreation``: partitions New, replicas New, partitions Online (the first live
    assigned replica leads, the live ones are the ISR), replicas Online."""
    topic = _topic("created")
    cluster.create_topic(topic, {0: [1, 2], 1: [2, 3]})
    assert cluster.taken("partition") == [
        ((topic, 0), "NonExistentPartition", "NewPartition"),
        ((topic, 1), "NonExistentPartition", "NewPartition"),
        ((topic, 0), "NewPartition", "OnlinePartition"),
        ((topic, 1), "NewPartition", "OnlinePartition"),
    ]
    assert [(k, s, t) for k, s, t in cluster.taken("replica") if t == "NewReplica"] == [
        ((topic, 0, 1), "NonExistentReplica", "NewReplica"),
        ((topic, 0, 2), "NonExistentReplica", "NewReplica"),
        ((topic, 1, 2), "NonExistentReplica", "NewReplica"),
        ((topic, 1, 3), "NonExistentReplica", "NewReplica"),
    ]
    assert all(cluster.replica_state(topic, p, b) is R.ONLINE for p, b in [(0, 1), (0, 2), (1, 2), (1, 3)])
    assert cluster.leader_and_isr(topic, 0) == LeaderAndIsr(1, 0, [1, 2], 0)
    assert cluster.leader_and_isr(topic, 1) == LeaderAndIsr(2, 0, [2, 3], 0)
    to_broker_2 = cluster.requests(ApiKeys.LEADER_AND_ISR, 2)
    assert {
        (s["topic"], s["partition"], s["leader"]) for r in to_broker_2 for s in r.body["partition_states"]
    } == {
        (topic, 0, 1),
        (topic, 1, 2),
    }


def test_a_leader_failing_moves_its_partition_offline_then_online_and_its_return_brings_its_replica_back(
    cluster,
):
    """``onBrokerFailure``: the partitions the dead broker led go Offline, the offline selector elects
    a live in-sync replica, the dead broker's replicas go Offline (StopReplica, out of the ISR).
    ``onBrokerStartup``: its replicas go Online and get LeaderAndIsr."""
    topic = _topic("failing")
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.transitions.clear()
    cluster.forget_requests()

    cluster.kill(1)
    assert cluster.taken("partition") == [
        ((topic, 0), "OnlinePartition", "OfflinePartition"),
        ((topic, 0), "OfflinePartition", "OnlinePartition"),
    ]
    assert cluster.taken("replica") == [((topic, 0, 1), "OnlineReplica", "OfflineReplica")]
    assert cluster.leader_and_isr(topic) == LeaderAndIsr(2, 1, [2], 1)
    stop = cluster.requests(ApiKeys.STOP_REPLICA, 1)
    assert [(r.body["delete_partitions"], r.body["partitions"]) for r in stop] == [
        (False, [{"topic": topic, "partition": 0}])
    ]

    cluster.transitions.clear()
    cluster.forget_requests()
    cluster.start(1)
    assert cluster.taken("replica") == [((topic, 0, 1), "OfflineReplica", "OnlineReplica")]
    assert cluster.taken("partition") == []  # it has a leader: nothing to elect
    states = [s for r in cluster.requests(ApiKeys.LEADER_AND_ISR, 1) for s in r.body["partition_states"]]
    assert [(s["leader"], s["isr"]) for s in states] == [(2, [2])]


def test_a_partition_whose_last_in_sync_replica_died_stays_offline(cluster, caplog):
    """``triggerOnlinePartitionStateChange`` after a failure finds no live replica in the ISR: the
    offline selector raises ``NoReplicaOnlineException`` (unclean election is off), the state-change
    log says why, and the partition stays Offline; the ISR keeps its last member."""
    topic = _topic("alone")
    cluster.create_topic(topic, {0: [2]})
    with caplog.at_level(logging.ERROR, logger="kafka_lite.state.change.logger"):
        cluster.kill(2)
    assert cluster.partition_state(topic) is P.OFFLINE
    assert cluster.leader_and_isr(topic) == LeaderAndIsr(-1, 1, [2], 1)
    assert any(
        f"No broker in ISR for partition [{topic},0] is alive. Live brokers are: [0,1,3], ISR brokers are: [2]"
        in r.getMessage()
        for r in caplog.records
    ), [r.getMessage() for r in caplog.records]

    cluster.start(2)
    assert cluster.partition_state(topic) is P.ONLINE  # Offline -> Online once it is back
    assert cluster.leader_and_isr(topic).leader == 2


def test_a_controller_failover_finds_replicas_online_or_ineligible(cluster):
    """``ReplicaStateMachine.startup`` on failover: replicas on live brokers are Online and go Online
    again (their brokers hear the current state), replicas on dead brokers start
    ReplicaDeletionIneligible and go Online when their broker starts."""
    topic = _topic("failover")
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.kill(2)
    cluster.transitions.clear()
    cluster.forget_requests()

    cluster.failover_again()
    assert cluster.replica_state(topic, 0, 2) is R.DELETION_INELIGIBLE
    assert ((topic, 0, 1), "OnlineReplica", "OnlineReplica") in cluster.taken("replica")
    assert cluster.requests(ApiKeys.LEADER_AND_ISR, 1)

    cluster.start(2)
    assert ((topic, 0, 2), "ReplicaDeletionIneligible", "OnlineReplica") in cluster.taken("replica")
    assert cluster.replica_state(topic, 0, 2) is R.ONLINE


def test_a_failover_bumps_the_epoch_and_resumes_pending_work_in_kafkas_order(cluster, monkeypatch):
    """``onControllerFailover``'s order: the state machines started (replicas first), then the
    reassignments and preferred elections left pending resumed, every broker told the metadata,
    and last the topic deletions resumed."""
    controller = cluster.controller
    calls: list[str] = []
    for owner, name in (
        (controller.replica_state_machine, "startup"),
        (controller.partition_state_machine, "startup"),
        (controller.partition_reassignment, "maybe_trigger_partition_reassignment"),
        (controller.preferred_replica_election, "maybe_trigger_preferred_replica_election"),
        (controller, "send_update_metadata_request"),
        (TopicDeletionManager, "resume_deletions"),  # the manager is made again at failover
    ):
        original = getattr(owner, name)
        label = f"{owner.__name__ if isinstance(owner, type) else type(owner).__name__}.{name}"
        monkeypatch.setattr(
            owner, name, lambda *a, _o=original, _l=label, **k: (calls.append(_l), _o(*a, **k))[1]
        )
    epoch = controller.epoch
    cluster.failover_again()
    assert controller.epoch == epoch + 1 == cluster.zk.get_controller_epoch()
    assert calls == [
        "ReplicaStateMachine.startup",
        "PartitionStateMachine.startup",
        "PartitionReassignment.maybe_trigger_partition_reassignment",
        "PreferredReplicaElection.maybe_trigger_preferred_replica_election",
        "KafkaController.send_update_metadata_request",
        "TopicDeletionManager.resume_deletions",
    ]


def test_a_deposed_controller_resigns_and_holds_nothing(cluster):
    """``onControllerResignation``: another broker won the election (this one's session expired, say);
    the old controller's context, epoch, state machines and channel manager are cleared, and the
    events its watches would still queue are dropped."""
    topic = _topic("resign")
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.controller.context.shutting_down_broker_ids.add(2)
    controller = cluster.controller
    callback = controller._watcher(controller._watch_generation, "BrokerChange", controller._on_broker_change)
    cluster.zk.client.delete(kafka_controller.CONTROLLER_PATH)
    assert cluster.zk.try_elect_controller(5)
    controller._maybe_resign()
    assert not controller.is_active() and controller.active_controller_id == 5
    assert controller.epoch == 0 and controller.channel_manager is None
    ctx = controller.context
    assert (ctx.live_brokers_by_id, ctx.partition_leadership, ctx.shutting_down_broker_ids) == ({}, {}, set())
    assert controller.partition_state_machine.states == {} and controller.replica_state_machine.states == {}
    assert callback(["1", "2"]) is False, "a watch of the old generation stops itself"


# -- handlers driven through handle_state_changes -----------------------------------------------------------


def test_a_preferred_replica_election_moves_leadership_back(cluster, caplog):
    """``PreferredReplicaElectionListener`` -> ``onPreferredReplicaElection``: Online -> Online with the
    preferred-replica selector, and the path deleted whatever the outcome. The preferred replica
    leads again once it is back in the ISR; asked again, the selector says the election is not
    needed (the state machine swallows it and writes nothing)."""
    topic = _topic("preferred")
    tp = (topic, 0)
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.kill(1)
    cluster.start(1)
    zk = cluster.zk

    def elect() -> None:
        zk.create_preferred_replica_election_data({tp})
        cluster.run_events("PreferredReplicaLeaderElection")
        assert not zk.client.exists(PREFERRED_REPLICA_ELECTION_PATH)
        assert not cluster.controller.context.partitions_undergoing_preferred_replica_election

    with caplog.at_level(logging.ERROR, logger="kafka_lite.state.change.logger"):
        elect()
    assert cluster.leader_and_isr(topic).leader == 2  # broker 1 is not in the ISR yet
    assert any(
        f"Preferred replica 1 for partition [{topic},0] is either not alive or not in the isr"
        in r.getMessage()
        for r in caplog.records
    )

    cluster.follower_catches_up(topic, 0, [2, 1])
    cluster.transitions.clear()
    cluster.forget_requests()
    elect()
    assert cluster.taken("partition") == [(tp, "OnlinePartition", "OnlinePartition")]
    after = cluster.leader_and_isr(topic)
    assert (after.leader, after.isr) == (1, [2, 1])
    assert {r.broker_id for r in cluster.requests(ApiKeys.LEADER_AND_ISR)} == {1, 2}

    elect()
    assert cluster.leader_and_isr(topic) == after  # not needed: nothing written


def test_a_controlled_shutdown_moves_leaders_off_the_broker_and_its_followers_offline(cluster):
    """``KafkaController.shutdownBroker``, through ``shutdown_broker``: the broker counts as shutting
    down; partitions it leads go Online -> Online with the controlled-shutdown selector (the next
    in-sync replica leads, the broker leaves the ISR); where it follows, it is told to stop (StopReplica
    keeping the log) and its replica goes Offline while the broker is still up. A partition whose ISR
    holds no other replica stays with it and is answered as remaining; one with no other replica is
    left alone and not counted."""
    led, followed, stuck, alone = _topic("led"), _topic("followed"), _topic("stuck"), _topic("alone")
    cluster.create_topic(led, {0: [1, 2]})
    cluster.create_topic(followed, {0: [2, 1]})
    cluster.create_topic(stuck, {0: [1, 3]})
    cluster.create_topic(alone, {0: [1]})
    cluster.kill(3)  # the ISR of stuck is [1] now
    controller = cluster.controller
    cluster.transitions.clear()
    cluster.forget_requests()

    assert cluster.controlled_shutdown(1) == {(stuck, 0)}
    assert controller.context.shutting_down_broker_ids == {1}
    assert cluster.taken("partition") == [((led, 0), "OnlinePartition", "OnlinePartition")]
    assert cluster.taken("replica") == [((followed, 0, 1), "OnlineReplica", "OfflineReplica")]
    assert (cluster.leader_and_isr(led).leader, cluster.leader_and_isr(led).isr) == (2, [2])
    assert (cluster.leader_and_isr(followed).leader, cluster.leader_and_isr(followed).isr) == (2, [2])
    assert (cluster.leader_and_isr(stuck).leader, cluster.leader_and_isr(alone).leader) == (1, 1)
    # shutdownBroker's StopReplica, then the Offline transition's (Kafka sends both), each keeping the log
    stops = [
        (r.body["delete_partitions"], r.body["partitions"]) for r in cluster.requests(ApiKeys.STOP_REPLICA)
    ]
    assert stops == [(False, [{"topic": followed, "partition": 0}])] * 2
    assert {r.broker_id for r in cluster.requests(ApiKeys.STOP_REPLICA)} == {1}
    # Asked again (the broker retries), the same answer; no leader moves, and every partition it now
    # follows is stopped, its replica going Offline: led's now, followed's again, as in Kafka.
    cluster.transitions.clear()
    assert cluster.controlled_shutdown(1) == {(stuck, 0)}
    assert cluster.taken("partition") == []
    assert sorted(cluster.taken("replica")) == [
        ((followed, 0, 1), "OfflineReplica", "OfflineReplica"),
        ((led, 0, 1), "OnlineReplica", "OfflineReplica"),
    ]
    # A broker that is not registered: Kafka's BrokerNotAvailableException, and nothing changes.
    assert isinstance(cluster.controlled_shutdown(7), BrokerNotAvailableException)
    assert controller.context.shutting_down_broker_ids == {1}

    assert len(cluster.transitions) == 2, "nothing changed for a broker that is not registered"

    cluster.transitions.clear()
    cluster.broker_change()  # still registered while it shuts down: neither new nor dead
    assert cluster.transitions == []
    cluster.kill(1)  # its shutdown completes
    assert controller.context.shutting_down_broker_ids == set()
    # it led only the partitions that had nowhere to go; they go offline and stay so
    assert {k for k, _, _ in cluster.taken("partition")} == {(stuck, 0), (alone, 0)}
    assert cluster.partition_state(stuck) is P.OFFLINE and cluster.partition_state(alone) is P.OFFLINE


def test_a_reassignment_starts_new_replicas_moves_the_leader_and_deletes_the_old_ones(cluster):
    """``PartitionsReassignedListener`` -> ``onPartitionReassignment`` from [1, 2] to [3, 0], with
    broker 2 dead and broker 3 failing while its new replica catches up. Steps as Kafka's: the
    assignment becomes old + new; the new replicas go New (LeaderAndIsr as followers); once in the
    ISR (``ReassignedPartitionsIsrChangeListener``), Online; the assignment becomes the new one; the
    leader moves with the reassigned selector (Online -> Online); the old replicas go Offline,
    ReplicaDeletionStarted, ReplicaDeletionSuccessful, NonExistent; the path is deleted."""
    topic = _topic("moved")
    tp = (topic, 0)
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.kill(2)  # replica (topic, 0, 2) is Offline before the reassignment starts
    ctx = cluster.controller.context
    zk = cluster.zk
    new, old = [3, 0], [1, 2]
    cluster.transitions.clear()
    cluster.forget_requests()

    zk.create_partition_reassignment_data({tp: new})
    cluster.run_events("PartitionReassignment")
    assert zk.get_partition_assignment(topic) == {0: old + new}  # step 1
    assert ctx.partitions_being_reassigned[tp].new_replicas == new
    assert {0, 3} <= {r.broker_id for r in cluster.requests(ApiKeys.LEADER_AND_ISR)}  # steps 2 and 3
    cluster.kill(3)  # a new replica's broker fails before it catches up: New -> Offline
    cluster.start(3)  # and comes back: Offline -> Online
    assert tp in ctx.partitions_being_reassigned  # still waiting for the ISR
    cluster.follower_catches_up(topic, 0, [1, 3, 0])
    cluster.run_events("PartitionReassignmentIsrChange")

    taken = cluster.taken("replica")
    for step in [
        ((topic, 0, 3), "NonExistentReplica", "NewReplica"),
        ((topic, 0, 3), "NewReplica", "OfflineReplica"),
        ((topic, 0, 3), "OfflineReplica", "OnlineReplica"),
        ((topic, 0, 3), "OnlineReplica", "OnlineReplica"),
        ((topic, 0, 0), "NewReplica", "OnlineReplica"),
        ((topic, 0, 1), "OnlineReplica", "OfflineReplica"),
        ((topic, 0, 2), "OfflineReplica", "OfflineReplica"),
        ((topic, 0, 1), "OfflineReplica", "ReplicaDeletionStarted"),
        ((topic, 0, 2), "ReplicaDeletionStarted", "ReplicaDeletionSuccessful"),
        ((topic, 0, 1), "ReplicaDeletionSuccessful", "NonExistentReplica"),
    ]:
        assert step in taken, f"{step} not taken; taken: {taken}"
    assert cluster.taken("partition") == [(tp, "OnlinePartition", "OnlinePartition")]
    final = cluster.leader_and_isr(topic)
    assert (final.leader, final.isr) == (3, [3, 0])
    assert ctx.partition_replica_assignment[tp] == [3, 0]
    assert not any(cluster.replica_state(topic, 0, r) is not R.NON_EXISTENT for r in old)
    deletes = [r for r in cluster.requests(ApiKeys.STOP_REPLICA) if r.body["delete_partitions"]]
    assert sorted(r.broker_id for r in deletes) == [1, 2]
    assert all(r.callback is not None for r in deletes)
    assert zk.get_partition_assignment(topic) == {0: new}  # step 10
    assert not zk.client.exists(REASSIGN_PARTITIONS_PATH)  # step 11
    assert tp not in ctx.partitions_being_reassigned


def test_a_topic_deletion_takes_every_replica_and_partition_to_nonexistent(cluster):
    """``TopicDeletionManager`` (0.10.1), driven by the ``/admin/delete_topics`` event, the StopReplica
    answers and the broker-change events. Partition 0 leads on broker 0; partition 1 never had a
    leader (its only replica's broker, 4, has never registered); partition 2 lost its only in-sync
    replica (broker 2) before the deletion. The live replicas go Offline then DeletionStarted; one
    StopReplica answers an error (DeletionIneligible, retried from Offline); the dead brokers' replicas
    hold the topic ineligible until each broker returns; the never-led partition's replica goes
    Offline too (Kafka 1.1's rule) so that the deletion completes; then every replica goes
    NonExistent, the partitions Offline and NonExistent, and the topic's znodes are deleted."""
    topic = _topic("doomed")
    cluster.create_topic(topic, {0: [0, 1], 1: [4], 2: [2]})
    cluster.kill(2)
    assert [cluster.partition_state(topic, p) for p in range(3)] == [P.ONLINE, P.NEW, P.OFFLINE]
    controller, ctx = cluster.controller, cluster.controller.context
    manager = controller.topic_deletion_manager
    cluster.transitions.clear()
    cluster.forget_requests()

    cluster.delete_topic(topic)
    assert controller.is_topic_queued_up_for_deletion(topic)
    assert manager.is_topic_ineligible_for_deletion(topic)  # brokers 2 and 4 are down
    doomed = [s for r in cluster.requests(ApiKeys.UPDATE_METADATA) for s in r.body["partition_states"]]
    assert {(s["topic"], s["partition"], s["leader"]) for s in doomed} >= {(topic, 0, -2), (topic, 2, -2)}
    assert sorted(cluster.stop_replica_deletes()) == [(0, topic, 0), (1, topic, 0)]
    cluster.brokers_answer(failing={(topic, 0, 1)})
    assert cluster.replica_state(topic, 0, 0) is R.DELETION_SUCCESSFUL
    assert cluster.replica_state(topic, 0, 1) is R.OFFLINE  # Ineligible, then readied for the retry
    assert cluster.stop_replica_deletes() == []  # no retry while broker 2's and 4's replicas wait

    cluster.start(2)  # a broker of a topic being deleted returns: no election for the topic
    assert cluster.partition_state(topic, 2) is P.OFFLINE
    assert sorted(cluster.stop_replica_deletes()) == [(1, topic, 0), (2, topic, 2)]
    cluster.brokers_answer(failing=set())
    assert cluster.zk.client.exists(f"/brokers/topics/{topic}")  # broker 4's replica is still there

    cluster.start(4)  # the never-led partition's broker: its replica goes Offline, then is deleted
    assert cluster.stop_replica_deletes() == [(4, topic, 1)]
    cluster.brokers_answer(failing=set())

    assert not controller.is_topic_queued_up_for_deletion(topic)
    for path in (f"/brokers/topics/{topic}", f"/config/topics/{topic}", f"/admin/delete_topics/{topic}"):
        assert not cluster.zk.client.exists(path), path
    assert topic not in ctx.all_topics and not ctx.replicas_for_topic(topic)
    assert not [r for r in controller.replica_state_machine.states if r[0] == topic]
    # Kafka keeps a deleted partition's entry, in state NonExistent (a replica's entry goes).
    assert [cluster.partition_state(topic, p) for p in range(3)] == [P.NON_EXISTENT] * 3
    assert [(k, s, t) for k, s, t in cluster.taken("partition")] == [
        ((topic, 0), "OnlinePartition", "OfflinePartition"),
        ((topic, 1), "NewPartition", "OfflinePartition"),
        ((topic, 2), "OfflinePartition", "OfflinePartition"),
        ((topic, 0), "OfflinePartition", "NonExistentPartition"),
        ((topic, 1), "OfflinePartition", "NonExistentPartition"),
        ((topic, 2), "OfflinePartition", "NonExistentPartition"),
    ]
    taken = cluster.taken("replica")
    for step in [
        ((topic, 0, 0), "OnlineReplica", "OfflineReplica"),
        ((topic, 0, 0), "OfflineReplica", "ReplicaDeletionStarted"),
        ((topic, 0, 0), "ReplicaDeletionStarted", "ReplicaDeletionSuccessful"),
        ((topic, 0, 1), "ReplicaDeletionStarted", "ReplicaDeletionIneligible"),
        ((topic, 0, 1), "ReplicaDeletionIneligible", "OfflineReplica"),
        ((topic, 0, 1), "OfflineReplica", "OfflineReplica"),
        ((topic, 2, 2), "OfflineReplica", "OnlineReplica"),
        ((topic, 1, 4), "OnlineReplica", "OfflineReplica"),
        ((topic, 1, 4), "ReplicaDeletionSuccessful", "NonExistentReplica"),
        ((topic, 0, 0), "ReplicaDeletionSuccessful", "NonExistentReplica"),
    ]:
        assert step in taken, f"{step} not taken; taken: {taken}"


def test_a_broker_dying_while_its_replica_is_deleted_holds_the_deletion_until_it_returns(cluster):
    """``onBrokerFailure`` calls ``failReplicaDeletion`` for the dead broker's replicas of topics being
    deleted: a replica whose StopReplica (delete) was out goes DeletionIneligible rather than wait for
    an answer that will not come; the deletion retries it when the broker is back."""
    topic = _topic("interrupted")
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.transitions.clear()
    cluster.forget_requests()
    cluster.delete_topic(topic)
    assert sorted(cluster.stop_replica_deletes()) == [(1, topic, 0), (2, topic, 0)]

    cluster.kill(2)
    assert cluster.replica_state(topic, 0, 2) is R.DELETION_INELIGIBLE
    assert cluster.controller.topic_deletion_manager.is_topic_ineligible_for_deletion(topic)
    cluster.brokers_answer(failing=set(), live={1})
    assert cluster.replica_state(topic, 0, 1) is R.DELETION_SUCCESSFUL
    assert cluster.replica_state(topic, 0, 2) is R.OFFLINE  # readied for the retry

    cluster.start(2)
    assert cluster.stop_replica_deletes() == [(2, topic, 0)]
    cluster.brokers_answer(failing=set())
    assert not cluster.zk.client.exists(f"/brokers/topics/{topic}")
    assert ((topic, 0, 2), "ReplicaDeletionStarted", "ReplicaDeletionIneligible") in cluster.taken("replica")


def test_a_topic_being_reassigned_waits_for_the_reassignment_to_end(cluster):
    """The DeleteTopicsListener marks a topic ineligible while one of its partitions is being
    reassigned (or in a preferred election); ``resumeDeletionForTopics`` when that ends lets it go."""
    topic = _topic("moving")
    cluster.create_topic(topic, {0: [1, 2]})
    ctx = cluster.controller.context
    ctx.partitions_being_reassigned[(topic, 0)] = ReassignedPartitionsContext([2, 3])
    cluster.forget_requests()
    cluster.delete_topic(topic)
    assert cluster.controller.topic_deletion_manager.is_topic_ineligible_for_deletion(topic)
    assert cluster.stop_replica_deletes() == []

    del ctx.partitions_being_reassigned[(topic, 0)]  # the reassignment completed
    cluster.controller.topic_deletion_manager.resume_deletion_for_topics({topic})
    assert sorted(cluster.stop_replica_deletes()) == [(1, topic, 0), (2, topic, 0)]
    cluster.brokers_answer(failing=set())
    assert not cluster.zk.client.exists(f"/brokers/topics/{topic}")


def test_a_mark_for_a_topic_that_does_not_exist_is_removed(cluster):
    """0.10.1's DeleteTopicsListener: a mark under ``/admin/delete_topics`` naming no topic is deleted
    and nothing is queued."""
    cluster.zk.client.create("/admin/delete_topics/nowhere", b"", makepath=True)
    cluster.controller.delete_topics_listener.handle_child_change(cluster.zk.get_topics_to_be_deleted())
    assert not cluster.zk.client.exists("/admin/delete_topics/nowhere")
    assert cluster.controller.context.topics_to_be_deleted == set()


def test_a_failover_resumes_the_deletions_marked_in_zookeeper(cluster):
    """``initializeTopicDeletion``: a new controller queues the topics marked in ZooKeeper; one with a
    replica on a dead broker starts ineligible, the others are deleted at once."""
    healthy, stuck = _topic("healthy"), _topic("stuck")
    cluster.create_topic(healthy, {0: [0, 1]})
    cluster.create_topic(stuck, {0: [1, 2]})
    cluster.kill(2)
    cluster.controller._running = False  # the controller "dies" before it sees the marks
    cluster.zk.create_delete_topic_path(healthy)
    cluster.zk.create_delete_topic_path(stuck)
    cluster.controller._running = True
    cluster.forget_requests()

    cluster.failover_again()
    manager = cluster.controller.topic_deletion_manager
    assert manager.topics_to_be_deleted == {healthy, stuck}
    assert manager.topics_ineligible_for_deletion == {stuck}
    assert sorted(cluster.stop_replica_deletes()) == [(0, healthy, 0), (1, healthy, 0)]
    cluster.brokers_answer(failing=set())
    assert not cluster.zk.client.exists(f"/brokers/topics/{healthy}")
    assert cluster.zk.client.exists(f"/admin/delete_topics/{stuck}")


def test_with_deletion_disabled_a_mark_stays_and_nothing_is_deleted(zookeeper, monkeypatch):
    """``delete.topic.enable=false`` (0.10.1's default): the controller does not watch
    ``/admin/delete_topics``, and at failover it queues nothing; the mark waits."""
    monkeypatch.setattr(kafka_controller, "ControllerChannelManager", RecordingChannelManager)
    RecordingChannelManager.sent = []
    zk = ZkUtils(f"{zookeeper.connect_string}/edges_{uuid.uuid4().hex}")
    zk.setup_common_paths()
    zk.register_broker(0, "127.0.0.1", 9000)
    c = Cluster(zk, delete_topic_enable=False)
    try:
        c.elect()
        topic = _topic("kept")
        c.create_topic(topic, {0: [0]})
        c.delete_topic(topic)
        c.failover_again()
        assert c.controller.context.topics_to_be_deleted == set()
        assert c.partition_state(topic) is P.ONLINE
        assert c.stop_replica_deletes() == []
        assert zk.client.exists(f"/admin/delete_topics/{topic}") and zk.client.exists(
            f"/brokers/topics/{topic}"
        )
    finally:
        c.controller._running = False
        c.controller._resign()
        zk.close()


# -- illegal transitions -----------------------------------------------------------------------------------


def _illegal(table):
    return [(source, target) for target in table for source in type(target) if source not in table[target]]


def _machine_controller() -> KafkaController:
    """A controller whose machines have started, for transitions that fail before any ZooKeeper read."""
    controller = KafkaController(0, zk=None, time=MockTime())
    controller.channel_manager = RecordingChannelManager(0)
    RecordingChannelManager.sent = []
    controller.partition_state_machine.has_started = True
    controller.replica_state_machine.has_started = True
    return controller


@pytest.mark.unit
@pytest.mark.parametrize(("source", "target"), _illegal(PARTITION_VALID_PREVIOUS_STATES), ids=str)
def test_every_illegal_partition_transition_raises(source, target):
    controller = _machine_controller()
    psm = controller.partition_state_machine
    seen = []
    psm.add_transition_listener(lambda *t: seen.append(t))
    tp = ("t", 0)
    psm.states[tp] = source
    allowed = ",".join(s.value for s in PartitionState if s in PARTITION_VALID_PREVIOUS_STATES[target])
    with pytest.raises(IllegalStateException) as e:
        psm.handle_state_change(tp, target, controller.offline_partition_selector, controller.new_batch())
    assert str(e.value) == (
        f"Partition [t,0] should be in the {allowed} states before moving to {target.value} state. "
        f"Instead it is in {source.value} state"
    )
    assert psm.states[tp] is source and seen == []


@pytest.mark.unit
@pytest.mark.parametrize(("source", "target"), _illegal(REPLICA_VALID_PREVIOUS_STATES), ids=str)
def test_every_illegal_replica_transition_raises(source, target):
    controller = _machine_controller()
    rsm = controller.replica_state_machine
    seen = []
    rsm.add_transition_listener(lambda *t: seen.append(t))
    replica = ("t", 0, 1)
    if source is not R.NON_EXISTENT:  # a NonExistent replica has no entry, as in Kafka
        rsm.states[replica] = source
    allowed = ",".join(s.value for s in ReplicaState if s in REPLICA_VALID_PREVIOUS_STATES[target])
    with pytest.raises(IllegalStateException) as e:
        rsm.handle_state_change(replica, target, Callbacks(), controller.new_batch())
    assert str(e.value) == (
        f"Replica [Topic=t,Partition=0,Replica=1] should be in the {allowed} states before moving to "
        f"{target.value} state. Instead it is in {source.value} state"
    )
    assert rsm.states.get(replica, R.NON_EXISTENT) is source and seen == []


@pytest.mark.unit
def test_an_illegal_transition_among_legal_ones_is_logged_and_the_others_are_made(caplog):
    """``handle_state_changes`` catches each key's failure, as Kafka's ``handleStateChange`` does."""
    controller = _machine_controller()
    rsm = controller.replica_state_machine
    rsm.states[("t", 0, 1)] = R.OFFLINE
    rsm.states[("t", 0, 2)] = R.ONLINE
    with caplog.at_level(logging.ERROR, logger="kafka_lite.state.change.logger"):
        rsm.handle_state_changes([("t", 0, 2), ("t", 0, 1)], R.DELETION_STARTED)
    assert rsm.states == {("t", 0, 1): R.DELETION_STARTED, ("t", 0, 2): R.ONLINE}
    stop = [(s.broker_id, s.body["delete_partitions"]) for s in RecordingChannelManager.sent]
    assert stop == [(1, True)]
    assert [r.getMessage() for r in caplog.records] == [
        "Controller 0 epoch 0 initiated state change of replica 2 for partition [t,0] from OnlineReplica to "
        "ReplicaDeletionStarted failed: Replica [Topic=t,Partition=0,Replica=2] should be in the OfflineReplica "
        "states before moving to ReplicaDeletionStarted state. Instead it is in OnlineReplica state"
    ]


@pytest.mark.unit
def test_a_machine_that_has_not_started_refuses_every_change():
    controller = KafkaController(0, zk=None, time=MockTime())
    with pytest.raises(Exception, match="the partition state machine has not started"):
        controller.partition_state_machine.handle_state_change(
            ("t", 0), P.NEW, controller.offline_partition_selector, controller.new_batch()
        )
    with pytest.raises(Exception, match="replica state machine has not started"):
        controller.replica_state_machine.handle_state_change(
            ("t", 0, 1), R.NEW, Callbacks(), controller.new_batch()
        )


# -- the check ---------------------------------------------------------------------------------------------


def test_every_edge_of_both_tables_was_crossed():
    """Runs last: the event tests above, together, crossed every edge of both tables (and none
    outside them)."""
    for machine, table in (
        ("partition", PARTITION_VALID_PREVIOUS_STATES),
        ("replica", REPLICA_VALID_PREVIOUS_STATES),
    ):
        edges = {(source, target) for target, sources in table.items() for source in sources}
        crossed = {(s, t) for m, s, t in CROSSED if m == machine}
        assert crossed <= edges, f"{machine} transitions outside the table: {crossed - edges}"
        missing = sorted((s.value, t.value) for s, t in edges - crossed)
        assert not missing, f"{machine} edges no test crossed: {missing}"
