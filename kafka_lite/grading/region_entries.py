"""Which solution regions a grading run reaches: the call a marked reference makes at each one's top.

No Kafka twin: part of kafka_lite's lab grader. ``starter.mark_entries`` turns each region's
``# BEGIN SOLUTION`` line into a call to ``entered``, and the lab self-check grades the reference so
marked, to learn which stages' code each graded test runs. In the grading run's own process the
reporting plugin has set ``recorder`` and notes the region against the test running; in a process
the tests started (a broker running the lab's code) the region is appended to the file that
``$KAFKA_LITE_GRADE_ENTRIES`` names, and the plugin reads it against the tests' run times.
"""

from __future__ import annotations

import os
from collections.abc import Callable

ENTRIES_ENV = "KAFKA_LITE_GRADE_ENTRIES"

recorder: Callable[[str], None] | None = None  # set by the reporting plugin in the grading run
_log: int | None = None  # this process's descriptor of the entries file, opened on first entry


def entered(region: str) -> None:
    global _log
    if recorder is not None:
        recorder(region)
        return
    path = os.environ.get(ENTRIES_ENV)
    if path:
        if _log is None:
            _log = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(_log, f"{region}\n".encode())  # one small append: whole, whatever else writes
