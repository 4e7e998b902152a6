"""A connector in the worker: its lifecycle, from created to started, paused and stopped, as a state table.

Mirrors: org.apache.kafka.connect.runtime.WorkerConnector
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/WorkerConnector.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: the transitions are a table, with Kafka's wording for a bad one.

A connector runs no thread of its own: ``transition_to`` and ``shutdown`` run on the herder's
thread. Pausing a connector *stops* it (``Connector.stop``) and resuming starts it again with the
same config: a connector only watches its input and produces task configs, so there is nothing to
keep while paused (its tasks, which hold the data, pause without stopping). Each change is
reported to the ``ConnectorStatus.Listener``. A connector that fails to start is FAILED and stays
so, whatever target state it is then given; its tasks are never created.
"""

from __future__ import annotations

import enum
import logging

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.connect.connector.connector import Connector, ConnectorContext
from kafka_lite.connect.runtime.abstract_status import ConnectorStatus
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.sink.sink_connector import SinkConnector

log = logging.getLogger(__name__)


class State(enum.Enum):
    INIT = "INIT"  # the connector was created and initialized with its context
    STOPPED = "STOPPED"  # paused, or shut down: stop() returned (or start() was never called)
    STARTED = "STARTED"  # start(props) returned
    FAILED = "FAILED"  # initialize, start or stop raised


VALID_PREVIOUS_STATES: dict[State, set[State]] = {
    State.INIT: set(),
    State.STARTED: {State.INIT, State.STOPPED},
    State.STOPPED: {State.INIT, State.STARTED, State.FAILED},
    State.FAILED: {State.INIT, State.STARTED, State.STOPPED},
}


class WorkerConnector:
    """One connector instance and the state it is in; the worker holds one per connector it runs."""

    def __init__(
        self,
        conn_name: str,
        connector: Connector,
        ctx: ConnectorContext,
        status_listener: ConnectorStatus.Listener,
    ) -> None:
        self.conn_name = conn_name
        self.connector = connector
        self.ctx = ctx
        self.status_listener = status_listener
        self.state = State.INIT
        # Kept from initialize: a resume starts the connector again with the config it had, since a
        # pause is not a config change.
        self.config: dict[str, str] = {}

    def _move_to(self, target: State) -> None:
        if self.state not in VALID_PREVIOUS_STATES[target]:
            raise IllegalStateException(
                f"Connector {self.conn_name} should be in the {sorted(s.value for s in VALID_PREVIOUS_STATES[target])} "
                f"states before moving to {target.value} state. Instead it is in {self.state.value} state"
            )
        log.info("Connector %s: %s -> %s", self.conn_name, self.state.value, target.value)
        self.state = target

    def initialize(self, config: dict[str, str]) -> None:
        self.config = config
        log.debug("Initializing connector %s with config %s", self.conn_name, config)
        # The connector gets a context of this class's, not the herder's own: an error it raises
        # through it must fail this WorkerConnector's state too, not only its status.
        try:
            self.connector.initialize(_WorkerConnectorContext(self))
        except Exception as e:
            log.error("Error initializing connector %s", self.conn_name, exc_info=True)
            self._on_failure(e)

    def _do_start(self) -> bool:
        """Start the connector; False if it was started already or failed to start."""
        if self.state is State.STARTED:
            return False
        try:
            self.connector.start(self.config)
        except Exception as e:
            log.error("Error while starting connector %s", self.conn_name, exc_info=True)
            self._on_failure(e)
            return False
        self._move_to(State.STARTED)
        return True

    def _on_failure(self, cause: BaseException) -> None:
        self.status_listener.on_failure(self.conn_name, cause)
        if self.state is not State.FAILED:
            self._move_to(State.FAILED)

    def _start(self) -> None:
        if self._do_start():
            self.status_listener.on_startup(self.conn_name)

    def _resume(self) -> None:
        if self._do_start():
            self.status_listener.on_resume(self.conn_name)

    def _pause(self) -> None:
        if self.state is State.STOPPED:
            return
        try:
            if self.state is State.STARTED:
                self.connector.stop()
        except Exception as e:
            log.error("Error while shutting down connector %s", self.conn_name, exc_info=True)
            self._on_failure(e)
            return
        self.status_listener.on_pause(self.conn_name)
        self._move_to(State.STOPPED)

    def transition_to(self, target_state: TargetState) -> None:
        # FAILED is left only by a restart (a new WorkerConnector): resuming a failed connector would
        # start it from a state nobody knows.
        if self.state is State.FAILED:
            log.warning("Cannot transition connector %s to %s since it has failed", self.conn_name,
                        target_state.value)  # fmt: skip
            return
        log.debug("Transition connector %s to %s", self.conn_name, target_state.value)
        # The first start reports RUNNING through on_startup, a later one through on_resume; both
        # write RUNNING, but a listener may tell the two apart.
        if target_state is TargetState.PAUSED:
            self._pause()
        elif self.state is State.INIT:
            self._start()
        else:
            self._resume()

    def is_running(self) -> bool:
        return self.state is State.STARTED

    def is_sink_connector(self) -> bool:
        return isinstance(self.connector, SinkConnector)

    def shutdown(self) -> None:
        try:
            if self.state is State.STARTED:
                self.connector.stop()
            if self.state is not State.STOPPED:
                self._move_to(State.STOPPED)
        except Exception:
            log.error("Error while shutting down connector %s", self.conn_name, exc_info=True)
            self._move_to(State.FAILED)
        finally:
            # Always reported: the herder writes UNASSIGNED (put_safe), so the connector's next owner,
            # here or on another worker, starts from a clear status.
            self.status_listener.on_shutdown(self.conn_name)

    def __str__(self) -> str:
        return f"WorkerConnector{{id={self.conn_name}}}"


class _WorkerConnectorContext(ConnectorContext):
    """The context the connector sees: the herder's, with an error also failing this connector."""

    def __init__(self, worker_connector: WorkerConnector) -> None:
        self.worker_connector = worker_connector

    def request_task_reconfiguration(self) -> None:
        self.worker_connector.ctx.request_task_reconfiguration()

    def raise_error(self, e: Exception) -> None:
        log.error("Connector raised an error %s", self.worker_connector.conn_name, exc_info=e)
        self.worker_connector._on_failure(e)
        self.worker_connector.ctx.raise_error(e)
