"""A Streams application instance: its stream threads, its state, and what it answers about its stores.

Mirrors: org.apache.kafka.streams.KafkaStreams (streams/src/main/java/org/apache/kafka/streams/
         KafkaStreams.java, Kafka 0.10.1, with 0.11's states and state listener)
Book:    chapter 9, 9.1.3 (the thread model: an instance, its threads and tasks), 9.1.4 (Interactive Queries over state stores)
Differs: ``local_threads_metadata`` is Kafka 1.0's (KIP-130). The application's state directory is
         locked for the instance's life, as Kafka 2.8 does, so a second instance started on the
         same ``state.dir`` is refused at once with a clear error; 0.10.1 lets it start and fail
         later on a task directory's lock. One ``KafkaAdminClient`` per instance creates the
         internal topics (0.10.2's ``StreamsKafkaClient``).

Streams is a library, not a cluster: an application is a Python process that builds a topology
and hands it to ``KafkaStreams``::

    builder = KStreamBuilder()
    builder.stream("input").filter(...).to("output")
    streams = KafkaStreams(builder, {"application.id": "my-app", "bootstrap.servers": "..."})
    streams.start()        # num.stream.threads threads, each a consumer in group "my-app"
    ...
    streams.close()        # every thread commits, closes its tasks (checkpointing the stores), leaves

To scale out, start the same program again elsewhere: the new instance's threads join the group,
the leader's ``StreamPartitionAssignor`` moves some tasks to them, and their stores follow through
the changelogs. The instance's state (``state()``) follows its threads::

    CREATED -> RUNNING <-> REBALANCING -> PENDING_SHUTDOWN -> NOT_RUNNING
"""

from __future__ import annotations

import enum
import itertools
import logging
import shutil
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.streams.errors import InvalidStateStoreException, StreamsException
from kafka_lite.streams.processor.internals import stream_thread
from kafka_lite.streams.processor.internals.internal_topic_manager import InternalTopicManager
from kafka_lite.streams.processor.internals.stream_partition_assignor import StreamPartitionAssignor
from kafka_lite.streams.processor.internals.stream_thread import StreamThread
from kafka_lite.streams.processor.internals.streams_metadata_state import (
    StreamsMetadata,
    StreamsMetadataState,
)
from kafka_lite.streams.processor.thread_metadata import ThreadMetadata
from kafka_lite.streams.processor.topology_builder import TopologyBuilder
from kafka_lite.streams.serialization import Serializer
from kafka_lite.streams.state.queryable_store_types import QueryableStoreType
from kafka_lite.streams.state.state_directory import LOCK_FILE_NAME, StateDirectory
from kafka_lite.streams.streams_config import (
    APPLICATION_ID_CONFIG,
    BOOTSTRAP_SERVERS_CONFIG,
    CLIENT_ID_CONFIG,
    NUM_STREAM_THREADS_CONFIG,
    REPLICATION_FACTOR_CONFIG,
    STATE_DIR_CONFIG,
    StreamsConfig,
)

log = logging.getLogger(__name__)

_STREAM_CLIENT_ID_SEQUENCE = itertools.count(1)


class State(enum.Enum):
    """An instance's states (Kafka 0.11's ``KafkaStreams.State``)."""

    CREATED = "CREATED"
    RUNNING = "RUNNING"
    REBALANCING = "REBALANCING"
    PENDING_SHUTDOWN = "PENDING_SHUTDOWN"
    NOT_RUNNING = "NOT_RUNNING"

    def is_running(self) -> bool:
        return self in (State.RUNNING, State.REBALANCING)

    def is_valid_transition(self, new_state: State) -> bool:
        return new_state in _VALID_TRANSITIONS[self]


_VALID_TRANSITIONS = {
    State.CREATED: {State.RUNNING, State.REBALANCING, State.PENDING_SHUTDOWN},
    State.RUNNING: {State.REBALANCING, State.PENDING_SHUTDOWN},
    State.REBALANCING: {State.RUNNING, State.PENDING_SHUTDOWN},
    State.PENDING_SHUTDOWN: {State.NOT_RUNNING},
    State.NOT_RUNNING: set(),
}

StateListener = Callable[[State, State], None]  # (new_state, old_state), as Kafka's onChange


