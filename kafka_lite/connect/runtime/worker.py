"""The worker: creates connectors and tasks, gives each task its converters, producer or consumer.

Mirrors: org.apache.kafka.connect.runtime.Worker
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/Worker.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: no plugin class loaders (kafka_lite's connectors are found by ``connector_factory``).

The worker does what it is told; which connectors and tasks run is the herder's decision. For a
source task it builds a producer with Kafka's no-data-loss settings (``acks=all``, retries
without limit, one request in flight, blocking instead of dropping), an offset reader and an
offset writer over the shared offset store, and schedules the task's offset commits. A sink task
builds its own consumer. Each task gets the worker's converters unless its connector's config
names its own (``key.converter``, ``value.converter``), and a transformation chain of its own,
new instances of the transformations its connector's ``transforms`` lists.

Each connector and task is started with a status listener (the herder, which records every
change in its status store) and an initial target state; ``set_target_state`` later pauses or
resumes a connector and all of its tasks in this worker. A connector or task that cannot even be
created is reported to its listener as FAILED, and ``start_connector``/``start_task`` answer False.
"""

from __future__ import annotations

import logging
from typing import Any

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.utils import INT32_MAX
from kafka_lite.connect.errors import ConnectException
from kafka_lite.connect.runtime import connector_factory
from kafka_lite.connect.runtime.abstract_status import ConnectorStatus, TaskStatus
from kafka_lite.connect.runtime.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    KEY_CONVERTER_CLASS_CONFIG,
    TASK_CLASS_CONFIG,
    VALUE_CONVERTER_CLASS_CONFIG,
    ConnectorConfig,
)
from kafka_lite.connect.runtime.source_task_offset_committer import SourceTaskOffsetCommitter
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.transformation_chain import TransformationChain
from kafka_lite.connect.runtime.worker_config import (
    BOOTSTRAP_SERVERS_CONFIG,
    INTERNAL_KEY_CONVERTER_CLASS_CONFIG,
    INTERNAL_VALUE_CONVERTER_CLASS_CONFIG,
    TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG,
    WorkerConfig,
)
from kafka_lite.connect.runtime.worker_connector import WorkerConnector
from kafka_lite.connect.runtime.worker_sink_task import WorkerSinkTask
from kafka_lite.connect.runtime.worker_source_task import WorkerSourceTask
from kafka_lite.connect.runtime.worker_task import WorkerTask
from kafka_lite.connect.sink.sink_task import TOPICS_CONFIG, SinkTask
from kafka_lite.connect.source.source_task import SourceTask
from kafka_lite.connect.storage.converter import Converter
from kafka_lite.connect.storage.offset_backing_store import OffsetBackingStore
from kafka_lite.connect.storage.offset_storage_reader import OffsetStorageReaderImpl
from kafka_lite.connect.storage.offset_storage_writer import OffsetStorageWriter
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.producer.kafka_producer import KafkaProducer

log = logging.getLogger(__name__)

LONG_MAX = 2**63 - 1  # Java's Long.MAX_VALUE: Kafka's "block for ever"


