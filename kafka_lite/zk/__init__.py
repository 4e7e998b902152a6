"""ZooKeeper for kafka_lite: the embedded server, Kafka 0.10's paths and JSON, and replica assignment.

Mirrors: kafka.utils.ZkUtils and kafka.admin.AdminUtils (core/src/main/scala/kafka/{utils,admin}/, Kafka 0.10.1)
Book:    chapter 7, 7.1 (ZooKeeper holds the cluster's state; the controller acts on it)

The names are imported on first use (PEP 562), so ``kafka_lite.zk.embedded``, which the CLI loads to
start a server, does not pay for kazoo.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_EXPORTS = {
    "EmbeddedZooKeeper": "embedded",
    "ZooKeeperStartError": "embedded",
    "find_java": "embedded",
    "zookeeper_classpath": "embedded",
    "ZkUtils": "zk_utils",
    "Broker": "zk_utils",
    "LeaderAndIsr": "zk_utils",
    "LeaderIsrAndControllerEpoch": "zk_utils",
    "BrokerIdInUseException": "zk_utils",
    "topic_path": "zk_utils",
    "topic_partition_state_path": "zk_utils",
    "BROKER_IDS_PATH": "zk_utils",
    "BROKER_TOPICS_PATH": "zk_utils",
    "CONTROLLER_PATH": "zk_utils",
    "CONTROLLER_EPOCH_PATH": "zk_utils",
    "DELETE_TOPICS_PATH": "zk_utils",
    "REASSIGN_PARTITIONS_PATH": "zk_utils",
    "PREFERRED_REPLICA_ELECTION_PATH": "zk_utils",
    "ISR_CHANGE_NOTIFICATION_PATH": "zk_utils",
    "ENTITY_CONFIG_PATH": "zk_utils",
    "TOPIC_CONFIG_PATH": "zk_utils",
    "CLUSTER_ID_PATH": "zk_utils",
    "PRODUCER_ID_BLOCK_PATH": "zk_utils",
    "assign_replicas_to_brokers": "admin_utils",
}

__all__ = [
    "BROKER_IDS_PATH",
    "BROKER_TOPICS_PATH",
    "CLUSTER_ID_PATH",
    "CONTROLLER_EPOCH_PATH",
    "CONTROLLER_PATH",
    "DELETE_TOPICS_PATH",
    "ENTITY_CONFIG_PATH",
    "ISR_CHANGE_NOTIFICATION_PATH",
    "PREFERRED_REPLICA_ELECTION_PATH",
    "PRODUCER_ID_BLOCK_PATH",
    "REASSIGN_PARTITIONS_PATH",
    "TOPIC_CONFIG_PATH",
    "Broker",
    "BrokerIdInUseException",
    "EmbeddedZooKeeper",
    "LeaderAndIsr",
    "LeaderIsrAndControllerEpoch",
    "ZkUtils",
    "ZooKeeperStartError",
    "assign_replicas_to_brokers",
    "find_java",
    "topic_partition_state_path",
    "topic_path",
    "zookeeper_classpath",
]

if TYPE_CHECKING:
    from kafka_lite.zk.admin_utils import assign_replicas_to_brokers
    from kafka_lite.zk.embedded import EmbeddedZooKeeper, ZooKeeperStartError, find_java, zookeeper_classpath
    from kafka_lite.zk.zk_utils import (
        BROKER_IDS_PATH,
        BROKER_TOPICS_PATH,
        CLUSTER_ID_PATH,
        CONTROLLER_EPOCH_PATH,
        CONTROLLER_PATH,
        DELETE_TOPICS_PATH,
        ENTITY_CONFIG_PATH,
        ISR_CHANGE_NOTIFICATION_PATH,
        PREFERRED_REPLICA_ELECTION_PATH,
        PRODUCER_ID_BLOCK_PATH,
        REASSIGN_PARTITIONS_PATH,
        TOPIC_CONFIG_PATH,
        Broker,
        BrokerIdInUseException,
        LeaderAndIsr,
        LeaderIsrAndControllerEpoch,
        ZkUtils,
        topic_partition_state_path,
        topic_path,
    )


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
