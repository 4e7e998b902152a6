"""Topic-level log settings: segment size and age, index interval, flush, retention, compaction.

Mirrors: kafka.log.LogConfig (core/src/main/scala/kafka/log/LogConfig.scala, Kafka 0.10.1; the
         ``message.format.version`` values are 0.11.0's) and the topic config names of
         org.apache.kafka.common.config.TopicConfig
Book:    chapter 6, 6.1 (message formats), 6.1.3 (rolling), 6.1.5 (log management), 6.1.6
         (compaction); chapter 10, 10.2 (message timestamps)
Differs: defaults are Kafka 0.10.1's, except ``unclean.leader.election.enable=false``, Kafka 0.11's
         safer default. ``preallocate`` and ``compression.type`` are accepted and not applied:
         segments grow as they are written, and batches are stored as the producer compressed them.

Each topic setting has a broker-wide default under another name (``segment.bytes`` <-
``log.segment.bytes``); ``SERVER_DEFAULT_NAMES`` is that map, used by the broker to build a topic's
config from ``server.properties`` plus the topic's overrides, as Kafka's ``LogConfig.fromProps``.
The two throttled-replicas lists (KIP-73, chapter 7, 7.1.6) have no broker default: they say which
of the topic's replicas the replication throttle covers, and the broker's ``TopicConfigHandler``
hands them to its quota managers; the log itself never reads them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kafka_lite.common.config import ConfigDef, Importance, Range, Type, ValidList, ValidString
from kafka_lite.common.errors import ConfigException, Errors
from kafka_lite.common.record.api_version import LATEST_VERSION, ApiVersion, ApiVersionValidator, api_version
from kafka_lite.common.utils import LONG_MAX

DAY_MS = 24 * 60 * 60 * 1000
ALL_REPLICAS = "*"  # a throttled-replicas list naming every partition of the topic
LEADER_REPLICATION_THROTTLED_REPLICAS_PROP = "leader.replication.throttled.replicas"
FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP = "follower.replication.throttled.replicas"

_THROTTLED_REPLICA = re.compile(r"[0-9]+:[0-9]+")


class ThrottledReplicaListValidator:
    """A throttled-replicas list is ``partition:broker`` pairs, or ``*`` alone (Kafka's
    ``ThrottledReplicaListValidator``, which Kafka keeps in ConfigHandler.scala; the message is Kafka
    1.0's, which says what is allowed more plainly than 0.10.1's). Kafka 0.10.1 also passes a ``*``
    followed by pairs, which its broker then fails to parse; here that is refused. Its text is what
    the config table's "valid values" column shows, as Kafka's validator's ``toString`` is."""

    def __call__(self, name: str, value: list[str]) -> None:
        if value == [ALL_REPLICAS] or all(_THROTTLED_REPLICA.fullmatch(item) for item in value):
            return
        raise ConfigException(
            name,
            ",".join(value),
            f"{name} must be the literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
        )

    def __str__(self) -> str:
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."


throttled_replica_list_validator = ThrottledReplicaListValidator()