class Worker:
    """A container of connectors and tasks, each task on a thread of its own: the worker starts and
    stops what the herder names, and decides nothing about where anything runs."""

    def __init__(
        self,
        worker_id: str,
        config: WorkerConfig,
        offset_backing_store: OffsetBackingStore,
        time: Time = SYSTEM,
    ) -> None:
        self.worker_id = worker_id
        self.time = time
        self.config = config
        # The converters a connector's records go through unless its config names its own. The
        # internal ones serialize what the worker itself stores (offsets, configs, statuses), whatever
        # format users pick for their data, so that every worker of a group reads the others' writes.
        self.default_key_converter = self._converter(
            config.get("key.converter"), config, "key.converter.", True
        )
        self.default_value_converter = self._converter(
            config.get("value.converter"), config, "value.converter.", False
        )
        self.internal_key_converter = self._converter(
            config.get(INTERNAL_KEY_CONVERTER_CLASS_CONFIG), config, "internal.key.converter.", True)  # fmt: skip
        self.internal_value_converter = self._converter(
            config.get(INTERNAL_VALUE_CONVERTER_CLASS_CONFIG), config, "internal.value.converter.", False)  # fmt: skip
        # One store for all the source tasks of this worker, each writing under its connector's name.
        self.offset_backing_store = offset_backing_store
        self.offset_backing_store.configure(config.values)
        self.producer_props: dict[str, Any] = {
            "bootstrap.servers": ",".join(config.get(BOOTSTRAP_SERVERS_CONFIG)),
            # Designed so that no record is lost; overridable with producer.*, at that cost.
            "request.timeout.ms": INT32_MAX,
            "retries": INT32_MAX,
            "max.block.ms": LONG_MAX,
            "acks": "all",
            "max.in.flight.requests.per.connection": 1,
            **config.originals_with_prefix("producer."),
        }
        self.connectors: dict[str, WorkerConnector] = {}
        self.tasks: dict[ConnectorTaskId, WorkerTask] = {}
        # Created in start(), whose thread commits every source task's offsets on a timer; a sink
        # task commits on its own thread, its consumer not being safe to share.
        self.source_task_offset_committer: SourceTaskOffsetCommitter | None = None

    @staticmethod
    def _converter(name: str, config: Any, prefix: str, is_key: bool) -> Converter:
        # A converter is told whether it serves keys or values: some (a schema registry's) store the two
        # halves' schemas apart, under different subjects.
        converter = connector_factory.new_converter(name)
        converter.configure(config.originals_with_prefix(prefix), is_key)
        return converter

    def start(self) -> None:
        log.info("Worker starting")
        # Before any task: a source task reads its last offsets in its start().
        self.offset_backing_store.start()
        self.source_task_offset_committer = SourceTaskOffsetCommitter(self.config, self.time)
        log.info("Worker started")

    def stop(self) -> None:
        log.info("Worker stopping")
        limit = self.time.milliseconds() + self.config.get(TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG)
        # Stopping connectors and tasks is the herder's job, which also records their statuses; what is
        # left here is stopped so the process can exit, and the warning says the herder missed it.
        if self.connectors:
            log.warning("Shutting down connectors %s uncleanly; herder should have shut down connectors "
                        "before the Worker is stopped", sorted(self.connectors))  # fmt: skip
            self.stop_connectors()
        if self.tasks:
            log.warning("Shutting down tasks %s uncleanly; herder should have shut down tasks before the "
                        "Worker is stopped", sorted(map(str, self.tasks)))  # fmt: skip
            self.stop_and_await_tasks()
        # After the tasks, whose last commits may still need the store; within what is left of the
        # one graceful timeout, so a stuck commit cannot hold the worker's shutdown for ever.
        self.source_task_offset_committer.close(limit - self.time.milliseconds())
        self.offset_backing_store.stop()
        log.info("Worker stopped")

    # ---- connectors ----

    def start_connector(
        self,
        conn_name: str,
        conn_props: dict[str, str],
        ctx: Any,
        status_listener: ConnectorStatus.Listener,
        initial_state: TargetState,
    ) -> bool:
        """Create the connector and move it to ``initial_state``; False if it could not be created."""
        if conn_name in self.connectors:
            raise ConnectException(f"Connector with name {conn_name} already exists")
        # A connector that cannot be created or started is reported FAILED and kept out of
        # self.connectors: the herder goes on with the rest, and a restart may succeed later.
        try:
            conn_class = ConnectorConfig(conn_props).get(CONNECTOR_CLASS_CONFIG)
            log.info("Creating connector %s of type %s", conn_name, conn_class)
            connector = connector_factory.new_connector(conn_class)
            worker_connector = WorkerConnector(conn_name, connector, ctx, status_listener)
            log.info("Instantiated connector %s with version %s of type %s", conn_name, connector.version(),
                     type(connector).__name__)  # fmt: skip
            worker_connector.initialize(conn_props)
            worker_connector.transition_to(initial_state)
        except Exception as e:
            log.error("Failed to start connector %s", conn_name, exc_info=True)
            status_listener.on_failure(conn_name, e)
            return False
        self.connectors[conn_name] = worker_connector
        log.info("Finished creating connector %s", conn_name)
        return True

    def is_sink_connector(self, conn_name: str) -> bool:
        return self.connectors[conn_name].is_sink_connector()

    def connector_task_configs(
        self, conn_name: str, max_tasks: int, sink_topics: list[str] | None
    ) -> list[dict]:
        """The connector's task configs, each with its task class and (for a sink) its topics."""
        worker_connector = self.connectors.get(conn_name)
        if worker_connector is None:
            raise ConnectException(f"Connector {conn_name} not found in this worker.")
        connector = worker_connector.connector
        result = []
        for task_props in connector.task_configs(max_tasks):
            task_config = dict(task_props)  # the connector's copy stays as it was
            # The task class travels in the config, so that any worker of the group can start the task
            # from the config topic alone, without the connector.
            task_config[TASK_CLASS_CONFIG] = connector.task_class()
            # A sink task subscribes to the connector's topics; the connector need not repeat them.
            if sink_topics is not None:
                task_config[TOPICS_CONFIG] = ",".join(sink_topics)
            result.append(task_config)
        return result

    def stop_connectors(self) -> None:
        for name in list(self.connectors):
            self.stop_connector(name)

    def stop_connector(self, conn_name: str) -> bool:
        log.info("Stopping connector %s", conn_name)
        worker_connector = self.connectors.pop(conn_name, None)
        if worker_connector is None:
            log.warning("Ignoring stop request for unowned connector %s", conn_name)
            return False
        worker_connector.shutdown()
        log.info("Stopped connector %s", conn_name)
        return True

    def connector_names(self) -> set[str]:
        return set(self.connectors)

    def is_running(self, conn_name: str) -> bool:
        connector = self.connectors.get(conn_name)
        return connector is not None and connector.is_running()

    def set_target_state(self, conn_name: str, state: TargetState) -> None:
        """Pause or resume the connector and every task of it that runs in this worker."""
        log.info("Setting connector %s state to %s", conn_name, state.value)
        worker_connector = self.connectors.get(conn_name)
        if worker_connector is not None:
            worker_connector.transition_to(state)
        # The target state is per connector: its tasks follow it, each pausing on its own thread.
        for id, worker_task in list(self.tasks.items()):
            if id.connector == conn_name:
                worker_task.transition_to(state)

    # ---- tasks ----

    def start_task(
        self,
        id: ConnectorTaskId,
        conn_props: dict[str, str],
        task_props: dict[str, Any],
        status_listener: TaskStatus.Listener,
        initial_state: TargetState,
    ) -> bool:
        """Create the task and start its thread; False (and FAILED reported) if it could not be created."""
        log.info("Creating task %s", id)
        # A task runs once per worker: a restart is a stop that has been awaited, then a start.
        if id in self.tasks:
            raise ConnectException(f"Task already exists in this worker: {id}")
        try:
            conn_config = ConnectorConfig(conn_props)
            task_class = task_props[TASK_CLASS_CONFIG]
            task = task_class()  # the connector's SourceTask or SinkTask; worker_task below runs it
            log.info(
                "Instantiated task %s with version %s of type %s", id, task.version(), task_class.__name__
            )
            # A connector may name its own converters: one connector's topic may hold JSON while
            # another's holds plain strings, on the same worker.
            key_converter = self.default_key_converter
            if conn_config.get(KEY_CONVERTER_CLASS_CONFIG) is not None:
                key_converter = self._converter(
                    conn_config.get(KEY_CONVERTER_CLASS_CONFIG), conn_config, "key.converter.", True
                )
            value_converter = self.default_value_converter
            if conn_config.get(VALUE_CONVERTER_CLASS_CONFIG) is not None:
                value_converter = self._converter(
                    conn_config.get(VALUE_CONVERTER_CLASS_CONFIG), conn_config, "value.converter.", False)  # fmt: skip
            worker_task = self._build_worker_task(
                conn_config, id, task, status_listener, initial_state, key_converter, value_converter
            )
            worker_task.initialize({k: v for k, v in task_props.items() if k != TASK_CLASS_CONFIG})
        except Exception as e:
            log.error("Failed to start task %s", id, exc_info=True)
            status_listener.on_failure(id, e)
            return False
        self.tasks[id] = worker_task
        worker_task.start()
        # A source task's offsets are committed on the committer's timer; a sink task's in its own loop.
        if isinstance(worker_task, WorkerSourceTask):
            self.source_task_offset_committer.schedule(id, worker_task)
        return True

    def _build_worker_task(
        self,
        conn_config: ConnectorConfig,
        id: ConnectorTaskId,
        task: Any,
        status_listener: TaskStatus.Listener,
        initial_state: TargetState,
        key_converter: Converter,
        value_converter: Converter,
    ) -> WorkerTask:
        # Each task gets its own transformation instances: a transformation keeps state (a schema
        # cache) and is called on the task's thread only.
        if isinstance(task, SourceTask):
            transformation_chain = TransformationChain(conn_config.transformations())
            offset_reader = OffsetStorageReaderImpl(self.offset_backing_store, id.connector,
                                                    self.internal_key_converter, self.internal_value_converter)  # fmt: skip
            offset_writer = OffsetStorageWriter(self.offset_backing_store, id.connector,
                                                self.internal_key_converter, self.internal_value_converter)  # fmt: skip
            # A producer per task: its client id names the task, and closing it when the task stops
            # waits for that task's records only.
            producer = KafkaProducer(client_id=f"connect-{id}", **self.producer_props)
            return WorkerSourceTask(id, task, status_listener, initial_state, key_converter, value_converter,
                                    transformation_chain, producer, offset_reader, offset_writer, self.config,
                                    self.time)  # fmt: skip
        if isinstance(task, SinkTask):
            transformation_chain = TransformationChain(conn_config.transformations())
            return WorkerSinkTask(id, task, status_listener, initial_state, self.config, key_converter,
                                  value_converter, transformation_chain, self.time)  # fmt: skip
        raise ConnectException("Tasks must be a subclass of either SourceTask or SinkTask")

    def stop_tasks(self, ids: list[ConnectorTaskId]) -> None:
        for id in ids:
            self._stop_task(id)

    def _stop_task(self, id: ConnectorTaskId) -> None:
        worker_task = self.tasks.get(id)
        if worker_task is None:
            log.warning("Ignoring stop request for unowned task %s", id)
            return
        log.info("Stopping task %s", id)
        # Off the timer first (remove waits for a commit under way): the task commits one last time
        # as it stops, and two commits of one task must not overlap.
        if isinstance(worker_task, WorkerSourceTask):
            self.source_task_offset_committer.remove(id)
        worker_task.stop()

    def await_stop_tasks(self, ids: list[ConnectorTaskId]) -> None:
        """Wait for the tasks to finish, within ``task.shutdown.graceful.timeout.ms`` in all."""
        # One deadline for all: the tasks were all asked to stop first (stop_tasks), so they wind
        # down together, and a rebalance waits one timeout however many tasks this worker had.
        limit = self.time.milliseconds() + self.config.get(TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG)
        for id in ids:
            worker_task = self.tasks.pop(id, None)
            if worker_task is not None and not worker_task.await_stop(limit - self.time.milliseconds()):
                log.error("Graceful stop of task %s failed.", id)
                worker_task.cancel()  # it reports nothing more: it may be started again meanwhile

    def stop_and_await_task(self, id: ConnectorTaskId) -> None:
        self.stop_and_await_tasks([id])

    def stop_and_await_tasks(self, ids: list[ConnectorTaskId] | None = None) -> None:
        ids = list(self.tasks) if ids is None else ids
        self.stop_tasks(ids)
        self.await_stop_tasks(ids)

    def task_ids(self) -> set[ConnectorTaskId]:
        return set(self.tasks)
