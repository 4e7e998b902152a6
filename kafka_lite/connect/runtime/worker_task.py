"""What a source and a sink task share in the worker: a thread that runs the task until stopped.

Mirrors: org.apache.kafka.connect.runtime.WorkerTask
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/WorkerTask.java, Kafka 0.11)
Book:    chapter 8, 8.3
Differs: a thread per task, where Kafka submits the task to a cached thread pool (a thread per
         task too); Kafka's ``synchronized (this)``, ``wait`` and ``notifyAll`` are one
         ``threading.Condition``.

``run`` is the thread's body: ``execute`` until ``stop`` is called, then ``close``. Every change of
the task's state goes to its ``TaskStatus.Listener`` (the herder, which writes it to the status
store): ``on_startup`` when it begins, ``on_pause``/``on_resume`` as its target state changes,
``on_shutdown`` when it ends, ``on_failure`` if it raised. A task that raises does not stop the
worker or the other tasks. ``stop`` only asks: the thread notices between two polls, so the worker
waits for it with ``await_stop`` (at most ``task.shutdown.graceful.timeout.ms``, shared by all the
tasks).

The target state (``transition_to``) is set from the herder's thread and read by the task's own:
a task created PAUSED waits before it starts, and a running one checks ``should_pause`` on each
turn of its loop (each subclass pauses in its own way). A *cancelled* task (one the worker gave up
waiting for) reports nothing more: by then the herder may have started it again, elsewhere.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod

from kafka_lite.connect.runtime.abstract_status import TaskStatus
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId

log = logging.getLogger(__name__)


class WorkerTask(ABC):
    """A task's thread and its state: the loop itself is the subclass's ``execute``."""

    def __init__(
        self, id: ConnectorTaskId, status_listener: TaskStatus.Listener, initial_state: TargetState
    ) -> None:
        self.id = id
        self.status_listener = status_listener
        self.target_state = initial_state
        self.cancelled = False
        # Set by stop(); an Event, so that a back-off can wait on it and end early.
        self._stopping = threading.Event()
        self._monitor = threading.Condition()  # Kafka's synchronized (this) / wait / notifyAll
        # Kafka's CountDownLatch(1): set once the thread has closed the task, whatever the outcome.
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

    def _trigger_stop(self) -> None:
        with self._monitor:
            self._stopping.set()
            self._monitor.notify_all()  # a task waiting to be resumed wakes up and ends

    def stop(self) -> None:
        """Ask the task to stop; subclasses also wake what it may be blocked on."""
        self._trigger_stop()

    def cancel(self) -> None:
        # Only a flag: a thread cannot be killed, and one stuck in a connector's code may finish later.
        self.cancelled = True

    def is_stopping(self) -> bool:
        return self._stopping.is_set()

    def await_stop(self, timeout_ms: int) -> bool:
        """True if the task's thread finished within ``timeout_ms``."""
        return self._shutdown_latch.wait(max(timeout_ms, 0) / 1000)

    def start(self) -> None:
        self.thread.start()

    def _do_run(self) -> None:
        try:
            # Under the monitor, so that a stop() or a pause that arrives now is seen before the
            # task reports itself RUNNING.
            with self._monitor:
                if self.is_stopping():
                    return
                if self.target_state is TargetState.PAUSED:
                    self.on_pause()
                    if not self.await_unpause():
                        return
                self.status_listener.on_startup(self.id)
            log.info("%s started", self)
            self.execute()
        except BaseException:
            # Logged here with the task's id, then raised on to run(), which reports FAILED.
            log.error("Task %s threw an uncaught and unrecoverable exception", self.id, exc_info=True)
            log.error("Task is being killed and will not recover until manually restarted")
            raise
        finally:
            # Closed whatever happened: a failed task must still release its producer or consumer,
            # or its consumer would hold its partitions until the group's session timed out.
            try:
                self.close()
            except BaseException:
                log.error("Task %s threw an uncaught and unrecoverable exception during shutdown", self.id,
                          exc_info=True)  # fmt: skip
                raise

    def run(self) -> None:
        try:
            self._do_run()
            self._on_shutdown()
        except BaseException as e:
            self.on_failure(e)
        finally:
            self._shutdown_latch.set()

    def _on_shutdown(self) -> None:
        # Reported under the monitor, against a cancel() from the worker's thread: a cancelled task's
        # UNASSIGNED would overwrite the status of the instance started in its place.
        with self._monitor:
            self._trigger_stop()
            if not self.cancelled:
                self.status_listener.on_shutdown(self.id)

    def on_failure(self, cause: BaseException) -> None:
        with self._monitor:
            self._trigger_stop()
            if not self.cancelled:
                self.status_listener.on_failure(self.id, cause)

    def on_pause(self) -> None:
        with self._monitor:
            self.status_listener.on_pause(self.id)

    def on_resume(self) -> None:
        with self._monitor:
            self.status_listener.on_resume(self.id)

    def should_pause(self) -> bool:
        return self.target_state is TargetState.PAUSED

    def await_unpause(self) -> bool:
        """Wait while the target state is PAUSED; False if the task was stopped meanwhile."""
        with self._monitor:
            while self.target_state is TargetState.PAUSED:
                if self.is_stopping():
                    return False
                self._monitor.wait()
            return True

    def transition_to(self, state: TargetState) -> None:
        # Called on the herder's thread; the task's thread sees it at its next should_pause, or
        # wakes from await_unpause.
        with self._monitor:
            if self.is_stopping():
                return  # a stopping task is not paused or resumed any more
            self.target_state = state
            self._monitor.notify_all()
