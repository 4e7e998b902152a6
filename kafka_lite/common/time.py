"""Time as a dependency: everything in kafka_lite that waits or expires asks a ``Time``.

Mirrors: org.apache.kafka.common.utils.Time, SystemTime
         (clients/src/main/java/org/apache/kafka/common/utils/, Kafka 0.10.1)
         and org.apache.kafka.common.utils.MockTime (clients/src/test/java/..., Kafka 0.10.1)
Book:    used throughout; first met in chapter 2 (linger.ms, request timeouts) and 6.3 (the timer)
Differs: Python's clocks are floats in seconds; ``Time`` speaks Kafka's integer milliseconds and
         nanoseconds so the arithmetic in the code reads like the book's. ``MockTime.sleep`` also
         wakes threads blocked in ``MockTime.wait_for`` (Kafka's MockTime has no such waiters,
         because its tests never block a second thread on mock time; ours do, e.g. a notebook
         stepping a Sender thread).

Why this matters: with ``MockTime`` a test or a notebook can say "advance 100 ms" and see a
linger expire, a segment roll by age, or a session time out, exactly and instantly, with no
``time.sleep`` and no flakiness.
"""

from __future__ import annotations

import threading
import time as _time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any


class Time(ABC):
    """A clock that can also wait. ``SystemTime`` is real; ``MockTime`` moves only when told."""

    @abstractmethod
    def milliseconds(self) -> int:
        """Wall-clock time in ms since the epoch (Kafka's ``time.milliseconds()``)."""

    @abstractmethod
    def nanoseconds(self) -> int:
        """A monotonic clock in ns, for measuring intervals (Kafka's ``time.nanoseconds()``)."""

    @abstractmethod
    def sleep(self, ms: int) -> None:
        """Let ``ms`` milliseconds pass."""

    def hi_res_clock_ms(self) -> int:
        """Monotonic milliseconds; for timeouts, which must not jump with the wall clock."""
        return self.nanoseconds() // 1_000_000

    def wait_for(self, condition: threading.Condition, predicate, timeout_ms: int) -> bool:
        """Wait on ``condition`` (already held) until ``predicate()`` or ``timeout_ms`` passes.

        Returns the predicate's final value. Blocking code calls this rather than
        ``Condition.wait_for`` so that a ``MockTime`` can drive the timeout.
        """
        deadline = self.hi_res_clock_ms() + timeout_ms
        while not predicate():
            remaining = deadline - self.hi_res_clock_ms()
            if remaining <= 0:
                return bool(predicate())
            self._wait(condition, remaining)
        return True

    def _wait(self, condition: threading.Condition, remaining_ms: int) -> None:
        # Kafka spells "for ever" as Long.MAX_VALUE ms (MirrorMaker's max.block.ms); a Python lock
        # takes at most threading.TIMEOUT_MAX seconds, so a longer wait is cut to that and
        # ``wait_for``'s loop waits again.
        condition.wait(min(remaining_ms / 1000.0, threading.TIMEOUT_MAX))


class SystemTime(Time):
    """The real clock. Stateless, so one shared instance (``SYSTEM``) serves everyone."""

    def milliseconds(self) -> int:
        return _time.time_ns() // 1_000_000

    def nanoseconds(self) -> int:
        return _time.monotonic_ns()

    def sleep(self, ms: int) -> None:
        if ms > 0:
            _time.sleep(ms / 1000.0)


SYSTEM = SystemTime()


def wait_until(
    condition: Callable[[], Any],
    what: str = "the condition",
    timeout_s: float = 30.0,
    time: Time = SYSTEM,
    poll_ms: int = 20,
) -> Any:
    """Call ``condition`` until it returns something truthy and return that, or raise
    ``TimeoutError`` naming ``what`` once ``timeout_s`` of ``time`` has passed. An exception from
    ``condition`` counts as not yet (a node restarting, a request timing out) and is named if time
    runs out.

    No Kafka twin in the broker or the clients: Kafka's own tests poll this way
    (``TestUtils.waitUntilTrue``). Here it is how the Jepsen nemesis waits for a cluster it has
    harmed, and how the chapters' notebooks wait for the clusters they start, on real time.
    """
    deadline = time.hi_res_clock_ms() + timeout_s * 1000
    last_error: Exception | None = None
    while True:
        try:
            result = condition()
        except Exception as e:
            result, last_error = None, e
        if result:
            return result
        if time.hi_res_clock_ms() > deadline:
            suffix = f" (last error: {last_error!r})" if last_error else ""
            raise TimeoutError(f"timed out after {timeout_s:g} s waiting for {what}{suffix}")
        time.sleep(poll_ms)  # polling, bounded by the deadline


class MockTime(Time):
    """A clock that advances only through ``sleep``/``advance``; for tests and notebooks.

    ``auto_tick_ms`` advances the clock by that much on every reading, as Kafka's
    ``MockTime(autoTickMs)`` does, for code that spins until some time has passed.
    """

    def __init__(self, auto_tick_ms: int = 0, start_ms: int = 1_500_000_000_000, start_ns: int = 0) -> None:
        # The default start is a plausible 2017 wall clock (Kafka 0.11's era), so timestamps in
        # notebooks read like real ones and never collide with Kafka's -1 "no timestamp".
        self._lock = threading.Condition()
        self._ms = start_ms
        self._ns = start_ns
        self.auto_tick_ms = auto_tick_ms

    def milliseconds(self) -> int:
        self._maybe_auto_tick()
        with self._lock:
            return self._ms

    def nanoseconds(self) -> int:
        self._maybe_auto_tick()
        with self._lock:
            return self._ns

    def sleep(self, ms: int) -> None:
        self.advance(ms)

    def advance(self, ms: int) -> None:
        """Move the clock forward by ``ms`` and wake every thread waiting on mock time."""
        if ms < 0:
            raise ValueError(f"MockTime cannot go backwards (asked to advance {ms} ms)")
        with self._lock:
            self._ms += ms
            self._ns += ms * 1_000_000
            self._lock.notify_all()

    def set_milliseconds(self, ms: int) -> None:
        """Jump the wall clock to ``ms`` (only forward), keeping the monotonic clock in step."""
        with self._lock:
            delta = ms - self._ms
        self.advance(delta)

    def _maybe_auto_tick(self) -> None:
        if self.auto_tick_ms:
            self.advance(self.auto_tick_ms)

    def _wait(self, condition: threading.Condition, remaining_ms: int) -> None:
        # Under mock time nothing passes by itself: block (briefly, in real time) until someone
        # advances the clock, then re-check. The short real wait keeps a forgotten ``advance``
        # from hanging a test forever while still never letting mock time move on its own.
        condition.release()
        try:
            with self._lock:
                self._lock.wait(0.05)
        finally:
            condition.acquire()
