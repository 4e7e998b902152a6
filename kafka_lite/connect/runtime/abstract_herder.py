"""What every herder shares: statuses written to the status store, and config validation.

Mirrors: org.apache.kafka.connect.runtime.AbstractHerder
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/AbstractHerder.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: no config backing store here (each herder keeps its configs, so ``pause_connector`` and
         ``resume_connector`` are its own); an unknown connector class is a 400 (Kafka's answer
         is a 500); validation uses the connector's ``config()`` definitions directly; one
         method per event serves both listeners (Java overloads them: a task id or a name).

The herder is the listener of every connector and task its worker runs: each ``on_startup``,
``on_pause``, ``on_resume``, ``on_shutdown`` and ``on_failure`` becomes a status written to the
status store, stamped with this worker's id and the herder's ``generation`` (always 0 in
standalone mode; the group generation in distributed mode). States a worker reports on its way out
(UNASSIGNED, FAILED) are written with ``put_safe``, so that they do not overwrite the status the
next owner of the task wrote. ``connector_status`` and ``task_status`` read the store, not the
worker: in distributed mode the task may run elsewhere.

``validate_connector_config`` checks a config against the worker's definitions (``name``,
``connector.class``, ``tasks.max``, ``transforms``, and ``topics`` for a sink), enriched with each
transformation's (``ConnectorConfig.enrich``), and the connector's own, and reports every setting
with its errors instead of stopping at the first. A config write is refused
whole when the count is not zero (``maybe_add_config_errors``).
"""

from __future__ import annotations

import traceback
from abc import abstractmethod
from typing import Any

from kafka_lite.common.config import ConfigDef, ConfigKey, ConfigValue, Type
from kafka_lite.connect.connector.connector import Connector
from kafka_lite.connect.errors import ConnectException, NotFoundException
from kafka_lite.connect.runtime import connector_factory
from kafka_lite.connect.runtime.abstract_status import ConnectorStatus, State, TaskStatus
from kafka_lite.connect.runtime.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    CONNECTOR_CONFIG_DEF,
    SINK_CONNECTOR_CONFIG_DEF,
    enrich,
)
from kafka_lite.connect.runtime.herder import Herder
from kafka_lite.connect.runtime.rest.entities import (
    ConfigInfo,
    ConfigInfos,
    ConfigKeyInfo,
    ConfigValueInfo,
    ConnectorPluginInfo,
    ConnectorState,
    ConnectorStateInfo,
    TaskState,
)
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import BadRequestException
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.sink.sink_connector import SinkConnector
from kafka_lite.connect.storage.status_backing_store import StatusBackingStore
from kafka_lite.connect.util.callback import Callback
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId


