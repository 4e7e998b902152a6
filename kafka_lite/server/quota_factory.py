"""The broker's quota managers, made together from its config.

Mirrors: kafka.server.QuotaFactory (QuotaManagers, instantiate and the client*Config helpers)
         (core/src/main/scala/kafka/server/QuotaFactory.scala, Kafka 0.11)
Book:    chapter 10, 10.1 (client quotas); chapter 7, 7.1.6 (the replication throttle)
Differs: no ``Metrics`` registry is passed around: each manager keeps its own sensors.

Five managers, one per ``QuotaType``: ``fetch`` and ``produce`` (client byte rates), ``request``
(client handler time, KIP-124), ``leader`` and ``follower`` (the replication throttle, KIP-73).
``KafkaApis`` uses all five; the config handlers change their bounds; ``shutdown`` stops the client
managers' reaper threads (the replication managers hold no thread).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_lite.common.time import Time
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.server.client_quota_manager import (
    ClientQuotaManager,
    ClientQuotaManagerConfig,
    ClientRequestQuotaManager,
)
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.replication_quota_manager import (
    QuotaType,
    ReplicationQuotaManager,
    ReplicationQuotaManagerConfig,
)


@dataclass
class QuotaManagers:
    fetch: ClientQuotaManager
    produce: ClientQuotaManager
    request: ClientRequestQuotaManager
    leader: ReplicationQuotaManager
    follower: ReplicationQuotaManager

    def shutdown(self) -> None:
        self.fetch.shutdown()
        self.produce.shutdown()
        self.request.shutdown()


def instantiate(config: KafkaConfig, time: Time) -> QuotaManagers:
    """The managers for a broker's config (Kafka's ``QuotaFactory.instantiate``)."""
    return QuotaManagers(
        ClientQuotaManager(client_config(config, "quota.consumer.default"), QuotaType.FETCH, time),
        ClientQuotaManager(client_config(config, "quota.producer.default"), QuotaType.PRODUCE, time),
        ClientRequestQuotaManager(client_config(config, None), time),
        ReplicationQuotaManager(replication_config(config), QuotaType.LEADER_REPLICATION, time),
        ReplicationQuotaManager(replication_config(config), QuotaType.FOLLOWER_REPLICATION, time),
    )


def client_config(config: KafkaConfig, default_prop: str | None) -> ClientQuotaManagerConfig:
    """The client quotas' windows, and the static default of one quota type (the request quota has
    none: it is bounded only dynamically)."""
    return ClientQuotaManagerConfig(
        quota_bytes_per_second_default=config[default_prop] if default_prop else LONG_MAX,
        num_quota_samples=config["quota.window.num"],
        quota_window_size_seconds=config["quota.window.size.seconds"],
    )


def replication_config(config: KafkaConfig) -> ReplicationQuotaManagerConfig:
    return ReplicationQuotaManagerConfig(
        num_quota_samples=config["replication.quota.window.num"],
        quota_window_size_seconds=config["replication.quota.window.size.seconds"],
    )
