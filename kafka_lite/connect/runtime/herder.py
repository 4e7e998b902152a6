"""The herder: what a Connect worker's REST API and command line ask of it.

Mirrors: org.apache.kafka.connect.runtime.Herder
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/Herder.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: Python names; a request's callback is ``callback(error, result)`` (Kafka's ``Callback``).

The worker runs connectors and tasks; the herder decides which. Two herders implement this
interface: the standalone herder (one process, configs in memory) and the distributed herder
(workers in a group, configs, offsets and statuses in compacted topics). The REST resources call
only these methods, so the same API serves both modes.

A request that changes or reads the cluster's configs takes a callback, because the distributed
herder answers it on its own thread, and may answer with a ``RequestTargetException`` naming the
worker that can serve it (the leader, or the worker running a task). The status and validation
calls read local state and answer at once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Generic, TypeVar

from kafka_lite.connect.runtime.rest.entities import (
    ConfigInfos,
    ConnectorInfo,
    ConnectorPluginInfo,
    ConnectorStateInfo,
    TaskInfo,
    TaskState,
)
from kafka_lite.connect.util.callback import Callback
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

T = TypeVar("T")


@dataclass(frozen=True)
class Created(Generic[T]):
    """A config write's answer: whether it created the connector (201) or replaced one (200)."""

    created: bool
    result: T


class Herder(ABC):
    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def connectors(self, callback: Callback) -> None:
        """Every connector's name in the cluster's current configuration (``list[str]``)."""

    @abstractmethod
    def connector_info(self, conn_name: str, callback: Callback) -> None:
        """The connector's ``ConnectorInfo``: its config and its task ids."""

    @abstractmethod
    def connector_config(self, conn_name: str, callback: Callback) -> None:
        """The connector's config (``dict[str, str]``)."""

    @abstractmethod
    def put_connector_config(
        self, conn_name: str, config: dict[str, str] | None, allow_replace: bool, callback: Callback
    ) -> None:
        """Create or replace a connector; answers ``Created[ConnectorInfo]``. Without
        ``allow_replace`` an existing name answers ``AlreadyExistsException``. The config is
        validated first: a bad one is refused whole and nothing is written."""

    @abstractmethod
    def delete_connector_config(self, conn_name: str, callback: Callback) -> None:
        """Stop and remove a connector and its tasks; answers ``Created[ConnectorInfo]`` (not created)."""

    @abstractmethod
    def request_task_reconfiguration(self, conn_name: str) -> None:
        """A connector's context asks for its task configs to be generated again."""

    @abstractmethod
    def task_configs(self, conn_name: str, callback: Callback) -> None:
        """The connector's tasks' configs (``list[TaskInfo]``)."""

    @abstractmethod
    def put_task_configs(self, conn_name: str, configs: list[dict[str, str]], callback: Callback) -> None:
        """Replace the connector's task configs (a follower sends its connector's to the leader)."""

    @abstractmethod
    def connector_status(self, conn_name: str) -> ConnectorStateInfo:
        """The connector's and its tasks' states, read from the status store."""

    @abstractmethod
    def task_status(self, id: ConnectorTaskId) -> TaskState:
        """One task's state, read from the status store."""

    @abstractmethod
    def validate_connector_config(self, connector_config: dict[str, str]) -> ConfigInfos:
        """Every setting of the connector's config with its errors; nothing is started or written."""

    @abstractmethod
    def restart_task(self, id: ConnectorTaskId, callback: Callback) -> None: ...

    @abstractmethod
    def restart_connector(self, conn_name: str, callback: Callback) -> None: ...

    @abstractmethod
    def pause_connector(self, conn_name: str) -> None:
        """Set the connector's target state to PAUSED; its worker pauses it and its tasks."""

    @abstractmethod
    def resume_connector(self, conn_name: str) -> None:
        """Set the connector's target state to STARTED again."""

    @abstractmethod
    def connector_plugins(self) -> list[ConnectorPluginInfo]:
        """The connector classes this worker can run (``GET /connector-plugins``)."""


__all__ = ["ConnectorInfo", "Created", "Herder", "TaskInfo"]
