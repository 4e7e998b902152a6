"""The admin manager: the topic and config requests that end as writes to ZooKeeper, and the waits
for the controller to act on them.

Mirrors: kafka.server.AdminManager (core/src/main/scala/kafka/server/AdminManager.scala, Kafka 0.11.0)
Book:    chapter 7, 7.1.3 (a new topic appears in ZooKeeper; the controller acts on it), 7.1.5
         (topic deletion)
Differs: a request with ``timeout`` <= 0 gets NONE for the topics it wrote (Kafka answers
         REQUEST_TIMED_OUT, meaning "written, not waited for"). Kafka's ``KafkaApis.createTopic`` (a
         topic created by a Metadata request) calls ``AdminUtils.createTopic`` itself; here it goes
         through ``create_topic`` below, so every write of a new topic to ZooKeeper is in this class.
         Two later Kafkas' operations sit beside 0.11's, each in methods whose docstrings name it:
         CreatePartitions (Kafka 1.0, KIP-195), and DescribeConfigs v1's ``config_source`` and
         synonyms (Kafka 1.1, KIP-226). A KRaft broker's answers are ``server/config_helper.py``'s.

``describe_configs`` answers a topic's settings (the broker's defaults with the topic's overrides
from its config repository over them: ZooKeeper, or a KRaft broker's metadata image) or this broker's own, each with where its value comes from.
``alter_configs`` validates a topic's new overrides, the whole set, and writes them to ZooKeeper with
a change notification (``ZkUtils.change_topic_config``); every broker's ``DynamicConfigManager`` then
applies them to its logs. A broker's settings cannot be altered: in Kafka 0.11 they are the file's.
An unknown key is INVALID_CONFIG, a bad value INVALID_REQUEST naming the key, as Kafka answers; a
refused request writes nothing. ``create_partitions`` adds partitions to a topic by rewriting its
assignment, which the controller's watch on the topic sees.

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

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_lite.common.config import Type
from kafka_lite.common.errors import ApiException, ConfigException, Errors
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.topic import validate_topic_name
from kafka_lite.log import log_config
from kafka_lite.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF
from kafka_lite.log.log_config import SERVER_DEFAULT_NAMES, LogConfig
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
from kafka_lite.server.kafka_config import CONFIG_DEF as BROKER_CONFIG_DEF
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata.config_repository import ConfigRepository, ZkConfigRepository
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory
from kafka_lite.zk.admin_utils import assign_replicas_to_brokers
from kafka_lite.zk.zk_utils import TopicAlreadyMarkedForDeletionException, ZkUtils

log = logging.getLogger(__name__)

NO_NUM_PARTITIONS = -1  # CreateTopicsRequest.NO_NUM_PARTITIONS: the assignment gives the count
NO_REPLICATION_FACTOR = -1  # CreateTopicsRequest.NO_REPLICATION_FACTOR


class ResourceType(enum.IntEnum):
    """What a config belongs to (Kafka's ``org.apache.kafka.common.requests.Resource``'s types)."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    BROKER = 4


class ConfigSource(enum.IntEnum):
    """Where a described value comes from (Kafka 1.1's ``DescribeConfigsResponse.ConfigSource``)."""

    UNKNOWN_CONFIG = 0
    TOPIC_CONFIG = 1  # the topic's override in ZooKeeper
    DYNAMIC_BROKER_CONFIG = 2  # (Kafka 1.1's dynamic broker configs; none here)
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4  # server.properties
    DEFAULT_CONFIG = 5  # the definition's default


# The broker settings a topic setting falls back to, first to last (``LogConfig.TopicConfigSynonyms``,
# which ``topic_config_synonyms`` reads): the ms form wins over the minutes and the hours.
BROKER_SYNONYMS = {
    "retention.ms": ["log.retention.ms", "log.retention.minutes", "log.retention.hours"],
    "segment.ms": ["log.roll.ms", "log.roll.hours"],
    "segment.jitter.ms": ["log.roll.jitter.ms", "log.roll.jitter.hours"],
}

Resource = tuple[ResourceType, str]  # (type, name): a topic's name, or a broker's id as a string


@dataclass
class ConfigSynonym:
    """One place that sets a config, and its value there (Kafka 1.1's ``ConfigSynonym``, KIP-226)."""

    name: str
    value: str | None
    source: ConfigSource


@dataclass
class ConfigEntry:
    """One described config (Kafka's ``DescribeConfigsResponse.ConfigEntry``); ``synonyms`` lists
    every place that sets it, the one in force first (empty unless asked for)."""

    name: str
    value: str | None
    source: ConfigSource
    read_only: bool
    is_sensitive: bool = False
    synonyms: list[ConfigSynonym] = field(default_factory=list)

    @property
    def is_default(self) -> bool:
        return self.source is ConfigSource.DEFAULT_CONFIG


