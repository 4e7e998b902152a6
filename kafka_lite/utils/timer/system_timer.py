"""The timer the purgatory expires operations with: the timing wheel, its delay queue, a task executor.

Mirrors: kafka.utils.timer.Timer and SystemTimer (core/src/main/scala/kafka/utils/timer/Timer.scala,
         Kafka 0.10.1)
Book:    chapter 6, 6.3 (the timer behind the delayed operations)
Differs: the clock is a ``Time`` passed in (Kafka reads ``SystemTime``), so tests run the real
         ``SystemTimer`` under ``MockTime``. The executor is a one-thread ``ThreadPoolExecutor``
         (Kafka: ``Executors.newFixedThreadPool(1)``); an exception in a task is logged (a Java
         ``submit`` keeps it in a Future nobody reads). ``shutdown`` also closes the delay queue,
         waking a reaper waiting in ``advance_clock``; a task falling due after ``shutdown`` is
         not run.

Three parts, as in Kafka:

* the **timing wheel** (``TimingWheel``), where ``add`` files a task in O(1);
* the **delay queue** (``DelayQueue``) of the wheel's buckets, ordered by expiration: the one
  place where anything waits;
* the **task executor**, one thread that runs expired tasks, so that a slow ``on_expiration``
  (sending a response) never holds up the clock.

Nothing here has its own thread that ticks. Someone calls ``advance_clock(timeout_ms)`` in a loop:
in the broker, each purgatory's ``ExpiredOperationReaper`` with 200 ms. It waits up to that long
for the earliest bucket to fall due, moves the wheel's clock to the bucket's expiration, and
*flushes* the bucket: every task in it is added again (``reinsert``). A task from an overflow
wheel lands in a finer wheel; a task whose time has come is refused by the wheel (already expired)
and goes to the executor; a cancelled task is dropped.

The read-write lock: any number of threads may ``add`` at once (each holds the read lock), but the
clock may move only while nobody adds (``advance_clock`` holds the write lock), because ``add``
reads ``current_time`` to pick a bucket, and a bucket being flushed must not receive new tasks
meant for its next turn.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.utils.locks import AtomicInteger, ReadWriteLock
from kafka_lite.utils.timer.delay_queue import DelayQueue
from kafka_lite.utils.timer.timer_task import TimerTask
from kafka_lite.utils.timer.timer_task_list import TimerTaskEntry, TimerTaskList
from kafka_lite.utils.timer.timing_wheel import TimingWheel

log = logging.getLogger(__name__)


class Timer(ABC):
    # True for a timer whose ``advance_clock`` also moves its clock (``kafka_lite.testing``'s
    # ``MockTimer``): only its caller may drive it; a purgatory's reaper looping on it would run the
    # clock away.
    moves_clock_on_advance: bool = False

    @abstractmethod
    def add(self, timer_task: TimerTask) -> None:
        """Run ``timer_task`` once its ``delay_ms`` has passed (counted from now), unless it is
        cancelled first."""

    @abstractmethod
    def advance_clock(self, timeout_ms: int) -> bool:
        """Expire what has come due, waiting up to ``timeout_ms`` for something to; True if a
        bucket expired."""

    @abstractmethod
    def size(self) -> int:
        """The number of tasks waiting (added, neither run nor cancelled)."""

    @abstractmethod
    def shutdown(self) -> None:
        """Stop; tasks still waiting are never run."""


class SystemTimer(Timer):
    def __init__(
        self,
        executor_name: str,
        tick_ms: int = 1,
        wheel_size: int = 20,
        start_ms: int | None = None,
        time: Time = SYSTEM,
    ) -> None:
        self.time = time
        self._task_executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"executor-{executor_name}"
        )
        self.delay_queue = DelayQueue(time)
        self._task_counter = AtomicInteger(0)
        self.timing_wheel = TimingWheel(
            tick_ms=tick_ms,
            wheel_size=wheel_size,
            start_ms=time.hi_res_clock_ms() if start_ms is None else start_ms,
            task_counter=self._task_counter,
            queue=self.delay_queue,
            time=time,
        )
        # Adds share the wheel (read lock); moving its clock excludes them (write lock).
        self._read_write_lock = ReadWriteLock()

    # --8<-- [start:add]
    def add(self, timer_task: TimerTask) -> None:
        with self._read_write_lock.read_lock():
            # Expirations are on the monotonic clock: a wall clock set back must not delay timeouts.
            self._add_timer_task_entry(
                TimerTaskEntry(timer_task, timer_task.delay_ms + self.time.hi_res_clock_ms())
            )

    def _add_timer_task_entry(self, timer_task_entry: TimerTaskEntry) -> None:
        if not self.timing_wheel.add(timer_task_entry):
            # Already expired or cancelled: run the first, drop the second.
            if not timer_task_entry.cancelled:
                self._execute(timer_task_entry.timer_task)

    # --8<-- [end:add]

    def _execute(self, timer_task: TimerTask) -> None:
        try:
            self._task_executor.submit(self._run, timer_task)
        except RuntimeError:  # the executor is shut down
            log.debug("Timer is shut down: %r not run", timer_task)

    @staticmethod
    def _run(timer_task: TimerTask) -> None:
        try:
            timer_task.run()
        except Exception:
            log.exception("Error running expired timer task %r", timer_task)

    # --8<-- [start:advance_clock]
    def advance_clock(self, timeout_ms: int) -> bool:
        """Wait up to ``timeout_ms`` for a bucket to fall due; then flush it and every other due one."""
        bucket = self.delay_queue.poll(timeout_ms)
        if bucket is None:
            return False
        self._flush_due(bucket)
        return True

    def _flush_due(self, bucket: TimerTaskList | None) -> None:
        with self._read_write_lock.write_lock():
            while bucket is not None:
                self.timing_wheel.advance_clock(bucket.get_expiration())
                bucket.flush(self._add_timer_task_entry)  # reinsert: cascade down, or run
                bucket = self.delay_queue.poll()

    # --8<-- [end:advance_clock]

    def size(self) -> int:
        return self._task_counter.get()

    def shutdown(self) -> None:
        self.delay_queue.close()
        self._task_executor.shutdown(wait=False)
