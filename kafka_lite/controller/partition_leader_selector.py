"""The leader selectors: who leads a partition next, and who must hear of it.

Mirrors: kafka.controller.PartitionLeaderSelector, OfflinePartitionLeaderSelector,
         ReassignedPartitionLeaderSelector, PreferredReplicaPartitionLeaderSelector,
         ControlledShutdownLeaderSelector, NoOpLeaderSelector
         (core/src/main/scala/kafka/controller/PartitionLeaderSelector.scala, Kafka 0.10.1),
         kafka.common.StateChangeFailedException, NoReplicaOnlineException,
         LeaderElectionNotNeededException
Book:    chapter 7, 7.1.4 (the partition state machine's leader election)
Labs:    lab 13 (the offline and reassigned selectors' select_leader)
Differs: the offline selector is given a function that reads the topic's unclean-election setting
         instead of the broker's config and ZooKeeper.

The partition state machine moves a partition to OnlinePartition from Offline or Online by asking a
selector for the new leader and ISR. Which selector it asks depends on why the leader moves:

==============================  ==========================  ===================  =========================
selector                        new leader                  new ISR              told (LeaderAndIsr)
==============================  ==========================  ===================  =========================
Offline (leader died)           first live assigned in ISR  live ISR             live assigned replicas
                                (unclean: first live one)   (unclean: leader)
Reassigned                      first live reassigned       current ISR          reassigned replicas
                                replica in the ISR
PreferredReplica                the first assigned replica  current ISR          assigned replicas
ControlledShutdown              first live assigned in the  ISR without the      live assigned replicas
                                ISR, not shutting down      shutting-down ones
NoOp                            the current leader          current ISR          assigned replicas
==============================  ==========================  ===================  =========================

Each returns the new ``LeaderAndIsr`` with the leader epoch one up and the znode version one up (the
version the conditional write will produce), and the replicas to send LeaderAndIsr to.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.zk.zk_utils import LeaderAndIsr

if TYPE_CHECKING:
    from kafka_lite.controller.kafka_controller import ControllerContext

log = logging.getLogger(__name__)


class StateChangeFailedException(Exception):
    """A state change could not be made; the state machine logs it and leaves the state as it was."""


class NoReplicaOnlineException(Exception):
    """No replica that may lead is alive: the partition stays without a leader."""


class LeaderElectionNotNeededException(Exception):
    """The leader the selector would choose already leads: the state machine swallows it."""


def tp_str(tp: TopicPartition) -> str:
    """``TopicAndPartition.toString`` in Kafka 0.10.1: ``[topic,partition]``, as its messages show it."""
    return f"[{tp[0]},{tp[1]}]"


def lai_str(lai: LeaderAndIsr) -> str:
    """``LeaderAndIsr.toString`` in Kafka 0.10.1 (the JSON of the state znode's fields)."""
    isr = ",".join(str(r) for r in lai.isr)
    return f'{{"leader":{lai.leader},"leader_epoch":{lai.leader_epoch},"isr":[{isr}]}}'


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)


@dataclass
class ReassignedPartitionsContext:
    """Kafka's ``ReassignedPartitionsContext``: the replicas a partition being reassigned moves to.
    (Kafka's also holds the ISR-change listener the reassignment registers.)"""

    new_replicas: list[int]


class PartitionLeaderSelector(Protocol):
    def select_leader(
        self, tp: TopicPartition, current_leader_and_isr: LeaderAndIsr
    ) -> tuple[LeaderAndIsr, list[int]]:
        """The new leader and ISR for ``tp``, and the replicas to receive the LeaderAndIsr request;
        raises ``NoReplicaOnlineException`` if no assigned replica that may lead is alive."""
        ...


def _next(current: LeaderAndIsr, leader: int, isr: list[int]) -> LeaderAndIsr:
    return LeaderAndIsr(leader, current.leader_epoch + 1, list(isr), current.zk_version + 1)


# --8<-- [start:offline]
class OfflinePartitionLeaderSelector:
    """The leader died (or the partition is new to a controller that found it offline): the first
    live assigned replica in the ISR leads, and the ISR becomes its live members. With none alive,
    a live replica outside the ISR leads only if the topic allows unclean leader election, and it
    may lack records the old leader had acknowledged."""

    def __init__(
        self, context: ControllerContext, unclean_leader_election_enabled: Callable[[str], bool]
    ) -> None:
        self.context = context
        # Read only when no in-sync replica is alive, as Kafka reads the topic's config from
        # ZooKeeper only then: an altered setting counts from the next election.
        self.unclean_leader_election_enabled = unclean_leader_election_enabled

    def select_leader(
        self, tp: TopicPartition, current_leader_and_isr: LeaderAndIsr
    ) -> tuple[LeaderAndIsr, list[int]]:
        # BEGIN SOLUTION
        assigned = self.context.partition_replica_assignment.get(tp)
        if assigned is None:
            raise NoReplicaOnlineException(f"Partition {tp_str(tp)} doesn't have replicas assigned to it")
        live = self.context.live_broker_ids()
        live_assigned = [r for r in assigned if r in live]
        live_in_isr = [r for r in current_leader_and_isr.isr if r in live]
        if not live_in_isr:
            if not self.unclean_leader_election_enabled(tp[0]):
                raise NoReplicaOnlineException(
                    f"No broker in ISR for partition {tp_str(tp)} is alive. Live brokers are: "
                    f"[{_ids(sorted(live))}], ISR brokers are: [{_ids(current_leader_and_isr.isr)}]"
                )
            if not live_assigned:
                raise NoReplicaOnlineException(
                    f"No replica for partition {tp_str(tp)} is alive. Live brokers are: [{_ids(sorted(live))}], "
                    f"Assigned replicas are: [{_ids(assigned)}]"
                )
            leader = live_assigned[0]
            log.warning(
                "No broker in ISR is alive for %s. Elect leader %d from live brokers %s. "
                "There's potential data loss.",
                tp_str(tp), leader, _ids(live_assigned),
            )  # fmt: skip
            new = _next(current_leader_and_isr, leader, [leader])
        else:
            leader = next(r for r in live_assigned if r in live_in_isr)
            new = _next(current_leader_and_isr, leader, live_in_isr)
        log.info("Selected new leader and ISR %s for offline partition %s", lai_str(new), tp_str(tp))
        return new, live_assigned
        # END SOLUTION


