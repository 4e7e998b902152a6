"""Partition reassignment: moving a partition's replicas to other brokers while it keeps serving.

Mirrors: kafka.controller.PartitionsReassignedListener, ReassignedPartitionsIsrChangeListener and
         KafkaController's onPartitionReassignment with its steps
         (core/src/main/scala/kafka/controller/KafkaController.scala, Kafka 0.10.1)
Book:    chapter 7, 7.1.6 (partition reassignment)
Labs:    lab 13 (on_partition_reassignment, move_reassigned_partition_leader_if_required)
Differs: the listeners put events on the controller's event thread (Kafka 0.11's model) instead of
         taking 0.10.1's ``controllerLock``; each reads the znode when its event runs, not the data
         the watch delivered, so a stale event acts on what is there now. A reassignment naming a
         broker that is not live is refused, as Kafka does since 1.1 (0.10.1's check was dead code).

The tool writes ``/admin/reassign_partitions``; the controller's watch on it hands each new
partition to ``initiate_reassign_replicas_for_topic_partition``. With RAR the reassigned replicas
and OAR the original ones, the steps (Kafka's comment numbers them so) are:

1. AR (the assignment) in ZooKeeper becomes OAR + RAR.
2. LeaderAndIsr with AR = OAR + RAR to every replica, the leader epoch bumped in ZooKeeper.
3. The replicas in RAR - OAR go NewReplica: they start fetching from the leader.
4. Wait until every replica in RAR is in the ISR (a watch on the partition's state znode).
5. The replicas in RAR go OnlineReplica.
6. AR becomes RAR in memory.
7. A leader not in RAR (or dead) is replaced by the Reassigned selector; otherwise the leader
   epoch is bumped and LeaderAndIsr sent with AR = RAR, so the leader adds no old replica back.
8. The replicas in OAR - RAR go OfflineReplica (out of the ISR, StopReplica without delete).
9. They go ReplicaDeletionStarted (StopReplica with delete), ReplicaDeletionSuccessful and
   NonExistentReplica.
10. AR in ZooKeeper becomes RAR: the last write, since ZooKeeper is the only place OAR is kept until
    then, so a controller that fails before it resumes the reassignment from the start.
11. The partition leaves ``/admin/reassign_partitions`` (the path goes when it is empty).
12. UpdateMetadata for the partition to every broker.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.controller.partition_leader_selector import (
    ReassignedPartitionsContext,
    StateChangeFailedException,
    tp_str,
)
from kafka_lite.controller.partition_state_machine import PartitionState
from kafka_lite.controller.replica_state_machine import Callbacks, ReplicaState
from kafka_lite.zk.zk_utils import (
    REASSIGN_PARTITIONS_PATH,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    topic_partition_state_path,
)

if TYPE_CHECKING:
    from kafka_lite.controller.kafka_controller import KafkaController

log = logging.getLogger(__name__)


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)


class PartitionReassignment:
    """The controller's reassignment steps; ``KafkaController`` delegates to it (Kafka keeps them as
    KafkaController's own methods)."""

    def __init__(self, controller: KafkaController) -> None:
        self.controller = controller

    @property
    def context(self):
        return self.controller.context

    # -- the listeners ----------------------------------------------------------------------------------------

    def register_partitions_reassigned_listener(self) -> None:
        """Watch ``/admin/reassign_partitions``; each change is a PartitionReassignment event."""
        self.controller.watch_data_events(
            REASSIGN_PARTITIONS_PATH, "PartitionReassignment", self.handle_partitions_reassigned
        )

    def handle_partitions_reassigned(self) -> None:
        """Kafka's ``PartitionsReassignedListener.handleDataChange``: start each partition not already
        being reassigned; a partition of a topic being deleted is refused and taken off the path."""
        if not self.controller.is_active():
            return
        try:
            wanted = self.controller.zk.get_partitions_being_reassigned()
        except ValueError as e:
            log.error("Ignoring %s: its JSON is malformed (%s)", REASSIGN_PARTITIONS_PATH, e)
            return
        for tp, new_replicas in wanted.items():
            if tp in self.context.partitions_being_reassigned:
                continue
            if self.controller.is_topic_queued_up_for_deletion(tp[0]):
                log.error(
                    "Skipping reassignment of partition %s for topic %s since it is currently being deleted",
                    tp_str(tp), tp[0],
                )  # fmt: skip
                self.remove_partition_from_reassigned_partitions(tp)
                continue
            self.initiate_reassign_replicas_for_topic_partition(tp, ReassignedPartitionsContext(new_replicas))

    def watch_isr_changes_for_reassigned_partition(
        self, tp: TopicPartition, reassigned_partition_context: ReassignedPartitionsContext
    ) -> None:
        """Kafka's ``ReassignedPartitionsIsrChangeListener``: a watch on the partition's state znode,
        which the leader rewrites when a follower joins the ISR. It stops once the partition is no
        longer being reassigned with these replicas."""
        self.controller.watch_data_events(
            topic_partition_state_path(tp[0], tp[1]),
            "PartitionReassignmentIsrChange",
            lambda: self.handle_reassigned_isr_change(tp, reassigned_partition_context),
            keep_watching=lambda: (
                self.context.partitions_being_reassigned.get(tp) is reassigned_partition_context
            ),
        )

    def handle_reassigned_isr_change(
        self, tp: TopicPartition, reassigned_partition_context: ReassignedPartitionsContext
    ) -> None:
        if (
            not self.controller.is_active()
            or self.context.partitions_being_reassigned.get(tp) is not reassigned_partition_context
        ):
            return
        state = self.controller.zk.get_partition_state(tp[0], tp[1])
        if state is None:
            log.error(
                "Error handling reassignment of partition %s to replicas %s as it was never created",
                tp_str(tp), _ids(reassigned_partition_context.new_replicas),
            )  # fmt: skip
            return
        reassigned = set(reassigned_partition_context.new_replicas)
        caught_up = reassigned & set(state.leader_and_isr.isr)
        if caught_up == reassigned:
            log.info(
                "%d/%d replicas have caught up with the leader for partition %s being reassigned. "
                "Resuming partition reassignment",
                len(caught_up), len(reassigned), tp_str(tp),
            )  # fmt: skip
            self.on_partition_reassignment(tp, reassigned_partition_context)
        else:
            log.info(
                "%d/%d replicas have caught up with the leader for partition %s being reassigned. "
                "Replica(s) %s still need to catch up",
                len(caught_up), len(reassigned), tp_str(tp), _ids(sorted(reassigned - caught_up)),
            )  # fmt: skip

    # -- failover ---------------------------------------------------------------------------------------------

    def initialize_partition_reassignment(self) -> None:
        """Kafka's ``initializePartitionReassignment``: the reassignments in ZooKeeper that are already
        done (AR is RAR) or whose topic is gone leave the path; the others are resumed."""
        try:
            being_reassigned = self.controller.zk.get_partitions_being_reassigned()
        except ValueError as e:
            log.error("Ignoring %s: its JSON is malformed (%s)", REASSIGN_PARTITIONS_PATH, e)
            return
        assignment = self.context.partition_replica_assignment
        done = [tp for tp, new in being_reassigned.items() if assignment.get(tp) in (None, new)]
        for tp in done:
            self.remove_partition_from_reassigned_partitions(tp)
        to_resume = {tp: new for tp, new in being_reassigned.items() if tp not in done}
        for tp, new in to_resume.items():
            self.context.partitions_being_reassigned[tp] = ReassignedPartitionsContext(new)
        log.info("Partitions being reassigned: %s", being_reassigned)
        log.info("Partitions already reassigned: %s", done)
        log.info("Resuming reassignment of partitions: %s", to_resume)

    def maybe_trigger_partition_reassignment(self) -> None:
        for tp, reassigned_partition_context in list(self.context.partitions_being_reassigned.items()):
            self.initiate_reassign_replicas_for_topic_partition(tp, reassigned_partition_context)

    # -- the steps --------------------------------------------------------------------------------------------

    # --8<-- [start:initiate_reassign]
    def initiate_reassign_replicas_for_topic_partition(
        self, tp: TopicPartition, reassigned_partition_context: ReassignedPartitionsContext
    ) -> None:
        """Refuse what cannot be done (the error is logged and the partition leaves the path, so the
        tool's ``--verify`` reports it failed); otherwise watch the ISR and start the steps."""
        new_replicas = reassigned_partition_context.new_replicas
        try:
            assigned = self.context.partition_replica_assignment.get(tp)
            if assigned is None:
                raise KafkaException(f"Attempt to reassign partition {tp_str(tp)} that doesn't exist")
            if assigned == new_replicas:
                raise KafkaException(
                    f"Partition {tp_str(tp)} to be reassigned is already assigned to replicas "
                    f"{_ids(new_replicas)}. Ignoring request for partition reassignment"
                )
            live = self.context.live_broker_ids()
            dead = [r for r in new_replicas if r not in live]
            if not new_replicas or dead:
                raise KafkaException(
                    f"Cannot reassign partition {tp_str(tp)} to replicas {_ids(new_replicas)}: "
                    f"replica(s) {_ids(dead)} not alive. Ignoring request for partition reassignment"
                )
            log.info(
                "Handling reassignment of partition %s to new replicas %s", tp_str(tp), _ids(new_replicas)
            )
            self.context.partitions_being_reassigned[tp] = reassigned_partition_context
            self.watch_isr_changes_for_reassigned_partition(tp, reassigned_partition_context)
            # a topic being reassigned is not deleted meanwhile: its replicas are moving
            self.controller.topic_deletion_manager.mark_topic_ineligible_for_deletion({tp[0]})
            self.on_partition_reassignment(tp, reassigned_partition_context)
        except Exception as e:
            log.error("Error completing reassignment of partition %s: %s", tp_str(tp), e)
            # Taken off the path so that the tool is not blocked by it.
            self.remove_partition_from_reassigned_partitions(tp)

    # --8<-- [end:initiate_reassign]

    # --8<-- [start:on_partition_reassignment]
    def on_partition_reassignment(
        self, tp: TopicPartition, reassigned_partition_context: ReassignedPartitionsContext
    ) -> None:
        """Run on the reassignment's start and on each ISR change: steps 1-3 until every RAR replica
        is in the ISR, then steps 4-12 (see the module docstring)."""
        # BEGIN SOLUTION
        reassigned = list(reassigned_partition_context.new_replicas)
        if not self.are_replicas_in_isr(tp, reassigned):
            log.info(
                "New replicas %s for partition %s being reassigned not yet caught up with the leader",
                _ids(reassigned), tp_str(tp),
            )  # fmt: skip
            current = self.context.partition_replica_assignment[tp]
            new_not_in_old = [r for r in reassigned if r not in current]
            new_and_old = current + new_not_in_old
            # 1. AR in ZooKeeper becomes OAR + RAR.
            self.update_assigned_replicas_for_partition(tp, new_and_old)
            # 2. LeaderAndIsr to every replica in OAR + RAR, with AR = OAR + RAR.
            self.update_leader_epoch_and_send_request(tp, new_and_old)
            # 3. Replicas in RAR - OAR -> NewReplica.
            self.start_new_replicas_for_reassigned_partition(tp, new_not_in_old)
            log.info(
                "Waiting for new replicas %s for partition %s being reassigned to catch up with the leader",
                _ids(reassigned), tp_str(tp),
            )  # fmt: skip
            return
        # 4. Every replica in RAR is in the ISR.
        old_replicas = [r for r in self.context.partition_replica_assignment[tp] if r not in reassigned]
        # 5. Replicas in RAR -> OnlineReplica.
        rsm = self.controller.replica_state_machine
        for replica in reassigned:
            rsm.handle_state_changes([(tp[0], tp[1], replica)], ReplicaState.ONLINE)
        # 6. AR becomes RAR in memory; 7. the leader moves to RAR if it must.
        self.move_reassigned_partition_leader_if_required(tp, reassigned_partition_context)
        # 8. Replicas in OAR - RAR -> OfflineReplica; 9. -> NonExistentReplica.
        self.stop_old_replicas_of_reassigned_partition(tp, old_replicas)
        # 10. AR in ZooKeeper becomes RAR.
        self.update_assigned_replicas_for_partition(tp, reassigned)
        # 11. The partition leaves /admin/reassign_partitions.
        self.remove_partition_from_reassigned_partitions(tp)
        log.info("Removed partition %s from the list of reassigned partitions in zookeeper", tp_str(tp))
        self.context.partitions_being_reassigned.pop(tp, None)
        # 12. Leader, ISR and replicas changed: every broker hears of it.
        self.controller.send_update_metadata_request(
            sorted(self.context.live_or_shutting_down_broker_ids()), [tp]
        )
        # A deletion of the topic that waited for the reassignment may go on.
        self.controller.topic_deletion_manager.resume_deletion_for_topics({tp[0]})
        # END SOLUTION

    # --8<-- [end:on_partition_reassignment]

    def are_replicas_in_isr(self, tp: TopicPartition, replicas: list[int]) -> bool:
        state = self.controller.zk.get_partition_state(tp[0], tp[1])
        return state is not None and all(r in state.leader_and_isr.isr for r in replicas)

    def update_assigned_replicas_for_partition(self, tp: TopicPartition, replicas: list[int]) -> None:
        """Write the topic's assignment to ZooKeeper with ``tp``'s replicas replaced, then the context."""
        topic = tp[0]
        assignment = {
            p: list(r) for (t, p), r in self.context.partition_replica_assignment.items() if t == topic
        }
        assignment[tp[1]] = list(replicas)
        self.controller.zk.update_partition_assignment(topic, assignment)
        log.info(
            "Updated assigned replicas for partition %s being reassigned to %s", tp_str(tp), _ids(replicas)
        )
        self.context.partition_replica_assignment[tp] = list(replicas)

    def start_new_replicas_for_reassigned_partition(
        self, tp: TopicPartition, new_replicas: list[int]
    ) -> None:
        rsm = self.controller.replica_state_machine
        for replica in new_replicas:
            rsm.handle_state_changes([(tp[0], tp[1], replica)], ReplicaState.NEW)

    def update_leader_epoch_and_send_request(
        self, tp: TopicPartition, replicas_to_receive_request: list[int]
    ) -> None:
        """Bump the leader epoch in ZooKeeper and send LeaderAndIsr, carrying the context's AR, to
        ``replicas_to_receive_request``: a broker ignores a LeaderAndIsr whose leader epoch is not
        newer than the one it has, so the new replica list would not reach it otherwise."""
        updated = self.update_leader_epoch(tp)
        if updated is None:
            log.error(
                "Controller %d epoch %d failed to send LeaderAndIsr request with new assigned replica list %s "
                "to leader for partition being reassigned %s",
                self.controller.broker_id, self.controller.epoch,
                _ids(self.context.partition_replica_assignment.get(tp, [])), tp_str(tp),
            )  # fmt: skip
            return
        batch = self.controller.new_batch()
        batch.add_leader_and_isr_request_for_brokers(replicas_to_receive_request, tp)
        batch.send_requests_to_brokers(self.controller.epoch)

    def update_leader_epoch(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """Kafka's ``updateLeaderEpoch``: the same leader and ISR with the leader epoch one higher,
        written conditionally (retried if the leader changed the ISR meanwhile); None if the
        partition has no state znode."""
        controller = self.controller
        while True:
            current = controller.zk.get_partition_state(tp[0], tp[1])
            if current is None:
                return None
            if current.controller_epoch > controller.epoch:
                raise StateChangeFailedException(
                    "Leader and isr path written by another controller. This probably means the current "
                    f"controller with epoch {controller.epoch} went through a soft failure and another "
                    f"controller was elected with epoch {current.controller_epoch}. Aborting state change "
                    "by this controller"
                )
            lai = current.leader_and_isr
            proposed = LeaderAndIsr(lai.leader, lai.leader_epoch + 1, lai.isr, lai.zk_version)
            ok, version = controller.zk.conditional_update_partition_state(
                tp[0], tp[1], proposed, controller.epoch
            )
            if ok:
                updated = LeaderAndIsr(lai.leader, lai.leader_epoch + 1, list(lai.isr), version)
                self.context.partition_leadership[tp] = (updated, controller.epoch)
                return LeaderIsrAndControllerEpoch(updated, controller.epoch)

    def move_reassigned_partition_leader_if_required(
        self, tp: TopicPartition, reassigned_partition_context: ReassignedPartitionsContext
    ) -> None:
        """Steps 6 and 7. AR becomes RAR in the context first, so that the LeaderAndIsr sent carries
        RAR: the leader then adds no old replica back to the ISR."""
        # BEGIN SOLUTION
        reassigned = list(reassigned_partition_context.new_replicas)
        # The leader wrote the ISR that let the reassignment go on; its notification to the controller
        # may not have been processed yet, so the context is refreshed before it is read.
        self.controller.update_leader_and_isr_cache([tp])
        current_leader = self.context.partition_leadership[tp][0].leader
        old_and_new = self.context.partition_replica_assignment[tp]
        self.context.partition_replica_assignment[tp] = reassigned
        psm = self.controller.partition_state_machine
        selector = self.controller.reassigned_partition_leader_selector
        if current_leader not in reassigned:
            log.info(
                "Leader %d for partition %s being reassigned, is not in the new list of replicas %s. "
                "Re-electing leader",
                current_leader, tp_str(tp), _ids(reassigned),
            )  # fmt: skip
            psm.handle_state_changes([tp], PartitionState.ONLINE, selector)
        elif current_leader in self.context.live_broker_ids():
            log.info(
                "Leader %d for partition %s being reassigned, is already in the new list of replicas %s "
                "and is alive",
                current_leader, tp_str(tp), _ids(reassigned),
            )  # fmt: skip
            self.update_leader_epoch_and_send_request(tp, old_and_new)
        else:
            log.info(
                "Leader %d for partition %s being reassigned, is already in the new list of replicas %s "
                "but is dead",
                current_leader, tp_str(tp), _ids(reassigned),
            )  # fmt: skip
            psm.handle_state_changes([tp], PartitionState.ONLINE, selector)
        # END SOLUTION

    def stop_old_replicas_of_reassigned_partition(self, tp: TopicPartition, old_replicas: list[int]) -> None:
        """Steps 8 and 9: Offline (out of the ISR; StopReplica), ReplicaDeletionStarted (StopReplica
        with delete), ReplicaDeletionSuccessful, NonExistent. As in 0.10.1 the deletion is not
        retried: the answer to the StopReplica is not waited for."""
        replicas = [(tp[0], tp[1], r) for r in old_replicas]
        if not replicas:
            return
        rsm = self.controller.replica_state_machine
        rsm.handle_state_changes(replicas, ReplicaState.OFFLINE)
        rsm.handle_state_changes(
            replicas, ReplicaState.DELETION_STARTED, Callbacks(_ignore_stop_replica_response)
        )
        rsm.handle_state_changes(replicas, ReplicaState.DELETION_SUCCESSFUL)
        rsm.handle_state_changes(replicas, ReplicaState.NON_EXISTENT)

    def remove_partition_from_reassigned_partitions(self, tp: TopicPartition) -> None:
        """Rewrite ``/admin/reassign_partitions`` without ``tp`` (delete it when nothing is left); the
        partition's ISR watch stops at its next event, since ``tp`` is no longer being reassigned."""
        zk = self.controller.zk
        try:
            remaining = zk.get_partitions_being_reassigned()
        except ValueError:
            remaining = {}
        remaining.pop(tp, None)
        zk.update_partition_reassignment_data(remaining)
        self.context.partitions_being_reassigned.pop(tp, None)


def _ignore_stop_replica_response(response: dict, broker_id: int) -> None:
    """Kafka 0.10.1 does not act on the answer either (its TODO: retry a failed deletion)."""
