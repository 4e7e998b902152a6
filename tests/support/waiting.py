"""Waiting on a condition with a deadline: how integration tests wait, never on a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


# The polling interval grows from the one asked for by half each time, up to this: a condition met at
# once is seen at once, and one that takes seconds (a session to expire, an election) is not asked
# fifty times a second, each time a request to a broker, on a machine that the whole suite shares.
LONGEST_INTERVAL_S = 0.1


def wait_until(
    condition: Callable[[], T], timeout_s: float = 15, what: str = "the condition", interval_s: float = 0.02
) -> T:
    """Call ``condition`` until it returns something truthy and return that; fail naming ``what``
    once ``timeout_s`` has passed. Exceptions from ``condition`` count as not yet. The pause between
    calls starts at ``interval_s`` and grows up to ``LONGEST_INTERVAL_S`` (0 polls without pausing)."""
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    longest = max(interval_s, LONGEST_INTERVAL_S) if interval_s else 0
    while True:
        try:
            result = condition()
            if result:
                return result
        except Exception as e:
            last_error = e
        if time.monotonic() > deadline:
            suffix = f" (last error: {last_error!r})" if last_error else ""
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}{suffix}")
        time.sleep(interval_s)  # polling interval, bounded by the deadline
        interval_s = min(interval_s * 1.5, longest)


def wait_while_progressing(
    condition: Callable[[], T],
    progress: Callable[[], object],
    stall_s: float,
    timeout_s: float,
    what: str = "the condition",
    interval_s: float = 0.05,
) -> T:
    """``wait_until`` for work that is slow on a loaded machine but must not stop: call ``condition``
    until it returns something truthy; fail if ``progress()`` (a count of work done) stays the same
    for ``stall_s``, or once ``timeout_s`` has passed in all. A slow run passes; a stalled one fails
    after ``stall_s``, saying so."""
    start = time.monotonic()
    last_seen, last_change = progress(), start
    while True:
        result = condition()
        if result:
            return result
        now = time.monotonic()
        seen = progress()
        if seen != last_seen:
            last_seen, last_change = seen, now
        if now - last_change > stall_s:
            raise AssertionError(f"no progress in {stall_s} s (at {last_seen!r}) waiting for {what}")
        if now - start > timeout_s:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what} (at {last_seen!r})")
        time.sleep(interval_s)  # polling interval, bounded by the deadlines
