"""What a source and a sink task share in the worker: a thread that runs the task until stopped.

Mirrors: org.apache.kafka.connect.runtime.WorkerTask and AbstractStatus.State
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/WorkerTask.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: a thread per task, where Kafka submits the task to a cached thread pool (a thread per
         task too); the task's status is kept on the task (``state``, ``trace``) and logged, with
         no status store, as no REST API reads one; no pause and resume (target states).

``run`` is the thread's body: ``execute`` until ``stop`` is called, then ``close``. A task that
raises is FAILED and its error kept in ``trace``; it does not stop the worker or the other tasks.
``stop`` only asks: the thread notices between two polls, so the worker waits for it with
``await_stop`` (at most ``task.shutdown.graceful.timeout.ms``, shared by all the tasks).
"""

from __future__ import annotations

import enum
import logging
import threading
from abc import ABC, abstractmethod

from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

log = logging.getLogger(__name__)


class State(enum.Enum):
    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    FAILED = "FAILED"
    DESTROYED = "DESTROYED"


class WorkerTask(ABC):
    def __init__(self, id: ConnectorTaskId) -> None:
        self.id = id
        self.state = State.UNASSIGNED
        self.trace: BaseException | None = None
        self._stopping = threading.Event()
        self._shutdown_latch = threading.Event()
        self.thread = threading.Thread(target=self.run, name=f"connect-task-{id}", daemon=True)

    @abstractmethod
    def initialize(self, task_config: dict[str, str]) -> None: ...

    @abstractmethod
    def execute(self) -> None:
        """The task's loop; returns when ``is_stopping()``."""

    @abstractmethod
    def close(self) -> None:
        """Release what the task holds (its producer or consumer); called on the task's thread."""

    def stop(self) -> None:
        """Ask the task to stop; subclasses also wake what it may be blocked on."""
        self._stopping.set()

    def is_stopping(self) -> bool:
        return self._stopping.is_set()

    def await_stop(self, timeout_ms: int) -> bool:
        """True if the task's thread finished within ``timeout_ms``."""
        return self._shutdown_latch.wait(max(timeout_ms, 0) / 1000)

    def start(self) -> None:
        self.thread.start()

    def run(self) -> None:
        try:
            self.state = State.RUNNING
            log.info("%s started", self)
            self.execute()
        except BaseException as e:
            log.error("Task %s threw an uncaught and unrecoverable exception", self.id, exc_info=True)
            log.error("Task is being killed and will not recover until manually restarted")
            self.state, self.trace = State.FAILED, e
        finally:
            try:
                self.close()
            except Exception:
                log.exception("Task %s failed to close", self.id)
            if self.state is not State.FAILED:
                self.state = State.DESTROYED
            self._shutdown_latch.set()
