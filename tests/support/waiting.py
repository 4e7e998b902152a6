"""Waiting on a condition with a deadline: how integration tests wait, never on a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], timeout_s: float = 15, what: str = "the condition", interval_s: float = 0.02
) -> T:
    """Call ``condition`` until it returns something truthy and return that; fail naming ``what``
    once ``timeout_s`` has passed. Exceptions from ``condition`` count as not yet."""
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
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
