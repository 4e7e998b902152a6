"""What a broker does when a topic's or a broker's dynamic configs change: the new settings, applied
to its logs and its replication throttles.

Mirrors: kafka.server.TopicConfigHandler and kafka.server.BrokerConfigHandler
         (core/src/main/scala/kafka/server/ConfigHandler.scala, Kafka 0.11.0, whose throttle handling
         is 0.10.1's), and kafka.server.DynamicConfig.Broker (DynamicConfig.scala)
Book:    chapter 6, 6.1.5 (log management: retention and compaction read the log's config); chapter 7
         (the admin tools change configs through ZooKeeper), 7.1.6 (the reassignment's throttles)
Differs: no client or user quota handlers: kafka_lite has no client quotas, so topics and brokers
         are the two entity types.

A topic's overrides in ZooKeeper are the topic's whole set; the handler rebuilds the ``LogConfig`` from
the broker's defaults plus that set (an override removed falls back to the default) and hands it to
every log of the topic on this broker. Nothing else needs telling: retention, the cleaner, the roll check
and the appends read ``log.config`` each time, so a new ``retention.ms`` is used by the next retention
pass and a new ``cleanup.policy=compact`` makes the cleaner pick the log up at its next look. The
controller needs no handler either: it reads ``unclean.leader.election.enable`` from ZooKeeper at
the moment it elects a leader.

The same set carries the topic's replication throttles (KIP-73): ``leader.replication.throttled.replicas``
and ``follower.replication.throttled.replicas``, lists of ``partition:broker`` (or ``*``). Each broker
keeps the partitions its own id is paired with and marks them in its leader or follower quota
manager; a list removed removes the throttle. How fast throttled replication may go is a broker's
dynamic config, at ``/config/brokers/<id>`` (Kafka 0.10.1 names each broker; ``<default>`` for all of
them is Kafka 1.1's): ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``
in bytes per second, unbounded when absent. ``BrokerConfigHandler`` sets them as each side's quota.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from kafka_lite.common.config import ConfigDef, Importance, Range, Type
from kafka_lite.common.quota import Quota
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.log.log_config import (
    ALL_REPLICAS,
    FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP,
    LEADER_REPLICATION_THROTTLED_REPLICAS_PROP,
    LogConfig,
    throttled_replica_list_validator,
)
from kafka_lite.log.log_manager import LogManager
from kafka_lite.server.replication_quota_manager import QuotaManagers, ReplicationQuotaManager

log = logging.getLogger(__name__)


class ConfigHandler(Protocol):
    """Kafka's ``ConfigHandler`` trait: one per entity type, told each entity's new overrides."""

    def process_config_changes(self, entity: str, configs: Mapping[str, str]) -> None: ...


# Kafka's DynamicConfig.Broker: the configs a broker takes from /config/brokers/<id>, without a restart.
LEADER_REPLICATION_THROTTLED_RATE_PROP = "leader.replication.throttled.rate"
FOLLOWER_REPLICATION_THROTTLED_RATE_PROP = "follower.replication.throttled.rate"
DEFAULT_REPLICATION_THROTTLED_RATE = LONG_MAX
BROKER_CONFIG_DEF = (
    ConfigDef()
    .define(LEADER_REPLICATION_THROTTLED_RATE_PROP, Type.LONG, DEFAULT_REPLICATION_THROTTLED_RATE,
            Range.at_least(0), Importance.MEDIUM,
            "The bound (bytes/s) on what this broker sends, as leader, to the replicas its topics' "
            "leader.replication.throttled.replicas name. Set only dynamically.")
    .define(FOLLOWER_REPLICATION_THROTTLED_RATE_PROP, Type.LONG, DEFAULT_REPLICATION_THROTTLED_RATE,
            Range.at_least(0), Importance.MEDIUM,
            "The bound (bytes/s) on what this broker fetches, as follower, for the replicas its topics' "
            "follower.replication.throttled.replicas name. Set only dynamically.")
)  # fmt: skip


def validate_broker_config(props: Mapping[str, str]) -> None:
    """Known names with values that parse (Kafka's ``DynamicConfig.Broker.validate``); raises
    ``ConfigException`` naming the key and what is allowed."""
    BROKER_CONFIG_DEF.parse(props)


class TopicConfigHandler:
    def __init__(
        self,
        log_manager: LogManager,
        broker_log_props: Mapping[str, Any],
        broker_id: int,
        quotas: QuotaManagers,
    ) -> None:
        """``broker_log_props``: the broker's ``log.*`` settings (``KafkaConfig.log_config_props``),
        the defaults a topic's overrides replace."""
        self.log_manager = log_manager
        self.broker_log_props = dict(broker_log_props)
        self.broker_id = broker_id
        self.quotas = quotas

    def process_config_changes(self, topic: str, topic_config: Mapping[str, str]) -> None:
        """Apply ``topic_config`` (the topic's whole set of overrides) to its logs and throttles here.
        A set that does not parse (written by hand into ZooKeeper) raises ``ConfigException`` and
        changes nothing."""
        log_config = LogConfig.from_broker(self.broker_log_props, topic_config)
        updated = self.log_manager.update_topic_config(topic, log_config)
        log.info(
            "Applied the config overrides %s of topic %s to %d local logs", dict(topic_config), topic, updated
        )
        self.update_throttled_list(
            topic, topic_config, LEADER_REPLICATION_THROTTLED_REPLICAS_PROP, self.quotas.leader
        )
        self.update_throttled_list(
            topic, topic_config, FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP, self.quotas.follower
        )

    def update_throttled_list(
        self, topic: str, topic_config: Mapping[str, str], prop: str, quota_manager: ReplicationQuotaManager
    ) -> None:
        if topic_config.get(prop, "").strip():
            partitions = parse_throttled_partitions(topic_config[prop], self.broker_id, prop)
            quota_manager.mark_throttled(topic, partitions)
            log.debug(
                "Setting %s on broker %d for topic: %s and partitions %s",
                prop,
                self.broker_id,
                topic,
                partitions,
            )
        else:
            quota_manager.remove_throttle(topic)
            log.debug("Removing %s from broker %d for topic %s", prop, self.broker_id, topic)


def parse_throttled_partitions(value: str, broker_id: int, prop: str) -> list[int] | str:
    """The partitions of ``value`` (``"0:1,1:2"`` or ``"*"``) that ``broker_id`` throttles: those
    paired with its id, or ``ALL_REPLICAS``. A malformed list raises ``ConfigException``."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    throttled_replica_list_validator(prop, items)
    if items == [ALL_REPLICAS]:
        return ALL_REPLICAS
    pairs = [item.split(":") for item in items]
    return [int(partition) for partition, broker in pairs if int(broker) == broker_id]


class BrokerConfigHandler:
    """A broker's dynamic configs: the two replication throttle rates. Every broker sees every
    broker's change and keeps only its own."""

    def __init__(self, broker_id: int, quotas: QuotaManagers) -> None:
        self.broker_id = broker_id
        self.quotas = quotas

    def process_config_changes(self, broker_id: str, properties: Mapping[str, str]) -> None:
        """A rate absent is unbounded again; one that does not parse raises ``ConfigException`` and
        changes nothing."""
        if int(broker_id.strip()) != self.broker_id:
            return
        values = BROKER_CONFIG_DEF.parse({k: v for k, v in properties.items() if k in BROKER_CONFIG_DEF.keys})
        leader = values[LEADER_REPLICATION_THROTTLED_RATE_PROP]
        follower = values[FOLLOWER_REPLICATION_THROTTLED_RATE_PROP]
        self.quotas.leader.update_quota(Quota.upper_bound(leader))
        self.quotas.follower.update_quota(Quota.upper_bound(follower))
        log.info(
            "Broker %d throttles replication at %d B/s as leader, %d B/s as follower",
            self.broker_id,
            leader,
            follower,
        )
