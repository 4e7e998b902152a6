"""Topics and partitions as the metadata log holds them: creating and deleting topics, adding
partitions, and every change of a partition's leader and ISR.

Mirrors: org.apache.kafka.controller.ReplicationControlManager
         (metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft); chapter 7, 7.1.4-7.1.5 and 7.4 read the ZooKeeper controller's
         partition and replica state machines, TopicDeletionManager and controlled shutdown,
         which this one class replaces
Differs: fencing writes FenceBrokerRecord/UnfenceBrokerRecord and controlled shutdown no
         BrokerRegistrationChangeRecord (3.3 writes that record from metadata.version 3.3-IV0); a
         topic's ConfigRecords follow its TopicRecord and are written only if the topic is
         created (3.3 writes every requested topic's configs before all topics, even one refused);
         a topic's ``unclean.leader.election.enable=true`` allows unclean elections (3.3 never
         elects uncleanly); no reassignment, ElectLeaders, leader balancing, create-topic policy or
         metrics.
Labs:    lab 19, stage 3 (``maybe_fence_one_stale_broker``, ``handle_broker_fenced``)

Every operation here reads the state and returns a ``ControllerResult`` of records and a reply; it
changes nothing. The quorum controller appends the records and hands each to ``replay``, the only
code that changes the timeline maps, the same code a standby controller runs from the committed
log. So a partition's leader changes in exactly one way: a ``PartitionChangeBuilder`` decides the
record, and ``replay`` merges it into the ``PartitionRegistration`` and moves the partition in
``BrokersToIsrs``.

Where chapter 7's controller reacts to a broker's znode vanishing, this one reacts to heartbeats:
``process_broker_heartbeat`` unfences a broker once it has caught up with the log, moves leaders
off a broker in controlled shutdown, and fences one that asks to be; ``maybe_fence_one_stale_broker``
fences one whose session expired. Fencing a broker takes it out of every ISR it is in (unless it is
the last member) and elects a new leader, from the rest of the ISR, for every partition it led.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kafka_lite.common.errors import ApiException, Errors
from kafka_lite.common.metadata import (
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.topic import validate_topic_name
from kafka_lite.metadata.broker_heartbeat_reply import BrokerHeartbeatReply
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.metadata.controller.broker_control_states import BrokerControlState
from kafka_lite.metadata.controller.brokers_to_isrs import BrokersToIsrs, TopicIdPartition
from kafka_lite.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_lite.metadata.controller.configuration_control_manager import (
    ApiError,
    ConfigurationControlManager,
    OpType,
)
from kafka_lite.metadata.controller.controller_result import ControllerResult
from kafka_lite.metadata.controller.feature_control_manager import FeatureControlManager
from kafka_lite.metadata.controller.partition_change_builder import Election, PartitionChangeBuilder
from kafka_lite.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_lite.metadata.leader_recovery_state import LeaderRecoveryState
from kafka_lite.metadata.metadata_version import MetadataVersion
from kafka_lite.metadata.partition_registration import PartitionRegistration
from kafka_lite.metadata.placement import PlacementSpec, UsableBroker
from kafka_lite.metadata.replicas import copy_without, validate_isr
from kafka_lite.metadata.timeline import (
    SnapshotRegistry,
    TimelineHashMap,
    TimelineHashSet,
)

log = logging.getLogger(__name__)

ZERO_UUID = uuid.UUID(int=0)
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"


def has_collision_chars(topic: str) -> bool:
    """Kafka's ``Topic.hasCollisionChars``: metrics replace '.' with '_', so "a.b" and "a_b" collide."""
    return "." in topic or "_" in topic


def unify_collision_chars(topic: str) -> str:
    return topic.replace(".", "_")


class TopicControlInfo:
    """A topic as the controller holds it. ``parts`` is a timeline map of its own, so a revert puts
    back each partition as it was at the offset reverted to, not only the topic's existence."""

    def __init__(self, name: str, snapshot_registry: SnapshotRegistry, topic_id: uuid.UUID) -> None:
        self.name = name
        self.id = topic_id
        self.parts: TimelineHashMap[int, PartitionRegistration] = TimelineHashMap(snapshot_registry)


class _ClusterDescriber:
    """The placer's view of the cluster: the cluster control manager's usable brokers. The placer
    sees only this, not the manager, so a placer can be tested against a list of brokers."""

    def __init__(self, cluster_control: ClusterControlManager) -> None:
        self._cluster_control = cluster_control

    def usable_brokers(self) -> Iterator[UsableBroker]:
        return self._cluster_control.usable_brokers()


