"""A connector in the worker: its lifecycle, from created to started to stopped, as a state table.

Mirrors: org.apache.kafka.connect.runtime.WorkerConnector
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/WorkerConnector.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: no PAUSED target state (Kafka's STOPPED is reached only by shutdown here); the
         transitions are a table, with Kafka's wording for a bad one.

A connector runs no thread of its own: ``start`` and ``shutdown`` run on the herder's thread. A
connector that fails to start is FAILED and stays so; its tasks are never created.
"""

from __future__ import annotations

import enum
import logging

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.connect.connector.connector import Connector, ConnectorContext
from kafka_lite.connect.sink.sink_connector import SinkConnector

log = logging.getLogger(__name__)


class State(enum.Enum):
    INIT = "INIT"  # the connector was created and initialized with its context
    STARTED = "STARTED"  # start(props) returned
    STOPPED = "STOPPED"  # stop() returned
    FAILED = "FAILED"  # start or stop raised


VALID_PREVIOUS_STATES: dict[State, set[State]] = {
    State.INIT: set(),
    State.STARTED: {State.INIT},
    State.STOPPED: {State.STARTED},
    State.FAILED: {State.INIT, State.STARTED},
}


class WorkerConnector:
    def __init__(self, conn_name: str, connector: Connector, ctx: ConnectorContext) -> None:
        self.conn_name = conn_name
        self.connector = connector
        self.ctx = ctx
        self.state = State.INIT
        self.config: dict[str, str] = {}

    def transition_to(self, target: State) -> None:
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
        self.connector.initialize(self.ctx)

    def start(self) -> bool:
        try:
            self.connector.start(self.config)
        except Exception:
            log.error("Error while starting connector %s", self.conn_name, exc_info=True)
            self.transition_to(State.FAILED)
            return False
        self.transition_to(State.STARTED)
        return True

    def is_running(self) -> bool:
        return self.state is State.STARTED

    def is_sink_connector(self) -> bool:
        return isinstance(self.connector, SinkConnector)

    def shutdown(self) -> None:
        if self.state is not State.STARTED:
            return
        try:
            self.connector.stop()
            self.transition_to(State.STOPPED)
        except Exception:
            log.error("Error while shutting down connector %s", self.conn_name, exc_info=True)
            self.transition_to(State.FAILED)

    def __str__(self) -> str:
        return f"WorkerConnector{{id={self.conn_name}}}"
