"""The distributed herder's status store: every connector's and task's state in a compacted topic.

Mirrors: org.apache.kafka.connect.storage.KafkaStatusBackingStore
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/KafkaStatusBackingStore.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: values are written schemaless (a dict through the internal converter), the same JSON as
         Kafka's ``Struct`` with the quick start's converter settings; the topic is created if
         missing, compacted, with Kafka 0.11's ``status.storage.partitions`` (5) and
         ``status.storage.replication.factor``.

The worker running a connector or task writes its state here; every worker reads the whole topic,
so ``GET /connectors/{name}/status`` answers on any of them. Keys and values::

    status-connector-{name}   {"state": "RUNNING", "trace": null, "worker_id": "host:8083", "generation": 7}
    status-task-{name}-{n}    the same fields, for task n

A status is stamped with the group generation its writer had. After a rebalance two workers may
write one task's status: the old owner on its way out (UNASSIGNED), the new one starting it
(RUNNING), in any order. ``put_safe`` is for the first kind: it writes only if the status last read
was written by this worker or by a generation no newer than its own, so a late UNASSIGNED from the
old owner does not hide the new owner's RUNNING. A status whose write fails with a retriable error
is sent again, unless a newer one for the same key was sent meanwhile (the entry's ``sequence``).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from kafka_lite.clients.admin import NewTopic
from kafka_lite.common.errors import RetriableException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.runtime.abstract_status import AbstractStatus, ConnectorStatus, State, TaskStatus
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.storage.status_backing_store import StatusBackingStore
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.connect.util.kafka_based_log import KafkaBasedLog, client_configs

log = logging.getLogger(__name__)

STATUS_STORAGE_TOPIC_CONFIG = "status.storage.topic"
STATUS_STORAGE_PARTITIONS_CONFIG = "status.storage.partitions"
STATUS_STORAGE_REPLICATION_FACTOR_CONFIG = "status.storage.replication.factor"
TASK_STATUS_PREFIX = "status-task-"
CONNECTOR_STATUS_PREFIX = "status-connector-"


@dataclass
class CacheEntry:
    """The last status read for one key, and how many writes this worker has sent for it."""

    value: AbstractStatus | None = None
    sequence: int = 0
    deleted: bool = False

    def increment(self) -> int:
        self.sequence += 1
        return self.sequence

    def can_write_safely(self, status: AbstractStatus, sequence: int | None = None) -> bool:
        safe = (
            self.value is None
            or self.value.worker_id == status.worker_id
            or self.value.generation <= status.generation
        )
        return safe and (sequence is None or self.sequence == sequence)


class KafkaStatusBackingStore(StatusBackingStore):
    def __init__(self, converter: Converter, time: Time = SYSTEM) -> None:
        self.time = time
        self.converter = converter
        self.topic: str | None = None
        self.kafka_log: KafkaBasedLog | None = None
        self._lock = threading.RLock()  # Kafka's synchronized methods
        self.connector_entries: dict[str, CacheEntry] = {}
        self.tasks: dict[str, dict[int, CacheEntry]] = {}  # connector -> task number -> entry
        self.generation = 0  # the generation of the last status sent

    def configure(self, config: dict[str, Any]) -> None:
        self.topic = config.get(STATUS_STORAGE_TOPIC_CONFIG)
        if not self.topic:
            raise ConnectException("Must specify topic for connector status (status.storage.topic).")
        producer, consumer = client_configs(config, f"connect-status-{self.topic}")
        producer["retries"] = 0  # retried here, and only while no newer status is on its way
        new_topic = NewTopic(self.topic, int(config.get(STATUS_STORAGE_PARTITIONS_CONFIG) or 5),
                             int(config.get(STATUS_STORAGE_REPLICATION_FACTOR_CONFIG) or 3),
                             configs={"cleanup.policy": "compact"})  # fmt: skip
        self.kafka_log = KafkaBasedLog(self.topic, producer, consumer, self._read, self.time, new_topic)

    def start(self) -> None:
        self.kafka_log.start()
        # To the end at once, so that the REST API's first answers show the latest states.
        self.kafka_log.read_to_end()

    def stop(self) -> None:
        self.kafka_log.stop()

    def put(self, status: ConnectorStatus | TaskStatus) -> None:
        self._send_status(status, safe_write=False)

    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        self._send_status(status, safe_write=True)

    def flush(self) -> None:
        self.kafka_log.flush()

    def _send_status(self, status: AbstractStatus, safe_write: bool) -> None:
        if isinstance(status.id, ConnectorTaskId):
            entry = self._get_or_add_task(status.id)
            key = f"{TASK_STATUS_PREFIX}{status.id.connector}-{status.id.task}"
        else:
            entry = self._get_or_add_connector(status.id)
            key = CONNECTOR_STATUS_PREFIX + status.id
        self._send(key, status, entry, safe_write)

    def _send(self, key: str, status: AbstractStatus, entry: CacheEntry, safe_write: bool) -> None:
        with self._lock:
            self.generation = status.generation
            if safe_write and not entry.can_write_safely(status):
                return
            sequence = entry.increment()
        value = None if status.state is State.DESTROYED else self._serialize(status)

        def on_completion(error: BaseException | None, _metadata: Any) -> None:
            if error is None:
                return
            if not isinstance(error, RetriableException):
                log.error("Failed to write status update: %s", error)
                return
            with self._lock:
                if (
                    entry.deleted
                    or status.generation != self.generation
                    or (safe_write and not entry.can_write_safely(status, sequence))
                ):
                    return  # a newer status for this key is on its way: this one is stale
            self.kafka_log.send(key.encode(), value, on_completion)

        self.kafka_log.send(key.encode(), value, on_completion)

    def _get_or_add_connector(self, connector: str) -> CacheEntry:
        with self._lock:
            return self.connector_entries.setdefault(connector, CacheEntry())

    def _get_or_add_task(self, id: ConnectorTaskId) -> CacheEntry:
        with self._lock:
            return self.tasks.setdefault(id.connector, {}).setdefault(id.task, CacheEntry())

    def _remove_connector(self, connector: str) -> None:
        with self._lock:
            removed = self.connector_entries.pop(connector, None)
            if removed is not None:
                removed.deleted = True
            for entry in self.tasks.pop(connector, {}).values():
                entry.deleted = True

    def _remove_task(self, id: ConnectorTaskId) -> None:
        with self._lock:
            removed = self.tasks.get(id.connector, {}).pop(id.task, None)
            if removed is not None:
                removed.deleted = True

    # -- reads ----------------------------------------------------------------------------------------

    def get(self, id: ConnectorTaskId) -> TaskStatus | None:
        with self._lock:
            entry = self.tasks.get(id.connector, {}).get(id.task)
            return None if entry is None else entry.value

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        with self._lock:
            entry = self.connector_entries.get(connector)
            return None if entry is None else entry.value

    def get_all(self, connector: str) -> list[TaskStatus]:
        with self._lock:
            entries = self.tasks.get(connector, {})
            return [entries[n].value for n in sorted(entries) if entries[n].value is not None]

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self.connector_entries)

    # -- the log's records ----------------------------------------------------------------------------

    def _read(self, error: BaseException | None, record: Any) -> None:
        if error is not None:
            return
        key = bytes(record.key).decode()
        value = None if record.value is None else bytes(record.value)
        if key.startswith(CONNECTOR_STATUS_PREFIX):
            self._read_connector_status(key[len(CONNECTOR_STATUS_PREFIX) :], value)
        elif key.startswith(TASK_STATUS_PREFIX):
            self._read_task_status(key, value)
        else:
            log.warning("Discarding record with invalid key %s", key)

    def _read_connector_status(self, connector: str, value: bytes | None) -> None:
        if not connector:
            log.warning("Discarding record with invalid connector status key")
            return
        if value is None:
            self._remove_connector(connector)
            return
        status = self._parse(ConnectorStatus, connector, value)
        if status is not None:
            with self._lock:
                self._get_or_add_connector(connector).value = status

    def _read_task_status(self, key: str, value: bytes | None) -> None:
        id = parse_connector_task_id(key)
        if id is None:
            log.warning("Discarding record with invalid task status key %s", key)
            return
        if value is None:
            self._remove_task(id)
            return
        status = self._parse(TaskStatus, id, value)
        if status is not None:
            with self._lock:
                self._get_or_add_task(id).value = status

    def _parse(self, kind: type, id: Any, data: bytes) -> AbstractStatus | None:
        try:
            fields = self.converter.to_connect_data(self.topic, data).value
            return kind(id, State(fields["state"]), fields["worker_id"], int(fields["generation"]),
                        fields.get("trace"))  # fmt: skip
        except Exception:
            log.exception("Failed to deserialize the status of %s", id)
            return None

    def _serialize(self, status: AbstractStatus) -> bytes:
        value: dict[str, Any] = {"state": status.state.value}
        if status.trace is not None:
            value["trace"] = status.trace
        value["worker_id"] = status.worker_id
        value["generation"] = status.generation
        return self.converter.from_connect_data(self.topic, None, value)


def parse_connector_task_id(key: str) -> ConnectorTaskId | None:
    """``status-task-{connector}-{n}``: the connector's name may itself contain dashes."""
    connector, _, task = key[len(TASK_STATUS_PREFIX) :].rpartition("-")
    if not connector or not task.isdigit():
        return None
    return ConnectorTaskId(connector, int(task))
