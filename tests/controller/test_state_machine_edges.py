"""Every edge of the partition and replica state tables, crossed by the events that cross it in Kafka
0.10.1, and every pair the tables leave out refused with Kafka's message.

The controller runs against real ZooKeeper (its own chroot on the session's server) with a channel
manager that records the requests instead of sending them: no broker process is needed to see what
the controller decided. Brokers "start" and "die" by their ``/brokers/ids`` znode appearing and
going, and the test hands the controller the broker-change and topic-change events its watches
would queue (the event thread is not started, so each event is handled on the test's thread, in
order, as the event thread would handle it).

Where the event's handler is not in ``KafkaController`` (topic deletion, reassignment, preferred
election), the test drives ``handle_state_changes`` itself with the selector and callbacks Kafka's
handler passes, in the order Kafka's handler does (each test's docstring names the Kafka method it
follows). A controlled shutdown goes through ``shutdown_broker``, as a ControlledShutdown request's
handler calls it: from another thread, waiting while the test's thread handles the event.

A listener on both machines records every transition taken; the last test checks that the tests
above, together, crossed every edge of both tables. The module runs on one xdist worker, in order.
"""

from __future__ import annotations

import logging
import threading
import uuid
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
from kafka_lite.zk.zk_utils import BROKER_IDS_PATH, LeaderAndIsr, ZkUtils

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

    def __init__(self, zk: ZkUtils) -> None:
        self.zk = zk
        self.controller = KafkaController(0, zk, time=MockTime())
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


