"""A Streams application's settings, and the settings of the clients each stream thread builds.

Mirrors: org.apache.kafka.streams.StreamsConfig
         (streams/src/main/java/org/apache/kafka/streams/StreamsConfig.java, Kafka 0.10.1,
         with 0.11's ``processing.guarantee``)
Book:    chapter 9, 9.1.3 (the thread model: what a thread's clients are told)
Differs: only the settings kafka_lite's Streams implements are defined; an unknown one is an error,
         except those prefixed ``consumer.`` or ``producer.`` (0.10.2's prefixes), which go to that
         client, and the client security settings below, which go to every client. The settings whose value is a class in Kafka (``timestamp.extractor``,
         ``default.deserialization.exception.handler`` of Kafka 1.0, ``partition.grouper``) take a
         Python class or instance and are checked where they are used. No ``zookeeper.connect``
         (0.10.2 dropped it: internal topics are created with CreateTopics), no ``key.serde`` /
         ``value.serde`` (kafka_lite's DSL names its serdes where it uses them), and no metrics
         settings. The consumers get Kafka 2.3's ``allow.auto.create.topics=false`` (KIP-361): the
         leader's assignor creates the repartition topics with their partition count, and a broker
         must not create one first, with its default count, because a thread asked for its metadata.

What a stream thread's three clients are given (``StreamsConfig.getConsumerConfigs`` and friends)::

    consumer          group.id = application.id, the "stream" assignor, enable.auto.commit=false
                      (the thread commits after flushing), auto.offset.reset=earliest, 1000 records
                      a poll, allow.auto.create.topics=false
    restore consumer  no group: it is assigned changelog partitions by hand
    producer          linger.ms=100: a task's output and changelog writes go out in batches

``cache.max.bytes.buffering`` (KIP-63, 0.10.1) is the record cache's budget for the whole instance:
each stream thread gets an equal share (``cache_size_per_thread``), its ``ThreadCache``, which its
tasks' cached stores share. 0 turns the cache off in effect: every update is flushed as it is put.

On a secure cluster the application logs in with Kafka's client security settings, given beside
its own (``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``): as Kafka's
``getClientPropsWithPrefix`` does, every client gets them (the three above and the admin client
that creates the internal topics), and a ``consumer.`` or ``producer.`` setting of the same name
wins for that client. The principal then needs the ACLs Kafka's Streams guide lists:
Read on the input topics, Write on the output topics, Read on the group ``application.id``, Create
on the cluster (the internal topics), and Read, Write and Describe on the internal topics.

Under ``processing.guarantee=exactly_once`` (Kafka 0.11, KIP-129) both consumers read with
``isolation.level=read_committed``, each task gets a producer of its own with
``transactional.id=<application.id>-<task id>``, and commits come every 100 ms unless
``commit.interval.ms`` is set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_lite.clients.client_utils import admin_client_login
from kafka_lite.clients.common_client_configs import CommonClientConfigs, define_security_configs
from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance, Range, Type, ValidString
from kafka_lite.common.errors import ConfigException

APPLICATION_ID_CONFIG = "application.id"
APPLICATION_SERVER_CONFIG = "application.server"
BOOTSTRAP_SERVERS_CONFIG = CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG
CLIENT_ID_CONFIG = CommonClientConfigs.CLIENT_ID_CONFIG
STATE_DIR_CONFIG = "state.dir"
REPLICATION_FACTOR_CONFIG = "replication.factor"
COMMIT_INTERVAL_MS_CONFIG = "commit.interval.ms"
POLL_MS_CONFIG = "poll.ms"
CACHE_MAX_BYTES_BUFFERING_CONFIG = "cache.max.bytes.buffering"
DEFAULT_CACHE_MAX_BYTES_BUFFERING = 10 * 1024 * 1024  # 10485760, StreamsConfig's default
NUM_STREAM_THREADS_CONFIG = "num.stream.threads"
NUM_STANDBY_REPLICAS_CONFIG = "num.standby.replicas"
BUFFERED_RECORDS_PER_PARTITION_CONFIG = "buffered.records.per.partition"
STATE_CLEANUP_DELAY_MS_CONFIG = "state.cleanup.delay.ms"
WINDOW_STORE_CHANGE_LOG_ADDITIONAL_RETENTION_MS_CONFIG = "windowstore.changelog.additional.retention.ms"
PROCESSING_GUARANTEE_CONFIG = "processing.guarantee"
AT_LEAST_ONCE = "at_least_once"
EXACTLY_ONCE = "exactly_once"
# Under exactly_once a commit is a transaction's commit: Kafka 0.11 commits every 100 ms by default
# then, so that output becomes visible to read_committed consumers soon (30 s otherwise).
EOS_DEFAULT_COMMIT_INTERVAL_MS = 100

# Settings whose value is a Python class or object (a Java class name in Kafka).
TIMESTAMP_EXTRACTOR_CLASS_CONFIG = "timestamp.extractor"
PARTITION_GROUPER_CLASS_CONFIG = "partition.grouper"
DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG = "default.deserialization.exception.handler"
OBJECT_CONFIGS = frozenset(
    {
        TIMESTAMP_EXTRACTOR_CLASS_CONFIG,
        PARTITION_GROUPER_CLASS_CONFIG,
        DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
    }
)

# The clients' security settings (Kafka's CommonClientConfigs and SaslConfigs names): checked here,
# handed to every client the application builds.
SECURITY_CONFIG_DEF = define_security_configs(ConfigDef())
SECURITY_PROTOCOL_CONFIG = CommonClientConfigs.SECURITY_PROTOCOL_CONFIG
SASL_MECHANISM_CONFIG = CommonClientConfigs.SASL_MECHANISM_CONFIG

CONSUMER_PREFIX = "consumer."
PRODUCER_PREFIX = "producer."

H = Importance.HIGH
M = Importance.MEDIUM
L = Importance.LOW

# --8<-- [start:config_def]
CONFIG_DEF = (
    ConfigDef()
    .define(
        APPLICATION_ID_CONFIG,
        Type.STRING,
        NO_DEFAULT_VALUE,
        None,
        H,
        "The application's name: the consumer group id of all its threads, the prefix of its "
        "internal topics and the name of its directory under state.dir.",
    )
    .define(
        BOOTSTRAP_SERVERS_CONFIG,
        Type.LIST,
        NO_DEFAULT_VALUE,
        None,
        H,
        CommonClientConfigs.BOOTSTRAP_SERVERS_DOC,
    )
    .define(
        CLIENT_ID_CONFIG,
        Type.STRING,
        "",
        None,
        H,
        "The prefix of the client ids of the threads' clients; by default <application.id>-<n>.",
    )
    .define(
        STATE_DIR_CONFIG,
        Type.STRING,
        "/tmp/kafka-streams",
        None,
        M,
        "Where the state stores live: <state.dir>/<application.id>/<task id>/.",
    )
    .define(
        REPLICATION_FACTOR_CONFIG,
        Type.INT,
        1,
        Range.at_least(1),
        M,
        "The replication factor of the internal topics (changelogs and repartition topics) "
        "the application creates.",
    )
    .define(
        COMMIT_INTERVAL_MS_CONFIG,
        Type.LONG,
        30_000,
        None,
        L,
        "How often the tasks are committed: stores flushed, output flushed, offsets committed. "
        "Negative: only when a processor asks.",
    )
    .define(
        POLL_MS_CONFIG,
        Type.LONG,
        100,
        Range.at_least(0),
        L,
        "How long a thread's poll waits for input when nothing is buffered.",
    )
    .define(
        CACHE_MAX_BYTES_BUFFERING_CONFIG,
        Type.LONG,
        DEFAULT_CACHE_MAX_BYTES_BUFFERING,
        None,
        L,
        "Maximum number of memory bytes to be used for buffering across all threads: the record "
        "cache in front of the stores, split equally between the stream threads.",
    )
    .define(
        NUM_STREAM_THREADS_CONFIG,
        Type.INT,
        1,
        Range.at_least(1),
        L,
        "How many stream threads this instance runs.",
    )
    .define(
        NUM_STANDBY_REPLICAS_CONFIG,
        Type.INT,
        0,
        Range.at_least(0),
        L,
        "How many warm copies of each task's stores other instances keep (standby tasks).",
    )
    .define(
        BUFFERED_RECORDS_PER_PARTITION_CONFIG,
        Type.INT,
        1000,
        Range.at_least(1),
        L,
        "How many records a task buffers per partition before the partition is paused.",
    )
    .define(
        STATE_CLEANUP_DELAY_MS_CONFIG,
        Type.LONG,
        60_000,
        Range.at_least(0),
        L,
        "How long the directory of a task that moved away is kept before it is deleted.",
    )
    .define(
        APPLICATION_SERVER_CONFIG,
        Type.STRING,
        "",
        None,
        L,
        "host:port where this instance answers Interactive Queries, told to the other "
        "instances through the assignment.",
    )
    .define(
        WINDOW_STORE_CHANGE_LOG_ADDITIONAL_RETENTION_MS_CONFIG,
        Type.LONG,
        24 * 60 * 60 * 1000,
        Range.at_least(0),
        M,
        "Added to a window store's retention to give its changelog's retention.ms.",
    )
    .define(
        PROCESSING_GUARANTEE_CONFIG,
        Type.STRING,
        AT_LEAST_ONCE,
        ValidString.in_(AT_LEAST_ONCE, EXACTLY_ONCE),
        M,
        "at_least_once: a crash may process records again; exactly_once (Kafka 0.11, KIP-129): "
        "each task's output, changelog writes and input offsets commit in one transaction.",
    )
)
# --8<-- [end:config_def]

# The last keeps a broker from creating a repartition topic a thread asks about (Differs says why).
CONSUMER_DEFAULT_OVERRIDES = {
    "max.poll.records": 1000,
    "auto.offset.reset": "earliest",
    "allow.auto.create.topics": False,
}
PRODUCER_DEFAULT_OVERRIDES = {"linger.ms": 100}


class StreamsConfig:
    """Parsed settings: ``config[name]`` for Streams' own, and the three clients' settings."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self.originals = dict(props)
        streams_props = {}
        self.objects: dict[str, Any] = {}
        self.consumer_props: dict[str, Any] = {}
        self.producer_props: dict[str, Any] = {}
        self.security_props: dict[str, Any] = {}
        for name, value in props.items():
            dotted = name.replace("_", ".")
            if dotted in SECURITY_CONFIG_DEF.keys:
                self.security_props[dotted] = value
            elif dotted.startswith(CONSUMER_PREFIX):
                self.consumer_props[name[len(CONSUMER_PREFIX) :]] = value
            elif dotted.startswith(PRODUCER_PREFIX):
                self.producer_props[name[len(PRODUCER_PREFIX) :]] = value
            elif dotted in OBJECT_CONFIGS:
                self.objects[dotted] = value
            else:
                streams_props[name] = value
        self.values = CONFIG_DEF.parse(streams_props)
        self.security = SECURITY_CONFIG_DEF.parse(self.security_props)  # a bad protocol fails here
        if not self.values[APPLICATION_ID_CONFIG]:
            raise ConfigException(APPLICATION_ID_CONFIG, "", "The application id must not be empty")
        names = {name.replace("_", ".") for name in streams_props}
        if self.eos_enabled and COMMIT_INTERVAL_MS_CONFIG not in names:
            self.values[COMMIT_INTERVAL_MS_CONFIG] = EOS_DEFAULT_COMMIT_INTERVAL_MS

    def cache_size_per_thread(self) -> int:
        """A thread's share of ``cache.max.bytes.buffering``; a negative setting counts as 0, as
        Kafka's ``StreamThread`` has it (with a warning)."""
        total = self.values[CACHE_MAX_BYTES_BUFFERING_CONFIG]
        return max(0, total // self.values[NUM_STREAM_THREADS_CONFIG])

    @property
    def eos_enabled(self) -> bool:
        return self.values[PROCESSING_GUARANTEE_CONFIG] == EXACTLY_ONCE

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def task_config(self) -> dict[str, Any]:
        """What a task and its processors see (``ProcessorContext.app_configs``): the Streams settings
        by name, with the class-valued ones."""
        return {**self.values, **self.objects}

    def get_consumer_configs(self, client_id: str) -> dict[str, Any]:
        """The main consumer's: in the application's group, committing by hand."""
        return {
            **CONSUMER_DEFAULT_OVERRIDES,
            **self.security_props,
            **self.consumer_props,
            "bootstrap.servers": self.values[BOOTSTRAP_SERVERS_CONFIG],
            "group.id": self.values[APPLICATION_ID_CONFIG],
            "client.id": client_id + "-consumer",
            # The thread commits after it has flushed the stores and the producer: never in the background.
            "enable.auto.commit": False,
            **self._eos_consumer_overrides(),
        }

    def get_restore_consumer_configs(self, client_id: str) -> dict[str, Any]:
        """The restore consumer's: no group, its partitions (changelogs) assigned by hand."""
        configs = {
            **CONSUMER_DEFAULT_OVERRIDES,
            **self.security_props,
            **self.consumer_props,
            "bootstrap.servers": self.values[BOOTSTRAP_SERVERS_CONFIG],
            "client.id": client_id + "-restore-consumer",
            "enable.auto.commit": False,
            **self._eos_consumer_overrides(),
        }
        configs.pop("group.id", None)
        configs.pop("group_id", None)
        return configs

    # --8<-- [start:eos_configs]
    def get_producer_configs(self, client_id: str, task_id: str | None = None) -> dict[str, Any]:
        """A thread's producer; under exactly_once, a task's (``task_id``), whose transactional id
        ``<application.id>-<task id>`` outlives the process: the task's next owner, here or on
        another instance, fences this one and aborts its open transaction."""
        configs = {
            **PRODUCER_DEFAULT_OVERRIDES,
            **self.security_props,
            **self.producer_props,
            "bootstrap.servers": self.values[BOOTSTRAP_SERVERS_CONFIG],
            "client.id": client_id + "-producer",
        }
        if self.eos_enabled:
            if task_id is None:
                raise ConfigException(PROCESSING_GUARANTEE_CONFIG, EXACTLY_ONCE, "a producer is per task")
            configs["client.id"] = f"{client_id}-{task_id}-producer"
            configs["transactional.id"] = f"{self.values[APPLICATION_ID_CONFIG]}-{task_id}"
        return configs

    def get_admin_configs(self, client_id: str) -> dict[str, Any]:
        """The admin client's, which creates the internal topics (Kafka 0.10.2-0.11's
        ``StreamsKafkaClient``, built from the same settings): its client id and the login.
        ``KafkaAdminClient`` takes kafka-python's argument names, so the login's username and
        password are read from ``sasl.jaas.config`` here."""
        return {"client_id": client_id + "-admin", **admin_client_login(self.security)}

    def _eos_consumer_overrides(self) -> dict[str, Any]:
        """Under exactly_once both consumers read only committed data: the input, and the changelogs
        a store is restored from (an aborted write must not come back in a restored store)."""
        return {"isolation.level": "read_committed"} if self.eos_enabled else {}

    # --8<-- [end:eos_configs]
