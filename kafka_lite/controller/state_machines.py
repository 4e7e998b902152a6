"""The controller's two state machines: one for partitions, one for replicas, with their tables as data.

Mirrors: kafka.controller.PartitionStateMachine, ReplicaStateMachine and
         OfflinePartitionLeaderSelector (core/src/main/scala/kafka/controller/, Kafka 0.10.1)
Book:    chapter 7, 7.1.4 (the partition and replica state machines, and the leader selectors)
Differs: only the transitions topic creation and broker start/failure need are acted on here
         (no reassignment, preferred election or deletion); the tables are complete, so an invalid
         transition is refused exactly as Kafka refuses it.

``PARTITION_VALID_PREVIOUS_STATES`` and ``REPLICA_VALID_PREVIOUS_STATES`` are Kafka 0.11's
``validPreviousStates`` (0.10.1 passes the same lists to ``assertValidPreviousStates`` in each
transition): a transition to a target state is legal only from the listed states. The chapter's
pictures are drawn from these dicts, so the docs cannot drift from the code.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.zk.zk_utils import LeaderAndIsr

if TYPE_CHECKING:
    from kafka_lite.controller.kafka_controller import KafkaController

log = logging.getLogger(__name__)
state_change_log = logging.getLogger("kafka_lite.state.change.logger")


class StateChangeFailedException(Exception):
    pass


class PartitionState(enum.Enum):
    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"
    NON_EXISTENT = "NonExistentPartition"


class ReplicaState(enum.Enum):
    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
    NON_EXISTENT = "NonExistentReplica"


P, R = PartitionState, ReplicaState

# --8<-- [start:tables]
PARTITION_VALID_PREVIOUS_STATES: dict[PartitionState, set[PartitionState]] = {
    P.NEW: {P.NON_EXISTENT},
    P.ONLINE: {P.NEW, P.ONLINE, P.OFFLINE},
    P.OFFLINE: {P.NEW, P.ONLINE, P.OFFLINE},
    P.NON_EXISTENT: {P.OFFLINE},
}
REPLICA_VALID_PREVIOUS_STATES: dict[ReplicaState, set[ReplicaState]] = {
    R.NEW: {R.NON_EXISTENT},
    R.ONLINE: {R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_INELIGIBLE},
    R.OFFLINE: {R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_INELIGIBLE},
    R.DELETION_STARTED: {R.OFFLINE},
    R.DELETION_SUCCESSFUL: {R.DELETION_STARTED},
    R.DELETION_INELIGIBLE: {R.DELETION_STARTED},
    R.NON_EXISTENT: {R.DELETION_SUCCESSFUL},
}
# --8<-- [end:tables]

# The event that crosses each edge of the tables above, as Kafka 0.10.1's controller drives it
# (KafkaController's onNewPartitionCreation, onBrokerStartup, onBrokerFailure, shutdownBroker,
# onPartitionReassignment, onPreferredReplicaElection; TopicDeletionManager). The chapter's
# pictures label their edges with these; a transition without an event is an error there.
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


def offline_partition_leader_selector(
    assigned: list[int],
    current: LeaderAndIsr,
    live_brokers: set[int],
    unclean_allowed: Callable[[], bool] = lambda: False,
) -> tuple[LeaderAndIsr, list[int]]:
    """Kafka's ``OfflinePartitionLeaderSelector``: the first assigned replica that is alive and in the
    ISR; with none, an alive replica outside the ISR only if unclean election is allowed. As in
    Kafka, the topic's setting (``unclean_allowed``) is read only when no in-sync replica is alive."""
    live_assigned = [r for r in assigned if r in live_brokers]
    live_isr = [r for r in current.isr if r in live_brokers]
    if live_isr:
        leader = next(r for r in assigned if r in live_isr)
        isr = live_isr
    elif live_assigned and unclean_allowed():
        leader, isr = live_assigned[0], [live_assigned[0]]
        log.warning(
            "Unclean leader election: %d becomes leader outside the ISR %s (data may be lost)",
            leader,
            current.isr,
        )
    else:
        raise StateChangeFailedException(
            f"No replica in ISR for partition is alive. Live brokers are: {sorted(live_brokers)}, "
            f"ISR brokers are: {current.isr}"
        )
    return LeaderAndIsr(leader, current.leader_epoch + 1, isr, current.zk_version + 1), live_assigned