# --8<-- [start:config_def]
CONFIG_DEF = (
    ConfigDef()
    .define("segment.bytes", Type.INT, 1024 * 1024 * 1024, Range.at_least(14), Importance.MEDIUM,
            "Roll to a new segment file once the active one would exceed this size.")
    .define("segment.ms", Type.LONG, 7 * DAY_MS, Range.at_least(0), Importance.MEDIUM,
            "Roll a segment that has been filling this long, even if it is not full.")
    .define("segment.jitter.ms", Type.LONG, 0, Range.at_least(0), Importance.MEDIUM,
            "Random jitter subtracted from segment.ms so that partitions do not all roll at once.")
    .define("segment.index.bytes", Type.INT, 10 * 1024 * 1024, Range.at_least(0), Importance.MEDIUM,
            "Size an offset or time index is pre-allocated to; a full index forces a roll.")
    .define("index.interval.bytes", Type.INT, 4096, Range.at_least(0), Importance.MEDIUM,
            "Add an offset index entry after this many bytes of log: the index's sparseness.")
    .define("flush.messages", Type.LONG, LONG_MAX, Range.at_least(0), Importance.MEDIUM,
            "fsync the log after this many messages (default: leave it to the OS and replication).")
    .define("flush.ms", Type.LONG, LONG_MAX, Range.at_least(0), Importance.MEDIUM,
            "fsync the log when this long has passed since the last flush.")
    .define("retention.bytes", Type.LONG, -1, None, Importance.MEDIUM,
            "Delete old segments while the log is larger than this (-1: no size limit).")
    .define("retention.ms", Type.LONG, 7 * DAY_MS, None, Importance.MEDIUM,
            "Delete segments whose newest record is older than this (-1: keep forever).")
    .define("max.message.bytes", Type.INT, 1000012, Range.at_least(0), Importance.MEDIUM,
            "The largest record batch the log accepts.")
    .define("file.delete.delay.ms", Type.LONG, 60000, Range.at_least(0), Importance.MEDIUM,
            "How long a deleted segment's files stay (renamed .deleted) before removal.")
    .define("cleanup.policy", Type.LIST, "delete", ValidList.in_("compact", "delete"), Importance.MEDIUM,
            "delete (retention by time and size), compact (keep the last record per key), or both.")
    .define("delete.retention.ms", Type.LONG, DAY_MS, Range.at_least(0), Importance.MEDIUM,
            "How long a compacted log keeps tombstones, so consumers can see the delete.")
    .define("min.compaction.lag.ms", Type.LONG, 0, Range.at_least(0), Importance.MEDIUM,
            "Records younger than this are never compacted.")
    .define("min.cleanable.dirty.ratio", Type.DOUBLE, 0.5, Range.between(0, 1), Importance.MEDIUM,
            "Compact a log once this fraction of it has not been compacted yet.")
    .define("message.timestamp.type", Type.STRING, "CreateTime", ValidString.in_("CreateTime", "LogAppendTime"),
            Importance.MEDIUM, "Keep the producer's timestamps, or stamp batches with the broker's time.")
    .define("message.timestamp.difference.max.ms", Type.LONG, LONG_MAX, Range.at_least(0), Importance.MEDIUM,
            "With CreateTime, refuse a record whose timestamp is further than this from the broker's time "
            "(INVALID_TIMESTAMP); ignored with LogAppendTime.")
    .define("message.format.version", Type.STRING, LATEST_VERSION.version, ApiVersionValidator(), Importance.MEDIUM,
            "The record format the log writes, named by a Kafka version (0.10.0: message sets v1; 0.11.0: "
            "record batches v2); what a producer sends is converted to it on append.")
    .define("preallocate", Type.BOOLEAN, False, None, Importance.MEDIUM,
            "Pre-allocate segment files (kafka_lite accepts it and does not pre-allocate).")
    .define("min.insync.replicas", Type.INT, 1, Range.at_least(1), Importance.MEDIUM,
            "With acks=all, the in-sync replicas a write needs.")
    .define("unclean.leader.election.enable", Type.BOOLEAN, False, None, Importance.MEDIUM,
            "Let an out-of-sync replica become leader (losing data). False since Kafka 0.11.")
    .define("compression.type", Type.STRING, "producer",
            ValidString.in_("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"), Importance.MEDIUM,
            "Kafka recompresses batches with this codec; kafka_lite accepts it and stores batches as the "
            "producer compressed them.")
    .define(LEADER_REPLICATION_THROTTLED_REPLICAS_PROP, Type.LIST, "", throttled_replica_list_validator,
            Importance.MEDIUM, "Replicas whose replication the leader throttles: "
            "[PartitionId]:[BrokerId],... or '*' for all of the topic's (KIP-73).")
    .define(FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP, Type.LIST, "", throttled_replica_list_validator,
            Importance.MEDIUM, "Replicas whose replication the follower throttles: "
            "[PartitionId]:[BrokerId],... or '*' for all of the topic's (KIP-73).")
)  # fmt: skip
# --8<-- [end:config_def]