class KafkaStreams:
    def __init__(self, builder: TopologyBuilder, props: dict[str, Any], time: Time = SYSTEM) -> None:
        self.config = StreamsConfig(props)
        self.time = time
        # Unique per process run: tells the assignor which threads share a machine (and its state).
        self.process_id = uuid.uuid4()
        self.application_id = self.config[APPLICATION_ID_CONFIG]
        builder.set_application_id(self.application_id)
        self.builder = builder
        client_id = (
            self.config[CLIENT_ID_CONFIG] or f"{self.application_id}-{next(_STREAM_CLIENT_ID_SEQUENCE)}"
        )
        self.log_prefix = f"stream-client [{client_id}]"

        self._state_lock = threading.RLock()
        self._state = State.CREATED
        self.state_listener: StateListener | None = None
        self._thread_states: dict[str, stream_thread.State] = {}

        self.app_dir = Path(self.config[STATE_DIR_CONFIG]) / self.application_id
        self._state_directory: StateDirectory | None = None  # made at start, to hold its lock

        self.admin = KafkaAdminClient(
            self.config[BOOTSTRAP_SERVERS_CONFIG], time=time, **self.config.get_admin_configs(client_id)
        )
        internal_topic_manager = InternalTopicManager(self.admin, self.config[REPLICATION_FACTOR_CONFIG])
        self.streams_metadata_state = StreamsMetadataState(builder)
        self.threads = [
            StreamThread(
                builder,
                self.config,
                self.application_id,
                client_id,
                self.process_id,
                time,
                internal_topic_manager,
            )
            for _ in range(self.config[NUM_STREAM_THREADS_CONFIG])
        ]
        for thread in self.threads:
            thread.state_listener = self._on_thread_state_change
            thread.on_assignment_change = self._on_assignment_change

    # -- state ------------------------------------------------------------------------------------------

    def state(self) -> State:
        return self._state

    def set_state_listener(self, listener: StateListener) -> None:
        """``listener(new_state, old_state)`` on every change, called from the thread that caused it."""
        self.state_listener = listener

    def _set_state(self, new_state: State) -> None:
        with self._state_lock:
            old_state = self._state
            if not old_state.is_valid_transition(new_state):
                log.warning(
                    "%s Unexpected state transition from %s to %s.", self.log_prefix, old_state, new_state
                )
            else:
                log.info("%s State transition from %s to %s.", self.log_prefix, old_state, new_state)
            self._state = new_state
            if self.state_listener is not None:
                self.state_listener(new_state, old_state)

    def _on_thread_state_change(
        self, thread: StreamThread, new_state: stream_thread.State, old_state: stream_thread.State
    ) -> None:
        """0.11's ``StreamStateListener``: rebalancing while any thread is; running when all are."""
        with self._state_lock:
            if new_state is stream_thread.State.DEAD:
                self._thread_states.pop(thread.name, None)
            else:
                self._thread_states[thread.name] = new_state
            if self._state in (State.PENDING_SHUTDOWN, State.NOT_RUNNING):
                return
            rebalancing = (stream_thread.State.PARTITIONS_REVOKED, stream_thread.State.ASSIGNING_PARTITIONS)
            if new_state in rebalancing:
                target = State.REBALANCING
            elif new_state is stream_thread.State.RUNNING and all(
                s is stream_thread.State.RUNNING for s in self._thread_states.values()
            ):
                target = State.RUNNING
            else:
                return
            if self._state is not target:  # a change of the instance's state, not of one thread's
                self._set_state(target)

    def _on_assignment_change(self, assignor: StreamPartitionAssignor) -> None:
        self.streams_metadata_state.on_change(assignor.partitions_by_host())

    # -- life cycle -------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the stream threads; they join the group and begin once it assigns them tasks."""
        with self._state_lock:
            if self._state is not State.CREATED:
                raise IllegalStateException(
                    "This process was already started."
                    if self._state.is_running()
                    else "Cannot restart after closing."
                )
            self._lock_application_directory()
            log.debug("%s Starting Kafka Stream process", self.log_prefix)
            self._set_state(State.REBALANCING)
            for thread in self.threads:
                thread.start()
        log.info("%s Started Kafka Stream process", self.log_prefix)

    def close(self, timeout_ms: int | None = None) -> bool:
        """Stop every thread (each commits, closes its tasks, leaves the group) and wait for them,
        up to ``timeout_ms`` if given; True if they all stopped."""
        with self._state_lock:
            if self._state is State.NOT_RUNNING:
                return True
            self._set_state(State.PENDING_SHUTDOWN)
        for thread in self.threads:
            thread.close()
            if thread.ident is None:  # never started (start failed): only its clients to close
                thread.shutdown()
        deadline = None if timeout_ms is None else self.time.milliseconds() + timeout_ms
        for thread in self.threads:
            if thread.is_alive():
                thread.join(None if deadline is None else max(0, deadline - self.time.milliseconds()) / 1000)
        stopped = not any(thread.is_alive() for thread in self.threads)
        if stopped:
            self.admin.close()
            self._unlock_application_directory()
            self._set_state(State.NOT_RUNNING)
            log.info("%s Stopped Kafka Stream process", self.log_prefix)
        return stopped

    def set_uncaught_exception_handler(self, handler: Callable[[StreamThread, BaseException], None]) -> None:
        """Called with a thread and the error that killed it (a processor's bug, a lost store...)."""
        for thread in self.threads:
            thread.uncaught_exception_handler = handler

    def clean_up(self) -> None:
        """Delete this application's local state (every task directory), before ``start`` or after
        ``close``: the next start restores every store from its changelog."""
        if self._state.is_running():
            raise IllegalStateException("Cannot clean up while running.")
        log.debug("%s Removing local Kafka Streams application data in %s", self.log_prefix, self.app_dir)
        for thread in self.threads[:1]:
            for task_dir in thread.state_directory.list_task_directories():
                shutil.rmtree(task_dir)

    def _lock_application_directory(self) -> None:
        self._state_directory = StateDirectory(self.application_id, self.config[STATE_DIR_CONFIG], self.time)
        if not self._state_directory.lock_state_directory():
            raise StreamsException(
                f"Unable to start: another instance of application {self.application_id} holds the "
                f"state directory {self.app_dir} ({LOCK_FILE_NAME} is locked). Two instances "
                "on one machine need different state.dir settings."
            )

    def _unlock_application_directory(self) -> None:
        if self._state_directory is not None:
            self._state_directory.unlock_state_directory()

    # -- what a running instance answers ----------------------------------------------------------------

    def _validate_is_running(self) -> None:
        if not self._state.is_running():
            raise IllegalStateException("KafkaStreams is not running")

    def all_metadata(self) -> list[StreamsMetadata]:
        """Every instance of the application (by ``application.server``), its stores and partitions."""
        self._validate_is_running()
        return self.streams_metadata_state.get_all_metadata()

    def all_metadata_for_store(self, store_name: str) -> list[StreamsMetadata]:
        self._validate_is_running()
        return self.streams_metadata_state.get_all_metadata_for_store(store_name)

    def metadata_for_key(
        self, store_name: str, key: Any, key_serializer: Serializer
    ) -> StreamsMetadata | None:
        """The instance whose store ``store_name`` holds ``key`` (placed as the producer places it)."""
        self._validate_is_running()
        return self.streams_metadata_state.get_metadata_with_key(store_name, key, key_serializer)

    def store(self, store_name: str, queryable_store_type: QueryableStoreType) -> Any:
        """A read-only view of ``store_name`` over this instance's tasks (Kafka's
        ``QueryableStoreProvider.getStore``); ``InvalidStateStoreException`` while it has none,
        as during a rebalance: ask again."""
        self._validate_is_running()

        def stores() -> list[Any]:
            found = []
            for thread in self.threads:
                for task in list(thread.active_tasks.values()):
                    store = task.get_store(store_name)
                    if store is not None and queryable_store_type.accepts(store):
                        found.append(store)
            return found

        if not stores():
            raise InvalidStateStoreException(
                f"the state store, {store_name}, may have migrated to another instance."
            )
        return queryable_store_type.create(stores, store_name)

    def local_threads_metadata(self) -> list[ThreadMetadata]:
        """This instance's threads and the tasks each runs (Kafka 1.0's ``localThreadsMetadata``)."""
        return [thread.thread_metadata() for thread in self.threads]

    def __repr__(self) -> str:
        return "\n".join([f"KafkaStreams processID: {self.process_id}", *(repr(t) for t in self.threads)])