class _StateMachine:
    """What both machines share: a current state per key (a partition, or a replica), the table of
    legal transitions, and one batch of broker requests per round of changes."""

    VALID_PREVIOUS_STATES: ClassVar[dict] = {}  # each machine's table

    def __init__(self, controller: KafkaController) -> None:
        self.controller = controller
        self.states: dict = {}

    def handle_state_changes(self, keys: list, target) -> None:
        """Move each of ``keys`` to ``target``; what the brokers must hear goes out once, at the end."""
        batch = self.controller.new_batch()
        for key in keys:
            self._handle_state_change(key, target, batch)
        batch.send_requests_to_brokers(self.controller.epoch)

    def _assert_valid_previous_state(self, what: str, current, target) -> None:
        """Kafka's ``assertValidPreviousStates``: refuse a transition the table does not allow."""
        if current not in self.VALID_PREVIOUS_STATES[target]:
            allowed = sorted(s.value for s in self.VALID_PREVIOUS_STATES[target])
            raise StateChangeFailedException(
                f"{what} should be in the {allowed} states before moving to {target.value} state. "
                f"Instead it is in {current.value} state"
            )

    def _handle_state_change(self, key, target, batch) -> None:
        raise NotImplementedError


class PartitionStateMachine(_StateMachine):
    VALID_PREVIOUS_STATES = PARTITION_VALID_PREVIOUS_STATES

    def startup(self) -> None:
        """Initial states from ZooKeeper's leaders, then bring every New or Offline partition online."""
        ctx = self.controller.context
        for tp in ctx.partition_replica_assignment:
            leadership = ctx.partition_leadership.get(tp)
            if leadership is None:
                self.states[tp] = P.NEW
            elif leadership[0].leader in ctx.live_broker_ids():
                self.states[tp] = P.ONLINE
            else:
                self.states[tp] = P.OFFLINE
        self.trigger_online_partition_state_change()

    def trigger_online_partition_state_change(self) -> None:
        batch = self.controller.new_batch()
        for tp, state in list(self.states.items()):
            if state in (P.NEW, P.OFFLINE):
                self._handle_state_change(tp, P.ONLINE, batch)
        batch.send_requests_to_brokers(self.controller.epoch)

    # --8<-- [start:handle_state_changes]
    def _handle_state_change(self, tp: TopicPartition, target: PartitionState, batch) -> None:
        current = self.states.get(tp, P.NON_EXISTENT)
        try:
            self._assert_valid_previous_state(f"Partition {tp[0]}-{tp[1]}", current, target)
            if target is P.ONLINE:
                if current is P.NEW:
                    self._initialize_leader_and_isr(tp, batch)
                else:
                    self._elect_leader(tp, batch)
            self.states[tp] = target
            state_change_log.info(
                "Controller %d epoch %d changed partition %s-%d from %s to %s",
                self.controller.broker_id, self.controller.epoch, tp[0], tp[1], current.value, target.value,
            )  # fmt: skip
        except StateChangeFailedException as e:
            state_change_log.warning(
                "Controller %d epoch %d failed to change state for partition %s-%d from %s to %s: %s",
                self.controller.broker_id, self.controller.epoch, tp[0], tp[1], current.value, target.value, e,
            )  # fmt: skip

    # --8<-- [end:handle_state_changes]

    def _initialize_leader_and_isr(self, tp: TopicPartition, batch) -> None:
        """New -> Online: the first live assigned replica leads; the ISR is every live assigned replica."""
        ctx = self.controller.context
        assigned = ctx.partition_replica_assignment[tp]
        live = [r for r in assigned if r in ctx.live_broker_ids()]
        if not live:
            raise StateChangeFailedException(
                f"encountered error during state change of partition {tp[0]}-{tp[1]} from New to Online, "
                f"assigned replicas are [{assigned}], live brokers are [{sorted(ctx.live_broker_ids())}]. "
                "No assigned replica is alive."
            )
        leader_and_isr = LeaderAndIsr(live[0], 0, live, 0)
        try:
            self.controller.zk.create_partition_state(tp[0], tp[1], leader_and_isr, self.controller.epoch)
        except Exception as e:  # the znode exists: another controller got there first
            raise StateChangeFailedException(
                f"could not create the leader and ISR path in ZooKeeper: {e}"
            ) from None
        ctx.partition_leadership[tp] = (leader_and_isr, self.controller.epoch)
        batch.add_leader_and_isr_request_for_brokers(live, tp)

    def _elect_leader(self, tp: TopicPartition, batch) -> None:
        """Offline/Online -> Online: a new leader by the offline selector, written with a conditional update."""
        ctx = self.controller.context
        zk = self.controller.zk
        while True:
            current = zk.get_partition_state(tp[0], tp[1])
            if current is None:
                raise StateChangeFailedException(
                    f"LeaderAndIsr information doesn't exist for partition {tp[0]}-{tp[1]}"
                )
            if current.controller_epoch > self.controller.epoch:
                raise StateChangeFailedException(
                    f"aborted leader election for partition {tp[0]}-{tp[1]}: a newer controller (epoch "
                    f"{current.controller_epoch}) has written its state"
                )
            new, recipients = offline_partition_leader_selector(
                ctx.partition_replica_assignment[tp],
                current.leader_and_isr,
                ctx.live_broker_ids(),
                lambda: self.controller.unclean_leader_election_enabled(tp[0]),
            )
            # The conditional write expects the version we read; Kafka's selectors return version+1
            # as the version the write will produce.
            expected = LeaderAndIsr(new.leader, new.leader_epoch, new.isr, current.leader_and_isr.zk_version)
            ok, version = zk.conditional_update_partition_state(tp[0], tp[1], expected, self.controller.epoch)
            if ok:
                new = LeaderAndIsr(new.leader, new.leader_epoch, new.isr, version)
                ctx.partition_leadership[tp] = (new, self.controller.epoch)
                batch.add_leader_and_isr_request_for_brokers(recipients, tp)
                return


