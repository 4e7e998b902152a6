"""The standalone herder: decides what the one worker runs, from the connector configs it is given.

Mirrors: org.apache.kafka.connect.runtime.standalone.StandaloneHerder and
         org.apache.kafka.connect.runtime.HerderConnectorContext
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/standalone/StandaloneHerder.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: configs, task configs and target states are held in dicts (Kafka's
         ``MemoryConfigBackingStore`` and its ``ClusterConfigState`` snapshot); a restart of an
         unknown connector or task answers NotFound and stops there.

A *herder* keeps the worker's running connectors and tasks equal to the configs it holds. In
distributed mode that is a group of workers agreeing through Kafka; here it is one process and
one lock (Kafka's methods are ``synchronized``), and every callback is called before the method
returns. ``put_connector_config`` validates the config (a bad one is refused whole, with every
error), starts the connector, asks it for task configs and starts a task for each; a connector's
``request_task_reconfiguration`` restarts its tasks only if their configs changed. Pausing sets
the connector's target state and tells the worker, which pauses the connector and its tasks;
resuming also recomputes the task configs, as the connector was stopped meanwhile. ``stop``
stops every task (each commits its offsets on the way out), then every connector, then the worker.
Statuses go to a ``MemoryStatusBackingStore`` through the listeners of ``AbstractHerder``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kafka_lite.connect.connector.connector import ConnectorContext
from kafka_lite.connect.errors import AlreadyExistsException, ConnectException, NotFoundException
from kafka_lite.connect.runtime.abstract_herder import AbstractHerder
from kafka_lite.connect.runtime.connector_config import (
    NAME_CONFIG,
    TASK_CLASS_CONFIG,
    TASKS_MAX_CONFIG,
    TOPICS_CONFIG,
    ConnectorConfig,
    SinkConnectorConfig,
)
from kafka_lite.connect.runtime.herder import Created
from kafka_lite.connect.runtime.rest.entities import ConnectorInfo, TaskInfo
from kafka_lite.connect.runtime.rest.errors.connect_rest_exception import BadRequestException
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.worker import Worker
from kafka_lite.connect.storage.memory_status_backing_store import MemoryStatusBackingStore
from kafka_lite.connect.storage.status_backing_store import StatusBackingStore
from kafka_lite.connect.util.callback import Callback
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

log = logging.getLogger(__name__)


class HerderConnectorContext(ConnectorContext):
    """What a running connector may ask of its herder: new task configs when what it watches
    changes (a file added, a table created), without a user's request."""

    def __init__(self, herder: StandaloneHerder, conn_name: str) -> None:
        self.herder = herder
        self.conn_name = conn_name

    def request_task_reconfiguration(self) -> None:
        self.herder.request_task_reconfiguration(self.conn_name)

    def raise_error(self, e: Exception) -> None:
        # The connector is FAILED already: WorkerConnector's context, which passes the error on to
        # this one, reported it to the herder first. (Kafka's writes the same FAILED status again.)
        log.error("Connector %s raised an error", self.conn_name, exc_info=e)


