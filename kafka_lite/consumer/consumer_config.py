"""The consumer's settings, with Kafka's names, defaults and checks.

Mirrors: org.apache.kafka.clients.consumer.ConsumerConfig
         (clients/src/main/java/org/apache/kafka/clients/consumer/ConsumerConfig.java, Kafka 0.10.1)
Book:    chapter 4, 4.1 (subscribing and polling), 4.3 (session.timeout.ms, heartbeat.interval.ms),
         4.4 (enable.auto.commit, auto.commit.interval.ms); chapter 5, 5.1 (partition.assignment.strategy)
Differs: only the settings kafka_lite's consumer implements are defined, so a setting it would ignore
         is an error rather than a silent no-op. ``group.id`` defaults to none (no group: ``assign``
         only, no commits; see ``KafkaConsumer._group_coordinator``), as kafka-python's, where
         0.10.1 defaults to the empty string. ``partition.assignment.strategy`` defaults to range then round-robin (kafka-python's
         default; 0.10.1 lists the range assignor only) and takes assignor names (``range``,
         ``roundrobin``) or ``PartitionAssignor`` objects instead of class names. The deserializers
         are Python callables passed beside the configs, and ``interceptor.classes`` takes classes,
         not class names. ``consumer.timeout.ms`` is kafka-python's: iterating over the consumer
         stops after that long without a record. ``fetch.hold.back.caught.up`` is ours, off by
         default: see ``Fetcher._only_caught_up_beside_buffered``.

Python callers use kafka-python's keyword spelling (``session_timeout_ms=6000``); ``ConfigDef.parse``
maps it to Kafka's dotted name, and every error names the setting::

    ConfigException: Invalid value 0 for configuration max.poll.records: Value must be at least 1
"""

from __future__ import annotations

from kafka_lite.clients.common_client_configs import CommonClientConfigs, define_security_configs
from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance, Range, Type, ValidString

H = Importance.HIGH
M = Importance.MEDIUM
L = Importance.LOW

# --8<-- [start:config_def]
CONFIG_DEF = (
    ConfigDef()
    .define(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, Type.LIST, NO_DEFAULT_VALUE, None, H,
            CommonClientConfigs.BOOTSTRAP_SERVERS_DOC)
    .define("group.id", Type.STRING, None, None, H,
            "The consumer group to join; none for a consumer that assigns itself partitions and commits nothing.")
    .define(CommonClientConfigs.CLIENT_ID_CONFIG, Type.STRING, "", None, M, CommonClientConfigs.CLIENT_ID_DOC)
    .define("auto.offset.reset", Type.STRING, "latest", ValidString.in_("latest", "earliest", "none"), M,
            "Where to start a partition with no committed offset, or whose offset is out of range: its "
            "log end (latest), its log start (earliest), or nowhere (none: raise).")
    .define("enable.auto.commit", Type.BOOLEAN, True, None, M,
            "Commit the positions in the background, every auto.commit.interval.ms (needs a group.id).")
    .define("auto.commit.interval.ms", Type.INT, 5000, Range.at_least(0), L,
            "How often positions are committed when enable.auto.commit is on.")
    .define("max.poll.records", Type.INT, 500, Range.at_least(1), M,
            "The most records one poll returns.")
    .define("fetch.min.bytes", Type.INT, 1, Range.at_least(0), H,
            "The least data a fetch response carries; the broker waits up to fetch.max.wait.ms for it.")
    .define("fetch.max.wait.ms", Type.INT, 500, Range.at_least(0), L,
            "How long the broker may hold a fetch waiting for fetch.min.bytes.")
    .define("max.partition.fetch.bytes", Type.INT, 1024 * 1024, Range.at_least(0), H,
            "The most data one partition returns per fetch (a larger first record still comes whole).")
    .define("fetch.max.bytes", Type.INT, 50 * 1024 * 1024, Range.at_least(0), M,
            "The most data one fetch response carries (a larger first record still comes whole).")
    .define("session.timeout.ms", Type.INT, 10_000, Range.at_least(1), H,
            "How long the coordinator waits for a heartbeat before it drops the member.")
    .define("heartbeat.interval.ms", Type.INT, 3000, Range.at_least(1), H,
            "How often the heartbeat thread sends a heartbeat; lower than session.timeout.ms.")
    .define("max.poll.interval.ms", Type.INT, 300_000, Range.at_least(1), M,
            "The longest time between polls before the member leaves its group; also the rebalance "
            "timeout members get to rejoin in.")
    .define(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, Type.INT, 305_000, Range.at_least(0), M,
            CommonClientConfigs.REQUEST_TIMEOUT_MS_DOC + " Greater than session.timeout.ms and fetch.max.wait.ms.")
    .define(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG, Type.LONG, 100, Range.at_least(0), L,
            CommonClientConfigs.RETRY_BACKOFF_MS_DOC)
    .define(CommonClientConfigs.RECONNECT_BACKOFF_MS_CONFIG, Type.LONG, 50, Range.at_least(0), L,
            CommonClientConfigs.RECONNECT_BACKOFF_MS_DOC)
    .define(CommonClientConfigs.METADATA_MAX_AGE_CONFIG, Type.LONG, 300_000, Range.at_least(0), L,
            CommonClientConfigs.METADATA_MAX_AGE_DOC)
    .define("partition.assignment.strategy", Type.LIST, ["range", "roundrobin"], None, M,
            "The assignors this member supports, most preferred first: names (range, roundrobin) or "
            "PartitionAssignor objects. The group uses the first one every member supports.")
    .define("allow.auto.create.topics", Type.BOOLEAN, True, None, M,
            "Kafka 2.3's (KIP-361): whether asking for a subscribed topic's metadata lets a broker with "
            "auto.create.topics.enable create it. Kafka Streams turns it off: its repartition topics "
            "must be created with the right partition count, not the broker's default.")
    .define("fetch.hold.back.caught.up", Type.BOOLEAN, False, None, L,
            "Not Kafka's: hold back a fetch that would ask only for partitions read to their high "
            "watermark while the same broker's other partitions have records buffered; they join "
            "that broker's next fetch instead of waiting fetch.max.wait.ms there first.")
    .define("check.crcs", Type.BOOLEAN, True, None, L,
            "Check each fetched batch's CRC before reading its records.")
    .define("isolation.level", Type.STRING, "read_uncommitted",
            ValidString.in_("read_uncommitted", "read_committed"), M,
            "read_committed: read only up to the last stable offset, and skip the records of aborted "
            "transactions; read_uncommitted: read everything up to the high watermark.")
    .define("exclude.internal.topics", Type.BOOLEAN, True, None, M,
            "Leave internal topics (__consumer_offsets) out of pattern subscriptions.")
    .define("consumer.timeout.ms", Type.LONG, None, Range.at_least(0), L,
            "Iteration over the consumer stops after this long without a record (forever if unset).")
    .define("interceptor.classes", Type.LIST, [], None, L,
            "Interceptor classes: each sees every poll's records before the application, and every "
            "acknowledged commit.")
)  # fmt: skip
# --8<-- [end:config_def]
define_security_configs(CONFIG_DEF)
