"""The controller's partition and replica state machines, and a consumer group's, drawn from their tables.

No Kafka twin: pictures of ``PartitionStateMachine``, ``ReplicaStateMachine`` and ``GroupMetadata``'s
states (Kafka draws them only in prose, in the classes' scaladoc). The states and edges are the
tables' (``PARTITION_VALID_PREVIOUS_STATES``, ``GROUP_VALID_PREVIOUS_STATES``: Kafka's
``validPreviousStates``), and each edge is labelled with the event that crosses it from the table
beside them (``PARTITION_TRANSITION_EVENTS``, ``GROUP_TRANSITION_EVENTS``), so the picture cannot
drift from the code.
Book:    chapter 7, 7.1.4 (the partition and replica state machines); chapter 5, 5.4.2 (the group's
         state transitions); chapter 10, 10.3 (a transaction's states, Kafka 0.11's
         ``TransactionMetadata``); and, beyond the book, a SASL connection's states at the broker
         (Kafka's ``SaslServerAuthenticator.SaslState``)
"""

from __future__ import annotations

import enum

import graphviz

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
from kafka_lite.coordinator.transaction.transaction_metadata import (
    TRANSITION_EVENTS,
    VALID_PREVIOUS_STATES,
    TransactionState,
)
from kafka_lite.diagrams.style import new_graph
from kafka_lite.network import sasl_server_authenticator as sasl
from kafka_lite.raft import quorum_state as raft


def _name(state: enum.Enum | str) -> str:
    """The state's name as Kafka prints it: the value of the string enums, ``kafka_name`` of the
    transaction states (whose value is the byte ``__transaction_state`` stores); a Raft state is
    its name already."""
    if isinstance(state, str):
        return state
    return getattr(state, "kafka_name", None) or str(state.value)


def transitions(valid_previous: dict[enum.Enum, set[enum.Enum]]) -> list[tuple[enum.Enum, enum.Enum]]:
    """Every legal (source, target) pair of a ``validPreviousStates`` table, in a stable order."""
    return [
        (source, target)
        for target, sources in valid_previous.items()
        for source in sorted(sources, key=_name)
    ]


def state_machine(
    name: str,
    valid_previous: dict[enum.Enum, set[enum.Enum]],
    events: dict[tuple[enum.Enum, enum.Enum], str],
    start: enum.Enum,
    current: enum.Enum | None = None,
    nodesep: str = "0.3",
) -> graphviz.Digraph:
    """A state machine drawn from its ``validPreviousStates`` table: an edge for every legal
    transition, labelled with the event in ``events`` that crosses it; ``current``, if given, is
    drawn highlighted (a live object's state, as the notebooks show it); ``nodesep`` (inches) packs
    a machine with many edges into the column.

    Top to bottom from ``start``, where every key begins (and ends, once deleted): the edges back
    into it do not push it down the page, so the picture stays narrow enough for the docs' column.
    """
    edges = transitions(valid_previous)
    unlabelled = [f"{_name(s)} -> {_name(t)}" for s, t in edges if not events.get((s, t))]
    if unlabelled:
        raise ValueError(f"{name}: no event for the transitions {unlabelled}")
    unknown = [f"{_name(s)} -> {_name(t)}" for s, t in events if (s, t) not in edges]
    if unknown:
        raise ValueError(f"{name}: events for transitions the table does not allow: {unknown}")
    if current is not None and current not in valid_previous:
        raise ValueError(f"{name}: {current!r} is not a state of the table")
    g = new_graph(name, rankdir="TB", fontsize=11, nodesep=nodesep, ranksep="0.45")
    g.attr("edge", fontsize="9", fontcolor="#374151")

    def node_style(state: enum.Enum) -> dict[str, str]:
        if state is current:
            return {"style": "rounded,filled,bold", "fillcolor": "#fde68a", "penwidth": "2"}
        if state is start:
            return {"style": "rounded"}
        return {"style": "rounded,filled", "fillcolor": "#f3f4f6"}

    with g.subgraph(name="start") as top:
        top.attr(rank="min")
        top.node(_name(start), _name(start), shape="box", **node_style(start))
    for state in valid_previous:
        if state is not start:
            g.node(_name(state), _name(state), shape="box", **node_style(state))
    for source, target in edges:
        back = "false" if target is start else "true"
        g.edge(_name(source), _name(target), label=events[(source, target)], constraint=back)
    return g


