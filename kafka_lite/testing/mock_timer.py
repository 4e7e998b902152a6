"""A timer for tests and notebooks: the real timing wheel, a ``MockTime`` clock, tasks run inline.

Mirrors: kafka.utils.timer.MockTimer (core/src/test/scala/unit/kafka/utils/timer/MockTimer.scala,
         Kafka 0.10.1)
Book:    chapter 6, 6.3 (the timer behind the delayed operations)
Differs: Kafka's ``MockTimer`` keeps its tasks in a priority queue; this one is a ``SystemTimer``
         (the same wheels, buckets and delay queue) whose clock is a ``MockTime`` and whose task
         executor is the calling thread, so that a notebook steps the real wheel: tasks filed in
         buckets, a bucket expiring, tasks cascading down from an overflow wheel. ``add`` also
         expires whatever is due at once, as a ``SystemTimer``'s reaper would within a poll.

``advance_clock(ms)`` does what Kafka's does: the clock moves ``ms`` first, then every task that
has come due runs, on the caller's thread, before ``advance_clock`` returns. Nothing runs by
itself, so a test says exactly when time passes; and no task runs while the timer holds its lock
(due tasks are collected under it and run after), so a task may add to the timer again. A
purgatory given a ``MockTimer`` is built with ``reaper_enabled=False``, as in Kafka's tests: a
reaper thread calling ``advance_clock`` in a loop would run the mock clock away (the purgatory
refuses it).
"""

from __future__ import annotations

from collections import deque

from kafka_lite.common.time import MockTime
from kafka_lite.utils.timer.system_timer import SystemTimer
from kafka_lite.utils.timer.timer_task import TimerTask


class MockTimer(SystemTimer):
    moves_clock_on_advance = True  # a purgatory refuses to start a reaper on it

    def __init__(self, time: MockTime | None = None, tick_ms: int = 1, wheel_size: int = 20) -> None:
        if time is None:
            time = MockTime()
        if not isinstance(time, MockTime):
            raise TypeError(
                f"MockTimer moves its clock in advance_clock, so it needs a MockTime, not {time!r}; "
                "use SystemTimer for a real clock"
            )
        super().__init__("mock", tick_ms=tick_ms, wheel_size=wheel_size, time=time)
        self._due: deque[TimerTask] = deque()

    def add(self, timer_task: TimerTask) -> None:
        super().add(timer_task)
        self.advance_clock(0)

    def advance_clock(self, timeout_ms: int) -> bool:
        """Let ``timeout_ms`` pass on the ``MockTime``, then run every task due; True if any ran."""
        self.time.sleep(timeout_ms)
        bucket = self.delay_queue.poll()  # never waits: only what is due now
        if bucket is not None:
            self._flush_due(bucket)
        return self._run_due() > 0

    def _execute(self, timer_task: TimerTask) -> None:
        self._due.append(timer_task)  # run by _run_due once the timer's lock is released

    def _run_due(self) -> int:
        ran = 0
        while self._due:
            try:
                timer_task = self._due.popleft()
            except IndexError:  # another thread ran the last one
                break
            timer_task.run()
            ran += 1
        return ran
