"""Which tasks each instance gets: the partition grouper's tasks, spread evenly by capacity, sticky
across rebalances, with standbys never beside their active copy."""

from __future__ import annotations

import pytest

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor import TaskId
from kafka_lite.streams.processor.default_partition_grouper import DefaultPartitionGrouper
from kafka_lite.streams.processor.internals.assignment.client_state import ClientState
from kafka_lite.streams.processor.internals.assignment.task_assignor import TaskAssignor
from tests.streams.assignment.support import cluster

pytestmark = pytest.mark.unit

TASKS = {TaskId(0, p) for p in range(8)}


def test_the_grouper_makes_one_task_per_group_and_partition_up_to_the_largest_topic():
    metadata = cluster(a=3, b=2, c=1)
    groups = DefaultPartitionGrouper().partition_groups({0: {"a", "b"}, 1: {"c"}}, metadata)
    assert groups == {
        TaskId(0, 0): {TopicPartition("a", 0), TopicPartition("b", 0)},
        TaskId(0, 1): {TopicPartition("a", 1), TopicPartition("b", 1)},
        TaskId(0, 2): {TopicPartition("a", 2)},
        TaskId(1, 0): {TopicPartition("c", 0)},
    }


def test_the_grouper_refuses_a_topic_the_metadata_lacks():
    with pytest.raises(StreamsException, match="Topic not found during partition assignment: d"):
        DefaultPartitionGrouper().partition_groups({0: {"a", "d"}}, cluster(a=1))


def clients(*capacities, prev=()):
    prev = list(prev) + [()] * (len(capacities) - len(prev))
    return {
        f"client-{i}": ClientState(capacity, prev_active_tasks=set(had), prev_assigned_tasks=set(had))
        for i, (capacity, had) in enumerate(zip(capacities, prev))
    }


def actives(states):
    return {cid: state.active_tasks for cid, state in states.items()}


def test_eight_tasks_over_two_single_thread_clients_give_four_each():
    states = TaskAssignor.assign(clients(1, 1), TASKS, 0)
    assert [len(tasks) for tasks in actives(states).values()] == [4, 4]
    assert set().union(*actives(states).values()) == TASKS


def test_tasks_follow_capacity_one_thread_against_three():
    states = TaskAssignor.assign(clients(1, 3), TASKS, 0)
    assert [len(tasks) for tasks in actives(states).values()] == [2, 6]
    states = TaskAssignor.assign(clients(1, 2), TASKS, 0)
    assert [len(tasks) for tasks in actives(states).values()] == [3, 5]  # 2.67 and 5.33: 0.67 rounds up


EVENS = {TaskId(0, p) for p in range(0, 8, 2)}
ODDS = TASKS - EVENS


def test_the_same_members_get_their_previous_tasks_back():
    states = TaskAssignor.assign(clients(1, 1, prev=[ODDS, EVENS]), TASKS, 0)
    assert actives(states) == {"client-0": ODDS, "client-1": EVENS}


def test_a_joining_member_takes_only_its_share():
    first, second = {TaskId(0, p) for p in range(4)}, {TaskId(0, p) for p in range(4, 8)}
    states = TaskAssignor.assign(clients(1, 1, 1, prev=[first, second]), TASKS, 0)
    got = actives(states)
    assert [len(tasks) for tasks in got.values()] == [3, 3, 2]
    assert got["client-0"] <= first and got["client-1"] <= second  # only 2 tasks moved, to the newcomer
    assert len(got["client-2"]) == 2


def test_a_task_the_client_has_state_for_goes_there_before_a_stranger():
    states = clients(1, 1)
    states["client-1"].prev_assigned_tasks = {TaskId(0, 0)}  # a standby copy
    assert (
        TaskId(0, 0) in TaskAssignor.assign(states, {TaskId(0, 0), TaskId(0, 1)}, 0)["client-1"].active_tasks
    )


def test_standbys_never_sit_beside_their_active_copy_and_are_spread():
    states = TaskAssignor.assign(clients(1, 1, 1), TASKS, 1)
    for state in states.values():
        assert not state.active_tasks & state.standby_tasks()
    assert sorted(len(state.standby_tasks()) for state in states.values()) == [2, 3, 3]
    assert sum(len(state.assigned_tasks) for state in states.values()) == 16


def test_more_standby_replicas_than_other_clients_are_capped():
    states = TaskAssignor.assign(clients(1, 1), TASKS, 2)
    for state in states.values():
        assert len(state.assigned_tasks) == 8  # each holds every task, 4 active and 4 standby
        assert len(state.active_tasks) == 4