class AbstractHerder(Herder, TaskStatus.Listener, ConnectorStatus.Listener):
    """The half of a herder that is the same in both modes: what the worker reports goes to the
    status store, and configs are checked against the definitions before anything runs."""

    def __init__(self, worker: Worker, worker_id: str, status_backing_store: StatusBackingStore) -> None:
        self.worker = worker
        self.worker_id = worker_id
        self.status_backing_store = status_backing_store
        self.temp_connectors: dict[str, Connector] = {}  # connector class -> an instance to validate with

    @abstractmethod
    def generation(self) -> int:
        """The group generation this worker's statuses are written under."""

    def start_services(self) -> None:
        # The worker first (its offset store), then the statuses it will report into.
        self.worker.start()
        self.status_backing_store.start()

    def stop_services(self) -> None:
        # By now the subclass has stopped every connector and task, so no status is written after
        # the store stops.
        self.status_backing_store.stop()
        self.worker.stop()

    # ---- the status listeners: a connector's id is its name, a task's its ConnectorTaskId ----

    def _status(self, id: str | ConnectorTaskId, state: State, trace: str | None = None) -> Any:
        kind = TaskStatus if isinstance(id, ConnectorTaskId) else ConnectorStatus
        return kind(id, state, self.worker_id, self.generation(), trace)

    def on_startup(self, id: str | ConnectorTaskId) -> None:
        self.status_backing_store.put(self._status(id, State.RUNNING))

    def on_pause(self, id: str | ConnectorTaskId) -> None:
        self.status_backing_store.put(self._status(id, State.PAUSED))

    def on_resume(self, id: str | ConnectorTaskId) -> None:
        self.status_backing_store.put(self._status(id, State.RUNNING))

    # The two states written on the way out go through put_safe: after a rebalance the next owner
    # may already have written RUNNING under a newer generation, and this worker's late report must
    # not hide it.
    def on_shutdown(self, id: str | ConnectorTaskId) -> None:
        self.status_backing_store.put_safe(self._status(id, State.UNASSIGNED))

    def on_failure(self, id: str | ConnectorTaskId, cause: BaseException) -> None:
        self.status_backing_store.put_safe(self._status(id, State.FAILED, trace(cause)))

    def on_deletion(self, conn_name: str) -> None:
        """A deleted connector's statuses, and its tasks', become DESTROYED (the store drops them)."""
        for status in self.status_backing_store.get_all(conn_name):
            self.status_backing_store.put(self._status(status.id, State.DESTROYED))
        self.status_backing_store.put(self._status(conn_name, State.DESTROYED))

    # ---- statuses ----

    def connector_status(self, conn_name: str) -> ConnectorStateInfo:
        # From the store, which every worker of the group reads: any worker answers for any connector.
        connector_status = self.status_backing_store.get_connector(conn_name)
        if connector_status is None:
            raise NotFoundException(f"No status found for connector {conn_name}")
        tasks = [
            TaskState(status.state.value, status.worker_id, status.trace, id=status.id.task)
            for status in self.status_backing_store.get_all(conn_name)
        ]
        tasks.sort(key=lambda t: t.id)
        state = ConnectorState(
            connector_status.state.value, connector_status.worker_id, connector_status.trace
        )
        return ConnectorStateInfo(conn_name, state, tasks)

    def task_status(self, id: ConnectorTaskId) -> TaskState:
        status = self.status_backing_store.get(id)
        if status is None:
            raise NotFoundException(f"No status found for task {id}")
        return TaskState(status.state.value, status.worker_id, status.trace, id=id.task)

    # ---- plugins and validation ----

    def connector_plugins(self) -> list[ConnectorPluginInfo]:
        plugins = []
        for class_name, cls in sorted(connector_factory.CONNECTORS.items()):
            kind = "sink" if issubclass(cls, SinkConnector) else "source"
            plugins.append(ConnectorPluginInfo(class_name, kind, cls().version()))
        return plugins

    def get_connector(self, conn_type: str) -> Connector:
        """One instance per connector class, kept: validating a config starts nothing."""
        if conn_type not in self.temp_connectors:
            try:
                self.temp_connectors[conn_type] = connector_factory.new_connector(conn_type)
            except ConnectException as e:
                raise BadRequestException(str(e)) from e
        return self.temp_connectors[conn_type]

    def validate_connector_config(self, connector_config: dict[str, str]) -> ConfigInfos:
        conn_type = connector_config.get(CONNECTOR_CLASS_CONFIG)
        if conn_type is None:
            raise BadRequestException(f"Connector config {connector_config} contains no connector type")
        connector = self.get_connector(conn_type)
        base = SINK_CONNECTOR_CONFIG_DEF if isinstance(connector, SinkConnector) else CONNECTOR_CONFIG_DEF
        # The definition grows with the config's own transforms: each alias's type and settings.
        enriched = enrich(base, connector_config, require_full_config=False)
        config_keys: dict[str, ConfigKey] = dict(enriched.keys)
        config_values = list(enriched.validate_all(connector_config).values())
        # Then the connector's own settings (a file source's ``file``, a sink's table names), so a
        # user interface shows the worker's settings and the connector's in one list.
        connector_def: ConfigDef = connector.config()
        config_keys.update(connector_def.keys)
        config_values += connector_def.validate_all(connector_config).values()
        return generate_result(conn_type, config_keys, config_values, [])

    def maybe_add_config_errors(self, config_infos: ConfigInfos, callback: Callback) -> bool:
        """Answer ``callback`` with a 400 listing every error, if there is one; True if there was."""
        if config_infos.error_count == 0:
            return False
        messages = [
            f"Connector configuration is invalid and contains the following {config_infos.error_count} error(s):"
        ]
        for info in config_infos.configs:
            if info.value is not None:
                messages += info.value.errors
        messages.append(
            "You can also find the above list of errors at the endpoint `/{connectorType}/config/validate`"
        )
        callback(BadRequestException("\n".join(messages)), None)
        return True


def generate_result(
    conn_type: str, config_keys: dict[str, ConfigKey], config_values: list[ConfigValue], groups: list[str]
) -> ConfigInfos:
    """Each defined setting with its value and errors, and the count of errors."""
    values = {value.name: value for value in config_values}
    error_count = 0
    infos = []
    for name, key in config_keys.items():
        value_info = None
        if name in values:
            value = values[name]
            value_info = ConfigValueInfo(
                name, convert_to_string(value.value, key.type), errors=list(value.errors)
            )
            error_count += len(value.errors)
        infos.append(ConfigInfo(convert_config_key(key), value_info))
    return ConfigInfos(conn_type, error_count, groups, infos)


def convert_config_key(key: ConfigKey) -> ConfigKeyInfo:
    default = None if key.required else convert_to_string(key.default, key.type)
    return ConfigKeyInfo(key.name, key.type.name, key.required, default, key.importance.name, key.doc)


def convert_to_string(value: Any, type: Type) -> str | None:
    """A value as a properties file would give it (Kafka's ``ConfigDef.convertToString``)."""
    if value is None:
        return None
    if type is Type.LIST:
        return ",".join(str(item) for item in value)
    if type is Type.BOOLEAN:
        return "true" if value else "false"
    return str(value)


def trace(cause: BaseException) -> str:
    """The stack trace a FAILED status carries (Kafka's ``printStackTrace``)."""
    return "".join(traceback.format_exception(cause))
