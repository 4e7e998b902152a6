"""The distributed herder's config store: connector configs, task configs and target states in one topic.

Mirrors: org.apache.kafka.connect.storage.KafkaConfigBackingStore
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/KafkaConfigBackingStore.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: values are written schemaless (a dict through the internal converter, where Kafka writes a
         ``Struct`` of a fixed schema); with the quick start's ``internal.value.converter.schemas.enable=false``
         the bytes are the same JSON. A removed connector's task configs are forgotten with it.
         The topic is created if missing, compacted, with one partition and Kafka 0.11's
         ``config.storage.replication.factor``.

The config topic (``config.storage.topic``) has one partition, so every worker reads every change
in the same order, and a record's offset is a version number for the whole cluster's config: the
workers compare offsets when they join the group. Only the leader writes. Four kinds of record::

    connector-{name}      {"properties": {...}}   the connector's config; null: deleted
    task-{name}-{n}       {"properties": {...}}   task n's config, not yet in force
    commit-{name}         {"tasks": N}            the connector's tasks are now 0..N-1
    target-state-{name}   {"state": "PAUSED"}     STARTED or PAUSED

Task configs are written one record per task, and a reader must never run a half-written set (a
new task 0 beside an old task 1). So a task record is held back (``deferred_task_updates``) until
the connector's commit record arrives; then the whole set takes effect at once. If compaction has
removed some task records of an old set, the commit finds fewer than N and marks the connector
inconsistent: its tasks do not run until the connector writes a new set.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any

from kafka_lite.clients.admin import NewTopic
from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.connect.errors import ConnectException, DataException
from kafka_lite.connect.runtime.distributed.cluster_config_state import ClusterConfigState
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.storage.config_backing_store import ConfigBackingStore
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.connect.util.kafka_based_log import KafkaBasedLog, client_configs

log = logging.getLogger(__name__)

CONFIG_TOPIC_CONFIG = "config.storage.topic"
CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG = "config.storage.replication.factor"
CONNECTOR_PREFIX = "connector-"
TASK_PREFIX = "task-"
COMMIT_TASKS_PREFIX = "commit-"
TARGET_STATE_PREFIX = "target-state-"
READ_TO_END_TIMEOUT_MS = 30000


def connector_key(connector_name: str) -> str:
    return CONNECTOR_PREFIX + connector_name


def task_key(task_id: ConnectorTaskId) -> str:
    return f"{TASK_PREFIX}{task_id.connector}-{task_id.task}"


def commit_tasks_key(connector_name: str) -> str:
    return COMMIT_TASKS_PREFIX + connector_name


def target_state_key(connector_name: str) -> str:
    return TARGET_STATE_PREFIX + connector_name


class KafkaConfigBackingStore(ConfigBackingStore):
    def __init__(self, converter: Converter, time: Time = SYSTEM) -> None:
        self.converter = converter
        self.time = time
        self.topic: str | None = None
        self.config_log: KafkaBasedLog | None = None
        self.update_listener: ConfigBackingStore.UpdateListener | None = None
        # Kafka's ``lock``: the work thread applies records, the herder's thread takes snapshots.
        self._lock = threading.Lock()
        # While start() reads the topic the first time, the listener is not told: it is the start.
        self.starting = False
        self.offset = -1  # the offset of the next record to read: the config state's version
        self.connector_task_counts: dict[str, int] = {}
        self.connector_configs: dict[str, dict[str, str]] = {}
        self.connector_target_states: dict[str, TargetState] = {}
        self.task_configs: dict[ConnectorTaskId, dict[str, str]] = {}
        self.inconsistent: set[str] = set()
        self.deferred_task_updates: dict[str, dict[ConnectorTaskId, dict[str, str]]] = {}

    def set_update_listener(self, listener: ConfigBackingStore.UpdateListener) -> None:
        self.update_listener = listener

    def configure(self, config: dict[str, Any]) -> None:
        self.topic = config.get(CONFIG_TOPIC_CONFIG)
        if not self.topic:
            raise ConnectException("Must specify topic for connector configuration (config.storage.topic).")
        producer, consumer = client_configs(config, f"connect-configs-{self.topic}")
        # One partition: one order of changes for every worker.
        new_topic = NewTopic(self.topic, 1, int(config.get(CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG) or 3),
                             configs={"cleanup.policy": "compact"})  # fmt: skip
        self.config_log = KafkaBasedLog(self.topic, producer, consumer, self._consumed, self.time, new_topic)

    def start(self) -> None:
        log.info("Starting KafkaConfigBackingStore")
        # Before the work thread runs, so its first records are read with ``starting`` set.
        self.starting = True
        self.config_log.start()
        self.starting = False
        partition_count = self.config_log.partition_count()
        if partition_count != 1:
            self.config_log.stop()
            raise ConnectException(
                f"The config topic {self.topic} has {partition_count} partitions; it must have exactly 1, "
                "so that every worker reads the configs in one order"
            )
        log.info("Started KafkaConfigBackingStore")

    def stop(self) -> None:
        log.info("Closing KafkaConfigBackingStore")
        self.config_log.stop()
        log.info("Closed KafkaConfigBackingStore")

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            return ClusterConfigState(
                self.offset,
                dict(self.connector_task_counts),
                {name: dict(config) for name, config in self.connector_configs.items()},
                dict(self.connector_target_states),
                {id: dict(config) for id, config in self.task_configs.items()},
                frozenset(self.inconsistent),
            )

    def contains(self, connector: str) -> bool:
        with self._lock:
            return connector in self.connector_configs

    # -- writes (the leader's) --------------------------------------------------------------------------

    def put_connector_config(self, connector: str, properties: dict[str, str]) -> None:
        log.debug("Writing connector configuration for connector %s", connector)
        self._send(connector_key(connector), {"properties": dict(properties)})
        self._read_to_end_or_raise("Error writing connector configuration to Kafka")

    def remove_connector_config(self, connector: str) -> None:
        log.debug("Removing connector configuration for connector %s", connector)
        self.config_log.send(connector_key(connector).encode(), None)
        self.config_log.send(target_state_key(connector).encode(), None)
        self._read_to_end_or_raise("Error removing connector configuration from Kafka")

    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        # At the end of the log first: the leader should be the only writer, but may not have read
        # what an earlier leader wrote.
        self._read_to_end_or_raise("Error writing root configuration to Kafka")
        for index, task_config in enumerate(configs):
            log.debug("Writing configuration for task %d configuration: %s", index, task_config)
            self._send(task_key(ConnectorTaskId(connector, index)), {"properties": dict(task_config)})
        if configs:
            # Every task record in the log before the commit that makes them count.
            self._read_to_end_or_raise("Error writing task configurations to Kafka")
        log.debug("Writing commit for connector %s with %d tasks.", connector, len(configs))
        self._send(commit_tasks_key(connector), {"tasks": len(configs)})
        self._read_to_end_or_raise("Error writing task configurations to Kafka")

    def put_target_state(self, connector: str, state: TargetState) -> None:
        log.debug("Writing target state %s for connector %s", state.value, connector)
        self._send(target_state_key(connector), {"state": state.value})

    def refresh(self, timeout_ms: int) -> None:
        try:
            self.config_log.read_to_end().result(timeout_ms / 1000)
        except FutureTimeoutError:
            raise TimeoutException(f"Timed out after {timeout_ms} ms reading the config topic {self.topic} "
                                   "to its end") from None  # fmt: skip

    def _send(self, key: str, value: dict[str, Any]) -> None:
        self.config_log.send(key.encode(), self.converter.from_connect_data(self.topic, None, value))

    def _read_to_end_or_raise(self, what: str) -> None:
        try:
            self.config_log.read_to_end().result(READ_TO_END_TIMEOUT_MS / 1000)
        except FutureTimeoutError:
            log.error("%s: timed out reading the config topic to its end", what)
            raise ConnectException(what) from None

    # -- reads (every worker's, on the log's work thread) ---------------------------------------------

    def _consumed(self, error: BaseException | None, record: Any) -> None:
        if error is not None:
            log.error("Unexpected in consumer callback for KafkaConfigBackingStore: %s", error)
            return
        try:
            value = self.converter.to_connect_data(self.topic, record.value).value
        except DataException:
            log.exception("Failed to convert config data to Kafka Connect format")
            return
        key = bytes(record.key).decode()
        # The offset of the *next* record, as the consumer's positions count.
        self.offset = record.offset + 1
        if key.startswith(TARGET_STATE_PREFIX):
            self._read_target_state(key[len(TARGET_STATE_PREFIX) :], value)
        elif key.startswith(CONNECTOR_PREFIX):
            self._read_connector_config(key[len(CONNECTOR_PREFIX) :], value)
        elif key.startswith(TASK_PREFIX):
            self._read_task_config(key, value)
        elif key.startswith(COMMIT_TASKS_PREFIX):
            self._read_commit(key[len(COMMIT_TASKS_PREFIX) :], value)
        else:
            log.error("Discarding config update record with invalid key: %s", key)

    def _read_target_state(self, connector: str, value: Any) -> None:
        with self._lock:
            if value is None:
                # A deleted connector's tombstone; its config's tombstone tells the listener.
                self.connector_target_states.pop(connector, None)
                if connector in self.connector_configs:
                    self.connector_target_states[connector] = TargetState.STARTED
                return
            state = value.get("state") if isinstance(value, dict) else None
            if state not in TargetState.__members__:
                log.error("Invalid target state for connector (%s): %r", connector, value)
                return
            self.connector_target_states[connector] = TargetState[state]
        if not self.starting:
            self.update_listener.on_connector_target_state_change(connector)

    def _read_connector_config(self, connector: str, value: Any) -> None:
        with self._lock:
            removed = value is None
            if removed:
                log.info("Removed connector %s due to null configuration. This is usually intentional "
                         "and does not indicate an issue.", connector)  # fmt: skip
                self.connector_configs.pop(connector, None)
                self.connector_task_counts.pop(connector, None)
                self.inconsistent.discard(connector)
                for id in [id for id in self.task_configs if id.connector == connector]:
                    del self.task_configs[id]
            else:
                properties = value.get("properties") if isinstance(value, dict) else None
                if not isinstance(properties, dict):
                    log.error("Invalid data for connector config (%s): %r", connector, value)
                    return
                self.connector_configs[connector] = properties
                # A connector without a target-state record is STARTED.
                self.connector_target_states.setdefault(connector, TargetState.STARTED)
        if not self.starting:
            if removed:
                self.update_listener.on_connector_config_remove(connector)
            else:
                self.update_listener.on_connector_config_update(connector)

    def _read_task_config(self, key: str, value: Any) -> None:
        task_id = parse_task_id(key)
        properties = value.get("properties") if isinstance(value, dict) else None
        if task_id is None or not isinstance(properties, dict):
            log.error("Ignoring task configuration %s: %r", key, value)
            return
        with self._lock:
            self.deferred_task_updates.setdefault(task_id.connector, {})[task_id] = properties

    # --8<-- [start:read_commit]
    def _read_commit(self, connector: str, value: Any) -> None:
        task_count = value.get("tasks") if isinstance(value, dict) else None
        if not isinstance(task_count, int):
            log.error("Ignoring connector tasks configuration commit for connector %s: %r", connector, value)
            return
        with self._lock:
            # Always cleared, applied or not: after an inconsistent commit only a fresh set will do.
            deferred = self.deferred_task_updates.pop(connector, {})
            if {id.task for id in deferred} != set(range(task_count)):
                log.warning("Connector %s's commit names %d tasks but %d task configs were read before it; "
                            "its tasks stay stopped until it writes a new set", connector, task_count, len(deferred))  # fmt: skip
                self.inconsistent.add(connector)
                updated_tasks: list[ConnectorTaskId] = []
            else:
                for id in [id for id in self.task_configs if id.connector == connector]:
                    del self.task_configs[id]
                self.task_configs.update(deferred)
                updated_tasks = sorted(deferred)
                self.inconsistent.discard(connector)
            self.connector_task_counts[connector] = task_count
        if not self.starting:
            self.update_listener.on_task_config_update(updated_tasks)

    # --8<-- [end:read_commit]


def parse_task_id(key: str) -> ConnectorTaskId | None:
    """``task-{connector}-{n}``: the connector's name may itself contain dashes."""
    connector, _, task = key[len(TASK_PREFIX) :].rpartition("-")
    if not connector or not task.isdigit():
        return None
    return ConnectorTaskId(connector, int(task))