class StandaloneHerder(AbstractHerder):
    def __init__(self, worker: Worker, status_backing_store: StatusBackingStore | None = None) -> None:
        super().__init__(worker, worker.worker_id, status_backing_store or MemoryStatusBackingStore())
        self.connector_configs: dict[str, dict[str, str]] = {}  # connector name -> its config
        self.connector_task_configs: dict[str, list[dict[str, Any]]] = {}  # name -> its tasks' configs
        # Kept apart from the configs: a pause is not a config change, so it neither stops the
        # connector nor recomputes its tasks.
        self.target_states: dict[str, TargetState] = {}
        # Reentrant: a connector started under the lock may call request_task_reconfiguration from
        # its start(), on this same thread.
        self._lock = threading.RLock()

    def start(self) -> None:
        log.info("Herder starting")
        # The offset and status stores before any connector: a task reads its offsets as it starts.
        with self._lock:
            self.start_services()
        log.info("Herder started")

    def stop(self) -> None:
        log.info("Herder stopping")
        with self._lock:
            # The tasks first, so that they commit while their connector still exists.
            for conn_name in list(self.connector_configs):
                self._remove_connector_tasks(conn_name)
                self.worker.stop_connector(conn_name)
            self.stop_services()
        log.info("Herder stopped")

    def generation(self) -> int:
        return 0  # one worker: no group, no generations

    # Every request below answers its callback before returning: there is no herder thread to wait
    # for and no other worker to forward to, so the REST layer's wait ends at once.

    # ---- reading the configs ----

    def connectors(self, callback: Callback) -> None:
        with self._lock:
            callback(None, sorted(self.connector_configs))

    def connector_info(self, conn_name: str, callback: Callback) -> None:
        with self._lock:
            info = self._create_connector_info(conn_name)
        if info is None:
            callback(NotFoundException(f"Connector {conn_name} not found"), None)
        else:
            callback(None, info)

    def _create_connector_info(self, conn_name: str) -> ConnectorInfo | None:
        if conn_name not in self.connector_configs:
            return None
        return ConnectorInfo(conn_name, dict(self.connector_configs[conn_name]), self._task_ids(conn_name))

    def _task_ids(self, conn_name: str) -> list[ConnectorTaskId]:
        return [
            ConnectorTaskId(conn_name, i) for i in range(len(self.connector_task_configs.get(conn_name, [])))
        ]

    def connector_config(self, conn_name: str, callback: Callback) -> None:
        # Through connector_info, as Kafka's does: one place decides what "not found" means.
        def on_info(error: BaseException | None, info: ConnectorInfo | None) -> None:
            callback(error, None if error is not None else info.config)

        self.connector_info(conn_name, on_info)

    def task_configs(self, conn_name: str, callback: Callback) -> None:
        with self._lock:
            if conn_name not in self.connector_configs:
                callback(NotFoundException(f"Connector {conn_name} not found"), None)
                return
            result = [
                TaskInfo(ConnectorTaskId(conn_name, i), task_config_strings(config))
                for i, config in enumerate(self.connector_task_configs.get(conn_name, []))
            ]
        callback(None, result)

    # ---- writing them ----

    def put_connector_config(
        self, conn_name: str, config: dict[str, str] | None, allow_replace: bool, callback: Callback
    ) -> None:
        with self._lock:
            try:
                if config is None:
                    raise BadRequestException(f"Connector {conn_name} has no config")
                if config.get(NAME_CONFIG) != conn_name:
                    raise BadRequestException(
                        f"Connector name configuration ({config.get(NAME_CONFIG)}) doesn't match connector "
                        f"name {conn_name}"
                    )
                # Validated before anything is stopped: a bad config leaves the running connector alone.
                if self.maybe_add_config_errors(self.validate_connector_config(config), callback):
                    return
                created = conn_name not in self.connector_configs
                if not created:
                    if not allow_replace:
                        callback(AlreadyExistsException(f"Connector {conn_name} already exists"), None)
                        return
                    # A replaced config restarts the connector; its tasks are restarted below only if
                    # the configs it generates from the new one differ.
                    self.worker.stop_connector(conn_name)
                if not self._start_connector(config):
                    callback(ConnectException(f"Failed to start connector: {conn_name}"), None)
                    return
                self._update_connector_tasks(conn_name)
                info = self._create_connector_info(conn_name)
            except ConnectException as e:
                callback(e, None)
                return
        callback(None, Created(created, info))

    def delete_connector_config(self, conn_name: str, callback: Callback) -> None:
        with self._lock:
            try:
                if conn_name not in self.connector_configs:
                    callback(NotFoundException(f"Connector {conn_name} not found"), None)
                    return
                # Tasks before the connector, as in stop(); then the statuses go, so a connector later
                # created under the same name does not show the old one's tasks.
                self._remove_connector_tasks(conn_name)
                self.worker.stop_connector(conn_name)
                del self.connector_configs[conn_name]
                self.target_states.pop(conn_name, None)
                self.on_deletion(conn_name)
            except ConnectException as e:
                callback(e, None)
                return
        callback(None, Created(False, None))

    def put_task_configs(self, conn_name: str, configs: list[dict[str, str]], callback: Callback) -> None:
        # This route exists for a distributed follower to hand its task configs to the leader; a
        # standalone worker generates and holds its own.
        # Java's UnsupportedOperationException: the REST API answers it with 500.
        raise NotImplementedError(
            "Kafka Connect in standalone mode does not support externally setting task configurations."
        )

    def request_task_reconfiguration(self, conn_name: str) -> None:
        with self._lock:
            if conn_name not in self.worker.connector_names():
                log.error("Task that requested reconfiguration does not exist: %s", conn_name)
                return
            self._update_connector_tasks(conn_name)

    # ---- restarts and target states ----

    def restart_task(self, id: ConnectorTaskId, callback: Callback) -> None:
        with self._lock:
            if id.connector not in self.connector_configs:
                callback(NotFoundException(f"Connector {id.connector} not found"), None)
                return
            task_configs = self.connector_task_configs.get(id.connector, [])
            if not 0 <= id.task < len(task_configs):
                callback(NotFoundException(f"Task {id} not found"), None)
                return
            # Awaited, not just asked: the old instance must have committed and closed its producer
            # or consumer before the new one starts from those offsets.
            self.worker.stop_and_await_task(id)
            started = self.worker.start_task(id, self.connector_configs[id.connector], task_configs[id.task],
                                             self, self.target_states[id.connector])  # fmt: skip
        if started:
            callback(None, None)
        else:
            callback(ConnectException(f"Failed to start task: {id}"), None)

    def restart_connector(self, conn_name: str, callback: Callback) -> None:
        with self._lock:
            if conn_name not in self.connector_configs:
                callback(NotFoundException(f"Connector {conn_name} not found"), None)
                return
            # The connector only: its tasks keep running, as in Kafka; each is restarted on its own
            # (restart_task).
            self.worker.stop_connector(conn_name)
            started = self._start_connector(self.connector_configs[conn_name])
        if started:
            callback(None, None)
        else:
            callback(ConnectException(f"Failed to start connector: {conn_name}"), None)

    def pause_connector(self, conn_name: str) -> None:
        self._put_target_state(conn_name, TargetState.PAUSED)

    def resume_connector(self, conn_name: str) -> None:
        self._put_target_state(conn_name, TargetState.STARTED)

    def _put_target_state(self, conn_name: str, state: TargetState) -> None:
        with self._lock:
            if conn_name not in self.connector_configs:
                raise NotFoundException(f"Unknown connector {conn_name}")
            self.target_states[conn_name] = state
            self.worker.set_target_state(conn_name, state)
            # A paused connector is stopped (WorkerConnector stops it) and watched nothing meanwhile:
            # its task configs may be stale.
            if state is TargetState.STARTED:
                self._update_connector_tasks(conn_name)

    # ---- the worker's side ----

    def _start_connector(self, config: dict[str, str]) -> bool:
        # The config is kept even if the start fails: the connector stays listed, FAILED, and a
        # restart can try again without the config being sent anew.
        conn_name = config[NAME_CONFIG]
        self.connector_configs[conn_name] = dict(config)
        target_state = self.target_states.setdefault(conn_name, TargetState.STARTED)
        ctx = HerderConnectorContext(self, conn_name)
        return self.worker.start_connector(
            conn_name, self.connector_configs[conn_name], ctx, self, target_state
        )

    # The connector decides how many tasks (at most tasks.max) and what each reads: a file source one
    # task for its one file, a database source one per group of tables.
    def _recompute_task_configs(self, conn_name: str) -> list[dict[str, Any]]:
        conn_config = ConnectorConfig(self.connector_configs[conn_name])
        sink_topics = None
        if self.worker.is_sink_connector(conn_name):
            sink_topics = SinkConnectorConfig(self.connector_configs[conn_name]).get(TOPICS_CONFIG)
        return self.worker.connector_task_configs(conn_name, conn_config.get(TASKS_MAX_CONFIG), sink_topics)

    def _create_connector_tasks(self, conn_name: str, initial_state: TargetState) -> None:
        for id, task_config in zip(self._task_ids(conn_name), self.connector_task_configs[conn_name]):
            self.worker.start_task(id, self.connector_configs[conn_name], task_config, self, initial_state)

    def _remove_connector_tasks(self, conn_name: str) -> None:
        ids = self._task_ids(conn_name)
        # All at once and awaited together: each source task commits its offsets on the way out.
        if ids:
            self.worker.stop_and_await_tasks(ids)
            del self.connector_task_configs[conn_name]

    def _update_connector_tasks(self, conn_name: str) -> None:
        if not self.worker.is_running(conn_name):
            log.info("Skipping reconfiguration of connector %s since it is not running", conn_name)
            return
        new_task_configs = self._recompute_task_configs(conn_name)
        # Unchanged configs leave the tasks running: a connector may ask for reconfiguration often,
        # and a restart would cost every task a commit and a start.
        if new_task_configs != self.connector_task_configs.get(conn_name):
            self._remove_connector_tasks(conn_name)
            self.connector_task_configs[conn_name] = new_task_configs
            self._create_connector_tasks(conn_name, self.target_states[conn_name])


def task_config_strings(task_config: dict[str, Any]) -> dict[str, str]:
    """A task config as the REST API shows it: the task class by its name, as Kafka's holds it."""
    config = dict(task_config)
    task_class = config.get(TASK_CLASS_CONFIG)
    if isinstance(task_class, type):
        config[TASK_CLASS_CONFIG] = f"{task_class.__module__}.{task_class.__qualname__}"
    return config
