"""A distributed worker's settings: its group, its three internal topics, its group timeouts.

Mirrors: org.apache.kafka.connect.runtime.distributed.DistributedConfig
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/DistributedConfig.java,
         Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the metrics settings are not defined (they pass unchecked, as any setting the worker
         does not know); the security settings are WorkerConfig's. Kafka 0.11's
         ``*.storage.partitions`` and ``*.storage.replication.factor`` say how a missing internal
         topic is created (0.10.1 leaves that to the broker's auto-creation).

Workers with the same ``group.id`` form one Connect cluster: they join that group at the broker's
group coordinator, and share three compacted topics: connector and task configs
(``config.storage.topic``, one partition, so that every worker reads the configs in one order),
source offsets (``offset.storage.topic``) and statuses (``status.storage.topic``). The group
timeouts mean what they mean for a consumer; ``rebalance.timeout.ms`` bounds how long a rebalance
waits for a worker to stop its tasks and rejoin. A worker that cannot read the config topic up to
its assignment's offset within ``worker.sync.timeout.ms`` leaves the group, and stays out for
``worker.unsync.backoff.ms`` before it joins again, so a worker that cannot keep up does not make
the whole cluster rebalance over and over.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import ConfigDef, Importance, Range, Type
from kafka_lite.connect.runtime.worker_config import WORKER_CONFIG_DEF, WorkerConfig

H, M, L = Importance.HIGH, Importance.MEDIUM, Importance.LOW

GROUP_ID_CONFIG = "group.id"
SESSION_TIMEOUT_MS_CONFIG = "session.timeout.ms"
HEARTBEAT_INTERVAL_MS_CONFIG = "heartbeat.interval.ms"
REBALANCE_TIMEOUT_MS_CONFIG = "rebalance.timeout.ms"
WORKER_SYNC_TIMEOUT_MS_CONFIG = "worker.sync.timeout.ms"
WORKER_UNSYNC_BACKOFF_MS_CONFIG = "worker.unsync.backoff.ms"
WORKER_UNSYNC_BACKOFF_MS_DEFAULT = 5 * 60 * 1000
OFFSET_STORAGE_TOPIC_CONFIG = "offset.storage.topic"
CONFIG_TOPIC_CONFIG = "config.storage.topic"
STATUS_STORAGE_TOPIC_CONFIG = "status.storage.topic"
METADATA_MAX_AGE_CONFIG = "metadata.max.age.ms"
CLIENT_ID_CONFIG = "client.id"
RECONNECT_BACKOFF_MS_CONFIG = "reconnect.backoff.ms"
RETRY_BACKOFF_MS_CONFIG = "retry.backoff.ms"
REQUEST_TIMEOUT_MS_CONFIG = "request.timeout.ms"
OFFSET_STORAGE_PARTITIONS_CONFIG = "offset.storage.partitions"
OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG = "offset.storage.replication.factor"
CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG = "config.storage.replication.factor"
STATUS_STORAGE_PARTITIONS_CONFIG = "status.storage.partitions"
STATUS_STORAGE_REPLICATION_FACTOR_CONFIG = "status.storage.replication.factor"

DISTRIBUTED_CONFIG_DEF = ConfigDef()
DISTRIBUTED_CONFIG_DEF.keys.update(WORKER_CONFIG_DEF.keys)
(
    DISTRIBUTED_CONFIG_DEF
    .define(GROUP_ID_CONFIG, Type.STRING, importance=H,
            doc="A unique string that identifies the Connect cluster group this worker belongs to.")
    .define(SESSION_TIMEOUT_MS_CONFIG, Type.INT, 10000, None, H,
            "The timeout used to detect worker failures: a worker that sends no heartbeat within it "
            "is removed from the group, and its connectors and tasks go to the other workers.")
    .define(REBALANCE_TIMEOUT_MS_CONFIG, Type.INT, 60000, None, H,
            "The maximum time each worker may take to join the group once a rebalance has begun: "
            "to stop its work and commit its offsets.")
    .define(HEARTBEAT_INTERVAL_MS_CONFIG, Type.INT, 3000, None, H,
            "The expected time between heartbeats to the group coordinator; lower than "
            "session.timeout.ms, typically no higher than a third of it.")
    .define(METADATA_MAX_AGE_CONFIG, Type.LONG, 5 * 60 * 1000, Range.at_least(0), L,
            "The period after which metadata is refreshed even without a change.")
    .define(CLIENT_ID_CONFIG, Type.STRING, "", None, L,
            "An id string passed to the server when making requests.")
    .define(RECONNECT_BACKOFF_MS_CONFIG, Type.LONG, 50, Range.at_least(0), L,
            "The time to wait before reconnecting to a given host.")
    .define(RETRY_BACKOFF_MS_CONFIG, Type.LONG, 100, Range.at_least(0), L,
            "The time to wait before retrying a failed request.")
    .define(REQUEST_TIMEOUT_MS_CONFIG, Type.INT, 40 * 1000, Range.at_least(0), M,
            "How long the client waits for a response before retrying or failing the request.")
    .define(WORKER_SYNC_TIMEOUT_MS_CONFIG, Type.INT, 3000, None, M,
            "How long a worker out of sync with the others waits to catch up on the config topic "
            "before it gives up, leaves the group and waits worker.unsync.backoff.ms before rejoining.")
    .define(WORKER_UNSYNC_BACKOFF_MS_CONFIG, Type.INT, WORKER_UNSYNC_BACKOFF_MS_DEFAULT, None, M,
            "How long a worker that could not catch up within worker.sync.timeout.ms stays out of "
            "the group before rejoining.")
    # Compacted, all three: each key's latest record (a connector's config, a source partition's
    # offset, a task's status) is kept however old, so a worker started much later still reads the
    # current state, while the records it superseded are cleaned away.
    .define(OFFSET_STORAGE_TOPIC_CONFIG, Type.STRING, importance=H,
            doc="The name of the compacted topic where source connectors' offsets are stored.")
    .define(CONFIG_TOPIC_CONFIG, Type.STRING, importance=H,
            doc="The name of the compacted topic, of one partition, where connector and task "
                "configurations are stored.")
    .define(STATUS_STORAGE_TOPIC_CONFIG, Type.STRING, importance=H,
            doc="The name of the compacted topic where connector and task statuses are stored.")
    # How a worker creates a missing internal topic (see KafkaBasedLog); the header dates them.
    .define(OFFSET_STORAGE_PARTITIONS_CONFIG, Type.INT, 25, Range.at_least(1), L,
            "The number of partitions of the offsets topic, when the worker creates it.")
    .define(OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG, Type.SHORT, 3, Range.at_least(1), L,
            "The replication factor of the offsets topic, when the worker creates it.")
    .define(CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG, Type.SHORT, 3, Range.at_least(1), L,
            "The replication factor of the config topic, when the worker creates it.")
    .define(STATUS_STORAGE_PARTITIONS_CONFIG, Type.INT, 5, Range.at_least(1), L,
            "The number of partitions of the status topic, when the worker creates it.")
    .define(STATUS_STORAGE_REPLICATION_FACTOR_CONFIG, Type.SHORT, 3, Range.at_least(1), L,
            "The replication factor of the status topic, when the worker creates it.")
)  # fmt: skip


class DistributedConfig(WorkerConfig):
    CONFIG_DEF = DISTRIBUTED_CONFIG_DEF

    def __init__(self, props: dict[str, Any]) -> None:
        super().__init__(props)
