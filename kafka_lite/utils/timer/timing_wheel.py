"""Kafka's hierarchical timing wheel: O(1) to start a timer and to stop one.

Mirrors: kafka.utils.timer.TimingWheel (core/src/main/scala/kafka/utils/timer/TimingWheel.scala, Kafka 0.10.1)
Book:    chapter 6, 6.3 (the timer behind the delayed operations)
Labs:    lab 6 (add and advance_clock, then _add_to_overflow_wheel and _add_overflow_wheel)
Differs: the fields Kafka keeps private (``current_time``, ``buckets``, ``overflow_wheel``) are
         public attributes here, read-only by convention, so that a notebook can draw the wheels
         from the live object. A bad ``tick_ms`` or ``wheel_size`` is refused with an error.
         The last branch of Kafka's ``add`` (a task beyond this wheel's interval goes to the
         overflow wheel) is a method of its own, ``_add_to_overflow_wheel``, so that lab 6 can ask
         for the wheel alone first and for its overflow wheels next.

The problem. A broker holds a timer for every request that may wait: a long-poll fetch, a produce
waiting for acks=all, a CreateTopics waiting for leaders. Nearly all of them complete before their
timeout, so the timer's work is mostly "start a timer" and "stop it again". A priority queue (a
heap, Java's ``DelayQueue``) pays O(log n) to start one, with n the timers outstanding (a broker
has tens of thousands), and stopping one means finding it first (``DelayQueue.remove`` searches
the whole queue); so heap timers usually leave stopped timers in place, to be popped and skipped
when they come due, and the heap grows with every timer started in the last timeout period.

One wheel. Picture a clock face with ``wheel_size`` slots, each ``tick_ms`` wide, so the whole face
covers ``interval = tick_ms * wheel_size`` milliseconds from ``current_time``. A slot is a bucket
(a ``TimerTaskList``): it holds every task whose expiration falls in its tick. Adding a task is
arithmetic: ``expiration // tick_ms`` numbers the tick, and that number modulo ``wheel_size`` picks
the slot; no comparison with any other task. Stopping a task unlinks it from its bucket's doubly
linked list. Both are O(1). When the clock reaches a bucket's tick, every task in it is due
together, and the emptied slot is reused for the tick one full turn later, ``interval`` ms on.

Too far for one wheel. A task due ``interval`` or more from now does not fit on the face. Rather
than make the face huge (most slots would sit empty), the wheel hands such a task to an *overflow
wheel* with the same number of slots, each as wide as this whole wheel: its tick is our
``interval``. That wheel may overflow into a third, and so on: with Kafka's 1 ms tick and 20 slots,
the wheels cover 20 ms, 400 ms, 8 s, 160 s, 53 min, 17.8 h, ..., so a few levels cover any timeout.
An overflow wheel is created only when the first task needs it.

Cascading down. A bucket of an overflow wheel expires when its (coarse) tick begins. Its tasks are
not due yet, only nearer: the timer adds each one again from the top, and now it fits a finer
wheel. A task due in 7,351 ms starts in the 8 s wheel's bucket of 7,200-7,599 ms, moves to the
400 ms wheel's bucket of 7,340-7,359 ms when the clock reaches 7,200, then to the 1 ms wheel's bucket
of 7,351 when the clock reaches 7,340, and runs when the clock reaches 7,351. Adding costs O(m) for
m wheels (at most once per level, counting the re-adds); stopping stays O(1).

An example: ``tick_ms`` 1, ``wheel_size`` 3, start at time c.

    level   tick   buckets as they stand at time c
    1       1      [c]          [c+1]         [c+2]
    2       3      [c, c+2]     [c+3, c+5]    [c+6, c+8]
    3       9      [c, c+8]     [c+9, c+17]   [c+18, c+26]

A bucket expires at the start of its range. At c+1, level 1's [c] has expired and its slot now
stands for [c+3]; levels 2 and 3 move in steps of 3 and 9, so their clocks stay at c. At c+3,
level 2's clock moves too: its first slot is reused for [c+9, c+11]. Level 2's [c, c+2] and level 3's
[c, c+8] never receive a task, because the finer wheel below covers those times; that wastes a
slot per level and keeps the arithmetic simple.

Who drives it. The wheel itself never looks at a clock. Each bucket that receives its first task of
a turn is put on the timer's delay queue, ordered by expiration; the timer waits on that queue for
the earliest bucket, moves the wheel's ``current_time`` to it (``advance_clock``), and flushes the
bucket through ``add`` again (``SystemTimer.advance_clock``). So a quiet timer sleeps until the
next bucket is due instead of ticking every millisecond, and the delay queue holds buckets (a few
dozen) rather than tasks (tens of thousands): its O(log n) is over the buckets.

With ``tick_ms`` 1 a task never runs before its expiration. With a coarser tick, a task runs when
its tick begins, up to ``tick_ms - 1`` ms early: ``add`` calls a task due before
``current_time + tick_ms`` expired already.

Threads: ``add`` may run on many threads at once (the buckets and the overflow wheel's creation are
locked); ``advance_clock`` must not run while any ``add`` does: the timer's read-write lock
enforces it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from kafka_lite.common.time import Time
from kafka_lite.utils.locks import AtomicInteger
from kafka_lite.utils.timer.timer_task_list import TimerTaskEntry, TimerTaskList

if TYPE_CHECKING:
    from kafka_lite.utils.timer.delay_queue import DelayQueue


class TimingWheel:
    def __init__(
        self,
        tick_ms: int,
        wheel_size: int,
        start_ms: int,
        task_counter: AtomicInteger,
        queue: DelayQueue,
        time: Time,
    ) -> None:
        if not isinstance(tick_ms, int) or tick_ms < 1:
            raise ValueError(f"tick_ms must be a whole number of milliseconds >= 1, not {tick_ms!r}")
        if not isinstance(wheel_size, int) or wheel_size < 2:
            # One slot would give every overflow wheel the same tick: adding a far task would
            # create wheels forever.
            raise ValueError(f"wheel_size must be an int >= 2, not {wheel_size!r}")
        self.tick_ms = tick_ms
        self.wheel_size = wheel_size
        self.start_ms = start_ms
        self.interval = tick_ms * wheel_size
        self._task_counter = task_counter
        self._queue = queue
        self._time = time
        self.buckets = [TimerTaskList(task_counter, time) for _ in range(wheel_size)]
        self.current_time = start_ms - (start_ms % tick_ms)  # rounded down to a whole tick
        # Two threads adding far tasks may both find no overflow wheel: the lock makes sure one is made.
        self.overflow_wheel: TimingWheel | None = None
        self._overflow_lock = threading.Lock()

    def _add_overflow_wheel(self) -> None:
        """Make the wheel above this one, unless another thread just has: as many slots, each as
        wide as this whole wheel, its clock starting at ours, sharing the timer's task counter and
        delay queue."""
        # BEGIN SOLUTION
        with self._overflow_lock:
            if self.overflow_wheel is None:
                self.overflow_wheel = TimingWheel(
                    tick_ms=self.interval,
                    wheel_size=self.wheel_size,
                    start_ms=self.current_time,
                    task_counter=self._task_counter,
                    queue=self._queue,
                    time=self._time,
                )
        # END SOLUTION

    # --8<-- [start:add]
    def add(self, timer_task_entry: TimerTaskEntry) -> bool:
        """Put the entry in its bucket (in this wheel or an overflow wheel); False if it was
        cancelled or is already due, and the caller must drop it or run it now."""
        # BEGIN SOLUTION
        expiration = timer_task_entry.expiration_ms
        if timer_task_entry.cancelled:
            return False
        if expiration < self.current_time + self.tick_ms:
            return False  # already expired: within the current tick
        if expiration < self.current_time + self.interval:
            # On this wheel's face: the tick number picks the slot.
            virtual_id = expiration // self.tick_ms
            bucket = self.buckets[virtual_id % self.wheel_size]
            bucket.add(timer_task_entry)
            # The bucket's expiration changes only when the slot is reused for a new turn of the
            # wheel; only then does it go (back) on the delay queue, once per turn.
            if bucket.set_expiration(virtual_id * self.tick_ms):
                self._queue.offer(bucket)
            return True
        # END SOLUTION
        # None of the branches above took it: it is beyond this wheel's interval.
        return self._add_to_overflow_wheel(timer_task_entry)

    def _add_to_overflow_wheel(self, timer_task_entry: TimerTaskEntry) -> bool:
        """The last branch of Kafka's ``add`` ("put it into the parent timer"): hand the entry to
        the overflow wheel, made on first use, and return what its ``add`` returns."""
        # BEGIN SOLUTION
        if self.overflow_wheel is None:
            self._add_overflow_wheel()
        return self.overflow_wheel.add(timer_task_entry)
        # END SOLUTION

    # --8<-- [end:add]

    # --8<-- [start:advance_clock]
    def advance_clock(self, time_ms: int) -> None:
        """Move ``current_time`` to the tick holding ``time_ms`` (if that is a later tick), and the
        overflow wheels with it; the buckets behind it are free for later turns."""
        # BEGIN SOLUTION
        if time_ms >= self.current_time + self.tick_ms:
            self.current_time = time_ms - (time_ms % self.tick_ms)
            if self.overflow_wheel is not None:
                self.overflow_wheel.advance_clock(self.current_time)
        # END SOLUTION

    # --8<-- [end:advance_clock]

    def __repr__(self) -> str:
        return (
            f"TimingWheel(tick_ms={self.tick_ms}, wheel_size={self.wheel_size}, "
            f"current_time={self.current_time})"
        )