@pytest.fixture
def cluster(zookeeper, monkeypatch):
    monkeypatch.setattr(kafka_controller, "ControllerChannelManager", RecordingChannelManager)
    RecordingChannelManager.sent = []
    zk = ZkUtils(f"{zookeeper.connect_string}/edges_{uuid.uuid4().hex}")
    zk.setup_common_paths()
    c = Cluster(zk)
    for b in (0, 1, 2, 3):
        zk.register_broker(b, "127.0.0.1", 9000 + b)
    c.elect()
    try:
        yield c
    finally:
        c.controller._running = False
        c.controller._resign()
        zk.close()


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
        (controller, "maybe_trigger_partition_reassignment"),
        (controller, "maybe_trigger_preferred_replica_election"),
        (controller, "send_update_metadata_request"),
        (controller, "start_topic_deletion"),
    ):
        original = getattr(owner, name)
        label = f"{type(owner).__name__}.{name}"
        monkeypatch.setattr(
            owner, name, lambda *a, _o=original, _l=label, **k: (calls.append(_l), _o(*a, **k))[1]
        )
    epoch = controller.epoch
    cluster.failover_again()
    assert controller.epoch == epoch + 1 == cluster.zk.get_controller_epoch()
    assert calls == [
        "ReplicaStateMachine.startup",
        "PartitionStateMachine.startup",
        "KafkaController.maybe_trigger_partition_reassignment",
        "KafkaController.maybe_trigger_preferred_replica_election",
        "KafkaController.send_update_metadata_request",
        "KafkaController.start_topic_deletion",
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
    """``onPreferredReplicaElection``: Online -> Online with the preferred-replica selector. The
    preferred replica leads again once it is back in the ISR; asked again, the selector says the
    election is not needed (the state machine swallows it and writes nothing)."""
    topic = _topic("preferred")
    tp = (topic, 0)
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.kill(1)
    cluster.start(1)
    controller = cluster.controller
    selector = controller.preferred_replica_partition_leader_selector

    with caplog.at_level(logging.ERROR, logger="kafka_lite.state.change.logger"):
        controller.partition_state_machine.handle_state_changes([tp], P.ONLINE, selector)
    assert cluster.leader_and_isr(topic).leader == 2  # broker 1 is not in the ISR yet
    assert any(
        f"Preferred replica 1 for partition [{topic},0] is either not alive or not in the isr"
        in r.getMessage()
        for r in caplog.records
    )

    cluster.follower_catches_up(topic, 0, [2, 1])
    cluster.transitions.clear()
    cluster.forget_requests()
    controller.partition_state_machine.handle_state_changes([tp], P.ONLINE, selector)
    assert cluster.taken("partition") == [(tp, "OnlinePartition", "OnlinePartition")]
    after = cluster.leader_and_isr(topic)
    assert (after.leader, after.isr) == (1, [2, 1])
    assert {r.broker_id for r in cluster.requests(ApiKeys.LEADER_AND_ISR)} == {1, 2}

    controller.partition_state_machine.handle_state_changes([tp], P.ONLINE, selector)
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
    """``onPartitionReassignment`` from [1, 2] to [3, 0], with broker 2 dead and broker 3 failing
    while its new replica catches up. Steps as Kafka's: the assignment becomes old + new; the new
    replicas go New (LeaderAndIsr as followers); once in the ISR, Online; the assignment becomes the
    new one; the leader moves with the reassigned selector (Online -> Online); the old replicas go
    Offline, ReplicaDeletionStarted, ReplicaDeletionSuccessful, NonExistent. (The ZooKeeper side of
    a reassignment, ``/admin/reassign_partitions``, is not involved.)"""
    topic = _topic("moved")
    tp = (topic, 0)
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.kill(2)  # replica (topic, 0, 2) is Offline before the reassignment starts
    controller, ctx = cluster.controller, cluster.controller.context
    rsm = controller.replica_state_machine
    new, old = [3, 0], [1, 2]
    ctx.partitions_being_reassigned[tp] = ReassignedPartitionsContext(new)
    ctx.partition_replica_assignment[tp] = old + new
    cluster.transitions.clear()
    cluster.forget_requests()

    rsm.handle_state_changes([(topic, 0, r) for r in new], R.NEW)
    assert {r.broker_id for r in cluster.requests(ApiKeys.LEADER_AND_ISR)} == {0, 3}
    cluster.kill(3)  # a new replica's broker fails before it catches up: New -> Offline
    cluster.start(3)  # and comes back: Offline -> Online
    cluster.follower_catches_up(topic, 0, [1, 3, 0])
    rsm.handle_state_changes([(topic, 0, r) for r in new], R.ONLINE)
    ctx.partition_replica_assignment[tp] = new
    controller.partition_state_machine.handle_state_changes(
        [tp], P.ONLINE, controller.reassigned_partition_leader_selector
    )
    old_replicas = [(topic, 0, r) for r in old]
    rsm.handle_state_changes(old_replicas, R.OFFLINE)
    rsm.handle_state_changes(old_replicas, R.DELETION_STARTED, Callbacks(lambda response, broker: None))
    rsm.handle_state_changes(old_replicas, R.DELETION_SUCCESSFUL)
    rsm.handle_state_changes(old_replicas, R.NON_EXISTENT)
    del ctx.partitions_being_reassigned[tp]

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


def test_a_topic_deletion_takes_every_replica_and_partition_to_nonexistent(cluster, caplog):
    """``TopicDeletionManager`` (0.10.1): ``startReplicaDeletion`` moves the topic's live replicas
    Offline, then ReplicaDeletionStarted with the StopReplica callback; each answer moves its replica
    to ReplicaDeletionSuccessful, or to ReplicaDeletionIneligible on an error, and a retry starts
    ineligible ones again from Offline. ``completeDeleteTopic`` then moves the replicas to
    NonExistent and the partitions Offline and NonExistent. Partition 1 never had a leader (its only
    replica's broker never registered); partition 2 lost its only in-sync replica before the
    deletion began. Partition 1's replica cannot be deleted (its broker is down), so the test
    completes the deletion of the partitions itself, as ``completeDeleteTopic`` would once it was."""
    topic = _topic("doomed")
    cluster.create_topic(topic, {0: [0, 1], 1: [4], 2: [2]})
    cluster.kill(2)
    assert [cluster.partition_state(topic, p) for p in range(3)] == [P.ONLINE, P.NEW, P.OFFLINE]
    controller, ctx = cluster.controller, cluster.controller.context
    rsm, psm = controller.replica_state_machine, controller.partition_state_machine
    ctx.topics_to_be_deleted.add(topic)
    cluster.start(2)  # a broker of a topic being deleted returns: no election for the topic
    assert cluster.partition_state(topic, 2) is P.OFFLINE
    cluster.transitions.clear()
    cluster.forget_requests()

    answers: list[tuple[dict, int]] = []

    def stop_replica_callback(response: dict, broker_id: int) -> None:
        answers.append((response, broker_id))

    def start_replica_deletion() -> None:
        live = ctx.live_broker_ids()
        retry = [r for r in ctx.replicas_for_topic(topic) if r[2] in live]
        retry = [r for r in retry if cluster.replica_state(*r) is not R.DELETION_SUCCESSFUL]
        rsm.handle_state_changes(retry, R.OFFLINE)
        rsm.handle_state_changes(retry, R.DELETION_STARTED, Callbacks(stop_replica_callback))

    def brokers_answer(failing: set[tuple[str, int, int]]) -> None:
        """Each broker answers its StopReplica (delete); the callbacks hear the answers."""
        for sent in cluster.requests(ApiKeys.STOP_REPLICA):
            if sent.body["delete_partitions"]:
                [p] = sent.body["partitions"]
                error = Errors.UNKNOWN if (topic, p["partition"], sent.broker_id) in failing else Errors.NONE
                sent.callback({"error_code": 0, "partitions": [{**p, "error_code": error.code}]})
        cluster.forget_requests()

    def stop_replica_answered() -> None:
        """Kafka's ``deleteTopicStopReplicaCallback``: replicas with an error go Ineligible, the
        others Successful."""
        done, failed = [], []
        for response, broker_id in answers:
            for p in response["partitions"]:
                (failed if p["error_code"] else done).append((p["topic"], p["partition"], broker_id))
        answers.clear()
        rsm.handle_state_changes(failed, R.DELETION_INELIGIBLE)
        rsm.handle_state_changes(done, R.DELETION_SUCCESSFUL)

    start_replica_deletion()
    assert {r.broker_id for r in cluster.requests(ApiKeys.STOP_REPLICA)} == {0, 1, 2}
    brokers_answer(failing={(topic, 0, 1)})
    stop_replica_answered()
    assert cluster.replica_state(topic, 0, 1) is R.DELETION_INELIGIBLE
    assert cluster.replica_state(topic, 0, 0) is R.DELETION_SUCCESSFUL
    assert cluster.replica_state(topic, 2, 2) is R.DELETION_SUCCESSFUL

    start_replica_deletion()  # the retry: only the ineligible replica is started again
    retried = [s for s in cluster.requests(ApiKeys.STOP_REPLICA) if s.body["delete_partitions"]]
    assert [(s.broker_id, s.body["partitions"]) for s in retried] == [(1, [{"topic": topic, "partition": 0}])]
    brokers_answer(failing=set())
    stop_replica_answered()

    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="kafka_lite.state.change.logger"):
        rsm.handle_state_changes(sorted(rsm.replicas_in_state(topic, R.DELETION_SUCCESSFUL)), R.NON_EXISTENT)
        partitions = [(topic, p) for p in range(3)]
        psm.handle_state_changes(partitions, P.OFFLINE)
        psm.handle_state_changes(partitions, P.NON_EXISTENT)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    ctx.topics_to_be_deleted.discard(topic)

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
        ((topic, 0, 1), "ReplicaDeletionStarted", "ReplicaDeletionIneligible"),
        ((topic, 0, 1), "ReplicaDeletionIneligible", "OfflineReplica"),
        ((topic, 0, 0), "ReplicaDeletionSuccessful", "NonExistentReplica"),
    ]:
        assert step in taken, f"{step} not taken; taken: {taken}"
    assert sorted(rsm.states) == [(topic, 1, 4)]  # the replica whose broker never came
    assert ctx.partition_replica_assignment[(topic, 0)] == []


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
