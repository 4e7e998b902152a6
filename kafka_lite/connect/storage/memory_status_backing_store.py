"""The standalone herder's status store: the latest status of each connector and task, in memory.

Mirrors: org.apache.kafka.connect.storage.MemoryStatusBackingStore
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/MemoryStatusBackingStore.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: a lock around two dicts where Kafka's methods are ``synchronized``.

One process writes and reads it, so there are no generations to compare: ``put_safe`` is ``put``.
A DESTROYED status (the herder writes one for a deleted connector and each of its tasks) removes
the entry, so a deleted connector has no status, and ``GET .../status`` answers 404 for it.
"""

from __future__ import annotations

import threading
from typing import Any

from kafka_lite.connect.runtime.abstract_status import ConnectorStatus, State, TaskStatus
from kafka_lite.connect.storage.status_backing_store import StatusBackingStore
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId


class MemoryStatusBackingStore(StatusBackingStore):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.connector_statuses: dict[str, ConnectorStatus] = {}
        self.task_statuses: dict[str, dict[int, TaskStatus]] = {}  # connector -> task number -> status

    def configure(self, config: dict[str, Any]) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def put(self, status: ConnectorStatus | TaskStatus) -> None:
        with self._lock:
            if isinstance(status, TaskStatus):
                tasks = self.task_statuses.setdefault(status.id.connector, {})
                if status.state is State.DESTROYED:
                    tasks.pop(status.id.task, None)
                    if not tasks:
                        del self.task_statuses[status.id.connector]
                else:
                    tasks[status.id.task] = status
            elif status.state is State.DESTROYED:
                self.connector_statuses.pop(status.id, None)
            else:
                self.connector_statuses[status.id] = status

    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        self.put(status)

    def get(self, id: ConnectorTaskId) -> TaskStatus | None:
        with self._lock:
            return self.task_statuses.get(id.connector, {}).get(id.task)

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        with self._lock:
            return self.connector_statuses.get(connector)

    def get_all(self, connector: str) -> list[TaskStatus]:
        with self._lock:
            tasks = self.task_statuses.get(connector, {})
            return [tasks[task] for task in sorted(tasks)]

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self.connector_statuses)

    def flush(self) -> None:
        pass
