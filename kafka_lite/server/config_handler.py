"""What a broker does when a topic's or a broker's dynamic configs change: the new settings, applied
to its logs and its replication throttles.

Mirrors: kafka.server.TopicConfigHandler, BrokerConfigHandler, ClientIdConfigHandler and
         UserConfigHandler
         (core/src/main/scala/kafka/server/ConfigHandler.scala, Kafka 0.11.0, whose throttle handling
         is 0.10.1's), and kafka.server.DynamicConfig.Broker and .Client (DynamicConfig.scala)
Book:    chapter 6, 6.1.5 (log management: retention and compaction read the log's config); chapter 7
         (the admin tools change configs through ZooKeeper), 7.1.6 (the reassignment's throttles);
         chapter 10, 10.1 (client quotas)
Differs: no user quota handler (quotas are per client id); a client quota must be a number above 0
         (Kafka 0.11 parses it and takes what parses). A broker's dynamic
         ``transaction.partition.verification.enable`` is Kafka 3.6's (KIP-890 part 1).

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
dynamic config, at ``/config/brokers/<id>`` (each broker by its id: ``BrokerConfigHandler`` says why
there is no ``<default>``): ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``
in bytes per second, unbounded when absent. ``BrokerConfigHandler`` sets them as each side's quota.

Client quotas live at ``/config/clients/<client-id>``, and at ``/config/clients/<default>`` for every
client id without its own: ``producer_byte_rate``, ``consumer_byte_rate`` and ``request_percentage``.
``ClientIdConfigHandler`` hands each to its quota manager; a key absent removes that quota.

A user's SCRAM credentials live at ``/config/users/<user>`` (KIP-84, Kafka 0.10.2), one key per
mechanism: ``SCRAM-SHA-256`` -> ``salt=...,stored_key=...,server_key=...,iterations=4096``.
``UserConfigHandler`` puts each into the broker's credential cache, or removes it when the key is
gone, so that every broker's SCRAM logins follow ``kafka-lite configs --entity-type users``.
(Kafka's handler also applies user quotas; kafka_lite's quotas are per client id.)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from kafka_lite.common.config import ConfigDef, Importance, Range, Type
from kafka_lite.common.errors import ConfigException
from kafka_lite.common.quota import Quota
from kafka_lite.common.security.sasl import SCRAM_SHA_256
from kafka_lite.common.security.scram.scram_credential_utils import CredentialCache, credential_from_string
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.log.log_config import (
    ALL_REPLICAS,
    FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP,
    LEADER_REPLICATION_THROTTLED_REPLICAS_PROP,
    LogConfig,
    throttled_replica_list_validator,
)
from kafka_lite.log.log_manager import LogManager
from kafka_lite.server.client_quota_manager import QUOTA_REQUEST_PERCENT_DEFAULT
from kafka_lite.server.quota_factory import QuotaManagers
from kafka_lite.server.replication_quota_manager import ReplicationQuotaManager

log = logging.getLogger(__name__)


class ConfigHandler(Protocol):
    """Kafka's ``ConfigHandler`` trait: one per entity type, told each entity's new overrides."""

    def process_config_changes(self, entity: str, configs: Mapping[str, str]) -> None: ...


# Kafka's DynamicConfig.Broker: the configs a broker takes from /config/brokers/<id>, without a restart.
LEADER_REPLICATION_THROTTLED_RATE_PROP = "leader.replication.throttled.rate"
FOLLOWER_REPLICATION_THROTTLED_RATE_PROP = "follower.replication.throttled.rate"
DEFAULT_REPLICATION_THROTTLED_RATE = LONG_MAX
TRANSACTION_PARTITION_VERIFICATION_ENABLE_PROP = "transaction.partition.verification.enable"
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
    # None stands for "the broker's own setting" (see the header's Differs)
    .define(TRANSACTION_PARTITION_VERIFICATION_ENABLE_PROP, Type.BOOLEAN, None, None, Importance.LOW,
            "Overrides the broker's transaction.partition.verification.enable: a partition leader "
            "asks the transaction coordinator before a producer's first transactional write there.")
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
    """A broker's dynamic configs: the two replication throttle rates, and Kafka 3.6's
    ``transaction.partition.verification.enable``. Every broker sees every broker's change and keeps
    only its own.

    Each broker is named by its id, as in Kafka 0.10.1 and 0.11: a broker-wide ``<default>`` entity
    is Kafka 1.1's (KIP-226, dynamic broker configs), which kafka_lite's ``configs`` tool refuses."""

    def __init__(self, broker_id: int, quotas: QuotaManagers, replica_manager=None) -> None:
        self.broker_id = broker_id
        self.quotas = quotas
        self.replica_manager = replica_manager

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
        if self.replica_manager is not None:
            self.replica_manager.kafka_3_6_update_transaction_verification(
                values[TRANSACTION_PARTITION_VERIFICATION_ENABLE_PROP]
            )
        log.info(
            "Broker %d throttles replication at %d B/s as leader, %d B/s as follower",
            self.broker_id,
            leader,
            follower,
        )


# Kafka's DynamicConfig.Client: a client id's quotas, from /config/clients/<client-id> (or <default>).
PRODUCER_BYTE_RATE_OVERRIDE_PROP = "producer_byte_rate"
CONSUMER_BYTE_RATE_OVERRIDE_PROP = "consumer_byte_rate"
REQUEST_PERCENTAGE_OVERRIDE_PROP = "request_percentage"


def _above_zero(name: str, value: float) -> None:
    if not value > 0:
        raise ConfigException(name, value, "Value must be above 0")


CLIENT_CONFIG_DEF = (
    ConfigDef()
    .define(PRODUCER_BYTE_RATE_OVERRIDE_PROP, Type.LONG, LONG_MAX, _above_zero, Importance.MEDIUM,
            "A rate representing the upper bound (bytes/sec) for producer traffic.")
    .define(CONSUMER_BYTE_RATE_OVERRIDE_PROP, Type.LONG, LONG_MAX, _above_zero, Importance.MEDIUM,
            "A rate representing the upper bound (bytes/sec) for consumer traffic.")
    .define(REQUEST_PERCENTAGE_OVERRIDE_PROP, Type.DOUBLE, QUOTA_REQUEST_PERCENT_DEFAULT, _above_zero,
            Importance.MEDIUM,
            "A percentage representing the upper bound of time spent for processing requests.")
)  # fmt: skip


def validate_client_config(props: Mapping[str, str]) -> dict[str, Any]:
    """Known names with numbers above 0 (Kafka's ``DynamicConfig.Client.validate``); raises
    ``ConfigException`` naming the key and the value. Returns every quota, defaults included."""
    for name in props:
        if name not in CLIENT_CONFIG_DEF.keys:
            raise ConfigException(
                f"Unknown Dynamic Configuration '{name}' (a client id takes "
                f"{', '.join(CLIENT_CONFIG_DEF.keys)})."
            )
    return CLIENT_CONFIG_DEF.parse(props)


class ClientIdConfigHandler:
    """A client id's quotas (or the default's, entity ``<default>``), handed to the three managers."""

    def __init__(self, quotas: QuotaManagers) -> None:
        self.quotas = quotas

    def process_config_changes(self, client_id: str, client_config: Mapping[str, str]) -> None:
        """A quota absent removes it (the client falls back to the default); a set that does not
        parse raises ``ConfigException`` and changes nothing."""
        values = validate_client_config(client_config)

        def quota(prop: str) -> Quota | None:
            return Quota.upper_bound(values[prop]) if prop in client_config else None

        producer, consumer, request = (
            quota(PRODUCER_BYTE_RATE_OVERRIDE_PROP),
            quota(CONSUMER_BYTE_RATE_OVERRIDE_PROP),
            quota(REQUEST_PERCENTAGE_OVERRIDE_PROP),
        )
        self.quotas.produce.update_quota(client_id, producer)
        self.quotas.fetch.update_quota(client_id, consumer)
        self.quotas.request.update_quota(client_id, request)


class UserConfigHandler:
    """A user's SCRAM credentials, handed to the broker's credential cache (Kafka's
    ``UserConfigHandler`` with its ``CredentialProvider.updateCredentials``)."""

    def __init__(self, credential_cache: CredentialCache) -> None:
        self.credential_cache = credential_cache

    def process_config_changes(self, user: str, user_config: Mapping[str, str]) -> None:
        """A credential present replaces the cached one; absent, the user can no longer log in with
        SCRAM. A credential that does not parse raises ``ConfigException`` and changes nothing."""
        text = user_config.get(SCRAM_SHA_256)
        if text is None:
            self.credential_cache.remove(user)
            log.info("Removed the %s credential of user %s", SCRAM_SHA_256, user)
            return
        try:
            credential = credential_from_string(text)
        except ValueError as e:
            raise ConfigException(f"Invalid {SCRAM_SHA_256} credential of user {user}: {e}") from None
        self.credential_cache.put(user, credential)
        log.info("Updated the %s credential of user %s", SCRAM_SHA_256, user)
