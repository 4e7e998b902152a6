"""The Streams assignor end to end, without a broker: members' subscriptions through the leader's
``assign``, each ``Assignment`` through ``on_assignment``; internal topics and co-partitioning."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import TopologyBuilderException
from kafka_lite.streams.processor import TaskId, TopologyBuilder
from kafka_lite.streams.processor.internals.assignment.subscription_info import SubscriptionInfo
from kafka_lite.streams.processor.internals.stream_partition_assignor import StreamPartitionAssignor
from kafka_lite.streams.state.host_info import HostInfo
from tests.streams.assignment.support import cluster
from tests.streams.test_topology_builder import Passthrough, internal_topic_builder

pytestmark = pytest.mark.unit

P1 = uuid.UUID(int=1)
P2 = uuid.UUID(int=2)


def join_builder():
    """One sub-topology reading topics a and b, joined, so co-partitioned."""
    builder = TopologyBuilder().set_application_id("app")
    builder.add_source("source-a", "a")
    builder.add_source("source-b", "b")
    builder.add_processor("join", Passthrough, "source-a", "source-b")
    builder.copartition_sources(["source-a", "source-b"])
    return builder


def tps(*pairs):
    return {TopicPartition(topic, p) for topic, p in pairs}


def rebalance(builder, metadata, members, num_standby_replicas=0):
    """``members``: member id -> (process id, end point); every member's assignor after on_assignment."""
    assignors = {
        member: StreamPartitionAssignor(
            builder, process, num_standby_replicas=num_standby_replicas, user_end_point=end_point
        )
        for member, (process, end_point) in members.items()
    }
    subscriptions = {member: assignor.subscription(["b", "a"]) for member, assignor in assignors.items()}
    leader = assignors[min(assignors)]
    assignments = leader.assign(metadata, subscriptions)
    for member, assignor in assignors.items():
        assignor.on_assignment(assignments[member])
    return leader, assignments, assignors


def test_the_assignor_is_named_stream_and_subscribes_with_its_subscription_info():
    assignor = StreamPartitionAssignor(
        join_builder(), P1, prev_tasks={TaskId(0, 1)}, cached_tasks={TaskId(0, 1), TaskId(0, 2)}
    )
    subscription = assignor.subscription({"b", "a"})
    assert assignor.name() == "stream"
    assert subscription.topics == ["a", "b"]
    assert SubscriptionInfo.decode(subscription.user_data) == SubscriptionInfo(
        P1, frozenset({TaskId(0, 1)}), frozenset({TaskId(0, 2)})
    )


def test_two_members_get_their_tasks_and_partitions_aligned():
    _, assignments, assignors = rebalance(
        join_builder(), cluster(a=4, b=4), {"m1": (P1, "h1:1"), "m2": (P2, "h2:2")}, num_standby_replicas=1
    )
    assert assignors["m1"].active_tasks() == {
        TaskId(0, 0): tps(("a", 0), ("b", 0)),
        TaskId(0, 2): tps(("a", 2), ("b", 2)),
    }
    assert assignors["m2"].active_tasks() == {
        TaskId(0, 1): tps(("a", 1), ("b", 1)),
        TaskId(0, 3): tps(("a", 3), ("b", 3)),
    }
    # Each holds the other's tasks as standbys, with the partitions whose state they restore.
    assert assignors["m1"].standby_tasks() == {
        TaskId(0, 1): tps(("a", 1), ("b", 1)),
        TaskId(0, 3): tps(("a", 3), ("b", 3)),
    }
    assert set(assignors["m2"].standby_tasks()) == {TaskId(0, 0), TaskId(0, 2)}
    assert assignments["m1"].partitions == sorted(tps(("a", 0), ("b", 0), ("a", 2), ("b", 2)))
    assert assignors["m2"].partitions_by_host() == {
        HostInfo("h1", 1): tps(("a", 0), ("b", 0), ("a", 2), ("b", 2)),
        HostInfo("h2", 2): tps(("a", 1), ("b", 1), ("a", 3), ("b", 3)),
    }


def test_an_instances_threads_share_its_tasks():
    _, _, assignors = rebalance(
        join_builder(), cluster(a=4, b=4), {"t1": (P1, None), "t2": (P1, None), "t3": (P2, None)}
    )
    # P1 has two threads, so two thirds of the tasks (rounded: 3), dealt over them in turn.
    assert set(assignors["t1"].active_tasks()) == {TaskId(0, 0), TaskId(0, 2)}
    assert set(assignors["t2"].active_tasks()) == {TaskId(0, 1)}
    assert set(assignors["t3"].active_tasks()) == {TaskId(0, 3)}


def test_a_rebalance_gives_each_instance_its_previous_tasks():
    builder, metadata = join_builder(), cluster(a=4, b=4)
    previous = {P1: {TaskId(0, 1), TaskId(0, 3)}, P2: {TaskId(0, 0), TaskId(0, 2)}}
    assignors = {
        m: StreamPartitionAssignor(builder, p, prev_tasks=previous[p]) for m, p in (("m1", P1), ("m2", P2))
    }
    assignments = assignors["m1"].assign(
        metadata, {m: a.subscription(["a", "b"]) for m, a in assignors.items()}
    )
    for member, assignor in assignors.items():
        assignor.on_assignment(assignments[member])
    assert set(assignors["m1"].active_tasks()) == previous[P1]
    assert set(assignors["m2"].active_tasks()) == previous[P2]


def test_topics_joined_in_one_group_must_have_the_same_partition_count():
    with pytest.raises(
        TopologyBuilderException, match=r"stream-thread \[StreamThread-1\] Topics not copartitioned: \[a,b\]"
    ):
        rebalance(join_builder(), cluster(a=4, b=3), {"m1": (P1, None)})


def test_an_external_source_topic_that_does_not_exist_is_reported():
    with pytest.raises(TopologyBuilderException, match="External source topic not found: b"):
        rebalance(join_builder(), cluster(a=4), {"m1": (P1, None)})


def repartition_builder():
    """Sub-topology 1 reads 'in' and writes the repartition topic; sub-topology 0 reads it."""
    return internal_topic_builder().set_application_id("app")


class LoggedStore:
    name = "store"

    def get(self):
        raise AssertionError("not built in these tests")

    def logging_enabled(self):
        return True

    def log_config(self):
        return {}


def test_a_repartition_topic_gets_the_partition_count_of_its_writers_sources():
    builder = repartition_builder()
    builder.add_state_store(LoggedStore(), "agg")
    leader, _, assignors = rebalance(builder, cluster(**{"in": 5}), {"m1": (P1, None)})
    assert leader.internal_topics() == {"app-store-repartition": 5, "app-store-changelog": 5}
    # Group 0 reads the repartition topic: five tasks, as many as its partitions.
    assert {task for task in assignors["m1"].active_tasks() if task.topic_group_id == 0} == {
        TaskId(0, p) for p in range(5)
    }


def test_a_repartition_topic_joined_with_an_external_topic_takes_the_external_count():
    builder = repartition_builder()
    builder.add_source("other", "other")
    builder.add_processor("join", Passthrough, "from-repartition", "other")
    builder.copartition_sources(["from-repartition", "other"])
    leader, _, _ = rebalance(builder, cluster(**{"in": 5, "other": 3}), {"m1": (P1, None)})
    assert leader.internal_topics() == {"app-store-repartition": 3}
