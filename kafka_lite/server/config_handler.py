"""What a broker does when a topic's config overrides change: the new settings, applied to its logs.

Mirrors: kafka.server.TopicConfigHandler (core/src/main/scala/kafka/server/ConfigHandler.scala, Kafka 0.11.0)
Book:    chapter 6, 6.1.5 (log management: retention and compaction read the log's config); chapter 7
         (the admin tools change a topic's config through ZooKeeper)
Differs: no quota handlers (clients, users, brokers): kafka_lite has no quotas, so topics are the one
         entity type; no replication throttles (``leader.replication.throttled.replicas``).

The overrides in ZooKeeper are the topic's whole set; the handler rebuilds the ``LogConfig`` from the
broker's defaults plus that set (an override removed falls back to the default) and hands it to every
log of the topic on this broker. Nothing else needs telling: retention, the cleaner, the roll check
and the appends read ``log.config`` each time, so a new ``retention.ms`` is used by the next retention
pass and a new ``cleanup.policy=compact`` makes the cleaner pick the log up at its next look. The
controller needs no handler either: it reads ``unclean.leader.election.enable`` from ZooKeeper at
the moment it elects a leader.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager

log = logging.getLogger(__name__)


class ConfigHandler(Protocol):
    """Kafka's ``ConfigHandler`` trait: one per entity type, told each entity's new overrides."""

    def process_config_changes(self, entity: str, configs: Mapping[str, str]) -> None: ...


class TopicConfigHandler:
    def __init__(self, log_manager: LogManager, broker_log_props: Mapping[str, Any]) -> None:
        """``broker_log_props``: the broker's ``log.*`` settings (``KafkaConfig.log_config_props``),
        the defaults a topic's overrides replace."""
        self.log_manager = log_manager
        self.broker_log_props = dict(broker_log_props)

    def process_config_changes(self, topic: str, topic_config: Mapping[str, str]) -> None:
        """Apply ``topic_config`` (the topic's whole set of overrides) to its logs here. A set that
        does not parse (written by hand into ZooKeeper) raises ``ConfigException`` and changes nothing."""
        log_config = LogConfig.from_broker(self.broker_log_props, topic_config)
        updated = self.log_manager.update_topic_config(topic, log_config)
        log.info(
            "Applied the config overrides %s of topic %s to %d local logs", dict(topic_config), topic, updated
        )