# --8<-- [end:offline]


class ReassignedPartitionLeaderSelector:
    """A reassignment moves the leader onto one of the new replicas once they are in sync: the first
    live reassigned replica in the ISR leads; the ISR stays as it is."""

    def __init__(self, context: ControllerContext) -> None:
        self.context = context

    def select_leader(
        self, tp: TopicPartition, current_leader_and_isr: LeaderAndIsr
    ) -> tuple[LeaderAndIsr, list[int]]:
        # BEGIN SOLUTION
        reassigned = self.context.partitions_being_reassigned[tp].new_replicas
        live = self.context.live_broker_ids()
        candidates = [r for r in reassigned if r in live and r in current_leader_and_isr.isr]
        if candidates:
            return _next(current_leader_and_isr, candidates[0], current_leader_and_isr.isr), list(reassigned)
        if not reassigned:
            raise NoReplicaOnlineException(
                f"List of reassigned replicas for partition  {tp_str(tp)} is empty. "
                f"Current leader and ISR: [{lai_str(current_leader_and_isr)}]"
            )
        raise NoReplicaOnlineException(
            f"None of the reassigned replicas for partition {tp_str(tp)} are in-sync with the leader. "
            f"Current leader and ISR: [{lai_str(current_leader_and_isr)}]"
        )
        # END SOLUTION


# --8<-- [start:preferred]
class PreferredReplicaPartitionLeaderSelector:
    """Leadership goes back to the preferred replica, the first assigned one, which spreads leaders
    over the brokers as the assignment did; only if it is alive and in the ISR."""

    def __init__(self, context: ControllerContext) -> None:
        self.context = context

    def select_leader(
        self, tp: TopicPartition, current_leader_and_isr: LeaderAndIsr
    ) -> tuple[LeaderAndIsr, list[int]]:
        assigned = self.context.partition_replica_assignment[tp]
        preferred = assigned[0]
        current_leader = self.context.partition_leadership[tp][0].leader
        if current_leader == preferred:
            raise LeaderElectionNotNeededException(
                f"Preferred replica {preferred} is already the current leader for partition {tp_str(tp)}"
            )
        log.info(
            "Current leader %d for partition %s is not the preferred replica. "
            "Triggering preferred replica leader election",
            current_leader, tp_str(tp),
        )  # fmt: skip
        if preferred in self.context.live_broker_ids() and preferred in current_leader_and_isr.isr:
            return _next(current_leader_and_isr, preferred, current_leader_and_isr.isr), list(assigned)
        raise StateChangeFailedException(
            f"Preferred replica {preferred} for partition {tp_str(tp)} is either not alive or not in the isr. "
            f"Current leader and ISR: [{lai_str(current_leader_and_isr)}]"
        )


# --8<-- [end:preferred]


# --8<-- [start:controlled_shutdown]
class ControlledShutdownLeaderSelector:
    """A broker shutting down hands its leaderships over before it stops: the first assigned replica
    still in the ISR once the shutting-down brokers are taken out of it leads. The shutting-down
    broker still counts as alive (it is told, and it may still be in the ISR of other partitions)."""

    def __init__(self, context: ControllerContext) -> None:
        self.context = context

    def select_leader(
        self, tp: TopicPartition, current_leader_and_isr: LeaderAndIsr
    ) -> tuple[LeaderAndIsr, list[int]]:
        assigned = self.context.partition_replica_assignment[tp]
        live_or_shutting_down = self.context.live_or_shutting_down_broker_ids()
        live_assigned = [r for r in assigned if r in live_or_shutting_down]
        shutting_down = self.context.shutting_down_broker_ids
        new_isr = [r for r in current_leader_and_isr.isr if r not in shutting_down]
        leader = next((r for r in live_assigned if r in new_isr), None)
        if leader is None:
            raise StateChangeFailedException(
                f"No other replicas in ISR {_ids(current_leader_and_isr.isr)} for {tp_str(tp)} besides "
                f"shutting down brokers {_ids(sorted(shutting_down))}"
            )
        log.debug(
            "Partition %s : current leader = %d, new leader = %d",
            tp_str(tp),
            current_leader_and_isr.leader,
            leader,
        )
        return _next(current_leader_and_isr, leader, new_isr), live_assigned


# --8<-- [end:controlled_shutdown]


class NoOpLeaderSelector:
    """The default of ``handle_state_changes``: a transition that should not elect anyone keeps the
    current leader and ISR (Kafka warns, since being asked means a caller forgot its selector)."""

    def __init__(self, context: ControllerContext) -> None:
        self.context = context

    def select_leader(
        self, tp: TopicPartition, current_leader_and_isr: LeaderAndIsr
    ) -> tuple[LeaderAndIsr, list[int]]:
        log.warning(
            "I should never have been asked to perform leader election, returning the current "
            "LeaderAndIsr and replica assignment."
        )
        return current_leader_and_isr, list(self.context.partition_replica_assignment[tp])
