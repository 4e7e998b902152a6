"""The broker's publisher: each new metadata image, and the delta that made it, applied to the parts
of the broker that act on it.

Mirrors: kafka.server.metadata.BrokerMetadataPublisher
         (core/src/main/scala/kafka/server/metadata/BrokerMetadataPublisher.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the broker starts its log manager, replica manager and coordinators itself before the
         first publish (3.3's publisher starts them then); stray logs are found by name (a
         kafka_lite log does not record its topic id); cluster-wide broker configs (a BROKER
         resource with an empty name) are not applied, since kafka_lite's broker config handler
         takes one broker's id; no client quotas, ACLs or SCRAM credentials in the log. A
         coordinator is elected only for a partition new here or at a new leader epoch, not on
         every ISR change (Kafka 3.8's rule, ``elected_leaders``).

What one publish does, in 3.3's order (each step guarded: one failing does not stop the others)::

    metadata cache          <- new_image (Metadata requests answer from it at once)
    replica manager         <- topics delta: delete, lead, follow (``ReplicaManager.apply_delta``)
    group coordinator       <- __consumer_offsets partitions now led here: load their groups;
                               no longer led: unload them
    transaction coordinator <- the same for __transaction_state
    group coordinator       <- partitions of deleted topics: their committed offsets go
    config handlers         <- each topic (and this broker) whose configs changed, the whole set

This is what chapter 7's LeaderAndIsr, StopReplica and UpdateMetadata requests, and the ZooKeeper
config-change notifications, did on a ZooKeeper broker; here it all comes from the one ordered log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kafka_lite.common.topic import GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.log.log_manager import LogManager
from kafka_lite.metadata.authorizer.standard_authorizer import StandardAuthorizer
from kafka_lite.metadata.config_resource import ConfigResourceType
from kafka_lite.metadata.image import (
    LocalReplicaChanges,
    MetadataDelta,
    MetadataImage,
    TopicDelta,
    TopicsImage,
)
from kafka_lite.server.config_handler import ConfigHandler
from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from kafka_lite.server.replica_manager import ReplicaManager

log = logging.getLogger(__name__)


class GroupCoordinatorElections(Protocol):
    """What the publisher tells kafka_lite's GroupCoordinator (Kafka's onElection/onResignation,
    and handleDeletedPartitions)."""

    def on_elected(self, offsets_partition: int) -> None: ...

    def on_resigned(self, offsets_partition: int) -> None: ...

    def handle_deleted_partitions(self, topic_partitions: Sequence[TopicPartition]) -> None: ...


class TransactionCoordinatorElections(Protocol):
    """What the publisher tells kafka_lite's TransactionCoordinator; the leader epoch is the
    coordinator epoch."""

    def handle_txn_immigration(self, txn_topic_partition_id: int, coordinator_epoch: int) -> None: ...

    def handle_txn_emigration(self, txn_topic_partition_id: int, coordinator_epoch: int) -> None: ...


def get_topic_delta(topic_name: str, new_image: MetadataImage, delta: MetadataDelta) -> TopicDelta | None:
    """The delta of the topic named ``topic_name`` now, if it changed. A topic deleted and created
    again under the name shows only its creation here; the deletion is in ``deleted_topic_ids``."""
    topic = new_image.topics.get_topic(topic_name)
    if topic is None or delta.topics_delta is None:
        return None
    return delta.topics_delta.changed_topic(topic.id)


def find_stray_partitions(
    broker_id: int, new_topics_image: TopicsImage, tps: list[TopicPartition]
) -> list[TopicPartition]:
    """The local logs the image says this broker should not have: of a topic it does not know, or
    a partition whose replicas do not include this broker (a deletion or a move that happened while
    the broker was down)."""
    stray = []
    for tp in tps:
        topic = new_topics_image.get_topic(tp.topic)
        partition = None if topic is None else topic.partitions.get(tp.partition)
        if partition is None:
            log.info("Found stray log dir %s-%d: it does not exist in the metadata image", *tp)
            stray.append(tp)
        elif broker_id not in partition.replicas:
            log.info("Found stray log dir %s-%d: its replicas %s do not include broker %d", *tp,
                     list(partition.replicas), broker_id)  # fmt: skip
            stray.append(tp)
    return stray


def elected_leaders(
    topic_delta: TopicDelta, changes: LocalReplicaChanges
) -> list[tuple[TopicPartition, int]]:
    """Of the partitions ``changes`` (the topic's local changes) has this broker lead, those it
    was elected to lead, with their leader epochs: new, or at a new leader epoch (Kafka 3.8,
    KAFKA-15468, its ``LocalReplicaChanges.electedLeaders``).

    Kafka 3.3 elects the coordinators for every partition led here whose partition epoch moved,
    and an ISR change alone moves it: each follower that dies or comes back makes the
    coordinators load their partitions again. While a transaction coordinator reloads, its ids
    answer COORDINATOR_LOAD_IN_PROGRESS, and a transition whose append was waiting for that
    follower completes against metadata loaded afresh, which has no transition pending, so its
    client is never answered. kafka_lite borrows 3.8's rule: the leader epoch, not the partition
    epoch, marks an election."""
    elected = []
    for tp, info in changes.leaders.items():
        previous = topic_delta.image.partitions.get(tp.partition)
        if previous is None or previous.leader_epoch != info.partition.leader_epoch:
            elected.append((tp, info.partition.leader_epoch))
    return elected


class BrokerMetadataPublisher:
    """``dynamic_config_handlers``: by entity type, as ZooKeeper names them ("topics", "brokers")."""

    def __init__(
        self,
        broker_id: int,
        metadata_cache: KRaftMetadataCache,
        log_manager: LogManager,
        replica_manager: ReplicaManager,
        group_coordinator: GroupCoordinatorElections,
        txn_coordinator: TransactionCoordinatorElections,
        dynamic_config_handlers: Mapping[str, ConfigHandler],
        authorizer: Any = None,
    ) -> None:
        self.broker_id = broker_id
        self.metadata_cache = metadata_cache
        self.log_manager = log_manager
        self.replica_manager = replica_manager
        self.group_coordinator = group_coordinator
        self.txn_coordinator = txn_coordinator
        self.dynamic_config_handlers = dynamic_config_handlers
        # The broker's authorizer, if it is the KRaft one (it takes the ACLs from the metadata).
        self.authorizer = authorizer if isinstance(authorizer, StandardAuthorizer) else None
        self._first_publish = True
        self.published_offset = -1  # set once every part has taken the image

    # --8<-- [start:publish]
    def publish(self, delta: MetadataDelta, new_image: MetadataImage) -> None:
        offset = new_image.highest_offset_and_epoch.offset
        name = f"{'initial ' if self._first_publish else ''}MetadataDelta up to {offset}"
        try:
            self.metadata_cache.set_image(new_image)
            if self._first_publish:
                log.info("Publishing initial metadata at offset %s.", new_image.highest_offset_and_epoch)
            if delta.topics_delta is not None:
                self._guarded(
                    f"applying topics delta in {name}",
                    self.replica_manager.apply_delta,
                    delta.topics_delta,
                    new_image,
                )
                self._guarded(
                    f"updating group coordinator with local changes in {name}", self.update_coordinator,
                    new_image, delta, GROUP_METADATA_TOPIC_NAME, self._group_election, self._group_resignation,
                )  # fmt: skip
                self._guarded(
                    f"updating txn coordinator with local changes in {name}", self.update_coordinator,
                    new_image, delta, TRANSACTION_STATE_TOPIC_NAME, self._txn_election, self._txn_resignation,
                )  # fmt: skip
                self._guarded(
                    f"updating group coordinator with deleted partitions in {name}",
                    self._handle_deleted_partitions, delta,
                )  # fmt: skip
            if delta.configs_delta is not None:
                self._apply_config_changes(delta, new_image, name)
            if self.authorizer is not None:
                self._guarded(f"updating the authorizer's ACLs in {name}", self._apply_acls, delta, new_image)
            if self._first_publish:
                self._guarded("deleting stray partitions", self._delete_stray_partitions, new_image)
            self.published_offset = offset
        finally:
            self._first_publish = False

    # --8<-- [end:publish]

    def _apply_acls(self, delta: MetadataDelta, new_image: MetadataImage) -> None:
        publish_acls(self.authorizer, delta, new_image, self._first_publish)

    @staticmethod
    def _guarded(what: str, step: Callable[..., None], *args: object) -> None:
        """Kafka's metadataPublishingFaultHandler: log the failure, go on with the next step."""
        try:
            step(*args)
        except Exception:
            log.exception("Error %s", what)

    # --8<-- [start:update_coordinator]
    def update_coordinator(
        self,
        image: MetadataImage,
        delta: MetadataDelta,
        topic_name: str,
        election: Callable[[int, int], None],
        resignation: Callable[[int, int | None], None],
    ) -> None:
        """Tell a coordinator which partitions of its topic it now leads (election, with the leader
        epoch, see ``elected_leaders``) and which it no longer does (resignation): all of a deleted
        topic's it led, and those the topic's delta makes this broker delete or follow."""
        topics_delta = delta.topics_delta
        if topics_delta is not None and topics_delta.topic_was_deleted(topic_name):
            for partition_id, partition in topics_delta.image.get_topic(topic_name).partitions.items():
                if partition.leader == self.broker_id:
                    resignation(partition_id, partition.leader_epoch)
        topic_delta = get_topic_delta(topic_name, image, delta)
        if topic_delta is None:
            return
        changes = topic_delta.local_changes(self.broker_id)
        for tp in changes.deletes:
            resignation(tp.partition, None)
        for tp, leader_epoch in elected_leaders(topic_delta, changes):
            election(tp.partition, leader_epoch)
        for tp, info in changes.followers.items():
            resignation(tp.partition, info.partition.leader_epoch)

    # --8<-- [end:update_coordinator]

    def _group_election(self, partition_id: int, leader_epoch: int) -> None:
        self.group_coordinator.on_elected(partition_id)

    def _group_resignation(self, partition_id: int, leader_epoch: int | None) -> None:
        self.group_coordinator.on_resigned(partition_id)

    def _txn_election(self, partition_id: int, leader_epoch: int) -> None:
        self.txn_coordinator.handle_txn_immigration(partition_id, leader_epoch)

    def _txn_resignation(self, partition_id: int, leader_epoch: int | None) -> None:
        self.txn_coordinator.handle_txn_emigration(partition_id, -1 if leader_epoch is None else leader_epoch)

    def _handle_deleted_partitions(self, delta: MetadataDelta) -> None:
        """The committed offsets of a deleted topic's partitions go with it (Kafka's
        ``handleDeletedPartitions``)."""
        topics_delta = delta.topics_delta
        deleted = [
            TopicPartition(topic.name, partition_id)
            for topic_id in topics_delta.deleted_topic_ids
            if (topic := topics_delta.image.get_topic(topic_id)) is not None
            for partition_id in topic.partitions
        ]
        if deleted:
            self.group_coordinator.handle_deleted_partitions(deleted)

    def _apply_config_changes(self, delta: MetadataDelta, new_image: MetadataImage, name: str) -> None:
        """Each changed resource's whole config set, to its handler: a topic's to the log manager's
        logs of it (a key removed falls back to the broker's default), this broker's to the
        broker handler."""
        for resource in delta.configs_delta.changes:
            props = new_image.configs.config_properties(resource)
            if resource.type is ConfigResourceType.TOPIC:
                log.info("Updating topic %s with new configuration : %s", resource.name, props)
                handler = self.dynamic_config_handlers.get("topics")
            elif resource.type is ConfigResourceType.BROKER and resource.name == str(self.broker_id):
                log.info("Updating broker %d with new configuration : %s", self.broker_id, props)
                handler = self.dynamic_config_handlers.get("brokers")
            else:
                continue
            if handler is not None:
                self._guarded(
                    f"updating {resource.name} with new configuration {props} in {name}",
                    handler.process_config_changes, resource.name, props,
                )  # fmt: skip

    def _delete_stray_partitions(self, new_image: MetadataImage) -> None:
        """On the first publish only: logs left from before this broker's restart that the log now
        says it should not have. A snapshot loaded later shows such topics as deleted instead."""
        tps = [tp for logs in self.log_manager.logs_by_dir().values() for tp in logs]
        stray = find_stray_partitions(self.broker_id, new_image.topics, [TopicPartition(*tp) for tp in tps])
        if stray:
            self.replica_manager.delete_stray_replicas(stray)


def publish_acls(authorizer, delta: MetadataDelta, new_image: MetadataImage, first_publish: bool) -> None:
    """Kafka 3.3's publisher step for the authorizer: a snapshot's ACLs whole, else each ACL added
    or removed; then, on the first publish, the authorizer may decide (it has every ACL the broker
    started from)."""
    acls_delta = delta.acls_delta
    if acls_delta is not None and acls_delta.is_snapshot_delta:
        authorizer.load_snapshot(new_image.acls.acls)
    elif acls_delta is not None:
        for acl_id, acl in acls_delta.changes.items():
            if acl is None:
                authorizer.remove_acl(acl_id)
            else:
                authorizer.add_acl(acl_id, acl)
    if first_publish:
        authorizer.complete_initial_load()
