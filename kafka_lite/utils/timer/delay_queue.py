"""The timer's queue of buckets, each released when its expiration comes: Java's ``DelayQueue``.

No Kafka twin: modelled on ``java.util.concurrent.DelayQueue``, which Kafka's ``SystemTimer`` and
``TimingWheel`` share (core/src/main/scala/kafka/utils/timer/Timer.scala, Kafka 0.10.1), and in which
``ClientQuotaManager`` holds its throttled responses (``server/client_quota_manager.py``).
Book:    chapter 6, 6.3 (the timer behind the delayed operations); chapter 10, 10.1 (client quotas)
Differs: it waits through a ``Time`` (``Time.wait_for``), so that under ``MockTime`` a test or a
         notebook decides when a bucket is due. ``close`` (not in Java's class) wakes a thread
         waiting in ``poll`` at once, so that shutting a timer down does not wait out the reaper's
         200 ms poll, and under ``MockTime`` (where that poll would end only when a test moves the
         clock) does not hang.

A heap of buckets keyed by expiration, and a condition to wait on. ``poll(timeout_ms)`` returns the
earliest bucket once its expiration has come, waiting up to ``timeout_ms`` for that; it wakes early
when a bucket is offered, since the new bucket may be due sooner than the one it was waiting for.
The heap holds buckets, not tasks: a few dozen entries however many tasks the wheels hold.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from functools import partial
from typing import Protocol

from kafka_lite.common.time import Time


class Delayed(Protocol):
    """What the queue holds (Java's ``Delayed``): a timer bucket, or a throttled response."""

    def get_expiration(self) -> int: ...

    def get_delay(self) -> int: ...


class DelayQueue:
    def __init__(self, time: Time) -> None:
        self.time = time
        # (expiration when offered, sequence, bucket): a bucket's expiration does not change while
        # it is queued (the wheel reuses a slot only after the delay queue has released its bucket),
        # and the sequence keeps buckets of equal expiration from being compared.
        self._heap: list[tuple[int, int, Delayed]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._offers = 0
        self._closed = False

    def offer(self, bucket: Delayed) -> None:
        with self._cond:
            heapq.heappush(self._heap, (bucket.get_expiration(), next(self._seq), bucket))
            self._offers += 1
            self._cond.notify_all()

    def poll(self, timeout_ms: int = 0) -> Delayed | None:
        """The earliest bucket if it is due, waiting up to ``timeout_ms`` for one to be; else None.

        ``poll()`` with no timeout does not wait (Java's ``poll()``)."""
        with self._cond:
            deadline = self.time.hi_res_clock_ms() + timeout_ms
            while True:
                if self._heap and self._heap[0][2].get_delay() <= 0:
                    return heapq.heappop(self._heap)[2]
                remaining = deadline - self.time.hi_res_clock_ms()
                if remaining <= 0 or self._closed:
                    return None
                if self._heap:  # wake when the head falls due, not at the end of the timeout
                    remaining = min(remaining, self._heap[0][2].get_delay())
                self.time.wait_for(self._cond, partial(self._woken, self._offers), remaining)

    def _woken(self, offers_before: int) -> bool:
        """A bucket was offered since the wait began (it may be due sooner), or the queue closed."""
        return self._offers != offers_before or self._closed

    def close(self) -> None:
        """Wake every thread in ``poll``; from now on ``poll`` never waits."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._heap)