# Topic setting <- the broker setting that is its default (Kafka's LogConfig.TopicConfigSynonyms).
SERVER_DEFAULT_NAMES = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "max.message.bytes": "message.max.bytes",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "cleanup.policy": "log.cleanup.policy",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "message.format.version": "log.message.format.version",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "preallocate": "log.preallocate",
    "min.insync.replicas": "min.insync.replicas",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "compression.type": "compression.type",
}


def validate_names(props: Mapping[str, Any]) -> None:
    """Every name a topic setting (Kafka's ``LogConfig.validateNames``): an unknown one is
    INVALID_CONFIG, as Kafka's ``InvalidConfigurationException``."""
    for name in props:
        if name not in CONFIG_DEF.keys:
            raise Errors.INVALID_CONFIG.exception(f"Unknown topic config name: {name}")


def validate(props: Mapping[str, Any]) -> None:
    """Known names with values that parse (Kafka's ``LogConfig.validate``); a bad value raises the
    ``ConfigException`` naming the key, the value and what is allowed."""
    validate_names(props)
    CONFIG_DEF.parse(props)


class LogConfig:
    """A topic's parsed log settings, as attributes named like Kafka's ``LogConfig`` fields."""

    def __init__(self, props: Mapping[str, Any] | None = None, **overrides: Any) -> None:
        values = CONFIG_DEF.parse({**(props or {}), **overrides})
        policy = values["cleanup.policy"]
        self.values = values
        self.segment_size: int = values["segment.bytes"]
        self.segment_ms: int = values["segment.ms"]
        self.segment_jitter_ms: int = values["segment.jitter.ms"]
        self.max_index_size: int = values["segment.index.bytes"]
        self.index_interval: int = values["index.interval.bytes"]
        self.flush_interval: int = values["flush.messages"]
        self.flush_ms: int = values["flush.ms"]
        self.retention_size: int = values["retention.bytes"]
        self.retention_ms: int = values["retention.ms"]
        self.max_message_size: int = values["max.message.bytes"]
        self.file_delete_delay_ms: int = values["file.delete.delay.ms"]
        self.compact: bool = "compact" in policy
        self.delete: bool = "delete" in policy
        self.delete_retention_ms: int = values["delete.retention.ms"]
        self.compaction_lag_ms: int = values["min.compaction.lag.ms"]
        self.min_cleanable_ratio: float = values["min.cleanable.dirty.ratio"]
        # the ApiVersion the setting names; its ``message_format_version`` is the magic appends write
        self.message_format_version: ApiVersion = api_version(values["message.format.version"])
        self.log_append_time: bool = values["message.timestamp.type"] == "LogAppendTime"
        self.message_timestamp_difference_max_ms: int = values["message.timestamp.difference.max.ms"]
        self.min_insync_replicas: int = values["min.insync.replicas"]
        self.unclean_leader_election_enable: bool = values["unclean.leader.election.enable"]
        self.leader_replication_throttled_replicas: list[str] = values[
            LEADER_REPLICATION_THROTTLED_REPLICAS_PROP
        ]
        self.follower_replication_throttled_replicas: list[str] = values[
            FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP
        ]

    @classmethod
    def from_broker(
        cls, broker_props: Mapping[str, Any], topic_overrides: Mapping[str, Any] | None = None
    ) -> LogConfig:
        """A topic's config: broker ``log.*`` defaults first, then the topic's own overrides."""
        props = {
            topic: broker_props[server]
            for topic, server in SERVER_DEFAULT_NAMES.items()
            if server in broker_props
        }
        return cls({**props, **(topic_overrides or {})})

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.values.items() if v != CONFIG_DEF.keys[k].default}
        return f"LogConfig({changed})"
