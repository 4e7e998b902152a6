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

A listener on both machines records every transition taken. Each event test declares the edges it
crosses (``@crosses``) and its cluster checks that it crossed them; the last test checks that the
declarations, together, cover every edge of both tables. Each test stands alone, in any order.
"""

from __future__ import annotations

import logging
import uuid
from contextlib import contextmanager
from functools import partial

import pytest

from kafka_lite.common.errors import BrokerNotAvailableException, IllegalStateException
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
from kafka_lite.testing.controller_harness import (
    ControllerHarness,
    RecordingChannelManager,
    Sent,
    running_controller,
)
from kafka_lite.zk.zk_utils import (
    BROKER_IDS_PATH,
    BROKER_TOPICS_PATH,
    PREFERRED_REPLICA_ELECTION_PATH,
    REASSIGN_PARTITIONS_PATH,
    LeaderAndIsr,
)

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("controller_state_machine_edges")]

P, R = PartitionState, ReplicaState

Edge = tuple[str, PartitionState | ReplicaState, PartitionState | ReplicaState]  # (machine, from, to)

TABLE_EDGES: frozenset[Edge] = frozenset(
    (machine, source, target)
    for machine, table in (("partition", PARTITION_VALID_PREVIOUS_STATES), ("replica", REPLICA_VALID_PREVIOUS_STATES))
    for target, sources in table.items()
    for source in sources
)  # fmt: skip


def crosses(*edges: Edge):
    """The edges of the state tables a test crosses: its cluster checks that it crossed them, and the
    last test that the tests' edges together cover both tables."""

    def declare(test):
        test.edges_crossed = frozenset(edges)
        return test

    return declare


class Cluster(ControllerHarness):
    """The harness, with every edge either machine crosses also kept in ``crossed`` (a test clears
    ``transitions`` between its steps; ``crossed`` keeps them all)."""

    def __init__(self, *args, **kwargs) -> None:
        self.crossed: set[Edge] = set()
        super().__init__(*args, **kwargs)

    def _recorder(self, machine: str):
        record_in_harness = super()._recorder(machine)

        def record(key, source, target) -> None:
            record_in_harness(key, source, target)
            self.crossed.add((machine, source, target))

        return record


@contextmanager
def running_cluster(zookeeper, make=Cluster, name: str = "edges"):
    """Brokers 0-3 registered in a chroot of their own and the controller elected, its requests
    recorded instead of sent; ``make(zk)`` builds the cluster (``Cluster`` by default)."""
    with running_controller(zookeeper.connect_string, make, name) as c:
        yield c


@pytest.fixture
def cluster(zookeeper, request):
    """The cluster; afterwards, the test crossed the edges it declares, and none outside the tables."""
    with running_cluster(zookeeper) as c:
        yield c
    assert c.crossed <= TABLE_EDGES, f"transitions outside the tables: {c.crossed - TABLE_EDGES}"
    missing = getattr(request.function, "edges_crossed", frozenset()) - c.crossed
    assert not missing, f"{request.function.__name__} did not cross {sorted(map(str, missing))}"


