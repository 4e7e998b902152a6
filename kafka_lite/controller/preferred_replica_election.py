"""Preferred replica election and the auto leader rebalance: leadership back to each partition's first
assigned replica.

Mirrors: kafka.controller.PreferredReplicaElectionListener and KafkaController's
         onPreferredReplicaElection and checkAndTriggerPartitionRebalance
         (core/src/main/scala/kafka/controller/KafkaController.scala, Kafka 0.10.1)
Book:    chapter 7, 7.1.7 (preferred replica election)
Differs: the listener and the rebalance task put events on the controller's event thread (Kafka
         0.11's model) instead of taking 0.10.1's ``controllerLock``; the listener reads the znode
         when its event runs.

Why a "preferred" replica: topic creation spreads the first replicas of the partitions evenly over
the brokers, so when every partition is led by its first replica the leaders' load is even. A
broker that bounces loses its leaderships to the other replicas and, back, leads nothing. The tool
writes ``/admin/preferred_replica_election``; the controller moves each named partition Online ->
Online with the PreferredReplica selector, then deletes the path. With
``auto.leader.rebalance.enable`` the controller looks every
``leader.imbalance.check.interval.seconds``: for each broker, the share of the partitions it is
preferred for that another broker leads; above ``leader.imbalance.per.broker.percentage`` it
elects the preferred replica for those partitions (without the path).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.controller.partition_leader_selector import tp_str
from kafka_lite.controller.partition_state_machine import PartitionState
from kafka_lite.zk.zk_utils import PREFERRED_REPLICA_ELECTION_PATH

if TYPE_CHECKING:
    from kafka_lite.controller.kafka_controller import KafkaController

log = logging.getLogger(__name__)


def _tps(partitions) -> str:
    return ",".join(tp_str(tp) for tp in sorted(partitions))


class PreferredReplicaElection:
    """The controller's preferred-replica election; ``KafkaController`` delegates to it."""

    def __init__(self, controller: KafkaController) -> None:
        self.controller = controller

    @property
    def context(self):
        return self.controller.context

    # -- the listener -----------------------------------------------------------------------------------------

    def register_preferred_replica_election_listener(self) -> None:
        """Watch ``/admin/preferred_replica_election``; each change is a PreferredReplicaLeaderElection event."""
        self.controller.watch_data_events(
            PREFERRED_REPLICA_ELECTION_PATH,
            "PreferredReplicaLeaderElection",
            self.handle_preferred_replica_election,
        )

    def handle_preferred_replica_election(self) -> None:
        """Kafka's ``PreferredReplicaElectionListener.handleDataChange``: elect the named partitions
        not already undergoing an election, skipping topics being deleted. Malformed JSON is logged
        and the path deleted, so that the next election can be asked for."""
        if not self.controller.is_active():
            return
        try:
            partitions = self.controller.zk.get_partitions_undergoing_preferred_replica_election()
        except ValueError as e:
            log.error("Deleting %s: %s", PREFERRED_REPLICA_ELECTION_PATH, e)
            self.controller.zk.delete_path(PREFERRED_REPLICA_ELECTION_PATH)
            return
        undergoing = self.context.partitions_undergoing_preferred_replica_election
        if undergoing:
            log.info(
                "These partitions are already undergoing preferred replica election: %s", _tps(undergoing)
            )
        partitions -= undergoing
        being_deleted = {tp for tp in partitions if self.controller.is_topic_queued_up_for_deletion(tp[0])}
        if being_deleted:
            log.error(
                "Skipping preferred replica election for partitions %s since the respective topics are being deleted",
                _tps(being_deleted),
            )
        self.on_preferred_replica_election(partitions - being_deleted)

    # -- failover ---------------------------------------------------------------------------------------------

    def initialize_preferred_replica_election(self) -> None:
        """Kafka's ``initializePreferredReplicaElection``: the partitions in the path whose preferred
        replica already leads, or whose topic is gone, are done; the others are resumed by
        ``maybe_trigger_preferred_replica_election``."""
        try:
            partitions = self.controller.zk.get_partitions_undergoing_preferred_replica_election()
        except ValueError as e:
            log.error("Deleting %s: %s", PREFERRED_REPLICA_ELECTION_PATH, e)
            self.controller.zk.delete_path(PREFERRED_REPLICA_ELECTION_PATH)
            return
        ctx = self.context

        def completed(tp: TopicPartition) -> bool:
            replicas = ctx.partition_replica_assignment.get(tp)
            if not replicas:
                return True  # its topic was deleted
            leadership = ctx.partition_leadership.get(tp)
            return leadership is not None and leadership[0].leader == replicas[0]

        done = {tp for tp in partitions if completed(tp)}
        ctx.partitions_undergoing_preferred_replica_election |= partitions - done
        log.info("Partitions undergoing preferred replica election: %s", _tps(partitions))
        log.info("Partitions that completed preferred replica election: %s", _tps(done))
        log.info(
            "Resuming preferred replica election for partitions: %s",
            _tps(ctx.partitions_undergoing_preferred_replica_election),
        )

    def maybe_trigger_preferred_replica_election(self) -> None:
        self.on_preferred_replica_election(set(self.context.partitions_undergoing_preferred_replica_election))

    # -- the election -----------------------------------------------------------------------------------------

    # --8<-- [start:on_preferred_replica_election]
    def on_preferred_replica_election(
        self, partitions: set[TopicPartition], is_triggered_by_auto_rebalance: bool = False
    ) -> None:
        """Online -> Online with the PreferredReplica selector, then the partitions leave the set (and,
        unless the auto rebalance asked, the path is deleted), whatever the outcome: a partition
        whose preferred replica is down or out of the ISR keeps its leader, and the log says so."""
        log.info("Starting preferred replica leader election for partitions %s", _tps(partitions))
        ctx = self.context
        topics = {tp[0] for tp in partitions}
        self.controller.topic_deletion_manager.mark_topic_ineligible_for_deletion(topics)
        try:
            ctx.partitions_undergoing_preferred_replica_election |= partitions
            self.controller.partition_state_machine.handle_state_changes(
                sorted(partitions),
                PartitionState.ONLINE,
                self.controller.preferred_replica_partition_leader_selector,
            )
        except Exception as e:
            log.error(
                "Error completing preferred replica leader election for partitions %s: %s",
                _tps(partitions),
                e,
            )
        finally:
            self.remove_partitions_from_preferred_replica_election(partitions, is_triggered_by_auto_rebalance)
            self.controller.topic_deletion_manager.resume_deletion_for_topics(topics)

    # --8<-- [end:on_preferred_replica_election]

    def remove_partitions_from_preferred_replica_election(
        self, partitions: set[TopicPartition], is_triggered_by_auto_rebalance: bool
    ) -> None:
        ctx = self.context
        for tp in sorted(partitions):
            leadership = ctx.partition_leadership.get(tp)
            replicas = ctx.partition_replica_assignment.get(tp)
            if leadership is None or not replicas:
                continue
            current_leader, preferred = leadership[0].leader, replicas[0]
            if current_leader == preferred:
                log.info(
                    "Partition %s completed preferred replica leader election. New leader is %d",
                    tp_str(tp), preferred,
                )  # fmt: skip
            else:
                log.warning(
                    "Partition %s failed to complete preferred replica leader election. Leader is %d",
                    tp_str(tp), current_leader,
                )  # fmt: skip
        if not is_triggered_by_auto_rebalance:
            self.controller.zk.delete_path(PREFERRED_REPLICA_ELECTION_PATH)
        ctx.partitions_undergoing_preferred_replica_election -= partitions

    # -- the auto leader rebalance ----------------------------------------------------------------------------

    def leader_imbalance_ratios(self) -> dict[int, tuple[float, list[TopicPartition]]]:
        """For each preferred broker: the share of the partitions it is preferred for that another
        broker leads, and those partitions (the ones with no known leadership are not counted as
        misled). Topics being deleted are left out."""
        ctx = self.context
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp, replicas in ctx.partition_replica_assignment.items():
            if replicas and not self.controller.is_topic_queued_up_for_deletion(tp[0]):
                by_preferred.setdefault(replicas[0], []).append(tp)
        ratios = {}
        for broker, partitions in sorted(by_preferred.items()):
            not_led = sorted(
                tp
                for tp in partitions
                if tp in ctx.partition_leadership and ctx.partition_leadership[tp][0].leader != broker
            )
            ratios[broker] = (len(not_led) / len(partitions), not_led)
        return ratios

    # --8<-- [start:check_and_trigger_partition_rebalance]
    def check_and_trigger_partition_rebalance(self, leader_imbalance_per_broker_percentage: int) -> None:
        """Kafka's ``checkAndTriggerPartitionRebalance``: for each broker whose imbalance ratio is above
        the percentage, a preferred replica election for each partition it should lead, as long as
        the broker is live and no reassignment or other preferred election is under way."""
        if not self.controller.is_active():
            return
        ctx = self.context
        for broker, (ratio, not_led) in self.leader_imbalance_ratios().items():
            log.debug("Leader imbalance ratio for broker %d is %f", broker, ratio)
            if ratio <= leader_imbalance_per_broker_percentage / 100:
                continue
            for tp in not_led:
                if (
                    broker in ctx.live_broker_ids()
                    and not ctx.partitions_being_reassigned
                    and not ctx.partitions_undergoing_preferred_replica_election
                    and not self.controller.is_topic_queued_up_for_deletion(tp[0])
                    and tp[0] in ctx.all_topics
                ):
                    self.on_preferred_replica_election({tp}, is_triggered_by_auto_rebalance=True)

    # --8<-- [end:check_and_trigger_partition_rebalance]
