"""Reassignment and preferred replica election on real ZooKeeper, driven through their znodes: what the
controller refuses (and takes off ``/admin/reassign_partitions``), what it resumes after a failover,
and the auto leader rebalance's imbalance check on a ``MockScheduler``.

As in ``test_state_machine_edges.py``, the controller's requests are recorded instead of sent and its
event thread is not started: the test writes a znode, then runs the event the controller's watch
queued (``Cluster.run_events``).
"""

from __future__ import annotations

import logging
import uuid

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.testing.controller_harness import ControllerHarness, running_controller
from kafka_lite.utils.scheduler import MockScheduler
from kafka_lite.zk.zk_utils import (
    PREFERRED_REPLICA_ELECTION_PATH,
    REASSIGN_PARTITIONS_PATH,
    LeaderAndIsr,
    ZkUtils,
)

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("controller_reassignment_events")]


def _events_cluster(zk: ZkUtils) -> ControllerHarness:
    """The harness, with a controller whose auto rebalance runs on a ``MockScheduler``."""
    time = MockTime()
    scheduler = MockScheduler(time)
    harness = ControllerHarness(
        zk,
        time=time,
        auto_leader_rebalance_enable=True,
        leader_imbalance_check_interval_seconds=10,
        leader_imbalance_per_broker_percentage=10,
        auto_rebalance_scheduler=scheduler,
        delete_topic_enable=False,
    )
    harness.scheduler = scheduler
    return harness


@pytest.fixture
def cluster(zookeeper):
    with running_controller(zookeeper.connect_string, _events_cluster, "reassign") as c:
        yield c


def _topic(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


def _errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


# -- refusals --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "new_replicas, partition, message",
    [
        ([1, 7], 0, "replica(s) 7 not alive"),  # broker 7 never registered
        ([1, 2], 5, "that doesn't exist"),  # the topic has no partition 5
        ([1, 2], 0, "is already assigned to replicas 1,2"),
        ([], 0, "not alive"),
    ],
    ids=["unknown-broker", "unknown-partition", "same-replicas", "no-replicas"],
)
def test_a_reassignment_the_controller_refuses_changes_nothing_and_leaves_the_path(
    cluster, caplog, new_replicas, partition, message
):
    """``initiateReassignReplicasForTopicPartition``'s checks: the error is logged, the partition is
    taken off ``/admin/reassign_partitions`` (deleted, being the only one), and neither the
    assignment nor the partition's state changes."""
    topic = _topic("refused")
    cluster.create_topic(topic, {0: [1, 2]})
    before = cluster.leader_and_isr(topic)
    cluster.forget_requests()
    with caplog.at_level(logging.ERROR):
        cluster.zk.create_partition_reassignment_data({(topic, partition): new_replicas})
        cluster.run_events("PartitionReassignment")
    assert any(message in m for m in _errors(caplog)), _errors(caplog)
    assert not cluster.zk.client.exists(REASSIGN_PARTITIONS_PATH)
    assert cluster.zk.get_partition_assignment(topic) == {0: [1, 2]}
    assert cluster.leader_and_isr(topic) == before
    assert cluster.controller.context.partitions_being_reassigned == {}
    assert cluster.requests(ApiKeys.LEADER_AND_ISR) == []


def test_a_broker_that_registered_but_died_is_refused_too(cluster, caplog):
    topic = _topic("dead")
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.kill(3)
    with caplog.at_level(logging.ERROR):
        cluster.zk.create_partition_reassignment_data({(topic, 0): [1, 3]})
        cluster.run_events("PartitionReassignment")
    assert any("replica(s) 3 not alive" in m for m in _errors(caplog)), _errors(caplog)
    assert cluster.zk.get_partition_assignment(topic) == {0: [1, 2]}


def test_one_refused_partition_leaves_the_others_in_the_path(cluster):
    """Kafka's ``removePartitionFromReassignedPartitions`` rewrites the path without the refused
    partition: the one still moving (its new replica not yet in the ISR) stays."""
    topic = _topic("mixed")
    cluster.create_topic(topic, {0: [1, 2], 1: [2, 3]})
    cluster.zk.create_partition_reassignment_data({(topic, 0): [1, 9], (topic, 1): [2, 0]})
    cluster.run_events("PartitionReassignment")
    assert cluster.zk.get_partitions_being_reassigned() == {(topic, 1): [2, 0]}
    assert cluster.zk.get_partition_assignment(topic) == {0: [1, 2], 1: [2, 3, 0]}  # step 1 for partition 1


