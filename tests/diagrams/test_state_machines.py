"""The state-machine pictures: every legal transition is an edge, and every edge names its event."""

from __future__ import annotations

import re

import pytest

from kafka_lite.controller.partition_state_machine import (
    PARTITION_TRANSITION_EVENTS,
    PARTITION_VALID_PREVIOUS_STATES,
    PartitionState,
)
from kafka_lite.controller.replica_state_machine import (
    REPLICA_TRANSITION_EVENTS,
    REPLICA_VALID_PREVIOUS_STATES,
    ReplicaState,
)
from kafka_lite.coordinator.group_metadata import (
    GROUP_TRANSITION_EVENTS,
    GROUP_VALID_PREVIOUS_STATES,
    GroupState,
)
from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.state_machines import (
    RAFT_EPOCH_SIGNS,
    RAFT_TRIGGERS,
    group_state_machine,
    partition_state_machine,
    raft_state_machine,
    replica_state_machine,
    state_machine,
    transitions,
)

pytestmark = pytest.mark.unit
EDGE = re.compile(r"^\t(\w+) -> (\w+) \[(.*?)\]$", re.MULTILINE | re.DOTALL)

MACHINES = [
    (partition_state_machine, PARTITION_VALID_PREVIOUS_STATES, PARTITION_TRANSITION_EVENTS),
    (replica_state_machine, REPLICA_VALID_PREVIOUS_STATES, REPLICA_TRANSITION_EVENTS),
    (group_state_machine, GROUP_VALID_PREVIOUS_STATES, GROUP_TRANSITION_EVENTS),
]
IDS = ["partition", "replica", "group"]


@pytest.mark.parametrize(("draw", "table", "events"), MACHINES, ids=IDS)
def test_every_edge_of_the_picture_is_a_transition_of_the_table_with_its_event(draw, table, events):
    source = draw().source
    edges = {}
    for a, b, attrs in EDGE.findall(source):
        label = re.search(r'label="([^"]*)"', attrs)
        edges[(a, b)] = label.group(1) if label else ""
    expected = {(s.value, t.value) for s, t in transitions(table)}
    assert set(edges) == expected
    for (a, b), label in edges.items():
        assert label.strip(), f"edge {a} -> {b} has no event label"
    # The labels are the events of the table beside the transitions, not retyped.
    for (s, t), event in events.items():
        assert edges[(s.value, t.value)] == event


def test_the_raft_machine_draws_every_move_of_voter_transitions_with_its_trigger_and_epoch():
    from kafka_lite.raft.quorum_state import VOTER_TRANSITIONS

    edges = {}
    for a, b, attrs in EDGE.findall(raft_state_machine().source):
        edges[(a, b)] = re.search(r'label="([^"]*)"', attrs).group(1)
    assert edges == {
        (source, target): f"{RAFT_TRIGGERS[target]} {RAFT_EPOCH_SIGNS[rule]}"
        for source, targets in VOTER_TRANSITIONS.items()
        for target, rule in targets.items()
    }
    assert "raft_state_machine" in DIAGRAMS


@pytest.mark.parametrize(("draw", "table", "events"), MACHINES, ids=IDS)
def test_every_transition_has_an_event_and_every_event_a_transition(draw, table, events):
    assert set(events) == set(transitions(table))
    assert all(e.strip() for e in events.values())


def test_the_events_are_kafkas():
    assert PARTITION_TRANSITION_EVENTS[(PartitionState.NON_EXISTENT, PartitionState.NEW)] == (
        "new partition: assign replicas"
    )
    assert PARTITION_TRANSITION_EVENTS[(PartitionState.OFFLINE, PartitionState.ONLINE)].startswith(
        "OnlinePartition election"
    )
    assert "broker failure" in REPLICA_TRANSITION_EVENTS[(ReplicaState.ONLINE, ReplicaState.OFFLINE)]


def test_a_transition_without_an_event_is_refused_naming_it():
    events = dict(PARTITION_TRANSITION_EVENTS)
    del events[(PartitionState.OFFLINE, PartitionState.NON_EXISTENT)]
    with pytest.raises(ValueError, match="OfflinePartition -> NonExistentPartition"):
        state_machine("p", PARTITION_VALID_PREVIOUS_STATES, events, PartitionState.NON_EXISTENT)


def test_an_event_for_a_transition_the_table_refuses_is_refused_naming_it():
    events = {**PARTITION_TRANSITION_EVENTS, (PartitionState.NEW, PartitionState.NON_EXISTENT): "oops"}
    with pytest.raises(ValueError, match="NewPartition -> NonExistentPartition"):
        state_machine("p", PARTITION_VALID_PREVIOUS_STATES, events, PartitionState.NON_EXISTENT)


def test_the_group_machine_is_kafkas_table_with_kafkas_events():
    G = GroupState
    # Kafka 0.10.1's validPreviousStates, edge by edge: eleven transitions, Dead reachable from all.
    assert set(transitions(GROUP_VALID_PREVIOUS_STATES)) == {
        (G.PREPARING_REBALANCE, G.EMPTY),
        (G.STABLE, G.PREPARING_REBALANCE),
        (G.AWAITING_SYNC, G.PREPARING_REBALANCE),
        (G.EMPTY, G.PREPARING_REBALANCE),
        (G.PREPARING_REBALANCE, G.AWAITING_SYNC),
        (G.AWAITING_SYNC, G.STABLE),
        *((s, G.DEAD) for s in GroupState),
    }
    assert GROUP_TRANSITION_EVENTS[(G.AWAITING_SYNC, G.STABLE)].startswith("SyncGroup from the leader")
    assert GROUP_TRANSITION_EVENTS[(G.EMPTY, G.PREPARING_REBALANCE)] == "JoinGroup from\na new member"
    for source in (G.STABLE, G.AWAITING_SYNC):
        event = GROUP_TRANSITION_EVENTS[(source, G.PREPARING_REBALANCE)]
        assert "LeaveGroup" in event and "session expiry" in event
    assert "emigration" in GROUP_TRANSITION_EVENTS[(G.STABLE, G.DEAD)]


def test_the_group_machine_starts_at_empty_and_is_rendered_by_the_docs():
    source = group_state_machine().source
    start = re.search(r"subgraph start \{(.*?)\}", source, re.DOTALL).group(1)
    assert "Empty [" in start
    assert DIAGRAMS["group_state_machine"] is group_state_machine
