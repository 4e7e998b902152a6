"""The standalone herder: decides what the one worker runs, from the connector configs it is given.

Mirrors: org.apache.kafka.connect.runtime.standalone.StandaloneHerder and
         org.apache.kafka.connect.runtime.HerderConnectorContext
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/standalone/StandaloneHerder.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: configs are held in a dict (Kafka's ``MemoryConfigBackingStore``) and statuses on the
         worker's objects (Kafka's ``MemoryStatusBackingStore``); a config is validated before
         anything starts (``validate_connector_config``), so a bad one is refused, not FAILED.

A *herder* keeps the worker's running connectors and tasks equal to the configs it holds. In
distributed mode that is a group of workers agreeing through Kafka; here it is one process and
one lock. ``put_connector_config`` starts the connector, asks it for task configs and starts a
task for each; a connector's ``request_task_reconfiguration`` stops its tasks and starts them
from new configs. ``stop`` stops every task (each commits its offsets on the way out), then every
connector, then the worker.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kafka_lite.connect.connector.connector import ConnectorContext
from kafka_lite.connect.errors import AlreadyExistsException, ConnectException, NotFoundException
from kafka_lite.connect.runtime import connector_factory
from kafka_lite.connect.runtime.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    NAME_CONFIG,
    TASKS_MAX_CONFIG,
    TOPICS_CONFIG,
    ConnectorConfig,
    SinkConnectorConfig,
)
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.sink.sink_connector import SinkConnector
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

log = logging.getLogger(__name__)


class HerderConnectorContext(ConnectorContext):
    def __init__(self, herder: StandaloneHerder, conn_name: str) -> None:
        self.herder = herder
        self.conn_name = conn_name

    def request_task_reconfiguration(self) -> None:
        self.herder.request_task_reconfiguration(self.conn_name)

    def raise_error(self, e: Exception) -> None:
        log.error("Connector %s raised an error", self.conn_name, exc_info=e)


def validate_connector_config(config: dict[str, str]) -> dict[str, Any]:
    """The config parsed by the worker's definitions and the connector's own ``config()``; a missing
    or bad setting, or an unknown connector class, raises ``ConfigException``/``ConnectException``."""
    parsed = ConnectorConfig(config).values
    connector = connector_factory.new_connector(parsed[CONNECTOR_CLASS_CONFIG])
    if isinstance(connector, SinkConnector):
        parsed = SinkConnectorConfig(config).values
    return {**connector.validate(config), **parsed}


class StandaloneHerder:
    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.configs: dict[str, dict[str, str]] = {}  # connector name -> its config
        self.task_configs: dict[str, list[dict[str, Any]]] = {}  # connector name -> its tasks' configs
        self._lock = threading.RLock()  # Kafka's methods are synchronized

    def start(self) -> None:
        log.info("Herder starting")
        self.worker.start()
        log.info("Herder started")

    def stop(self) -> None:
        log.info("Herder stopping")
        with self._lock:
            # The tasks first, so that they commit while their connector still exists.
            for conn_name in list(self.configs):
                self._remove_connector_tasks(conn_name)
                self.worker.stop_connector(conn_name)
            self.configs.clear()
            self.worker.stop()
        log.info("Herder stopped")

    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(self.configs)

    def connector_info(self, conn_name: str) -> dict[str, Any]:
        with self._lock:
            if conn_name not in self.configs:
                raise NotFoundException(f"Connector {conn_name} not found")
            tasks = [
                {"connector": conn_name, "task": i} for i in range(len(self.task_configs.get(conn_name, [])))
            ]
            return {"name": conn_name, "config": dict(self.configs[conn_name]), "tasks": tasks}

    def task_states(self, conn_name: str) -> dict[ConnectorTaskId, str]:
        with self._lock:
            return {
                id: task.state.value for id, task in self.worker.tasks.items() if id.connector == conn_name
            }

    def put_connector_config(
        self, conn_name: str, config: dict[str, str], allow_replace: bool = False
    ) -> bool:
        """Run the connector of ``config``; True if it is new, False if it replaced a running one."""
        with self._lock:
            validate_connector_config(config)
            if config.get(NAME_CONFIG) != conn_name:
                raise ConnectException(f"Connector name {config.get(NAME_CONFIG)} does not match {conn_name}")
            created = conn_name not in self.configs
            if not created:
                if not allow_replace:
                    raise AlreadyExistsException(f"Connector {conn_name} already exists")
                self._remove_connector_tasks(conn_name)
                self.worker.stop_connector(conn_name)
            self.configs[conn_name] = dict(config)
            if self._start_connector(conn_name):
                self._update_connector_tasks(conn_name)
            return created

    def delete_connector_config(self, conn_name: str) -> None:
        with self._lock:
            if conn_name not in self.configs:
                raise NotFoundException(f"Connector {conn_name} not found")
            self._remove_connector_tasks(conn_name)
            self.worker.stop_connector(conn_name)
            del self.configs[conn_name]

    def request_task_reconfiguration(self, conn_name: str) -> None:
        with self._lock:
            if not self.worker.is_running(conn_name):
                log.error("Task that requested reconfiguration does not exist: %s", conn_name)
                return
            self._update_connector_tasks(conn_name)

    def _start_connector(self, conn_name: str) -> bool:
        ctx = HerderConnectorContext(self, conn_name)
        return self.worker.start_connector(conn_name, self.configs[conn_name], ctx)

    def _recompute_task_configs(self, conn_name: str) -> list[dict[str, Any]]:
        config = ConnectorConfig(self.configs[conn_name])
        sink_topics = None
        if self.worker.is_sink_connector(conn_name):
            sink_topics = SinkConnectorConfig(self.configs[conn_name]).get(TOPICS_CONFIG)
        return self.worker.connector_task_configs(conn_name, config.get(TASKS_MAX_CONFIG), sink_topics)

    def _create_connector_tasks(self, conn_name: str) -> None:
        for index, task_config in enumerate(self.task_configs[conn_name]):
            self.worker.start_task(ConnectorTaskId(conn_name, index), self.configs[conn_name], task_config)

    def _remove_connector_tasks(self, conn_name: str) -> None:
        ids = [ConnectorTaskId(conn_name, i) for i in range(len(self.task_configs.pop(conn_name, [])))]
        if ids:
            self.worker.stop_and_await_tasks(ids)

    def _update_connector_tasks(self, conn_name: str) -> None:
        if not self.worker.is_running(conn_name):
            log.info("Skipping reconfiguration of connector %s since it is not running", conn_name)
            return
        new_task_configs = self._recompute_task_configs(conn_name)
        if new_task_configs != self.task_configs.get(conn_name):
            self._remove_connector_tasks(conn_name)
            self.task_configs[conn_name] = new_task_configs
            self._create_connector_tasks(conn_name)