def _topic(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


# -- controller events -------------------------------------------------------------------------------------


@crosses(
    ("partition", P.NON_EXISTENT, P.NEW),
    ("partition", P.NEW, P.ONLINE),
    ("replica", R.NON_EXISTENT, R.NEW),
    ("replica", R.NEW, R.ONLINE),
)
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


@crosses(
    ("partition", P.ONLINE, P.OFFLINE),
    ("partition", P.OFFLINE, P.ONLINE),
    ("replica", R.ONLINE, R.OFFLINE),
    ("replica", R.OFFLINE, R.ONLINE),
)
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


@crosses(("replica", R.ONLINE, R.ONLINE), ("replica", R.DELETION_INELIGIBLE, R.ONLINE))
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


def test_a_failover_watches_the_brokers_and_topics_only_after_reading_them(cluster, monkeypatch):
    """A kazoo watch reports the children at once, so the failover reads the context first and
    registers the broker and topic watches after (``on_controller_failover`` says why): their first
    events then carry lists at least as new as the context. Kafka registers its listeners first."""
    controller = cluster.controller
    calls: list[str] = []
    read, watch = controller._initialize_controller_context, controller.zk.watch_children
    monkeypatch.setattr(
        controller, "_initialize_controller_context", lambda: (calls.append("read"), read())[1]
    )
    monkeypatch.setattr(
        controller.zk, "watch_children", lambda path, cb: (calls.append(path), watch(path, cb))[1]
    )
    cluster.failover_again()
    assert calls.index("read") < calls.index(BROKER_IDS_PATH), calls
    assert calls.index("read") < calls.index(BROKER_TOPICS_PATH), calls


def test_a_deposed_controller_resigns_and_holds_nothing(cluster):
    """``onControllerResignation``: another broker won the election (this one's session expired, say);
    the old controller's context, epoch, state machines and channel manager are cleared, and the
    events its watches would still queue are dropped."""
    topic = _topic("resign")
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.controller.context.shutting_down_broker_ids.add(2)
    controller = cluster.controller
    callback = controller._watcher(
        controller._watch_generation, "BrokerChange", controller.handle_broker_change
    )
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


@crosses(("partition", P.ONLINE, P.ONLINE))
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


@crosses(("replica", R.OFFLINE, R.OFFLINE))
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


@crosses(
    ("replica", R.NEW, R.OFFLINE),
    ("replica", R.OFFLINE, R.DELETION_STARTED),
    ("replica", R.DELETION_STARTED, R.DELETION_SUCCESSFUL),
    ("replica", R.DELETION_SUCCESSFUL, R.NON_EXISTENT),
)
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


@crosses(
    ("partition", P.NEW, P.OFFLINE),
    ("partition", P.OFFLINE, P.OFFLINE),
    ("partition", P.OFFLINE, P.NON_EXISTENT),
    ("replica", R.DELETION_STARTED, R.DELETION_INELIGIBLE),
    ("replica", R.DELETION_INELIGIBLE, R.OFFLINE),
)
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


def test_with_deletion_disabled_a_mark_stays_and_nothing_is_deleted(zookeeper):
    """``delete.topic.enable=false`` (0.10.1's default): the controller does not watch
    ``/admin/delete_topics``, and at failover it queues nothing; the mark waits."""
    make = partial(Cluster, delete_topic_enable=False)
    with running_controller(zookeeper.connect_string, make, "edges", brokers=(0,)) as c:
        topic = _topic("kept")
        c.create_topic(topic, {0: [0]})
        c.delete_topic(topic)
        c.failover_again()
        assert c.controller.context.topics_to_be_deleted == set()
        assert c.partition_state(topic) is P.ONLINE
        assert c.stop_replica_deletes() == []
        assert c.zk.client.exists(f"/admin/delete_topics/{topic}") and c.zk.client.exists(
            f"/brokers/topics/{topic}"
        )


# -- illegal transitions -----------------------------------------------------------------------------------


def _illegal(table):
    return [(source, target) for target in table for source in type(target) if source not in table[target]]


def _machine_controller(sent: list[Sent] | None = None) -> KafkaController:
    """A controller whose machines have started, for transitions that fail before any ZooKeeper read;
    its requests go to ``sent``."""
    controller = KafkaController(0, zk=None, time=MockTime())
    controller.channel_manager = RecordingChannelManager([] if sent is None else sent)
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
    sent: list[Sent] = []
    controller = _machine_controller(sent)
    rsm = controller.replica_state_machine
    rsm.states[("t", 0, 1)] = R.OFFLINE
    rsm.states[("t", 0, 2)] = R.ONLINE
    with caplog.at_level(logging.ERROR, logger="kafka_lite.state.change.logger"):
        rsm.handle_state_changes([("t", 0, 2), ("t", 0, 1)], R.DELETION_STARTED)
    assert rsm.states == {("t", 0, 1): R.DELETION_STARTED, ("t", 0, 2): R.ONLINE}
    stop = [(s.broker_id, s.body["delete_partitions"]) for s in sent]
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


def test_every_edge_of_both_tables_is_crossed_by_a_test():
    """The event tests above declare the edges they cross (each one's cluster checks its own): together
    they cover every edge of both tables."""
    declared = {edge for test in list(globals().values()) for edge in getattr(test, "edges_crossed", ())}
    assert declared <= TABLE_EDGES, f"edges outside the tables: {declared - TABLE_EDGES}"
    missing = sorted((m, s.value, t.value) for m, s, t in TABLE_EDGES - declared)
    assert not missing, f"edges no test crosses: {missing}"
