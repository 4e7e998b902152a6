"""The topic deletion manager: takes a topic marked under ``/admin/delete_topics`` through both state
machines until no broker holds a byte of it, then removes it from ZooKeeper.

Mirrors: kafka.controller.TopicDeletionManager and PartitionStateMachine.DeleteTopicsListener
         (core/src/main/scala/kafka/controller/TopicDeletionManager.scala, PartitionStateMachine.scala,
         Kafka 0.10.1)
Book:    chapter 7, 7.1.5 (topic deletion)
Differs: the steps run on the controller's event thread, called where 0.10.1 signals its
         DeleteTopicsThread (``resume_deletions``, 0.11's name), as Kafka 0.11 did when it moved the
         controller onto one thread: a second thread would need 0.10.1's controller lock back. A
         never-led partition's replica still goes Offline when it is deleted (Kafka 2.0's rule, in
         the replica state machine's ``offline_without_leader_and_isr``; 0.10.1 left it where it was
         and never completed the deletion).
         A topic being reassigned or in a preferred election is marked ineligible as it is queued
         (0.10.1's listener marks it before, where the mark does not take).

The steps, each replica ``(topic, partition, broker)``::

    /admin/delete_topics/<t> appears   -> enqueue_topics_for_deletion -> resume_deletions
    resume_deletions, topic eligible   -> on_topic_deletion: UpdateMetadata with leader -2 (brokers
                                          drop the topic from their caches), then for each replica:
                                          live: Offline (StopReplica), DeletionStarted (StopReplica
                                          with delete, answered to the callback); dead: the topic is
                                          ineligible until the broker returns
    StopReplica answered NONE          -> complete_replica_deletion: DeletionSuccessful
    StopReplica answered an error,     -> fail_replica_deletion: DeletionIneligible, topic ineligible
      or the broker died
    every replica DeletionSuccessful   -> complete_delete_topic: replicas NonExistent, partitions
                                          Offline then NonExistent, the znodes deleted
    a broker returns (on_broker_startup), a reassignment or preferred election ends
                                       -> resume_deletion_for_topics: ineligible no more; Ineligible
                                          replicas are retried from Offline

With ``delete.topic.enable`` false, as in 0.10.1, the controller does not watch
``/admin/delete_topics``: a mark written there stays until a controller that allows deletion reads it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kafka_lite.common.errors import Errors
from kafka_lite.controller.partition_state_machine import PartitionState
from kafka_lite.controller.replica_state_machine import Callbacks, PartitionAndReplica, ReplicaState

if TYPE_CHECKING:
    from kafka_lite.controller.kafka_controller import KafkaController
    from kafka_lite.zk.zk_utils import ZkUtils

log = logging.getLogger(__name__)

R = ReplicaState


class TopicDeletionManager:
    def __init__(
        self,
        controller: KafkaController,
        initial_topics_to_be_deleted: set[str] = frozenset(),
        initial_topics_ineligible_for_deletion: set[str] = frozenset(),
    ) -> None:
        """Made at each failover from what ZooKeeper holds then (Kafka's ``initializeTopicDeletion``)."""
        self.controller = controller
        self.context = controller.context
        self.replica_state_machine = controller.replica_state_machine
        self.partition_state_machine = controller.partition_state_machine
        self.is_delete_topic_enabled = controller.delete_topic_enable
        # The set lives on the context, where the state machines ask about it
        # (``KafkaController.is_topic_queued_up_for_deletion``). With deletion disabled it stays
        # empty: 0.10.1 keeps the topics but answers "not queued" for every one of them.
        self.topics_to_be_deleted = self.context.topics_to_be_deleted
        if self.is_delete_topic_enabled:
            self.topics_to_be_deleted |= set(initial_topics_to_be_deleted)
        self.topics_ineligible_for_deletion: set[str] = set(initial_topics_ineligible_for_deletion) & set(
            self.topics_to_be_deleted
        )

    # -- what the controller's events call -------------------------------------------------------------------

    def enqueue_topics_for_deletion(self, topics: set[str], ineligible: set[str] = frozenset()) -> None:
        """The DeleteTopicsListener's topics: queued until every replica is deleted. ``ineligible``
        (those being reassigned or in a preferred election) are marked once queued, so the mark
        takes; 0.10.1's listener marks them before, when ``mark_topic_ineligible_for_deletion``
        ignores a topic not yet queued."""
        if self.is_delete_topic_enabled:
            self.topics_to_be_deleted |= topics
            self.mark_topic_ineligible_for_deletion(set(ineligible) & set(topics))
            self.resume_deletions()

    def resume_deletion_for_topics(self, topics: set[str]) -> None:
        """A broker holding a replica returned, or a reassignment or preferred election of the topic
        ended: the topics may proceed."""
        if self.is_delete_topic_enabled:
            topics_to_resume = topics & self.topics_to_be_deleted
            if topics_to_resume:
                self.topics_ineligible_for_deletion -= topics_to_resume
                self.resume_deletions()

    def fail_replica_deletion(self, replicas: set[PartitionAndReplica]) -> None:
        """A StopReplica (delete) answered an error, or the replicas' broker died: the replicas go
        ReplicaDeletionIneligible and their topics wait for an event that resumes them."""
        if not self.is_delete_topic_enabled:
            return
        failed = {r for r in replicas if self.is_topic_queued_up_for_deletion(r[0])}
        if not failed:
            return
        topics = {r[0] for r in failed}
        log.debug("Deletion failed for replicas %s. Halting deletion for topics %s", sorted(failed), topics)
        # Kafka asks this of every failed replica; the table takes only those in DeletionStarted, and
        # the others (a dead broker's replica that was never started) would each log a refusal.
        started = sorted(r for r in failed if self.replica_state_machine.states.get(r) is R.DELETION_STARTED)
        self.replica_state_machine.handle_state_changes(started, R.DELETION_INELIGIBLE)
        self.mark_topic_ineligible_for_deletion(topics)
        self.resume_deletions()

    def mark_topic_ineligible_for_deletion(self, topics: set[str]) -> None:
        """Halt the deletion of ``topics`` (a replica's broker is down, or the topic is being
        reassigned or in a preferred election). A topic not queued is left alone."""
        if self.is_delete_topic_enabled:
            halted = topics & self.topics_to_be_deleted
            self.topics_ineligible_for_deletion |= halted
            if halted:
                log.info("Halted deletion of topics %s", ",".join(sorted(halted)))

    def is_topic_ineligible_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_ineligible_for_deletion if self.is_delete_topic_enabled else True

    def is_topic_deletion_in_progress(self, topic: str) -> bool:
        if not self.is_delete_topic_enabled:
            return False
        return self.replica_state_machine.is_at_least_one_replica_in_deletion_started_state(topic)

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return self.is_delete_topic_enabled and topic in self.topics_to_be_deleted

    # -- the StopReplica (delete) answer ----------------------------------------------------------------------

    def delete_topic_stop_replica_callback(self, response: dict, replica_id: int) -> None:
        """Kafka's ``deleteTopicStopReplicaCallback``. It runs on the broker's sending thread, so it
        puts the answer on the controller's event queue (0.10.1 takes the controller lock here)."""
        self.controller.put_event(
            "TopicDeletionStopReplicaResult", lambda: self.on_stop_replica_response(response, replica_id)
        )

    def on_stop_replica_response(self, response: dict, replica_id: int) -> None:
        """A request-level error fails every partition of the answer; otherwise each its own."""
        if not self.controller.is_active():
            return
        answered = {(p["topic"], p["partition"]): p["error_code"] for p in response.get("partitions", [])}
        if response.get("error_code", 0) != Errors.NONE.code:
            in_error = set(answered)
        else:
            in_error = {tp for tp, code in answered.items() if code != Errors.NONE.code}
        self.fail_replica_deletion({(t, p, replica_id) for t, p in in_error})
        if len(in_error) != len(answered):
            deleted = set(answered) - in_error
            self.complete_replica_deletion({(t, p, replica_id) for t, p in deleted})

    def complete_replica_deletion(self, replicas: set[PartitionAndReplica]) -> None:
        """The broker deleted these replicas' logs: DeletionSuccessful."""
        deleted = sorted(r for r in replicas if self.is_topic_queued_up_for_deletion(r[0]))
        log.debug("Deletion successfully completed for replicas %s", deleted)
        self.replica_state_machine.handle_state_changes(deleted, R.DELETION_SUCCESSFUL)
        self.resume_deletions()

    # -- the deletion steps (0.10.1's DeleteTopicsThread.doWork) --------------------------------------------

    # --8<-- [start:resume_deletions]
    def resume_deletions(self) -> None:
        """For each queued topic: tear it down if every replica is deleted; else, unless a deletion is
        in flight, ready its failed replicas for a retry; then (re)start it if it is eligible."""
        rsm = self.replica_state_machine
        queued = sorted(self.topics_to_be_deleted)
        if queued:
            log.info("Handling deletion for topics %s", ",".join(queued))
        for topic in queued:
            if rsm.are_all_replicas_for_topic_deleted(topic):
                self.complete_delete_topic(topic)
                log.info("Deletion of topic %s successfully completed", topic)
            elif rsm.is_at_least_one_replica_in_deletion_started_state(topic):
                in_flight = sorted(rsm.replicas_in_state(topic, R.DELETION_STARTED))
                log.info("Deletion for replicas %s of topic %s in progress", [r[2] for r in in_flight], topic)
            elif rsm.is_any_replica_in_state(topic, R.DELETION_INELIGIBLE):
                self.mark_topic_for_deletion_retry(topic)
            if self.is_topic_eligible_for_deletion(topic):
                log.info("Deletion of topic %s (re)started", topic)
                self.on_topic_deletion({topic})
            elif self.is_topic_ineligible_for_deletion(topic):
                log.info(
                    "Not retrying deletion of topic %s at this time since it is marked ineligible", topic
                )

    # --8<-- [end:resume_deletions]

    def is_topic_eligible_for_deletion(self, topic: str) -> bool:
        """Queued, no StopReplica (delete) awaiting its answer, and nothing halting it."""
        return (
            topic in self.topics_to_be_deleted
            and not self.is_topic_deletion_in_progress(topic)
            and not self.is_topic_ineligible_for_deletion(topic)
        )

    def mark_topic_for_deletion_retry(self, topic: str) -> None:
        """Ineligible replicas back to Offline, from where ``start_replica_deletion`` starts them."""
        failed = sorted(self.replica_state_machine.replicas_in_state(topic, R.DELETION_INELIGIBLE))
        log.info(
            "Retrying delete topic for topic %s since replicas %s were not successfully deleted",
            topic,
            failed,
        )
        self.replica_state_machine.handle_state_changes(failed, R.OFFLINE)

    # --8<-- [start:on_topic_deletion]
    def on_topic_deletion(self, topics: set[str]) -> None:
        """First every broker hears (UpdateMetadata, leader -2 for the topics' partitions) that the
        topics are going, so that they stop serving them; then the replicas are deleted."""
        log.info("Topic deletion callback for %s", ",".join(sorted(topics)))
        partitions = sorted(tp for tp in self.context.partition_replica_assignment if tp[0] in topics)
        self.controller.send_update_metadata_request(
            sorted(self.context.live_or_shutting_down_broker_ids()), partitions
        )
        for topic in sorted(topics):
            self.on_partition_deletion([tp for tp in partitions if tp[0] == topic])

    def on_partition_deletion(self, partitions_to_be_deleted) -> None:
        log.info("Partition deletion callback for %s", partitions_to_be_deleted)
        self.start_replica_deletion(set(self.context.replicas_for_partitions(partitions_to_be_deleted)))

    def start_replica_deletion(self, replicas_for_topics_to_be_deleted: set[PartitionAndReplica]) -> None:
        """Live replicas not yet deleted go Offline (StopReplica, so that followers stop fetching),
        then DeletionStarted (StopReplica with delete); a replica on a dead broker makes the topic
        ineligible until that broker returns."""
        rsm = self.replica_state_machine
        live = set(self.context.live_broker_ids())
        for topic in sorted({r[0] for r in replicas_for_topics_to_be_deleted}):
            replicas = {r for r in replicas_for_topics_to_be_deleted if r[0] == topic}
            alive = {r for r in replicas if r[2] in live}
            dead = replicas - alive
            retry = sorted(alive - rsm.replicas_in_state(topic, R.DELETION_SUCCESSFUL))
            # (Kafka also moves the dead replicas to DeletionIneligible here; the table refuses that
            # from any state but DeletionStarted, which a dead broker's replica has already left.)
            rsm.handle_state_changes(retry, R.OFFLINE)
            log.debug("Deletion started for replicas %s", retry)
            rsm.handle_state_changes(
                retry, R.DELETION_STARTED, Callbacks(self.delete_topic_stop_replica_callback)
            )
            if dead:
                log.debug("Dead Replicas (%s) found for topic %s", sorted(dead), topic)
                self.mark_topic_ineligible_for_deletion({topic})

    # --8<-- [end:on_topic_deletion]

    # --8<-- [start:complete_delete_topic]
    def complete_delete_topic(self, topic: str) -> None:
        """Every replica is deleted: replicas NonExistent, partitions Offline then NonExistent, the
        topic's znodes gone (the only place ``/brokers/topics/<topic>`` is deleted), and the
        controller forgets it."""
        rsm, psm = self.replica_state_machine, self.partition_state_machine
        rsm.handle_state_changes(sorted(rsm.replicas_in_state(topic, R.DELETION_SUCCESSFUL)), R.NON_EXISTENT)
        partitions = sorted(tp for tp in self.context.partition_replica_assignment if tp[0] == topic)
        psm.handle_state_changes(partitions, PartitionState.OFFLINE)
        psm.handle_state_changes(partitions, PartitionState.NON_EXISTENT)
        self.topics_to_be_deleted.discard(topic)
        self.topics_ineligible_for_deletion.discard(topic)
        self.controller.zk.delete_topic_znodes(topic)
        self.context.remove_topic(topic)

    # --8<-- [end:complete_delete_topic]


# --8<-- [start:delete_topics_listener]
class DeleteTopicsListener:
    """The controller's watch on ``/admin/delete_topics`` (0.10.1 registers it only with
    ``delete.topic.enable``): a mark for a topic that does not exist is removed; the other topics are
    queued, those being reassigned or in a preferred election marked ineligible."""

    def __init__(self, controller: KafkaController, zk: ZkUtils) -> None:
        self.controller = controller
        self.zk = zk

    def handle_child_change(self, children: list[str]) -> None:
        """Runs on the controller's event thread, with the children of ``/admin/delete_topics``."""
        if not self.controller.is_active():
            return
        ctx = self.controller.context
        topics = set(children)
        log.debug("Delete topics listener fired for topics %s to be deleted", ",".join(sorted(topics)))
        non_existent = topics - ctx.all_topics
        if non_existent:
            log.warning("Ignoring request to delete non-existing topics %s", ",".join(sorted(non_existent)))
            for topic in non_existent:
                self.zk.delete_delete_topic_path(topic)
        topics -= non_existent
        if topics:
            log.info("Starting topic deletion for topics %s", ",".join(sorted(topics)))
            busy = {tp[0] for tp in ctx.partitions_being_reassigned}
            busy |= {tp[0] for tp in ctx.partitions_undergoing_preferred_replica_election}
            self.controller.topic_deletion_manager.enqueue_topics_for_deletion(topics, busy & topics)


# --8<-- [end:delete_topics_listener]
