"""Where the herder keeps the status of every connector and task: what ``GET .../status`` reads.

Mirrors: org.apache.kafka.connect.storage.StatusBackingStore
         (connect/runtime/src/main/java/org/apache/kafka/connect/storage/StatusBackingStore.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: one ``put`` and one ``put_safe`` for both kinds of status (Java overloads them), and
         ``get_connector`` for Kafka's ``get(String)``.

The store is written by the worker running a connector or task (through its herder's status
listeners) and read by any worker's REST API. In standalone mode it is a pair of dicts; in
distributed mode a compacted topic, which every worker reads, so any worker can answer for a task
another one runs. There ``put`` writes without looking, while ``put_safe`` writes only if no newer
generation's worker has written the status meanwhile: it is used for the states a worker reports
on its way out (UNASSIGNED, FAILED), which must not overwrite what the worker now running the task
wrote after a rebalance.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from kafka_lite.connect.runtime.abstract_status import ConnectorStatus, TaskStatus
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId


class StatusBackingStore(ABC):
    @abstractmethod
    def configure(self, config: dict[str, Any]) -> None:
        """Read the worker's settings (the status topic, in distributed mode)."""

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def put(self, status: ConnectorStatus | TaskStatus) -> None:
        """Record the status, whoever wrote the one before it; a DESTROYED status removes it."""

    @abstractmethod
    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        """Record the status unless a worker of a newer generation has written it since."""

    @abstractmethod
    def get(self, id: ConnectorTaskId) -> TaskStatus | None:
        """The task's status, or None if none is known."""

    @abstractmethod
    def get_connector(self, connector: str) -> ConnectorStatus | None:
        """The connector's status, or None if none is known."""

    @abstractmethod
    def get_all(self, connector: str) -> list[TaskStatus]:
        """The statuses of every task of the connector, in task order."""

    @abstractmethod
    def connectors(self) -> set[str]:
        """Every connector with a status."""

    @abstractmethod
    def flush(self) -> None:
        """Wait until every status put so far is written (a no-op in memory)."""
