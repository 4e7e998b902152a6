"""A deadline that is read against a clock the caller moves: the election and fetch timers of the
Raft states.

Mirrors: org.apache.kafka.common.utils.Timer
         (clients/src/main/java/org/apache/kafka/common/utils/Timer.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: made with ``Timer(time, timeout_ms)`` rather than ``time.timer(timeout_ms)``: kafka_lite's
         ``Time`` has no factory method, and this module is the only user.

Not the timing wheel of chapter 6 (``kafka_lite.utils.timer``), which runs tasks when they expire.
This timer runs nothing: it holds a deadline and the last time it was told, and the state that owns
it asks "expired?" or "how long left?" whenever the Raft client polls. The clock moves only through
``update``, so one poll sees one consistent "now", and ``update`` never moves it backwards, so a
deadline that has passed stays passed even if a caller hands in an older reading.
"""

from __future__ import annotations

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.time import Time

# Java's Long.MAX_VALUE: "never", the timeout an observer's Unattached state waits for an election.
LONG_MAX = 2**63 - 1


class Timer:
    def __init__(self, time: Time, timeout_ms: int) -> None:
        self._time = time
        self._current_time_ms = 0
        self.update()
        self.reset(timeout_ms)

    def is_expired(self) -> bool:
        return self._current_time_ms >= self._deadline_ms

    def update(self, current_time_ms: int | None = None) -> None:
        """Move the timer's clock to ``current_time_ms`` (the Time's reading when omitted), never back."""
        if current_time_ms is None:
            current_time_ms = self._time.milliseconds()
        self._current_time_ms = max(current_time_ms, self._current_time_ms)

    def reset(self, timeout_ms: int) -> None:
        """Start again from the timer's current time, with ``timeout_ms`` to go."""
        if timeout_ms < 0:
            raise IllegalArgumentException(f"Invalid negative timeout {timeout_ms}")
        self._timeout_ms = timeout_ms
        self._start_ms = self._current_time_ms
        # Java adds with a check against overflow; the cap keeps "never" a number a Java peer
        # would recognise.
        self._deadline_ms = min(self._current_time_ms + timeout_ms, LONG_MAX)

    def remaining_ms(self) -> int:
        return max(0, self._deadline_ms - self._current_time_ms)

    def elapsed_ms(self) -> int:
        return self._current_time_ms - self._start_ms

    def timeout_ms(self) -> int:
        return self._timeout_ms

    def current_time_ms(self) -> int:
        return self._current_time_ms