@dataclass
class DescribeConfigsResult:
    """One resource's answer (Kafka's ``DescribeConfigsResponse.Config``)."""

    error: Errors
    message: str | None
    entries: list[ConfigEntry]


@dataclass
class NewPartitionsDetails:
    """One topic of a CreatePartitions request (Kafka's ``NewPartitions``): the partition count after
    the request, and optionally each new partition's replicas."""

    total_count: int
    assignments: list[list[int]] | None = None


@dataclass
class TopicDetails:
    """One topic of a CreateTopics request (Kafka's ``CreateTopicsRequest.TopicDetails``)."""

    num_partitions: int
    replication_factor: int
    replicas_assignments: dict[int, list[int]] = field(default_factory=dict)
    configs: dict[str, str | None] = field(default_factory=dict)


class AdminManager:
    """``config_repository``: where DescribeConfigs reads topics' overrides; ZooKeeper's unless
    given. A KRaft broker's is ``KRaftAdminManager`` (server/config_helper.py)."""

    def __init__(
        self,
        config: KafkaConfig,
        metadata_cache: MetadataCache,
        zk_utils: ZkUtils | None,
        time: Time = SYSTEM,
        config_repository: ConfigRepository | None = None,
    ) -> None:
        self.config = config
        self.metadata_cache = metadata_cache
        self.zk_utils = zk_utils
        self.config_repository = config_repository or ZkConfigRepository(zk_utils)
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
        the created ones have leaders, or at ``timeout`` ms (Kafka 0.10.1's ``createTopics``, with
        0.10.2's ``validate_only``)."""
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
        ones are gone from this broker's metadata cache, or at ``timeout`` ms (REQUEST_TIMED_OUT)
        (Kafka 0.10.1's ``deleteTopics``)."""
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

    # -- CreatePartitions ---------------------------------------------------------------------------------

    # --8<-- [start:create_partitions]
    def create_partitions(
        self,
        timeout: int,
        new_partitions: dict[str, NewPartitionsDetails],
        validate_only: bool,
        response_callback: Callable[[CreateTopicsResults], None],
    ) -> None:
        """Add partitions to each topic; ``response_callback`` gets every topic's error once the new
        partitions have leaders, or at ``timeout`` ms (Kafka 1.0's ``createPartitions``)."""
        all_broker_ids = self.zk_utils.get_all_broker_ids()
        # 1. Validate each topic, and write its grown assignment to ZooKeeper (unless only validating).
        metadata = [
            self._add_partitions(topic, details, all_broker_ids, validate_only)
            for topic, details in new_partitions.items()
        ]
        # 2. Nothing to wait for: answer now.
        if timeout <= 0 or validate_only or not any(m.error is Errors.NONE for m in metadata):
            response_callback({m.topic: (m.error, m.message) for m in metadata})
            return
        # 3. Wait for the new partitions' leaders, as a CreateTopics does (Kafka's
        # DelayedCreatePartitions is the same operation under another name).
        delayed = DelayedCreateTopics(timeout, metadata, self.metadata_cache, response_callback)
        self.topic_purgatory.try_complete_else_watch(delayed, list(new_partitions))

    # --8<-- [end:create_partitions]

    def _add_partitions(
        self, topic: str, details: NewPartitionsDetails, all_broker_ids: list[int], validate_only: bool
    ) -> CreateTopicMetadata:
        """One topic of a CreatePartitions (Kafka 1.0, KIP-195): its grown assignment checked and
        written, or its error."""
        try:
            validate_topic_name(topic)  # a name that is no znode name must not reach ZooKeeper
            existing = self.zk_utils.get_partition_assignment(topic)
            if not existing:
                raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(f"The topic '{topic}' does not exist.")
            new_assignment = add_partitions_assignment(
                topic, existing, all_broker_ids, details.total_count, details.assignments
            )
            if not validate_only:
                log.info("Creating %d partitions for '%s' with the following replica assignment: %s",
                         len(new_assignment), topic, new_assignment)  # fmt: skip
                self.zk_utils.update_partition_assignment(topic, {**existing, **new_assignment})
            return CreateTopicMetadata(topic, tuple(sorted(new_assignment)), Errors.NONE)
        except ApiException as e:
            log.info("Error processing create partitions request for topic %s: %s", topic, e)
            return CreateTopicMetadata(topic, (), Errors.for_exception(e), str(e))

    # -- DescribeConfigs, AlterConfigs -------------------------------------------------------------------------

    # --8<-- [start:describe_configs]
    def describe_configs(
        self, resource_to_config_names: dict[Resource, list[str] | None], include_synonyms: bool = False
    ) -> dict[Resource, DescribeConfigsResult]:
        """Each resource's configs (``None``: all of them), or its error (Kafka 0.11's
        ``describeConfigs``; ``include_synonyms`` is DescribeConfigs v1's)."""
        results = {}
        for resource, names in resource_to_config_names.items():
            resource_type, name = resource
            try:
                if resource_type == ResourceType.TOPIC:
                    entries = self._topic_config_entries(name, include_synonyms)
                elif resource_type == ResourceType.BROKER:
                    entries = self._broker_config_entries(name, include_synonyms)
                else:
                    raise Errors.INVALID_REQUEST.exception(
                        f"Unsupported resource type: {_type_name(resource_type)}"
                    )
                wanted = [e for e in entries if names is None or e.name in names]
                results[resource] = DescribeConfigsResult(Errors.NONE, None, wanted)
            except ApiException as e:
                log.info(
                    "Error processing describe configs request for resource %s: %s", _resource(resource), e
                )
                results[resource] = DescribeConfigsResult(Errors.for_exception(e), str(e), [])
        return results

    def _topic_config_entries(self, topic: str, include_synonyms: bool) -> list[ConfigEntry]:
        """The broker's defaults with the topic's overrides over them (Kafka 0.11's
        ``LogConfig.fromProps``), in the definition's order."""
        validate_topic_name(topic)
        overrides = self._topic_overrides(topic)
        values = LogConfig.from_broker(self.config.log_config_props(), overrides).values
        entries = []
        for name, key in LOG_CONFIG_DEF.keys.items():
            synonyms = self._topic_config_synonyms(name, overrides)
            entries.append(
                ConfigEntry(
                    name, _to_string(values[name], key.type), synonyms[0].source, read_only=False,
                    synonyms=synonyms if include_synonyms else [],
                )
            )  # fmt: skip
        return entries

    def _topic_config_synonyms(self, name: str, overrides: dict[str, str]) -> list[ConfigSynonym]:
        """Every place that sets topic config ``name``, the one in force first (Kafka 1.1's
        ``createTopicConfigEntry``, KIP-226): the topic's override, the broker's file under each
        synonym, the definition's default. The first one's source is the entry's ``config_source``."""
        key = LOG_CONFIG_DEF.keys[name]
        # the throttled-replicas lists have no broker setting: their default is the topic key's
        server_names = BROKER_SYNONYMS.get(name, [SERVER_DEFAULT_NAMES.get(name, name)])
        synonyms = []
        if name in overrides:
            synonyms.append(ConfigSynonym(name, overrides[name], ConfigSource.TOPIC_CONFIG))
        for server_name in server_names:
            if server_name in self.config.originals and server_name in BROKER_CONFIG_DEF.keys:
                value = _to_string(self.config[server_name], BROKER_CONFIG_DEF.keys[server_name].type)
                synonyms.append(ConfigSynonym(server_name, value, ConfigSource.STATIC_BROKER_CONFIG))
        synonyms.append(
            ConfigSynonym(server_names[0], _to_string(key.default, key.type), ConfigSource.DEFAULT_CONFIG)
        )
        return synonyms

    def _topic_overrides(self, topic: str) -> dict[str, str]:
        """The topic's overrides as Kafka 0.11 reads them (``AdminUtils.fetchEntityConfig``): the
        config znode's, none for a topic without one. A topic that does not exist has none either,
        so it is described with the broker's defaults and no error."""
        return self.config_repository.topic_config(topic)

    def _broker_config_entries(self, broker: str, include_synonyms: bool) -> list[ConfigEntry]:
        """This broker's own settings, read-only: Kafka 0.11 changes them only in the file. Their
        source (the file or the default) is DescribeConfigs v1's, Kafka 1.1's (KIP-226)."""
        try:
            broker_id = int(broker)
        except ValueError:
            raise Errors.INVALID_REQUEST.exception(
                f"Broker id must be an integer, but it is: {broker}"
            ) from None
        if broker_id != self.config.broker_id:
            raise Errors.INVALID_REQUEST.exception(
                f"Unexpected broker id, expected {self.config.broker_id}, but received {broker_id}"
            )
        entries = []
        for name, key in BROKER_CONFIG_DEF.keys.items():
            sensitive = key.type is Type.PASSWORD
            value = None if sensitive else _to_string(self.config[name], key.type)
            source = (
                ConfigSource.STATIC_BROKER_CONFIG
                if name in self.config.originals
                else ConfigSource.DEFAULT_CONFIG
            )
            synonyms = [ConfigSynonym(name, value, source)] if include_synonyms else []
            entries.append(
                ConfigEntry(name, value, source, read_only=True, is_sensitive=sensitive, synonyms=synonyms)
            )
        return entries

    # --8<-- [end:describe_configs]

    # --8<-- [start:alter_configs]
    def alter_configs(
        self, configs: dict[Resource, dict[str, str | None]], validate_only: bool
    ) -> dict[Resource, tuple[Errors, str | None]]:
        """Replace each topic's overrides with the given set (AlterConfigs is not incremental: a key
        left out goes back to the broker's default); each resource's error and message (Kafka
        0.11's ``alterConfigs``)."""
        results: dict[Resource, tuple[Errors, str | None]] = {}
        for resource, entries in configs.items():
            resource_type, topic = resource
            try:
                if resource_type != ResourceType.TOPIC:
                    raise Errors.INVALID_REQUEST.exception(
                        f"AlterConfigs is only supported for topics, but resource type is {_type_name(resource_type)}"
                    )
                validate_topic_name(topic)
                if topic not in self.zk_utils.get_all_topics():
                    # 0.11's answer: AdminUtils.validateTopicConfig throws an AdminOperationException,
                    # which no error code maps, so the client gets UNKNOWN with its message.
                    raise Errors.UNKNOWN.exception(f'Topic "{topic}" does not exist.')
                for key, value in entries.items():
                    if value is None:
                        raise Errors.INVALID_REQUEST.exception(
                            f"Null value not supported for topic config: {key}"
                        )
                try:
                    log_config.validate(entries)
                except ConfigException as e:
                    raise Errors.INVALID_REQUEST.exception(
                        f"Invalid config value for resource {_resource(resource)}: {e}"
                    ) from None
                if not validate_only:
                    self.zk_utils.change_topic_config(topic, dict(entries))
                results[resource] = (Errors.NONE, None)
            except ApiException as e:
                log.info("Error processing alter configs request for resource %s: %s", _resource(resource), e)
                results[resource] = (Errors.for_exception(e), str(e))
        return results

    # --8<-- [end:alter_configs]

    def shutdown(self) -> None:
        self.topic_purgatory.shutdown()


def add_partitions_assignment(
    topic: str,
    existing: dict[int, list[int]],
    all_broker_ids: list[int],
    total_count: int,
    assignments: list[list[int]] | None = None,
) -> dict[int, list[int]]:
    """The replicas of the partitions to add to ``topic`` to reach ``total_count`` (Kafka's
    ``AdminUtils.addPartitions``): the given ``assignments``, checked, or Kafka's assignment over
    ``all_broker_ids`` with partition 0's replication factor, starting at the broker that leads
    partition 0, so the new leaders continue the round-robin the topic began with. Used by
    CreatePartitions (Kafka 1.0, KIP-195) and by ``kafka-lite topics --alter --zookeeper``."""
    if 0 not in existing:
        raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing. "
            f"Assignment: {existing}"
        )
    increment = total_count - len(existing)
    if increment < 0:
        raise Errors.INVALID_PARTITIONS.exception(
            f"Topic currently has {len(existing)} partitions, which is higher than the requested {total_count}."
        )
    if increment == 0:
        raise Errors.INVALID_PARTITIONS.exception(f"Topic already has {len(existing)} partitions.")
    replication_factor = len(existing[0])
    if assignments is None:
        brokers = sorted(all_broker_ids)
        start_index = next((i for i, b in enumerate(brokers) if b >= existing[0][0]), 0)
        return assign_replicas_to_brokers(brokers, increment, replication_factor, start_index, len(existing))
    unknown = {b for replicas in assignments for b in replicas} - set(all_broker_ids)
    if unknown:
        raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
            f"Unknown broker(s) in replica assignment: {', '.join(map(str, sorted(unknown)))}."
        )
    if len(assignments) != increment:
        raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
            f"Increasing the number of partitions by {increment} but {len(assignments)} assignments provided."
        )
    new = {len(existing) + i: list(replicas) for i, replicas in enumerate(assignments)}
    for p, replicas in new.items():
        if len(set(replicas)) != len(replicas):
            raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                f"Duplicate brokers not allowed in replica assignment: {', '.join(map(str, replicas))} "
                f"for partition id {p}."
            )
        if len(replicas) != replication_factor:
            raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                f"Inconsistent replication factor between partitions, partition 0 has {replication_factor} "
                f"while partition {p} has replication factor {len(replicas)}."
            )
    return new


def _to_string(value, type: Type) -> str | None:
    """A parsed value as Kafka's ``ConfigDef.convertToString`` writes it."""
    if value is None:
        return None
    if type is Type.BOOLEAN or isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(getattr(v, "__name__", str(v)) for v in value)
    return str(value)


def _type_name(resource_type: int) -> str:
    try:
        return ResourceType(resource_type).name
    except ValueError:
        return str(resource_type)


def _resource(resource: Resource) -> str:
    """As Kafka prints a ``Resource``: ``Resource(type=TOPIC, name='orders')``."""
    return f"Resource(type={_type_name(resource[0])}, name='{resource[1]}')"
