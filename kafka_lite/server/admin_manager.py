"""The admin manager: creating and deleting topics for CreateTopics and DeleteTopics requests, and
waiting for the controller to act on them.

Mirrors: kafka.server.AdminManager (core/src/main/scala/kafka/server/AdminManager.scala, Kafka 0.10.1),
         with 0.10.2's ``validate_only``
Book:    chapter 7, 7.1.3 (a new topic appears in ZooKeeper; the controller acts on it), 7.1.5
         (topic deletion)
Differs: a request with ``timeout`` <= 0 gets NONE for the topics it wrote (Kafka answers
         REQUEST_TIMED_OUT, meaning "written, not waited for"). Kafka's ``KafkaApis.createTopic`` (a
         topic created by a Metadata request) calls ``AdminUtils.createTopic`` itself; here it goes
         through ``create_topic`` below, so every write of a new topic to ZooKeeper is in this class.

``create_topics`` does for each topic what Kafka's does: check the name and the configs
(``LogConfig.validate``), take the explicit replica assignment or compute one over the live brokers
(``AdminUtils.assignReplicasToBrokers``), and write it to ZooKeeper. Nothing more happens here: the
controller's watch on ``/brokers/topics`` sees the new topic, elects its leaders and tells every
broker. The response waits in ``topic_purgatory`` (a ``DelayedCreateTopics`` watched under each
topic's name) until this broker's metadata cache shows the leaders; ``KafkaApis`` re-checks it after
every UpdateMetadata through ``try_complete_delayed_topic_operations``.

``delete_topics`` is its mirror: write ``/admin/delete_topics/<topic>`` for each topic, and wait (a
``DelayedDeleteTopics``) until the topics are gone from this broker's metadata cache.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_lite.common.errors import ApiException, ConfigException, Errors
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic import validate_topic_name
from kafka_lite.log.log_config import LogConfig
from kafka_lite.server.delayed_create_topics import (
    CreateTopicMetadata,
    CreateTopicsResults,
    DelayedCreateTopics,
)
from kafka_lite.server.delayed_delete_topics import (
    DelayedDeleteTopics,
    DeleteTopicMetadata,
    DeleteTopicsResults,
)
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory
from kafka_lite.zk.admin_utils import assign_replicas_to_brokers
from kafka_lite.zk.zk_utils import TopicAlreadyMarkedForDeletionException, ZkUtils

log = logging.getLogger(__name__)

NO_NUM_PARTITIONS = -1  # CreateTopicsRequest.NO_NUM_PARTITIONS: the assignment gives the count
NO_REPLICATION_FACTOR = -1  # CreateTopicsRequest.NO_REPLICATION_FACTOR


@dataclass
class TopicDetails:
    """One topic of a CreateTopics request (Kafka's ``CreateTopicsRequest.TopicDetails``)."""

    num_partitions: int
    replication_factor: int
    replicas_assignments: dict[int, list[int]] = field(default_factory=dict)
    configs: dict[str, str | None] = field(default_factory=dict)


class AdminManager:
    def __init__(self, metadata_cache: MetadataCache, zk_utils: ZkUtils, time: Time = SYSTEM) -> None:
        self.metadata_cache = metadata_cache
        self.zk_utils = zk_utils
        self.topic_purgatory = DelayedOperationPurgatory("topic", time)

    def has_delayed_topic_operations(self) -> bool:
        return self.topic_purgatory.delayed() != 0

    def try_complete_delayed_topic_operations(self, topic: str) -> None:
        self.topic_purgatory.check_and_complete(topic)

    # --8<-- [start:create_topics]
    def create_topics(
        self,
        timeout: int,
        validate_only: bool,
        create_info: dict[str, TopicDetails],
        response_callback: Callable[[CreateTopicsResults], None],
    ) -> None:
        """Create each topic of ``create_info``; ``response_callback`` gets every topic's error once
        the created ones have leaders, or at ``timeout`` ms."""
        # 1. Validate each topic, and write its assignment to ZooKeeper (unless only validating).
        metadata = [self._create_one(topic, details, validate_only) for topic, details in create_info.items()]
        # 2. Nothing to wait for: answer now.
        if timeout <= 0 or validate_only or not any(m.error is Errors.NONE for m in metadata):
            response_callback({m.topic: (m.error, m.message) for m in metadata})
            return
        # 3. Wait, under each topic's name, for the controller's UpdateMetadata naming the leaders.
        delayed_create = DelayedCreateTopics(timeout, metadata, self.metadata_cache, response_callback)
        self.topic_purgatory.try_complete_else_watch(delayed_create, list(create_info))

    # --8<-- [end:create_topics]

    def _create_one(self, topic: str, details: TopicDetails, validate_only: bool) -> CreateTopicMetadata:
        try:
            validate_topic_name(topic)
            configs = {k: v for k, v in details.configs.items() if v is not None}
            try:
                LogConfig(configs)
            except ConfigException as e:
                raise Errors.INVALID_CONFIG.exception(str(e)) from None
            if details.replicas_assignments:
                if (
                    details.num_partitions != NO_NUM_PARTITIONS
                    or details.replication_factor != NO_REPLICATION_FACTOR
                ):
                    raise Errors.INVALID_REQUEST.exception(
                        "Both numPartitions or replicationFactor and replicasAssignment were set. "
                        "Both cannot be used at the same time."
                    )
                assignment = details.replicas_assignments
                self._validate_assignment(assignment)
            else:
                assignment = self._assign(details.num_partitions, details.replication_factor)
            log.debug("Assignments for topic %s are %s", topic, assignment)
            if validate_only:
                if topic in self.zk_utils.get_all_topics():
                    raise Errors.TOPIC_ALREADY_EXISTS.exception(f"Topic '{topic}' already exists.")
            else:
                self.zk_utils.create_topic(topic, assignment, configs)
            return CreateTopicMetadata(topic, tuple(sorted(assignment)), Errors.NONE)
        except ApiException as e:
            log.info("Error processing create topic request for topic %s: %s", topic, e)
            return CreateTopicMetadata(topic, (), Errors.for_exception(e), str(e))

    # --8<-- [start:delete_topics]
    def delete_topics(
        self, timeout: int, topics: set[str], response_callback: Callable[[DeleteTopicsResults], None]
    ) -> None:
        """Mark each topic for deletion; ``response_callback`` gets every topic's error once the marked
        ones are gone from this broker's metadata cache, or at ``timeout`` ms (REQUEST_TIMED_OUT)."""
        # 1. Write each topic's mark; one already there is waited for like a new one.
        metadata = [self._delete_one(topic) for topic in sorted(topics)]
        # 2. Nothing to wait for: answer now.
        if timeout <= 0 or not any(m.error is Errors.NONE for m in metadata):
            response_callback(
                {m.topic: Errors.REQUEST_TIMED_OUT if m.error is Errors.NONE else m.error for m in metadata}
            )
            return
        # 3. Wait, under each topic's name, for the controller's UpdateMetadata that drops it.
        delayed_delete = DelayedDeleteTopics(timeout, metadata, self.metadata_cache, response_callback)
        self.topic_purgatory.try_complete_else_watch(delayed_delete, sorted(topics))

    # --8<-- [end:delete_topics]

    def _delete_one(self, topic: str) -> DeleteTopicMetadata:
        try:
            self.zk_utils.create_delete_topic_path(topic)
        except TopicAlreadyMarkedForDeletionException:
            pass  # a second request waits for the same deletion
        except Exception as e:
            log.info("Error processing delete topic request for topic %s: %s", topic, e)
            return DeleteTopicMetadata(topic, Errors.for_exception(e))
        return DeleteTopicMetadata(topic, Errors.NONE)

    def create_topic(self, topic: str, num_partitions: int, replication_factor: int) -> None:
        """A topic with the broker's defaults, for a Metadata request naming an unknown topic
        (``auto.create.topics.enable``); Kafka's ``AdminUtils.createTopic``. Raises the
        ``ApiException`` of what went wrong (TOPIC_ALREADY_EXISTS when another request won)."""
        self.zk_utils.create_topic(topic, self._assign(num_partitions, replication_factor), {})

    def _assign(self, num_partitions: int, replication_factor: int) -> dict[int, list[int]]:
        """Kafka assigns over the brokers in the metadata cache; a broker that has not heard from the
        controller yet has none there, and then ZooKeeper's ``/brokers/ids`` is the list."""
        brokers = [b.id for b in self.metadata_cache.alive_brokers()] or self.zk_utils.get_all_broker_ids()
        return assign_replicas_to_brokers(brokers, num_partitions, replication_factor)

    def _validate_assignment(self, assignment: dict[int, list[int]]) -> None:
        if sorted(assignment) != list(range(len(assignment))):
            raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                f"partitions should be a consecutive 0-based integer sequence, got {sorted(assignment)}"
            )
        sizes = {len(r) for r in assignment.values()}
        if len(sizes) != 1 or 0 in sizes:
            raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                "All partitions should have the same number of replicas"
            )
        live = {b.id for b in self.metadata_cache.alive_brokers()}
        for p, replicas in assignment.items():
            if len(set(replicas)) != len(replicas):
                raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                    f"Duplicate replica assignment for partition {p}: {replicas}"
                )
            unknown = set(replicas) - live
            if unknown:
                raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                    f"Partition {p} is assigned to brokers {sorted(unknown)}, which are not alive"
                )

    def shutdown(self) -> None:
        self.topic_purgatory.shutdown()
