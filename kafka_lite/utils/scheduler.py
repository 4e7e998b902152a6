"""Run tasks later or periodically: the log manager's retention, flush and checkpoint jobs.

Mirrors: kafka.utils.Scheduler, KafkaScheduler and kafka.utils.MockScheduler
         (core/src/main/scala/kafka/utils/KafkaScheduler.scala, core/src/test/.../MockScheduler.scala,
         Kafka 0.10.1)
Book:    chapter 6, 6.1.5 (the log manager's scheduled tasks)
Differs: ``KafkaScheduler`` is one daemon thread with a heap of due tasks where Kafka uses a
         ScheduledThreadPoolExecutor; tasks here are short (a retention pass, a checkpoint), so one
         thread serves. Exceptions in a task are logged and the task keeps its schedule, as in Kafka.

``MockScheduler`` runs nothing by itself: ``tick()`` runs every task whose time has come on the
``MockTime`` it shares with the test, so a notebook can advance five minutes and watch exactly the
retention passes those five minutes would have run.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_lite.common.time import SYSTEM, MockTime, Time

log = logging.getLogger(__name__)


@dataclass(order=True)
class _Task:
    due_ms: int
    seq: int
    name: str = field(compare=False)
    fun: Callable[[], None] = field(compare=False)
    period_ms: int = field(compare=False)  # <= 0: run once


class Scheduler(ABC):
    @abstractmethod
    def startup(self) -> None: ...

    @abstractmethod
    def shutdown(self) -> None: ...

    @abstractmethod
    def schedule(self, name: str, fun: Callable[[], None], delay_ms: int = 0, period_ms: int = -1) -> None:
        """Run ``fun`` after ``delay_ms``, then every ``period_ms`` if that is positive."""


class _HeapScheduler(Scheduler):
    def __init__(self, time: Time) -> None:
        self.time = time
        self._tasks: list[_Task] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._running = False

    def schedule(self, name: str, fun: Callable[[], None], delay_ms: int = 0, period_ms: int = -1) -> None:
        with self._cond:
            if not self._running:
                raise RuntimeError(f"scheduler is not running: cannot schedule {name}")
            heapq.heappush(
                self._tasks, _Task(self.time.milliseconds() + delay_ms, next(self._seq), name, fun, period_ms)
            )
            self._cond.notify_all()

    def _pop_due(self, now: int) -> _Task | None:
        with self._cond:
            if self._tasks and self._tasks[0].due_ms <= now:
                return heapq.heappop(self._tasks)
            return None

    def _run(self, task: _Task) -> None:
        try:
            task.fun()
        except Exception:
            log.exception("Uncaught exception in scheduled task '%s'", task.name)
        if task.period_ms > 0:
            with self._cond:
                if self._running:
                    task.due_ms += task.period_ms
                    heapq.heappush(self._tasks, task)

    def task_names(self) -> list[str]:
        with self._cond:
            return sorted(t.name for t in self._tasks)


class KafkaScheduler(_HeapScheduler):
    """One background thread that runs tasks when they fall due (real time)."""

    def __init__(self, thread_name_prefix: str = "kafka-scheduler", time: Time = SYSTEM) -> None:
        super().__init__(time)
        self._thread: threading.Thread | None = None
        self._name = thread_name_prefix

    def startup(self) -> None:
        with self._cond:
            if self._running:
                raise RuntimeError("This scheduler has already been started!")
            self._running = True
        self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        with self._cond:
            self._running = False
            self._tasks.clear()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._running:
                    return
                now = self.time.milliseconds()
                wait_ms = self._tasks[0].due_ms - now if self._tasks else 1000
                if wait_ms > 0:
                    self._cond.wait(wait_ms / 1000.0)  # woken early by schedule() or shutdown()
                    continue
            task = self._pop_due(self.time.milliseconds())
            if task is not None:
                self._run(task)


class MockScheduler(_HeapScheduler):
    """Runs due tasks only when ``tick()`` is called; pair it with ``MockTime``."""

    def __init__(self, time: MockTime) -> None:
        super().__init__(time)

    def startup(self) -> None:
        self._running = True

    def shutdown(self) -> None:
        self._running = False
        self._tasks.clear()

    def tick(self) -> int:
        """Run every task due by now (periodic ones possibly several times); return how many ran."""
        ran = 0
        while (task := self._pop_due(self.time.milliseconds())) is not None:
            self._run(task)
            ran += 1
        return ran

    def advance(self, ms: int) -> int:
        """Advance the mock clock and run what fell due, in time order (as a real clock would)."""
        target = self.time.milliseconds() + ms
        ran = 0
        while True:
            with self._cond:
                next_due = self._tasks[0].due_ms if self._tasks else None
            if next_due is None or next_due > target:
                break
            self.time.set_milliseconds(max(next_due, self.time.milliseconds()))
            ran += self.tick()
        self.time.set_milliseconds(target)
        return ran + self.tick()
