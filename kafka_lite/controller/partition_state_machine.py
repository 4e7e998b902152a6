"""The partition state machine: where each partition is between creation and deletion, and the
leader election that takes it online.

Mirrors: kafka.controller.PartitionStateMachine
         (core/src/main/scala/kafka/controller/PartitionStateMachine.scala, Kafka 0.10.1)
Book:    chapter 7, 7.1.4 (the partition state machine)
Labs:    lab 13 (_initialize_leader_and_isr_for_partition, elect_leader_for_partition)
Differs: the per-partition catch that logs a failed change sits in ``handle_state_changes`` (and
         ``trigger_online_partition_state_change``), so that ``handle_state_change`` raises for one
         partition; the topic-change and delete-topic listeners live on ``KafkaController``.

``PARTITION_VALID_PREVIOUS_STATES`` is the table of legal transitions, as data: a partition moves to
a target state only from the listed states (0.10.1 passes the same lists to
``assertValidPreviousStates`` in each branch of ``handleStateChange``; 0.11 names them
``validPreviousStates``). The chapter's picture is drawn from it, with ``PARTITION_TRANSITION_EVENTS``
naming the event that crosses each edge. What each transition does::

    NonExistent -> New            the assigned replicas are in the context already (nothing else)
    New -> Online                 first live assigned replica leads, the live ones are the ISR;
                                  the state znode is created; LeaderAndIsr to the live replicas
    Offline, Online -> Online     a selector picks leader and ISR; conditional write of the znode;
                                  LeaderAndIsr to the replicas the selector names
    New, Online, Offline -> Offline   only the state (the leader is gone, or the topic is deleted)
    Offline -> NonExistent        only the state (the topic's deletion completed)
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.controller.partition_leader_selector import (
    LeaderElectionNotNeededException,
    NoOpLeaderSelector,
    NoReplicaOnlineException,
    PartitionLeaderSelector,
    StateChangeFailedException,
    tp_str,
)
from kafka_lite.zk.zk_utils import LeaderAndIsr

if TYPE_CHECKING:
    from kafka_lite.controller.kafka_controller import KafkaController

log = logging.getLogger(__name__)
state_change_log = logging.getLogger("kafka_lite.state.change.logger")


class PartitionState(enum.Enum):
    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"
    NON_EXISTENT = "NonExistentPartition"


P = PartitionState

# --8<-- [start:table]
PARTITION_VALID_PREVIOUS_STATES: dict[PartitionState, set[PartitionState]] = {
    P.NEW: {P.NON_EXISTENT},
    P.ONLINE: {P.NEW, P.ONLINE, P.OFFLINE},
    P.OFFLINE: {P.NEW, P.ONLINE, P.OFFLINE},
    P.NON_EXISTENT: {P.OFFLINE},
}
# --8<-- [end:table]

# The event that crosses each edge of the table, as Kafka 0.10.1's controller drives it
# (KafkaController's onNewPartitionCreation, onBrokerStartup, onBrokerFailure, shutdownBroker,
# onPartitionReassignment, onPreferredReplicaElection; TopicDeletionManager). The chapter's picture
# labels its edges with these; a transition without an event is an error there.
# --8<-- [start:events]
PARTITION_TRANSITION_EVENTS: dict[tuple[PartitionState, PartitionState], str] = {
    (P.NON_EXISTENT, P.NEW): "new partition: assign replicas",
    (P.NEW, P.ONLINE): "new partition: first live replica leads",
    (P.OFFLINE, P.ONLINE): "OnlinePartition election\n(broker startup or failure)",
    (P.ONLINE, P.ONLINE): "leader moves: reassignment,\npreferred election, controlled shutdown",
    (P.ONLINE, P.OFFLINE): "leader's broker fails,\nor topic deletion",
    (P.NEW, P.OFFLINE): "topic deletion",
    (P.OFFLINE, P.OFFLINE): "broker failure,\nor topic deletion",
    (P.OFFLINE, P.NON_EXISTENT): "topic deletion completes",
}
# --8<-- [end:events]

# Called with (partition, from_state, to_state) after every legal change.
TransitionListener = Callable[[TopicPartition, PartitionState, PartitionState], None]


class PartitionStateMachine:
    def __init__(self, controller: KafkaController) -> None:
        # Kafka's machine takes the controller too: it reads the context, the epoch, ZooKeeper and
        # the selectors from it, and the context is the controller's to replace at failover.
        self.controller = controller
        self.states: dict[TopicPartition, PartitionState] = {}
        self.has_started = False
        self.transition_listeners: list[TransitionListener] = []

    def add_transition_listener(self, listener: TransitionListener) -> None:
        """Call ``listener(partition, from_state, to_state)`` after every legal change, as the
        state-change log records it: how tests see which edges of the table were crossed."""
        self.transition_listeners.append(listener)

    def startup(self) -> None:
        """Initial states from the leaders read from ZooKeeper, then every New or Offline partition
        is brought online."""
        self._initialize_partition_state()
        self.has_started = True
        self.trigger_online_partition_state_change()
        log.info("Started partition state machine with initial state -> %s", self._states_str())

    def shutdown(self) -> None:
        self.has_started = False
        self.states.clear()

    def _initialize_partition_state(self) -> None:
        ctx = self.controller.context
        for tp in ctx.partition_replica_assignment:
            leadership = ctx.partition_leadership.get(tp)
            if leadership is None:
                self.states[tp] = P.NEW  # no leader and ISR znode yet
            elif leadership[0].leader in ctx.live_broker_ids():
                self.states[tp] = P.ONLINE
            else:
                self.states[tp] = P.OFFLINE

    # --8<-- [start:trigger_online_partition_state_change]
    def trigger_online_partition_state_change(self) -> None:
        """Every New or Offline partition, except those of topics being deleted, to Online with the
        offline selector: after a failover, a broker's startup and a broker's failure."""
        batch = self.controller.new_batch()
        for tp, state in list(self.states.items()):
            if self.controller.is_topic_queued_up_for_deletion(tp[0]):
                continue
            if state in (P.OFFLINE, P.NEW):
                self._try_state_change(tp, P.ONLINE, self.controller.offline_partition_selector, batch)
        batch.send_requests_to_brokers(self.controller.epoch)

    # --8<-- [end:trigger_online_partition_state_change]

    def handle_state_changes(
        self,
        partitions,
        target: PartitionState,
        leader_selector: PartitionLeaderSelector | None = None,
    ) -> None:
        """Move each of ``partitions`` to ``target`` (electing with ``leader_selector`` where it goes
        online from Online or Offline; the no-op selector by default). A partition whose change
        fails keeps its state (the state-change log says why); what the brokers must hear goes out
        in one batch at the end."""
        selector = leader_selector or NoOpLeaderSelector(self.controller.context)
        log.info("Invoking state change to %s for partitions %s", target.value, _tps(partitions))
        batch = self.controller.new_batch()
        for tp in partitions:
            self._try_state_change(tp, target, selector, batch)
        batch.send_requests_to_brokers(self.controller.epoch)

    def _try_state_change(self, tp, target, selector, batch) -> None:
        current = self.states.get(tp, P.NON_EXISTENT)
        try:
            self.handle_state_change(tp, target, selector, batch)
        except Exception as e:
            state_change_log.error(
                "Controller %d epoch %d initiated state change for partition %s from %s to %s failed: %s",
                self.controller.broker_id, self.controller.epoch, tp_str(tp), current.value, target.value, e,
            )  # fmt: skip

    # --8<-- [start:handle_state_change]
    def handle_state_change(
        self, tp: TopicPartition, target: PartitionState, leader_selector: PartitionLeaderSelector, batch
    ) -> None:
        """One partition's transition; raises ``IllegalStateException`` if the table does not allow
        it, ``StateChangeFailedException`` or ``NoReplicaOnlineException`` if it cannot be made."""
        if not self.has_started:
            raise StateChangeFailedException(
                f"Controller {self.controller.broker_id} epoch {self.controller.epoch} initiated state change "
                f"for partition {tp_str(tp)} to {target.value} failed because the partition state machine "
                "has not started"
            )
        current = self.states.setdefault(tp, P.NON_EXISTENT)
        self._assert_valid_previous_states(tp, target)
        if target is P.ONLINE:
            if current is P.NEW:
                self._initialize_leader_and_isr_for_partition(tp, batch)
            else:  # Offline, or Online with a leader to move
                self.elect_leader_for_partition(tp, leader_selector, batch)
        # New: the replicas are assigned already. Offline: the leader is gone (or the topic is being
        # deleted). NonExistent: the topic's deletion completed. Only the state changes.
        self.states[tp] = target
        state_change_log.info(
            "Controller %d epoch %d changed partition %s from %s to %s",
            self.controller.broker_id, self.controller.epoch, tp_str(tp), current.value, target.value,
        )  # fmt: skip
        for listener in self.transition_listeners:
            listener(tp, current, target)

    def _assert_valid_previous_states(self, tp: TopicPartition, target: PartitionState) -> None:
        current = self.states[tp]
        allowed = PARTITION_VALID_PREVIOUS_STATES[target]
        if current not in allowed:
            raise IllegalStateException(
                f"Partition {tp_str(tp)} should be in the {_names(allowed)} states before moving to "
                f"{target.value} state. Instead it is in {current.value} state"
            )

    # --8<-- [end:handle_state_change]

    def _initialize_leader_and_isr_for_partition(self, tp: TopicPartition, batch) -> None:
        """New -> Online: the first live assigned replica leads and every live one is in the ISR; the
        state znode is created, which fails only if another controller got there first."""
        # BEGIN SOLUTION
        ctx = self.controller.context
        assigned = ctx.partition_replica_assignment[tp]
        live = [r for r in assigned if r in ctx.live_broker_ids()]
        if not live:
            raise StateChangeFailedException(
                f"encountered error during state change of partition {tp_str(tp)} from New to Online, "
                f"assigned replicas are [{_ids(assigned)}], live brokers are [{_ids(sorted(ctx.live_broker_ids()))}]. "
                "No assigned replica is alive."
            )
        leader_and_isr = LeaderAndIsr(live[0], 0, live, 0)
        try:
            self.controller.zk.create_partition_state(tp[0], tp[1], leader_and_isr, self.controller.epoch)
        except Exception:  # the znode exists: a newer controller initialised the partition
            existing = self.controller.zk.get_partition_state(tp[0], tp[1])
            raise StateChangeFailedException(
                f"encountered error while changing partition {tp_str(tp)}'s state from New to Online since "
                f"LeaderAndIsr path already exists with value {existing.leader_and_isr if existing else None} "
                f"and controller epoch {existing.controller_epoch if existing else -1}"
            ) from None
        ctx.partition_leadership[tp] = (leader_and_isr, self.controller.epoch)
        batch.add_leader_and_isr_request_for_brokers(live, tp)
        # END SOLUTION

    # --8<-- [start:elect_leader_for_partition]
    def elect_leader_for_partition(
        self, tp: TopicPartition, leader_selector: PartitionLeaderSelector, batch
    ) -> None:
        """Offline/Online -> Online: the selector's leader and ISR, written with a conditional update
        (read, select, write if nobody wrote since the read; else read again)."""
        # BEGIN SOLUTION
        ctx = self.controller.context
        zk = self.controller.zk
        try:
            while True:
                current = zk.get_partition_state(tp[0], tp[1])
                if current is None:
                    raise StateChangeFailedException(
                        f"LeaderAndIsr information doesn't exist for partition {tp_str(tp)} in "
                        f"{self.states[tp].value} state"
                    )
                if current.controller_epoch > self.controller.epoch:
                    raise StateChangeFailedException(
                        f"aborted leader election for partition [{tp[0]},{tp[1]}] since the LeaderAndIsr path "
                        "was already written by another controller. This probably means that the current "
                        f"controller {self.controller.broker_id} went through a soft failure and another "
                        f"controller was elected with epoch {current.controller_epoch}."
                    )
                new, recipients = leader_selector.select_leader(tp, current.leader_and_isr)
                # The selector returns the version the write will produce; the write itself expects
                # the version that was read.
                expected = LeaderAndIsr(
                    new.leader, new.leader_epoch, new.isr, current.leader_and_isr.zk_version
                )
                ok, version = zk.conditional_update_partition_state(
                    tp[0], tp[1], expected, self.controller.epoch
                )
                if ok:
                    break
        except LeaderElectionNotNeededException:
            return  # the preferred replica already leads: nothing to write or tell
        except NoReplicaOnlineException:
            raise
        except Exception as e:
            raise StateChangeFailedException(
                f"encountered error while electing leader for partition {tp_str(tp)} due to: {e}."
            ) from e
        new = LeaderAndIsr(new.leader, new.leader_epoch, new.isr, version)
        ctx.partition_leadership[tp] = (new, self.controller.epoch)
        state_change_log.info(
            "Controller %d epoch %d elected leader %d for Offline partition %s",
            self.controller.broker_id, self.controller.epoch, new.leader, tp_str(tp),
        )  # fmt: skip
        batch.add_leader_and_isr_request_for_brokers(recipients, tp)
        # END SOLUTION

    # --8<-- [end:elect_leader_for_partition]

    def _states_str(self) -> str:
        return ", ".join(f"{tp_str(tp)} -> {s.value}" for tp, s in sorted(self.states.items()))


def _names(states) -> str:
    """Kafka's ``fromStates.mkString(",")``, in the order the states are declared."""
    return ",".join(s.value for s in type(next(iter(states))) if s in states)


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)


def _tps(partitions) -> str:
    return ",".join(tp_str(tp) for tp in partitions)
