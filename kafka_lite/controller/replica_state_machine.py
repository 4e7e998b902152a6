"""The replica state machine: where each replica (a partition on one broker) is, from assignment
through its broker's failures to its deletion.

Mirrors: kafka.controller.ReplicaStateMachine
         (core/src/main/scala/kafka/controller/ReplicaStateMachine.scala, Kafka 0.10.1),
         kafka.controller.Callbacks (in core/src/main/scala/kafka/controller/ControllerChannelManager.scala)
Book:    chapter 7, 7.1.4 (the replica state machine)
Differs: an invalid transition raises ``IllegalStateException`` where Kafka uses Scala's ``assert``
         (same message); the per-replica catch that logs a failed change sits in
         ``handle_state_changes``; the broker-change listener lives on ``KafkaController``; a
         never-led partition's replica being deleted goes Offline (``offline_without_leader_and_isr``,
         Kafka 2.0's).

``REPLICA_VALID_PREVIOUS_STATES`` is the table of legal transitions, as data (0.10.1 passes the same
lists to ``assertValidPreviousStates``). What each transition does::

    NonExistent -> New                 LeaderAndIsr (current leader and ISR) to the new replica
    New -> Online                      the replica joins the partition's assigned replicas
    Online, Offline, Ineligible -> Online   LeaderAndIsr to the replica, if the partition has a leader
    New, Online, Offline, Ineligible -> Offline   StopReplica (no delete) to the replica; out of the
                                       ISR, and LeaderAndIsr with the smaller ISR to the others (a
                                       never-led partition being deleted: only the StopReplica)
    Offline -> DeletionStarted         StopReplica (delete), whose answer goes to the callback
    DeletionStarted -> Successful / Ineligible   only the state (the deletion manager decides)
    Successful -> NonExistent          the replica leaves the partition's assigned replicas

A replica is keyed ``(topic, partition, broker)``, Kafka's ``PartitionAndReplica``. NonExistent is
the absence of a key, as in Kafka, which removes the replica's entry.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.controller.partition_leader_selector import StateChangeFailedException, tp_str

if TYPE_CHECKING:
    from kafka_lite.controller.kafka_controller import KafkaController

log = logging.getLogger(__name__)
state_change_log = logging.getLogger("kafka_lite.state.change.logger")

PartitionAndReplica = tuple[str, int, int]  # (topic, partition, broker id)


class ReplicaState(enum.Enum):
    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
    NON_EXISTENT = "NonExistentReplica"


R = ReplicaState

# --8<-- [start:table]
REPLICA_VALID_PREVIOUS_STATES: dict[ReplicaState, set[ReplicaState]] = {
    R.NEW: {R.NON_EXISTENT},
    R.ONLINE: {R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_INELIGIBLE},
    R.OFFLINE: {R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_INELIGIBLE},
    R.DELETION_STARTED: {R.OFFLINE},
    R.DELETION_SUCCESSFUL: {R.DELETION_STARTED},
    R.DELETION_INELIGIBLE: {R.DELETION_STARTED},
    R.NON_EXISTENT: {R.DELETION_SUCCESSFUL},
}
# --8<-- [end:table]

# The event that crosses each edge (see PARTITION_TRANSITION_EVENTS).
# --8<-- [start:events]
REPLICA_TRANSITION_EVENTS: dict[tuple[ReplicaState, ReplicaState], str] = {
    (R.NON_EXISTENT, R.NEW): "new partition or reassignment:\nreplica assigned",
    (R.NEW, R.ONLINE): "new partition or reassignment:\nreplica started",
    (R.ONLINE, R.ONLINE): "controller failover,\nor broker startup",
    (R.OFFLINE, R.ONLINE): "broker startup",
    (R.DELETION_INELIGIBLE, R.ONLINE): "broker startup",
    (R.NEW, R.OFFLINE): "broker failure",
    (R.ONLINE, R.OFFLINE): "broker failure, controlled shutdown,\nreassignment, or topic deletion",
    (R.OFFLINE, R.OFFLINE): "topic deletion retried",
    (R.DELETION_INELIGIBLE, R.OFFLINE): "topic deletion retried",
    (R.OFFLINE, R.DELETION_STARTED): "topic deletion:\nStopReplica (delete)",
    (R.DELETION_STARTED, R.DELETION_SUCCESSFUL): "StopReplica succeeded",
    (R.DELETION_STARTED, R.DELETION_INELIGIBLE): "StopReplica failed\nor broker down",
    (R.DELETION_SUCCESSFUL, R.NON_EXISTENT): "topic deletion completes",
}
# --8<-- [end:events]

# Called with (replica, from_state, to_state) after every legal change.
TransitionListener = Callable[[PartitionAndReplica, ReplicaState, ReplicaState], None]


@dataclass
class Callbacks:
    """Kafka's ``Callbacks``: what a transition hands to the requests it queues. The one a state
    transition uses is the StopReplica (delete) answer's, called with (response body, broker id).
    It runs on the broker's sending thread, so one that changes the controller's state puts an event
    on the controller's queue instead (Kafka 0.11's model)."""

    stop_replica_response_callback: Callable[[dict, int], None] | None = None


class ReplicaStateMachine:
    def __init__(self, controller: KafkaController) -> None:
        self.controller = controller
        self.states: dict[PartitionAndReplica, ReplicaState] = {}
        self.has_started = False
        self.transition_listeners: list[TransitionListener] = []

    def add_transition_listener(self, listener: TransitionListener) -> None:
        """Call ``listener(replica, from_state, to_state)`` after every legal change, as the
        state-change log records it: how tests see which edges of the table were crossed."""
        self.transition_listeners.append(listener)

    def startup(self) -> None:
        """Replicas on live brokers start Online, the others DeletionIneligible (a replica whose
        broker is down cannot be deleted, should its topic be); the live ones are then told their
        partitions' state."""
        self._initialize_replica_state()
        self.has_started = True
        self.handle_state_changes(self.controller.context.all_live_replicas(), R.ONLINE)
        log.info("Started replica state machine with initial state -> %s", self.states)

    def shutdown(self) -> None:
        self.has_started = False
        self.states.clear()

    def _initialize_replica_state(self) -> None:
        ctx = self.controller.context
        live = ctx.live_broker_ids()
        for tp, replicas in ctx.partition_replica_assignment.items():
            for r in replicas:
                self.states[(tp[0], tp[1], r)] = R.ONLINE if r in live else R.DELETION_INELIGIBLE

    def handle_state_changes(
        self, replicas, target: ReplicaState, callbacks: Callbacks | None = None
    ) -> None:
        """Move each of ``replicas`` to ``target``. A replica whose change fails keeps its state (the
        state-change log says why); the brokers' requests go out in one batch at the end."""
        if not replicas:
            return
        callbacks = callbacks or Callbacks()
        log.info("Invoking state change to %s for replicas %s", target.value, ",".join(map(pr_str, replicas)))
        batch = self.controller.new_batch()
        for replica in replicas:
            current = self.states.get(replica, R.NON_EXISTENT)
            try:
                self.handle_state_change(replica, target, callbacks, batch)
            except Exception as e:
                state_change_log.error(
                    "Controller %d epoch %d initiated state change of replica %d for partition [%s,%d] "
                    "from %s to %s failed: %s",
                    self.controller.broker_id, self.controller.epoch, replica[2], replica[0], replica[1],
                    current.value, target.value, e,
                )  # fmt: skip
        batch.send_requests_to_brokers(self.controller.epoch)

    # --8<-- [start:handle_state_change]
    def handle_state_change(
        self, replica: PartitionAndReplica, target: ReplicaState, callbacks: Callbacks, batch
    ) -> None:
        """One replica's transition; raises ``IllegalStateException`` if the table does not allow it,
        ``StateChangeFailedException`` if it cannot be made."""
        topic, partition, replica_id = replica
        tp = (topic, partition)
        if not self.has_started:
            raise StateChangeFailedException(
                f"Controller {self.controller.broker_id} epoch {self.controller.epoch} initiated state change "
                f"of replica {replica_id} for partition {tp_str(tp)} to {target.value} failed because "
                "replica state machine has not started"
            )
        current = self.states.setdefault(replica, R.NON_EXISTENT)
        self._assert_valid_previous_states(replica, target)
        ctx = self.controller.context
        if target is R.NEW:
            # Start the replica as a follower of the current leader, if the partition has one yet.
            current_state = self.controller.zk.get_partition_state(topic, partition)
            if current_state is not None:
                if current_state.leader_and_isr.leader == replica_id:
                    raise StateChangeFailedException(
                        f"Replica {replica_id} for partition {tp_str(tp)} cannot be moved to NewReplica "
                        "state as it is being requested to become leader"
                    )
                # The batch sends the context's state: make it the one just read, as Kafka sends
                # the state it read here.
                ctx.partition_leadership[tp] = (current_state.leader_and_isr, current_state.controller_epoch)
                batch.add_leader_and_isr_request_for_brokers([replica_id], tp)
        elif target is R.DELETION_STARTED:
            batch.add_stop_replica_request_for_brokers(
                [replica_id], tp, delete=True, callback=callbacks.stop_replica_response_callback
            )
        elif target is R.NON_EXISTENT:
            ctx.partition_replica_assignment[tp] = [
                r for r in ctx.partition_replica_assignment[tp] if r != replica_id
            ]
            del self.states[replica]
            self._changed(replica, current, target)
            return
        elif target is R.ONLINE:
            if current is R.NEW:
                assigned = ctx.partition_replica_assignment[tp]
                if replica_id not in assigned:  # a reassignment's new replica
                    ctx.partition_replica_assignment[tp] = [*assigned, replica_id]
            elif tp in ctx.partition_leadership:
                batch.add_leader_and_isr_request_for_brokers([replica_id], tp)
            # Without a leader the partition never went online: no broker has a log for it yet, and
            # the replica hears of it when a leader is elected.
        elif target is R.OFFLINE:
            if not self._take_offline(replica, batch):
                return
        # DeletionSuccessful, DeletionIneligible: only the state; the deletion manager acts on it.
        self.states[replica] = target
        self._changed(replica, current, target)

    # --8<-- [end:handle_state_change]

    # --8<-- [start:take_offline]
    def _take_offline(self, replica: PartitionAndReplica, batch) -> bool:
        """StopReplica without delete, so the replica stops fetching; then out of the ISR, which
        Kafka does here as an optimisation (the leader would shrink it after
        ``replica.lag.time.max.ms``), with the smaller ISR sent to the partition's other replicas.
        Raises if the partition has no leader and ISR znode, unless its topic is being deleted.
        Returns whether the replica is Offline now."""
        topic, partition, replica_id = replica
        tp = (topic, partition)
        ctx = self.controller.context
        batch.add_stop_replica_request_for_brokers([replica_id], tp, delete=False)
        updated = None
        if tp in ctx.partition_leadership:
            updated = self.controller.remove_replica_from_isr(topic, partition, replica_id)
        to_be_deleted = self.controller.is_topic_queued_up_for_deletion(topic)
        if updated is None:
            if not to_be_deleted:
                raise StateChangeFailedException(
                    f"Failed to change state of replica {replica_id} for partition {tp_str(tp)} since the "
                    "leader and isr path in zookeeper is empty"
                )
            return self.offline_without_leader_and_isr()
        if not to_be_deleted:
            others = [r for r in ctx.partition_replica_assignment[tp] if r != replica_id]
            batch.add_leader_and_isr_request_for_brokers(others, tp)
        return True

    @staticmethod
    def offline_without_leader_and_isr() -> bool:
        """Whether a replica of a partition that never had a leader (no state znode) goes Offline when
        its topic is being deleted: yes, as in Kafka 2.0, which moves such replicas to OfflineReplica.

        Kafka 0.10.1 leaves the replica in its state: nothing is written, and the partition has no
        ISR to leave. From New or Online the replica can never reach ReplicaDeletionStarted, so the
        deletion of a topic created while none of its replicas' brokers was alive never completes.
        kafka_lite borrows 2.0's answer so that such a topic can be deleted."""
        return True

    # --8<-- [end:take_offline]

    def _changed(self, replica: PartitionAndReplica, current: ReplicaState, target: ReplicaState) -> None:
        state_change_log.info(
            "Controller %d epoch %d changed state of replica %d for partition %s from %s to %s",
            self.controller.broker_id, self.controller.epoch, replica[2], tp_str(replica[:2]),
            current.value, target.value,
        )  # fmt: skip
        for listener in self.transition_listeners:
            listener(replica, current, target)

    def _assert_valid_previous_states(self, replica: PartitionAndReplica, target: ReplicaState) -> None:
        current = self.states[replica]
        allowed = REPLICA_VALID_PREVIOUS_STATES[target]
        if current not in allowed:
            names = ",".join(s.value for s in ReplicaState if s in allowed)
            raise IllegalStateException(
                f"Replica {pr_str(replica)} should be in the {names} states before moving to {target.value} "
                f"state. Instead it is in {current.value} state"
            )

    # -- what the topic deletion manager asks ------------------------------------------------------------------

    def replicas_in_state(self, topic: str, state: ReplicaState) -> set[PartitionAndReplica]:
        return {r for r, s in self.states.items() if r[0] == topic and s is state}

    def is_any_replica_in_state(self, topic: str, state: ReplicaState) -> bool:
        return any(r[0] == topic and s is state for r, s in self.states.items())

    def are_all_replicas_for_topic_deleted(self, topic: str) -> bool:
        replicas = self.controller.context.replicas_for_topic(topic)
        return all(self.states.get(r) is R.DELETION_SUCCESSFUL for r in replicas)

    def is_at_least_one_replica_in_deletion_started_state(self, topic: str) -> bool:
        replicas = self.controller.context.replicas_for_topic(topic)
        return any(self.states.get(r) is R.DELETION_STARTED for r in replicas)


def pr_str(replica: PartitionAndReplica) -> str:
    """``PartitionAndReplica.toString`` in Kafka 0.10.1."""
    return f"[Topic={replica[0]},Partition={replica[1]},Replica={replica[2]}]"