def test_malformed_reassignment_json_is_logged_and_changes_nothing(cluster, caplog):
    topic = _topic("malformed")
    cluster.create_topic(topic, {0: [1, 2]})
    with caplog.at_level(logging.ERROR):
        cluster.zk.client.create(REASSIGN_PARTITIONS_PATH, b'{"partitions": [{"topic": "x"')
        cluster.run_events("PartitionReassignment")
    assert any("malformed" in m for m in _errors(caplog)), _errors(caplog)
    assert cluster.zk.get_partition_assignment(topic) == {0: [1, 2]}
    assert cluster.controller.context.partitions_being_reassigned == {}


def test_a_topic_being_deleted_is_not_reassigned(cluster, caplog):
    topic = _topic("deleting")
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.controller.context.topics_to_be_deleted.add(topic)
    with caplog.at_level(logging.ERROR):
        cluster.zk.create_partition_reassignment_data({(topic, 0): [3, 0]})
        cluster.run_events("PartitionReassignment")
    assert any("since it is currently being deleted" in m for m in _errors(caplog)), _errors(caplog)
    assert not cluster.zk.client.exists(REASSIGN_PARTITIONS_PATH)
    assert cluster.zk.get_partition_assignment(topic) == {0: [1, 2]}


def test_a_leader_in_the_new_replicas_keeps_leading_with_a_new_epoch(cluster):
    """Step 7 when the leader is in RAR and alive: no election, the leader epoch goes up and the
    LeaderAndIsr carries RAR; the old replica leaves the ISR (step 8)."""
    topic = _topic("stays")
    tp = (topic, 0)
    cluster.create_topic(topic, {0: [1, 2]})
    cluster.zk.create_partition_reassignment_data({tp: [1, 3]})
    cluster.run_events("PartitionReassignment")
    cluster.follower_catches_up(topic, 0, [1, 2, 3])
    cluster.transitions.clear()
    cluster.run_events("PartitionReassignmentIsrChange")
    after = cluster.leader_and_isr(topic)
    assert (after.leader, after.isr) == (1, [1, 3])
    assert cluster.taken("partition") == []  # no election
    assert cluster.zk.get_partition_assignment(topic) == {0: [1, 3]}
    assert not cluster.zk.client.exists(REASSIGN_PARTITIONS_PATH)


# -- failover -----------------------------------------------------------------------------------------------


def test_a_failover_resumes_a_reassignment_and_drops_one_already_done(cluster):
    """``initializePartitionReassignment``: a partition whose assignment is already the new one leaves
    the path; one still moving is resumed, and completes when its replicas are in the ISR."""
    done, moving = _topic("done"), _topic("moving")
    cluster.create_topic(done, {0: [1, 2]})
    cluster.create_topic(moving, {0: [1, 2]})
    cluster.zk.update_partition_assignment(done, {0: [2, 3]})  # a previous controller got to step 10
    cluster.zk.client.create(
        REASSIGN_PARTITIONS_PATH,
        b'{"version":1,"partitions":[{"topic":"%s","partition":0,"replicas":[2,3]},'
        b'{"topic":"%s","partition":0,"replicas":[3,0]}]}' % (done.encode(), moving.encode()),
    )
    cluster.failover_again()
    assert cluster.zk.get_partitions_being_reassigned() == {(moving, 0): [3, 0]}
    assert cluster.zk.get_partition_assignment(moving) == {0: [1, 2, 3, 0]}
    cluster.follower_catches_up(moving, 0, [1, 2, 3, 0])
    cluster.run_events("PartitionReassignmentIsrChange")
    assert cluster.zk.get_partition_assignment(moving) == {0: [3, 0]}
    assert cluster.leader_and_isr(moving).leader == 3
    assert not cluster.zk.client.exists(REASSIGN_PARTITIONS_PATH)


def test_a_failover_resumes_a_preferred_replica_election(cluster):
    """``initializePreferredReplicaElection``: the partitions left in the path whose preferred replica
    does not lead are elected, then the path is deleted."""
    topic = _topic("resumed")
    cluster.create_topic(topic, {0: [1, 2], 1: [2, 1]})
    cluster.kill(1)
    cluster.start(1)
    cluster.follower_catches_up(topic, 0, [2, 1])
    cluster.zk.create_preferred_replica_election_data({(topic, 0), (topic, 1)})
    cluster.failover_again()
    assert cluster.leader_and_isr(topic, 0).leader == 1
    assert cluster.leader_and_isr(topic, 1).leader == 2
    assert not cluster.zk.client.exists(PREFERRED_REPLICA_ELECTION_PATH)


