"""A task the timer runs once its delay has passed, unless it is cancelled first.

Mirrors: kafka.utils.timer.TimerTask (core/src/main/scala/kafka/utils/timer/TimerTask.scala, Kafka 0.10.1)
Book:    chapter 6, 6.3 (the timer behind the delayed operations)
Differs: ``lock`` is the task's monitor, the lock Kafka takes with ``synchronized`` on the task; it
         is public because the purgatory takes the same monitor around ``try_complete``, as Kafka's
         ``operation synchronized operation.tryComplete()`` does. It is reentrant, as a Java
         monitor is: ``try_complete`` calls ``force_complete``, which cancels the task under it again.

A task knows the one ``TimerTaskEntry`` that holds it in the wheel (a task in the timer sits in exactly
one bucket). ``cancel`` unlinks that entry from its bucket: O(1), with no search, which is the reason
the entry and the task point at each other. A request that completes before its timeout (nearly all
of them) costs the timer one ``add`` and one ``cancel``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafka_lite.utils.timer.timer_task_list import TimerTaskEntry


class TimerTask(ABC):
    """Kafka's ``TimerTask extends Runnable``: ``run`` is what happens when the delay is up."""

    def __init__(self, delay_ms: int) -> None:
        if not isinstance(delay_ms, int) or isinstance(delay_ms, bool):
            raise TypeError(f"delay_ms must be an int number of milliseconds, not {delay_ms!r}")
        self.delay_ms = delay_ms  # from the time the task is added to a timer
        self.lock = threading.RLock()
        self._timer_task_entry: TimerTaskEntry | None = None

    def cancel(self) -> None:
        """Take the task out of the timer; it will not run. Cancelling twice, or a task never added,
        does nothing."""
        with self.lock:
            if self._timer_task_entry is not None:
                self._timer_task_entry.remove()
            self._timer_task_entry = None

    def set_timer_task_entry(self, entry: TimerTaskEntry) -> None:
        """Called by a new ``TimerTaskEntry`` for this task. If an older entry still holds the task
        (the task was added again), that entry leaves its bucket: a task is in the timer at most once."""
        with self.lock:
            if self._timer_task_entry is not None and self._timer_task_entry is not entry:
                self._timer_task_entry.remove()
            self._timer_task_entry = entry

    def get_timer_task_entry(self) -> TimerTaskEntry | None:
        return self._timer_task_entry

    @abstractmethod
    def run(self) -> None:
        """The delay is up (on the timer's task executor thread)."""