def partition_state_machine(current: PartitionState | None = None) -> graphviz.Digraph:
    """A partition's states, from NonExistent; ``current`` highlighted."""
    return state_machine(
        "partition_state_machine",
        PARTITION_VALID_PREVIOUS_STATES,
        PARTITION_TRANSITION_EVENTS,
        PartitionState.NON_EXISTENT,
        current,
    )


def replica_state_machine(current: ReplicaState | None = None) -> graphviz.Digraph:
    """A replica's states, from NonExistent; ``current`` highlighted."""
    return state_machine(
        "replica_state_machine",
        REPLICA_VALID_PREVIOUS_STATES,
        REPLICA_TRANSITION_EVENTS,
        ReplicaState.NON_EXISTENT,
        current,
    )


def group_state_machine(current: GroupState | None = None) -> graphviz.Digraph:
    """A consumer group's states, from Empty (where every group starts) to Dead; ``current``
    highlighted."""
    return state_machine(
        "group_state_machine",
        GROUP_VALID_PREVIOUS_STATES,
        GROUP_TRANSITION_EVENTS,
        GroupState.EMPTY,
        current,
    )


def transaction_state_machine(current: TransactionState | None = None) -> graphviz.Digraph:
    """A transactional id's states at its coordinator, from Empty (after InitProducerId) through a
    transaction's commit or abort; ``current`` highlighted."""
    return state_machine(
        "transaction_state_machine",
        VALID_PREVIOUS_STATES,
        TRANSITION_EVENTS,
        TransactionState.EMPTY,
        current,
        nodesep="0.1",  # its edges back to Empty and on to Dead would otherwise widen it past the column
    )


def sasl_state_machine(current: sasl.SaslState | None = None) -> graphviz.Digraph:
    """A SASL connection's states at the broker, from its first request to COMPLETE, when requests
    may flow, or FAILED, when the connection is closed; ``current`` highlighted."""
    return state_machine(
        "sasl_state_machine",
        sasl.VALID_PREVIOUS_STATES,
        sasl.TRANSITION_EVENTS,
        sasl.SaslState.HANDSHAKE_OR_VERSIONS_REQUEST,
        current,
    )


# What moves a voter into each state, in a word (QuorumState's javadoc: a higher epoch learnt; a vote
# granted; the election or fetch timer expiring; a majority of votes; the epoch's leader heard of; a
# graceful shutdown), and each epoch rule as an edge shows it.
RAFT_TRIGGERS = {
    raft.UNATTACHED: "epoch",
    raft.VOTED: "votes",
    raft.CANDIDATE: "timeout",
    raft.LEADER: "majority",
    raft.FOLLOWER: "leader",
    raft.RESIGNED: "resigns",
}
RAFT_EPOCH_SIGNS = {
    raft.EpochRule.SAME: "=",
    raft.EpochRule.HIGHER: ">",
    raft.EpochRule.SAME_OR_HIGHER: "≥",
    raft.EpochRule.NEXT: "+1",
}


def raft_state_machine(current: str | None = None) -> graphviz.Digraph:
    """A KRaft voter's six states (Kafka 3.3's ``QuorumState``), from Unattached, drawn from
    ``VOTER_TRANSITIONS``: each edge is labelled with what crosses it and the epoch it may go to,
    against the voter's own (``=`` the same, ``>`` a higher, ``≥`` the same or a higher, ``+1`` the
    next); ``current`` highlighted."""
    valid_previous: dict[str, set[str]] = {state: set() for state in raft.STATE_NAMES}
    events: dict[tuple[str, str], str] = {}
    for source, targets in raft.VOTER_TRANSITIONS.items():
        for target, rule in targets.items():
            valid_previous[target].add(source)
            events[(source, target)] = f"{RAFT_TRIGGERS[target]} {RAFT_EPOCH_SIGNS[rule]}"
    return state_machine(
        "raft_state_machine", valid_previous, events, raft.UNATTACHED, current, nodesep="0.15"
    )
