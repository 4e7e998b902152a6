"""The JSON bodies of Connect's REST API: what a herder answers and the resources send.

Mirrors: org.apache.kafka.connect.runtime.rest.entities.ConnectorInfo, TaskInfo, ConnectorStateInfo,
         ConfigInfos, ConfigInfo, ConfigKeyInfo, ConfigValueInfo, ConnectorPluginInfo, ServerInfo
         and ErrorMessage
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/rest/entities/, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: dataclasses with a ``to_json()`` that gives Kafka's field names (Jackson's annotations).

A task's id is ``{"connector": name, "task": n}`` everywhere in the API; a status carries the id of
the worker running it (``host:port`` of its REST server) and, when it FAILED, the stack trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafka_lite.connect.util.connector_task_id import ConnectorTaskId


def task_id_json(id: ConnectorTaskId) -> dict[str, Any]:
    return {"connector": id.connector, "task": id.task}


@dataclass
class ConnectorInfo:
    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "config": dict(self.config),
            "tasks": [task_id_json(t) for t in self.tasks],
        }


@dataclass
class TaskInfo:
    id: ConnectorTaskId
    config: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"id": task_id_json(self.id), "config": dict(self.config)}


@dataclass
class ConnectorState:
    """A connector's state in ``GET /connectors/{name}/status``."""

    state: str
    worker_id: str
    trace: str | None = None

    def to_json(self) -> dict[str, Any]:
        body = {"state": self.state, "worker_id": self.worker_id}
        if self.trace is not None:
            body["trace"] = self.trace
        return body


@dataclass
class TaskState(ConnectorState):
    """A task's state: its number, then what a connector's state has."""

    id: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, **super().to_json()}


@dataclass
class ConnectorStateInfo:
    name: str
    connector: ConnectorState
    tasks: list[TaskState]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "connector": self.connector.to_json(),
            "tasks": [t.to_json() for t in self.tasks],
        }


@dataclass
class ConfigKeyInfo:
    name: str
    type: str
    required: bool
    default_value: str | None
    importance: str
    documentation: str
    group: str | None = None
    order_in_group: int = -1
    width: str = "NONE"
    display_name: str = ""
    dependents: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "default_value": self.default_value,
            "importance": self.importance,
            "documentation": self.documentation,
            "group": self.group,
            "order": self.order_in_group,
            "width": self.width,
            "display_name": self.display_name or self.name,
            "dependents": list(self.dependents),
        }


@dataclass
class ConfigValueInfo:
    name: str
    value: str | None
    recommended_values: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "recommended_values": list(self.recommended_values),
            "errors": list(self.errors),
            "visible": self.visible,
        }


@dataclass
class ConfigInfo:
    definition: ConfigKeyInfo
    value: ConfigValueInfo | None  # None: a setting defined but not validated

    def to_json(self) -> dict[str, Any]:
        value = None if self.value is None else self.value.to_json()
        return {"definition": self.definition.to_json(), "value": value}


@dataclass
class ConfigInfos:
    """``PUT /connector-plugins/{plugin}/config/validate``: every setting with its errors, and their count."""

    name: str
    error_count: int
    groups: list[str]
    configs: list[ConfigInfo]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "error_count": self.error_count,
            "groups": list(self.groups),
            "configs": [c.to_json() for c in self.configs],
        }


@dataclass
class ConnectorPluginInfo:
    class_name: str  # Kafka's class name, which the API shows and a config may name
    type: str  # "source" or "sink"
    version: str

    def to_json(self) -> dict[str, Any]:
        return {"class": self.class_name, "type": self.type, "version": self.version}


@dataclass
class ServerInfo:
    """``GET /``: the worker's version."""

    version: str
    commit: str

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "commit": self.commit}


@dataclass
class ErrorMessage:
    """Every error the API answers: its HTTP status again, and a message naming what is wrong."""

    error_code: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"error_code": self.error_code, "message": self.message}