def test_malformed_preferred_election_json_is_deleted_and_changes_nothing(cluster, caplog):
    topic = _topic("bad-election")
    cluster.create_topic(topic, {0: [1, 2]})
    before = cluster.leader_and_isr(topic)
    with caplog.at_level(logging.ERROR):
        cluster.zk.client.create(PREFERRED_REPLICA_ELECTION_PATH, b"not json")
        cluster.run_events("PreferredReplicaLeaderElection")
    assert any("Preferred replica election data is empty" in m for m in _errors(caplog)), _errors(caplog)
    assert not cluster.zk.client.exists(PREFERRED_REPLICA_ELECTION_PATH)
    assert cluster.leader_and_isr(topic) == before


# -- the auto leader rebalance -----------------------------------------------------------------------------------


def test_the_imbalance_ratio_is_per_preferred_broker(cluster):
    """Kafka's ratio: for each broker, the partitions it is the first replica of that another broker
    leads, over all the partitions it is the first replica of."""
    topic = _topic("ratio")
    cluster.create_topic(topic, {0: [1, 2], 1: [1, 2], 2: [1, 2], 3: [2, 1]})
    cluster.kill(1)
    cluster.start(1)  # broker 2 now leads all four
    ratios = cluster.controller.preferred_replica_election.leader_imbalance_ratios()
    mine = {b: r for b, r in ratios.items() if b in (1, 2)}
    assert mine == {1: (1.0, [(topic, 0), (topic, 1), (topic, 2)]), 2: (0.0, [])}


def test_the_auto_rebalance_runs_on_its_schedule_and_moves_leaders_back(cluster):
    """The first check 5 s after failover, then every ``leader.imbalance.check.interval.seconds``
    (10 here); it runs as an event on the controller's thread. Above the 10 % threshold each
    misled partition gets a preferred replica election, without the admin path."""
    topic = _topic("auto")
    cluster.create_topic(topic, {0: [1, 2], 1: [2, 1]})
    cluster.kill(1)
    cluster.start(1)
    assert cluster.leader_and_isr(topic, 0).leader == 2
    cluster.follower_catches_up(topic, 0, [2, 1])

    cluster.scheduler.advance(4_999)
    assert "AutoPreferredReplicaLeaderElection" not in [
        name for name, _ in list(cluster.controller._events.queue)
    ]
    cluster.scheduler.advance(1)
    cluster.run_events("AutoPreferredReplicaLeaderElection")
    assert cluster.leader_and_isr(topic, 0).leader == 1
    assert cluster.leader_and_isr(topic, 1).leader == 2
    assert not cluster.zk.client.exists(PREFERRED_REPLICA_ELECTION_PATH)

    cluster.kill(1)
    cluster.start(1)
    cluster.follower_catches_up(topic, 0, [2, 1])
    cluster.scheduler.advance(10_000)  # the next check
    cluster.run_events("AutoPreferredReplicaLeaderElection")
    assert cluster.leader_and_isr(topic, 0).leader == 1


def test_the_auto_rebalance_leaves_a_broker_under_the_threshold(cluster):
    """One misled partition out of eleven is 9 %, under the 10 % threshold: nothing moves."""
    topic = _topic("under")
    cluster.create_topic(topic, {p: [3, 2] for p in range(11)})
    controller = cluster.controller
    lai = cluster.leader_and_isr(topic, 0)
    # broker 2 takes partition 0 over, as after broker 3 bounced
    ok, _ = cluster.zk.conditional_update_partition_state(
        topic, 0, LeaderAndIsr(2, lai.leader_epoch + 1, lai.isr, lai.zk_version), controller.epoch
    )
    assert ok
    controller.update_leader_and_isr_cache([(topic, 0)])
    ratio, _ = controller.preferred_replica_election.leader_imbalance_ratios()[3]
    assert ratio == pytest.approx(1 / 11)
    controller.check_and_trigger_partition_rebalance()
    assert cluster.leader_and_isr(topic, 0).leader == 2