class ReplicationControlManager:
    """Every topic and partition in the cluster, and the operations that change them."""

    def __init__(
        self,
        snapshot_registry: SnapshotRegistry,
        default_replication_factor: int,
        default_num_partitions: int,
        configuration_control: ConfigurationControlManager,
        cluster_control: ClusterControlManager,
        feature_control: FeatureControlManager | None = None,
        random_uuid: Callable[[], uuid.UUID] = uuid.uuid4,
    ) -> None:
        self.snapshot_registry = snapshot_registry
        # KIP-464: what a CreateTopics asking for -1 gets.
        self.default_replication_factor = default_replication_factor
        self.default_num_partitions = default_num_partitions
        self.configuration_control = configuration_control
        self.cluster_control = cluster_control
        self.feature_control = feature_control or cluster_control.feature_control
        self.random_uuid = random_uuid
        self.cluster_describer = _ClusterDescriber(cluster_control)
        # Every map is a timeline structure of the one registry: a renounce reverts them together
        # with the other managers' state, to the same offset.
        # Name -> id: requests name topics, records carry ids.
        self.topics_by_name: TimelineHashMap[str, uuid.UUID] = TimelineHashMap(snapshot_registry)
        # Normalized name ('.' as '_') -> the topics that normalize to it, to refuse a collision.
        self.topics_with_collision_chars: TimelineHashMap[str, TimelineHashSet[str]] = TimelineHashMap(
            snapshot_registry
        )
        self.topics: TimelineHashMap[uuid.UUID, TopicControlInfo] = TimelineHashMap(snapshot_registry)
        # Broker -> the partitions whose ISR holds it: fencing a broker visits only its partitions,
        # not every partition in the cluster.
        self.brokers_to_isrs = BrokersToIsrs(snapshot_registry)

    # --- replay: the only code that changes the state -----------------------------------------------

    def replay(self, record: Any) -> None:
        """Apply one committed (or, on the active controller, just decided) record. The active
        controller and every standby run this same code, which is why they agree."""
        if isinstance(record, TopicRecord):
            self._replay_topic(record)
        elif isinstance(record, PartitionRecord):
            self._replay_partition(record)
        elif isinstance(record, PartitionChangeRecord):
            self._replay_partition_change(record)
        elif isinstance(record, RemoveTopicRecord):
            self._replay_remove_topic(record)
        else:
            raise ValueError(f"ReplicationControlManager cannot replay {type(record).__name__}")

    def _replay_topic(self, record: TopicRecord) -> None:
        # A topic starts with no partitions: its PartitionRecords follow in the same batch.
        self.topics_by_name.put(record.name, record.topic_id)
        if has_collision_chars(record.name):
            normalized = unify_collision_chars(record.name)
            names = self.topics_with_collision_chars.get(normalized)
            if names is None:
                names = TimelineHashSet(self.snapshot_registry)
                self.topics_with_collision_chars.put(normalized, names)
            names.add(record.name)
        self.topics.put(
            record.topic_id, TopicControlInfo(record.name, self.snapshot_registry, record.topic_id)
        )
        log.info("Created topic %s with topic ID %s.", record.name, record.topic_id)

    def _replay_partition(self, record: PartitionRecord) -> None:
        topic = self.topics.get(record.topic_id)
        if topic is None:
            raise RuntimeError(
                f"Tried to create partition {record.topic_id}:{record.partition_id}, but no topic with that ID "
                "was found."
            )
        new_info = PartitionRegistration.from_record(record)
        prev_info = topic.parts.get(record.partition_id)
        if prev_info is None:
            log.info(
                "Created partition %s-%d with topic ID %s and %r.",
                topic.name,
                record.partition_id,
                topic.id,
                new_info,
            )
            topic.parts.put(record.partition_id, new_info)
            self.brokers_to_isrs.update(
                record.topic_id, record.partition_id, None, new_info.isr, NO_LEADER, new_info.leader
            )
        elif new_info != prev_info:
            # A PartitionRecord for a partition that exists replaces it (a snapshot's record, say).
            topic.parts.put(record.partition_id, new_info)
            self.brokers_to_isrs.update(
                record.topic_id,
                record.partition_id,
                prev_info.isr,
                new_info.isr,
                prev_info.leader,
                new_info.leader,
            )

    def _replay_partition_change(self, record: PartitionChangeRecord) -> None:
        topic = self.topics.get(record.topic_id)
        if topic is None:
            raise RuntimeError(
                f"Tried to create partition {record.topic_id}:{record.partition_id}, but no topic with that ID "
                "was found."
            )
        prev_info = topic.parts.get(record.partition_id)
        if prev_info is None:
            raise RuntimeError(
                f"Tried to create partition {record.topic_id}:{record.partition_id}, but no partition with that "
                "id was found."
            )
        # A PartitionChangeRecord carries only what changed: every field it leaves unset keeps the
        # partition's value (merge), so the record stays small however many replicas there are.
        new_info = prev_info.merge(record)
        topic.parts.put(record.partition_id, new_info)
        self.brokers_to_isrs.update(
            record.topic_id,
            record.partition_id,
            prev_info.isr,
            new_info.isr,
            prev_info.leader,
            new_info.leader,
        )
        log.debug(
            "Replayed partition change %r for topic %s: %s", record, topic.name, new_info.diff(prev_info)
        )

    def _replay_remove_topic(self, record: RemoveTopicRecord) -> None:
        # One record removes the topic and everything under it: a delete is never half done in
        # the log, whatever the number of partitions.
        topic = self.topics.remove(record.topic_id)
        if topic is None:
            raise Errors.UNKNOWN_TOPIC_ID.exception(f"Can't find topic with ID {record.topic_id} to remove.")
        self.topics_by_name.remove(topic.name)
        if has_collision_chars(topic.name):
            normalized = unify_collision_chars(topic.name)
            colliding = self.topics_with_collision_chars.get(normalized)
            if colliding is not None:
                colliding.remove(topic.name)
                if colliding.is_empty():
                    self.topics_with_collision_chars.remove(normalized)
        # A deleted topic's configs go with it: the log holds no ConfigRecords deleting them.
        self.configuration_control.delete_topic_configs(topic.name)
        for partition in topic.parts.values():
            for broker_id in partition.isr:
                self.brokers_to_isrs.remove_topic_entry_for_broker(topic.id, broker_id)
        # A partition with no leader is filed under NO_LEADER in the index: it goes too.
        self.brokers_to_isrs.remove_topic_entry_for_broker(topic.id, NO_LEADER)
        log.info("Removed topic %s with ID %s.", topic.name, record.topic_id)

    # --- reads ---------------------------------------------------------------------------------------

    def get_topic_id(self, name: str) -> uuid.UUID | None:
        return self.topics_by_name.get(name)

    def get_topic(self, topic_id: uuid.UUID) -> TopicControlInfo | None:
        return self.topics.get(topic_id)

    def get_partition(self, topic_id: uuid.UUID, partition_id: int) -> PartitionRegistration | None:
        topic = self.topics.get(topic_id)
        return None if topic is None else topic.parts.get(partition_id)

    def find_topic_ids(self, offset: int, names: Iterable[str]) -> dict[str, uuid.UUID | ApiError]:
        """Each name's topic id as of ``offset`` (a committed offset: reads never show uncommitted state)."""
        results: dict[str, uuid.UUID | ApiError] = {}
        for name in names:
            topic_id = self.topics_by_name.get(name, offset)
            results[name] = topic_id if topic_id is not None else ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION)
        return results

    def find_all_topic_ids(self, offset: int) -> dict[str, uuid.UUID]:
        return dict(self.topics_by_name.items(offset))

    def find_topic_names(self, offset: int, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, str | ApiError]:
        """Each id's topic name as of ``offset``; the zero id names no topic, and asking for it is
        the request's mistake (INVALID_REQUEST), not an unknown topic."""
        results: dict[uuid.UUID, str | ApiError] = {}
        for topic_id in ids:
            if topic_id is None or topic_id == ZERO_UUID:
                results[topic_id] = ApiError(
                    Errors.INVALID_REQUEST, f"Attempt to find topic with invalid topicId {topic_id}"
                )
                continue
            topic = self.topics.get(topic_id, offset)
            results[topic_id] = topic.name if topic is not None else ApiError(Errors.UNKNOWN_TOPIC_ID)
        return results

    def _is_leader_recovery_supported(self) -> bool:
        # A partition can be RECOVERING (after an unclean election, KIP-704) only once every node
        # reads the field: metadata.version 3.2-IV0.
        return self.feature_control.metadata_version().is_at_least(MetadataVersion.IBP_3_2_IV0)

    def _unclean_leader_election_enabled_for_topic(self, name: str) -> bool:
        configs = self.configuration_control.config_properties(ConfigResource(ConfigResourceType.TOPIC, name))
        return configs.get(UNCLEAN_LEADER_ELECTION_ENABLE, "false").lower() == "true"

    def _builder(self, partition: PartitionRegistration, topic: TopicControlInfo, partition_id: int,
                 is_acceptable_leader: Callable[[int], bool]) -> PartitionChangeBuilder:  # fmt: skip
        """A builder for one partition's change, set up as every caller needs it: Kafka 3.3 repeats
        these lines in each caller."""
        builder = PartitionChangeBuilder(
            partition, topic.id, partition_id, is_acceptable_leader, self._is_leader_recovery_supported()
        )
        if self._unclean_leader_election_enabled_for_topic(topic.name):
            builder.set_election(Election.UNCLEAN)
        return builder

    # --- CreateTopics --------------------------------------------------------------------------------

    def create_topics(self, request: dict[str, Any]) -> ControllerResult[dict[str, Any]]:
        """A CreateTopics request's records: per topic created, its TopicRecord, its ConfigRecords
        and one PartitionRecord per partition, in one atomic batch; per topic refused, nothing."""
        topics = request["create_topic_requests"]
        # A topic's first error is its answer: each check below skips a topic already refused.
        topic_errors: dict[str, ApiError] = {}
        self._validate_new_topic_names(topic_errors, topics)
        for topic in topics:
            if topic["topic"] in self.topics_by_name:
                topic_errors[topic["topic"]] = ApiError(
                    Errors.TOPIC_ALREADY_EXISTS, f"Topic '{topic['topic']}' already exists."
                )
        # The configs go through the configuration manager, as a new resource's would, so a topic's
        # configs are checked by the same rules as an IncrementalAlterConfigs on it. ``True``:
        # the topic does not exist yet, so the manager must not ask whether it does.
        config_changes = self._compute_config_changes(topic_errors, topics)
        config_result = self.configuration_control.incremental_alter_configs(config_changes, True)
        for resource, error in config_result.response.items():
            if error.is_failure():
                topic_errors[resource.name] = error
        # Kafka 3.3 appends every topic's ConfigRecords here, before any TopicRecord; kafka_lite
        # keeps them per topic, to write them after their own TopicRecord and only if it is written.
        config_records: dict[str, list[ApiMessageAndVersion]] = {}
        for config_record in config_result.records:
            config_records.setdefault(config_record.message.resource_name, []).append(config_record)

        records: list[ApiMessageAndVersion] = []
        for topic in topics:
            name = topic["topic"]
            if name in topic_errors:
                continue
            try:
                error = self._create_topic(topic, config_records.get(name, []), records)
            except ApiException as e:
                # validate_manual_partition_assignment and the placer raise; the rest returns.
                error = ApiError.from_throwable(e)
            if error.is_failure():
                topic_errors[name] = error

        # One answer per topic, in the request's order.
        results = []
        for topic in topics:
            error = topic_errors.get(topic["topic"], ApiError.NONE)
            results.append(
                {"topic": topic["topic"], "error_code": error.error.code, "error_message": error.message}
            )
        log.info(
            "%sCreateTopics result(s): %s", "Validate-only " if request.get("validate_only") else "", results
        )
        response = {"throttle_time_ms": 0, "topic_errors": results}
        # validate_only ran every check above and writes nothing: the answer is what a real
        # request would have got.
        if request.get("validate_only"):
            return ControllerResult.of([], response)
        return ControllerResult.of(records, response)

    def _create_topic(
        self,
        topic: dict[str, Any],
        config_records: list[ApiMessageAndVersion],
        records: list[ApiMessageAndVersion],
    ) -> ApiError:
        """One topic of a CreateTopics: its partitions from the request's own assignment, or from
        the replica placer; then its records appended to ``records``. NONE, or why not.

        Kafka 3.3's ``createTopic`` holds both ways of finding the partitions inline, one branch
        each; here each branch is a method, so that this one reads as the three steps it takes.
        """
        if topic.get("replica_assignment"):
            new_parts = self._partitions_from_manual_assignment(topic)
        else:
            new_parts = self._partitions_from_replica_placer(topic)
        if isinstance(new_parts, ApiError):
            return new_parts
        # The id is chosen here, not by the client: a name can be reused after a delete, an id
        # never is, so a broker that still holds the old topic's log tells the two apart.
        topic_id = self.random_uuid()
        records.append(
            ApiMessageAndVersion(
                TopicRecord(name=topic["topic"], topic_id=topic_id), TopicRecord.highest_supported_version()
            )
        )
        records.extend(config_records)
        for partition_id in sorted(new_parts):
            records.append(new_parts[partition_id].to_record(topic_id, partition_id))
        return ApiError.NONE

    def _partitions_from_manual_assignment(
        self, topic: dict[str, Any]
    ) -> dict[int, PartitionRegistration] | ApiError:
        """A manual assignment (``replica_assignment``): every partition's replicas as the request
        lists them. The counts come from the list itself, so the request must leave them at -1."""
        if topic["replication_factor"] != -1:
            return ApiError(
                Errors.INVALID_REQUEST,
                "A manual partition assignment was specified, but replication factor was not set to -1.",
            )
        if topic["num_partitions"] != -1:
            return ApiError(
                Errors.INVALID_REQUEST,
                "A manual partition assignment was specified, but numPartitions was not set to -1.",
            )
        new_parts: dict[int, PartitionRegistration] = {}
        # The first partition's replica count is the one every later partition must match.
        replication_factor: int | None = None
        for assignment in topic["replica_assignment"]:
            partition_id = assignment["partition_id"]
            if partition_id in new_parts:
                return ApiError(
                    Errors.INVALID_REPLICA_ASSIGNMENT,
                    f"Found multiple manual partition assignments for partition {partition_id}",
                )
            self.validate_manual_partition_assignment(assignment["replicas"], replication_factor)
            replication_factor = len(assignment["replicas"])
            # The ISR starts as the replicas that can serve now; a fenced one joins once it has
            # caught up, through its leader's AlterPartition.
            isr = [b for b in assignment["replicas"] if self.cluster_control.active(b)]
            if not isr:
                return ApiError(
                    Errors.INVALID_REPLICA_ASSIGNMENT,
                    f"All brokers specified in the manual partition assignment for partition {partition_id} "
                    "are fenced or in controlled shutdown.",
                )
            new_parts[partition_id] = self._new_partition(assignment["replicas"], isr)
        # Partition ids are positions: a gap would be a partition no one could produce to.
        if sorted(new_parts) != list(range(len(new_parts))):
            return ApiError(
                Errors.INVALID_REPLICA_ASSIGNMENT,
                "partitions should be a consecutive 0-based integer sequence",
            )
        return new_parts

    def _partitions_from_replica_placer(
        self, topic: dict[str, Any]
    ) -> dict[int, PartitionRegistration] | ApiError:
        """No assignment: the counts asked for (-1 is the controller's default, KIP-464), and the
        replica placer spreads the replicas over the usable brokers."""
        if topic["replication_factor"] < -1 or topic["replication_factor"] == 0:
            return ApiError(
                Errors.INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0, or -1 to use the default value.",
            )
        if topic["num_partitions"] < -1 or topic["num_partitions"] == 0:
            return ApiError(
                Errors.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
            )
        num_partitions = (
            self.default_num_partitions if topic["num_partitions"] == -1 else topic["num_partitions"]
        )
        replication_factor = (
            self.default_replication_factor
            if topic["replication_factor"] == -1
            else topic["replication_factor"]
        )
        try:
            placements = self.cluster_control.replica_placer().place(
                PlacementSpec(0, num_partitions, replication_factor), self.cluster_describer
            )
        except Errors.INVALID_REPLICATION_FACTOR.exception_class as e:
            # Too few usable brokers: the placer's reason, with the factor that was asked for.
            return ApiError(
                Errors.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {replication_factor} time(s): {e}",
            )
        new_parts: dict[int, PartitionRegistration] = {}
        for partition_id, replicas in enumerate(placements):
            isr = [b for b in replicas if self.cluster_control.active(b)]
            # The placer leads with an unfenced broker, but one shutting down is unfenced too:
            # with no active replica the partition could not come online.
            if not isr:
                return ApiError(
                    Errors.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {replication_factor} time(s): All brokers are "
                    "currently fenced or in controlled shutdown.",
                )
            new_parts[partition_id] = self._new_partition(replicas, isr)
        return new_parts

    @staticmethod
    def _new_partition(replicas: list[int], isr: list[int]) -> PartitionRegistration:
        # A new partition is led by its first active replica, at epochs 0.
        return PartitionRegistration(
            replicas=tuple(replicas),
            isr=tuple(isr),
            removing_replicas=(),
            adding_replicas=(),
            leader=isr[0],
            leader_recovery_state=LeaderRecoveryState.RECOVERED,
            leader_epoch=0,
            partition_epoch=0,
        )

    def _validate_new_topic_names(
        self, topic_errors: dict[str, ApiError], topics: list[dict[str, Any]]
    ) -> None:
        """A name must be a legal topic name, and must not collide with an existing topic's once
        '.' and '_' are read as one: metric names replace '.' with '_', so "a.b" and "a_b" would
        report under one name."""
        for topic in topics:
            name = topic["topic"]
            if name in topic_errors:
                continue
            try:
                validate_topic_name(name)
            except ApiException as e:
                topic_errors[name] = ApiError(Errors.INVALID_TOPIC_EXCEPTION, str(e))
                continue
            if has_collision_chars(name):
                colliding = self.topics_with_collision_chars.get(unify_collision_chars(name))
                if colliding is not None:
                    topic_errors[name] = ApiError(
                        Errors.INVALID_TOPIC_EXCEPTION,
                        f"Topic '{name}' collides with existing topic: {next(iter(colliding))}",
                    )

    @staticmethod
    def _compute_config_changes(
        topic_errors: dict[str, ApiError], topics: list[dict[str, Any]]
    ) -> dict[ConfigResource, dict[str, tuple[OpType, str | None]]]:
        """Each topic's configs as SET operations on its resource. A null value is refused here:
        on a new topic there is nothing to delete, and a null could only be a client's mistake."""
        config_changes: dict[ConfigResource, dict[str, tuple[OpType, str | None]]] = {}
        for topic in topics:
            if topic["topic"] in topic_errors:
                continue
            topic_configs: dict[str, tuple[OpType, str | None]] = {}
            null_configs = []
            for config in topic.get("config_entries") or []:
                if config["config_value"] is None:
                    null_configs.append(config["config_name"])
                else:
                    topic_configs[config["config_name"]] = (OpType.SET, config["config_value"])
            if null_configs:
                topic_errors[topic["topic"]] = ApiError(
                    Errors.INVALID_CONFIG,
                    "Null value not supported for topic configs: " + ",".join(null_configs),
                )
            elif topic_configs:
                config_changes[ConfigResource(ConfigResourceType.TOPIC, topic["topic"])] = topic_configs
        return config_changes

    def validate_manual_partition_assignment(
        self, assignment: list[int], replication_factor: int | None
    ) -> None:
        """One partition's replicas, as a client listed them: not empty, every broker registered
        (a fenced one may come back; one never registered is a typo), none twice (two replicas
        on one broker are one copy), and as many as the partitions before it (``None`` for the
        first), since a topic has one replication factor."""
        if not assignment:
            raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                "The manual partition assignment includes an empty replica list."
            )
        # Sorted, so a broker listed twice shows up as two neighbours.
        prev_broker_id = None
        for broker_id in sorted(assignment):
            if broker_id not in self.cluster_control.broker_registrations():
                raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                    f"The manual partition assignment includes broker {broker_id}, but no such broker is registered."
                )
            if broker_id == prev_broker_id:
                raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                    f"The manual partition assignment includes the broker {prev_broker_id} more than once."
                )
            prev_broker_id = broker_id
        if replication_factor is not None and len(assignment) != replication_factor:
            raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                f"The manual partition assignment includes a partition with {len(assignment)} replica(s), but this "
                f"is not consistent with previous partitions, which have {replication_factor} replica(s)."
            )

    # --- DeleteTopics and CreatePartitions -----------------------------------------------------------

    def delete_topics(self, names: Iterable[str]) -> ControllerResult[dict[str, ApiError]]:
        """One RemoveTopicRecord per existing topic; replaying it drops the partitions and configs.

        No partition is told to stop first, as chapter 7's TopicDeletionManager tells every
        replica: a broker replaying the record deletes its own logs of the topic."""
        records: list[ApiMessageAndVersion] = []
        results: dict[str, ApiError] = {}
        for name in names:
            topic_id = self.topics_by_name.get(name)
            if topic_id is None:
                results[name] = ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION)
                continue
            records.append(
                ApiMessageAndVersion(
                    RemoveTopicRecord(topic_id=topic_id), RemoveTopicRecord.highest_supported_version()
                )
            )
            results[name] = ApiError.NONE
        return ControllerResult.of(records, results)

    def create_partitions(
        self, topics: list[dict[str, Any]], validate_only: bool = False
    ) -> ControllerResult[list[dict[str, Any]]]:
        """CreatePartitions v0's ``topic_partitions``: each topic grown to ``new_partitions.count``."""
        records: list[ApiMessageAndVersion] = []
        results = []
        for topic in topics:
            error = ApiError.NONE
            # A topic's records are kept only if all of its partitions can be made: a refused
            # topic must add none of them.
            topic_records: list[ApiMessageAndVersion] = []
            try:
                self._create_partitions(topic, topic_records)
                records.extend(topic_records)
            except ApiException as e:
                error = ApiError.from_throwable(e)
            results.append(
                {"topic": topic["topic"], "error_code": error.error.code, "error_message": error.message}
            )
        return ControllerResult.of([] if validate_only else records, results)

    def _create_partitions(self, topic: dict[str, Any], records: list[ApiMessageAndVersion]) -> None:
        """One topic of a CreatePartitions: its new partitions' records appended to ``records``,
        or an ApiException saying why not. Partitions can only be added: a key's partition is its
        hash modulo the count, and removing one would strand the records already in it."""
        name = topic["topic"]
        count = topic["new_partitions"]["count"]
        assignments = topic["new_partitions"].get("assignment")
        topic_id = self.topics_by_name.get(name)
        topic_info = self.topics.get(topic_id) if topic_id is not None else None
        if topic_info is None:
            raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception()
        current = len(topic_info.parts)
        if count == current:
            raise Errors.INVALID_PARTITIONS.exception(f"Topic already has {current} partition(s).")
        if count < current:
            raise Errors.INVALID_PARTITIONS.exception(
                f"The topic {name} currently has {current} partition(s); {count} would not be an increase."
            )
        additional = count - current
        if assignments is not None and len(assignments) != additional:
            raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                f"Attempted to add {additional} additional partition(s), but only {len(assignments)} assignment(s) "
                "were specified."
            )
        # New partitions take the replication factor of the ones the topic has.
        replication_factor = len(next(iter(topic_info.parts.values())).replicas)
        if assignments is not None:
            placements = []
            for i, assignment in enumerate(assignments):
                self.validate_manual_partition_assignment(assignment, replication_factor)
                if not any(self.cluster_control.active(b) for b in assignment):
                    raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                        f"All brokers specified in the manual partition assignment for partition {current + i} are "
                        "fenced or in controlled shutdown."
                    )
                placements.append(list(assignment))
        else:
            # The spec names the first new partition, as Kafka's does; the striped placer starts
            # from a random broker whatever it is, and spreads the new partitions' leaders anew.
            placements = self.cluster_control.replica_placer().place(
                PlacementSpec(current, additional, replication_factor), self.cluster_describer
            )
        for partition_id, replicas in enumerate(placements, start=current):
            isr = [b for b in replicas if self.cluster_control.active(b)]
            if not isr:
                raise Errors.INVALID_REPLICATION_FACTOR.exception(
                    f"Unable to replicate the partition {replication_factor} time(s): All brokers are currently "
                    "fenced or in controlled shutdown."
                )
            records.append(self._new_partition(replicas, isr).to_record(topic_id, partition_id))

    # --- AlterPartition: a leader changes its ISR ----------------------------------------------------

    def alter_partition(
        self, request: dict[str, Any], version: int | None = None
    ) -> ControllerResult[dict[str, Any]]:
        """A partition leader's AlterPartition (v0-1 name topics, v2 by id): each partition's new ISR
        checked against what the controller holds, then built into a PartitionChangeRecord.

        The leader is the one broker that sees its followers fetch, so it proposes the ISR; the
        controller disposes, because only the controller knows which brokers are fenced or shutting
        down and which leader epoch is current. Each partition is answered on its own: one stale
        partition does not fail the rest of the request.
        """
        if version is None:
            version = 2 if any("topic_id" in t and "topic_name" not in t for t in request["topics"]) else 1
        # A leader from an earlier registration (a restarted broker) must not change anything.
        self.cluster_control.check_broker_epoch(request["broker_id"], request["broker_epoch"])
        broker_id = request["broker_id"]
        records: list[ApiMessageAndVersion] = []
        response_topics = []
        for topic_data in request["topics"]:
            response_partitions: list[dict[str, Any]] = []
            response_topics.append(
                {
                    "topic_name": topic_data.get("topic_name", ""),
                    "topic_id": topic_data.get("topic_id", ZERO_UUID),
                    "partitions": response_partitions,
                }
            )
            # v2 names a topic by id, so a topic deleted and created again under the same name is
            # not mistaken for the old one; v0-1 can only name it.
            topic_id = (
                topic_data.get("topic_id")
                if version > 1
                else self.topics_by_name.get(topic_data["topic_name"])
            )
            if topic_id is None or topic_id == ZERO_UUID or topic_id not in self.topics:
                error = Errors.UNKNOWN_TOPIC_ID if version > 1 else Errors.UNKNOWN_TOPIC_OR_PARTITION
                for partition_data in topic_data["partitions"]:
                    response_partitions.append(
                        {"partition_index": partition_data["partition_index"], "error_code": error.code}
                    )
                log.info(
                    "Rejecting AlterPartition request for unknown topic ID %s or name %s.",
                    topic_data.get("topic_id"),
                    topic_data.get("topic_name"),
                )
                continue
            topic = self.topics.get(topic_id)
            for partition_data in topic_data["partitions"]:
                response_partitions.append(
                    self._alter_one_partition(broker_id, topic, version, partition_data, records)
                )
        return ControllerResult.of(
            records, {"throttle_time_ms": 0, "error_code": Errors.NONE.code, "topics": response_topics}
        )

    def _alter_one_partition(
        self,
        broker_id: int,
        topic: TopicControlInfo,
        version: int,
        partition_data: dict[str, Any],
        records: list[ApiMessageAndVersion],
    ) -> dict[str, Any]:
        """One partition of an AlterPartition: checked, built, its record appended to ``records``,
        and its answer. The body of Kafka 3.3's per-partition loop in ``alterPartition``."""
        partition_id = partition_data["partition_index"]
        partition = topic.parts.get(partition_id)
        error = self._validate_alter_partition_data(
            broker_id, topic, partition_id, partition, version, partition_data
        )
        if error is not Errors.NONE:
            return {"partition_index": partition_id, "error_code": error.code}
        # The builder, not this method, decides the record: the leader asked for an ISR, and the
        # builder keeps the rules (a leader that must move, the ISR never emptied) in one place.
        builder = self._builder(partition, topic, partition_id, self.cluster_control.active)
        builder.set_target_isr(partition_data["new_isr"])
        builder.set_target_leader_recovery_state(
            LeaderRecoveryState.of(partition_data.get("leader_recovery_state", 0))
        )
        record = builder.build()
        if record is not None:
            records.append(record)
            change = record.message
            # The answer shows the partition as the record leaves it (new ISR, bumped partition
            # epoch), so the leader carries on without waiting for the record to reach it.
            partition = partition.merge(change)
            log.debug(
                "Node %d has altered ISR for %s-%d to %s.", broker_id, topic.name, partition_id, change.isr
            )
            if change.leader not in (broker_id, NO_LEADER_CHANGE):
                # Only a completed reassignment moves the leader here; the leader must fetch new
                # metadata before it tries again, so it gets an error along with the record.
                error = Errors.NEW_LEADER_ELECTED if version > 1 else Errors.FENCED_LEADER_EPOCH
                return {"partition_index": partition_id, "error_code": error.code}
        # No record: the partition already is what the leader asked for, and the answer says so.
        return {
            "partition_index": partition_id,
            "error_code": Errors.NONE.code,
            "leader_id": partition.leader,
            "leader_epoch": partition.leader_epoch,
            "isr": list(partition.isr),
            "leader_recovery_state": int(partition.leader_recovery_state),
            "partition_epoch": partition.partition_epoch,
        }

    def _validate_alter_partition_data(
        self,
        broker_id: int,
        topic: TopicControlInfo,
        partition_id: int,
        partition: PartitionRegistration | None,
        version: int,
        partition_data: dict[str, Any],
    ) -> Errors:
        """Kafka 3.3's checks, in its order; the first that fails is the answer."""
        where = f"AlterPartition request from node {broker_id} for {topic.name}-{partition_id}"
        if partition is None:
            log.info(
                "Rejecting AlterPartition request for unknown partition %s-%d.", topic.name, partition_id
            )
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        # Epochs newer than ours: this controller is probably behind, no longer the active one.
        if partition_data["leader_epoch"] > partition.leader_epoch:
            log.debug("Rejecting %s because the current leader epoch is %d, which is greater than the local value %d.",
                      where, partition_data["leader_epoch"], partition.leader_epoch)  # fmt: skip
            return Errors.NOT_CONTROLLER
        if partition_data["partition_epoch"] > partition.partition_epoch:
            log.debug("Rejecting %s because the current partition epoch is %d, which is greater than the local "
                      "value %d.", where, partition_data["partition_epoch"], partition.partition_epoch)  # fmt: skip
            return Errors.NOT_CONTROLLER
        # An older leader epoch: the sender is a deposed leader.
        if partition_data["leader_epoch"] < partition.leader_epoch:
            log.debug("Rejecting %s because the current leader epoch is %d, not %d.",
                      where, partition.leader_epoch, partition_data["leader_epoch"])  # fmt: skip
            return Errors.FENCED_LEADER_EPOCH
        if broker_id != partition.leader:
            log.info("Rejecting %s because the current leader is %d.", where, partition.leader)
            return Errors.INVALID_REQUEST
        # The right leader, built on an ISR change it has not yet heard of.
        if partition_data["partition_epoch"] < partition.partition_epoch:
            log.info("Rejecting %s because the current partition epoch is %d, not %d.",
                     where, partition.partition_epoch, partition_data["partition_epoch"])  # fmt: skip
            return Errors.INVALID_UPDATE_VERSION
        new_isr = list(partition_data["new_isr"])
        if not validate_isr(partition.replicas, new_isr):
            log.error("Rejecting %s because it specified an invalid ISR %s.", where, new_isr)
            return Errors.INVALID_REQUEST
        if partition.leader not in new_isr:
            log.error(
                "Rejecting %s because it specified an invalid ISR %s that doesn't include itself.",
                where,
                new_isr,
            )
            return Errors.INVALID_REQUEST
        leader_recovery_state = LeaderRecoveryState.of(partition_data.get("leader_recovery_state", 0))
        if leader_recovery_state == LeaderRecoveryState.RECOVERING and len(new_isr) > 1:
            log.info("Rejecting %s because the ISR %s had more than one replica while the leader was still "
                     "recovering from an unclean leader election.", where, new_isr)  # fmt: skip
            return Errors.INVALID_REQUEST
        if (
            partition.leader_recovery_state == LeaderRecoveryState.RECOVERED
            and leader_recovery_state == LeaderRecoveryState.RECOVERING
        ):
            log.info(
                "Rejecting %s because the leader recovery state cannot change from RECOVERED to RECOVERING.",
                where,
            )
            return Errors.INVALID_REQUEST
        ineligible = self._ineligible_replicas_for_isr(new_isr)
        if ineligible:
            log.info(
                "Rejecting %s because it specified ineligible replicas %s in the new ISR %s.",
                where,
                ineligible,
                new_isr,
            )
            return Errors.INELIGIBLE_REPLICA if version > 1 else Errors.OPERATION_NOT_ATTEMPTED
        return Errors.NONE

    def _ineligible_replicas_for_isr(self, isr: list[int]) -> list[str]:
        """KIP-841: only a registered, unfenced broker that is not shutting down may join an ISR."""
        ineligible = []
        for replica_id in isr:
            registration = self.cluster_control.registration(replica_id)
            if registration is None:
                ineligible.append(f"{replica_id} (not registered)")
            elif self.cluster_control.in_controlled_shutdown(replica_id):
                ineligible.append(f"{replica_id} (shutting down)")
            elif registration.fenced:
                ineligible.append(f"{replica_id} (fenced)")
        return ineligible

    # --- brokers coming and going --------------------------------------------------------------------

    def handle_broker_fenced(self, broker_id: int, records: list[ApiMessageAndVersion]) -> None:
        """Take the broker out of every ISR and leadership, then fence it.

        The partition changes come before the FenceBrokerRecord, in the same batch: a broker
        replaying the log never sees a fenced broker still leading, even for one record.
        """
        # BEGIN SOLUTION
        # Kafka 3.3's handleBrokerFenced. The FenceBrokerRecord carries the registration's epoch, so
        # a fence meant for one incarnation of the broker never fences the next.
        registration = self.cluster_control.broker_registrations().get(broker_id)
        if registration is None:
            raise RuntimeError(f"Can't find broker registration for broker {broker_id}")
        # Every partition whose ISR holds the broker (those it leads included): the builder takes it
        # out of the ISR and, where it led, elects within what is left. None of these records is
        # replayed yet, so the broker still looks active here; generate_leader_and_isr_updates
        # refuses it as a leader all the same.
        self.generate_leader_and_isr_updates(
            "handleBrokerFenced",
            broker_id,
            NO_LEADER,
            records,
            self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id),
        )
        # Last: the whole list is one atomic batch, and a broker replaying it meets the partitions
        # without the broker before it meets the broker fenced.
        records.append(ApiMessageAndVersion(FenceBrokerRecord(id=broker_id, epoch=registration.epoch), 0))
        # END SOLUTION

    def handle_broker_unregistered(
        self, broker_id: int, broker_epoch: int, records: list[ApiMessageAndVersion]
    ) -> None:
        """As fencing, but the broker leaves the cluster: an UnregisterBrokerRecord, not a fence."""
        self.generate_leader_and_isr_updates(
            "handleBrokerUnregistered",
            broker_id,
            NO_LEADER,
            records,
            self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id),
        )
        records.append(
            ApiMessageAndVersion(UnregisterBrokerRecord(broker_id=broker_id, broker_epoch=broker_epoch), 0)
        )

    def handle_broker_unfenced(
        self, broker_id: int, broker_epoch: int, records: list[ApiMessageAndVersion]
    ) -> None:
        """Unfence the broker, then let it lead the partitions that have no leader and keep it in
        their ISR (a partition whose last ISR member comes back).

        The UnfenceBrokerRecord goes first, the opposite of fencing: a leader must be unfenced in
        the log before any record names it leader.
        """
        records.append(ApiMessageAndVersion(UnfenceBrokerRecord(id=broker_id, epoch=broker_epoch), 0))
        self.generate_leader_and_isr_updates(
            "handleBrokerUnfenced",
            NO_LEADER,
            broker_id,
            records,
            self.brokers_to_isrs.partitions_with_no_leader(),
        )

    def handle_broker_in_controlled_shutdown(
        self, broker_id: int, broker_epoch: int, records: list[ApiMessageAndVersion]
    ) -> None:
        """Move the broker's leaderships away and take it out of the ISRs it is in (not the last
        member of one), while it still serves: its clients move with the leaders."""
        self.generate_leader_and_isr_updates(
            f"enterControlledShutdown[{broker_id}]",
            broker_id,
            NO_LEADER,
            records,
            self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id),
        )

    def generate_leader_and_isr_updates(
        self,
        context: str,
        broker_to_remove: int,
        broker_to_add: int,
        records: list[ApiMessageAndVersion],
        partitions: Iterator[TopicIdPartition],
    ) -> None:
        """For each partition, the record (if any) that takes ``broker_to_remove`` out of the ISR
        and leadership, or lets ``broker_to_add`` lead (NO_LEADER: nobody)."""
        old_size = len(records)

        # While these records are built, the cluster control manager still shows the broker as it
        # was: ``broker_to_add`` still fenced, ``broker_to_remove`` still active. So the first may
        # lead though it looks fenced, and the second may not though it looks active (it is out
        # of the target ISR too, but an unclean election looks outside the ISR).
        def is_acceptable_leader(replica: int) -> bool:
            return replica != broker_to_remove and (
                replica == broker_to_add or self.cluster_control.active(replica)
            )

        for tp in partitions:
            topic = self.topics.get(tp.topic_id)
            if topic is None:
                raise RuntimeError(
                    f"Topic ID {tp.topic_id} existed in isrMembers, but not in the topics map."
                )
            partition = topic.parts.get(tp.partition_id)
            if partition is None:
                raise RuntimeError(f"Partition {tp} existed in isrMembers, but not in the partitions map.")
            builder = self._builder(partition, topic, tp.partition_id, is_acceptable_leader)
            # With broker_to_remove NO_LEADER the ISR stays as it is: only the leader may change.
            builder.set_target_isr(copy_without(partition.isr, broker_to_remove))
            record = builder.build()
            if record is not None:
                records.append(record)
        if len(records) != old_size:
            log.info("%s: changing %d partition(s)", context, len(records) - old_size)

    def process_broker_heartbeat(
        self, request: dict[str, Any], register_broker_record_offset: int | None = None
    ) -> ControllerResult[BrokerHeartbeatReply]:
        """A BrokerHeartbeat: touch the broker's session, move it to its next state, and write the
        records the move takes.

        ``register_broker_record_offset`` is the offset of the broker's RegisterBrokerRecord (what
        it must have replayed to be unfenced); the quorum controller reads it from the cluster
        control manager, as this does when it is not given.
        """
        broker_id = request["broker_id"]
        broker_epoch = request["broker_epoch"]
        if register_broker_record_offset is None:
            register_broker_record_offset = self.cluster_control.register_broker_record_offset(broker_id)
            if register_broker_record_offset is None:
                raise Errors.STALE_BROKER_EPOCH.exception(
                    f"Receive a heartbeat from broker {broker_id} before registration"
                )
        # A heartbeat from an earlier incarnation of the broker must not keep the new one alive.
        self.cluster_control.check_broker_epoch(broker_id, broker_epoch)
        heartbeat_manager = self.cluster_control.heartbeat_manager()
        # The heartbeat manager decides the move (Kafka 3.3's table); this method writes it.
        states = heartbeat_manager.calculate_next_broker_state(
            broker_id,
            request,
            register_broker_record_offset,
            lambda: self.brokers_to_isrs.has_leaderships(broker_id),
        )
        records: list[ApiMessageAndVersion] = []
        if states.current is not states.next:
            if states.next is BrokerControlState.FENCED:
                self.handle_broker_fenced(broker_id, records)
            elif states.next is BrokerControlState.UNFENCED:
                self.handle_broker_unfenced(broker_id, broker_epoch, records)
            elif states.next is BrokerControlState.CONTROLLED_SHUTDOWN:
                self.handle_broker_in_controlled_shutdown(broker_id, broker_epoch, records)
            elif states.next is BrokerControlState.SHUTDOWN_NOW:
                # A broker that may stop now is fenced: it serves nothing from here on.
                self.handle_broker_fenced(broker_id, records)
        # Touched after the records are decided, so the session runs from this heartbeat. Done
        # here, outside the records, because sessions are not in the log: a new active controller
        # starts every session afresh.
        heartbeat_manager.touch(broker_id, states.next.fenced(), request["current_metadata_offset"])
        reply = BrokerHeartbeatReply(
            is_caught_up=request["current_metadata_offset"] >= register_broker_record_offset,
            is_fenced=states.next.fenced(),
            in_controlled_shutdown=states.next.in_controlled_shutdown(),
            should_shut_down=states.next.should_shut_down(),
        )
        return ControllerResult.of(records, reply)

    def unregister_broker(self, broker_id: int) -> ControllerResult[None]:
        """An administrator's UnregisterBroker: the broker is taken out of every ISR and leadership
        and its registration removed, so a broker id that will not come back frees its partitions."""
        registration = self.cluster_control.broker_registrations().get(broker_id)
        if registration is None:
            raise Errors.BROKER_ID_NOT_REGISTERED.exception(
                f"Broker ID {broker_id} is not currently registered"
            )
        records: list[ApiMessageAndVersion] = []
        self.handle_broker_unregistered(broker_id, registration.epoch, records)
        return ControllerResult.of(records, None)

    def maybe_fence_one_stale_broker(self) -> ControllerResult[None]:
        """Fence the broker whose session expired first, if any. One at a time, as Kafka does: the
        quorum controller reschedules the check after each, so several stale brokers are fenced one
        event each, and each broker's records are built from partitions that already show the one
        before it gone. Building a second broker's records from the same, not yet replayed, state
        would undo the first one's ISR change."""
        # BEGIN SOLUTION
        # Kafka 3.3's maybeFenceOneStaleBroker. Only a broker whose session has expired
        # (find_one_stale_broker: the oldest contact, if its session is over) is fenced; with none,
        # no records. Kafka's own comment gives a second reason for one at a time: no single event
        # floods the controller's queue with the records of many brokers.
        records: list[ApiMessageAndVersion] = []
        heartbeat_manager = self.cluster_control.heartbeat_manager()
        broker_id = heartbeat_manager.find_one_stale_broker()
        if broker_id is not None:
            log.info("Fencing broker %d because its session has timed out.", broker_id)
            self.handle_broker_fenced(broker_id, records)
            # Out of the unfenced list now, so the check this event reschedules looks at the next
            # oldest session (replaying the FenceBrokerRecord would do it too, but only once the
            # records are appended).
            heartbeat_manager.fence(broker_id)
        return ControllerResult.of(records, None)
        # END SOLUTION