class ReplicaStateMachine(_StateMachine):
    VALID_PREVIOUS_STATES = REPLICA_VALID_PREVIOUS_STATES

    def startup(self) -> None:
        ctx = self.controller.context
        for tp, replicas in ctx.partition_replica_assignment.items():
            for r in replicas:
                self.states[(tp[0], tp[1], r)] = (
                    R.ONLINE if r in ctx.live_broker_ids() else R.DELETION_INELIGIBLE
                )
        live = [(t, p, r) for (t, p, r), s in self.states.items() if s is R.ONLINE]
        self.handle_state_changes(live, R.ONLINE)

    def _handle_state_change(self, replica: tuple[str, int, int], target: ReplicaState, batch) -> None:
        topic, partition, broker = replica
        tp = (topic, partition)
        ctx = self.controller.context
        current = self.states.get(replica, R.NON_EXISTENT)
        try:
            self._assert_valid_previous_state(
                f"Replica {broker} of partition {topic}-{partition}", current, target
            )
            leadership = ctx.partition_leadership.get(tp)
            if target is R.NEW and leadership is not None:
                if leadership[0].leader == broker:
                    raise StateChangeFailedException(
                        f"Replica {broker} for partition {tp} cannot become new: it is the leader"
                    )
                batch.add_leader_and_isr_request_for_brokers([broker], tp)
            elif target is R.ONLINE and current is not R.NEW and leadership is not None:
                batch.add_leader_and_isr_request_for_brokers([broker], tp)
            elif target is R.OFFLINE:
                batch.add_stop_replica_request_for_brokers([broker], tp, delete=False)
                # Out of the ISR (leader -1 if it led), and the partition's other live replicas told.
                if self.controller.remove_replica_from_isr(tp, broker):
                    others = [r for r in ctx.partition_replica_assignment.get(tp, []) if r != broker]
                    batch.add_leader_and_isr_request_for_brokers(
                        [r for r in others if r in ctx.live_broker_ids()], tp
                    )
            self.states[replica] = target
            state_change_log.info(
                "Controller %d epoch %d changed state of replica %d for partition %s-%d from %s to %s",
                self.controller.broker_id, self.controller.epoch, broker, topic, partition, current.value, target.value,
            )  # fmt: skip
        except StateChangeFailedException as e:
            state_change_log.warning("Controller %d: %s", self.controller.broker_id, e)
