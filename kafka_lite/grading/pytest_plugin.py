"""A pytest plugin, loaded inside a grading run, that records each graded test's outcome.

No Kafka twin: the reporting half of kafka_lite's lab grader.

The grader copies this file beside its overlay as ``kafka_lite_grade_plugin`` and starts pytest in
a subprocess with ``-p kafka_lite_grade_plugin`` and the environment variables ``KAFKA_LITE_LAB``
(which lab), ``KAFKA_LITE_STAGE`` (optional: only the tests of those stages, as "2" or "1,3") and
``KAFKA_LITE_GRADE_REPORT`` (where to write). Tests of other labs and stages are deselected; for
each graded test the JSON report holds its stage and points, whether it passed, the exception type and *whole* message of a failure
(setup errors count: the tests explain failures over many lines), the short traceback, the frames of
the failure's traceback (a run of calls of one line, as in a RecursionError, kept once with its count),
and what the test printed.
"""

from __future__ import annotations

import ast
import bisect
import functools
import json
import linecache
import os

import pytest

_results: dict[str, dict] = {}

# The solution regions each test reached, when the reference graded is a marked one
# (``starter.mark_entries``): during a test's call phase a region counts for that test, whichever
# thread or process entered it; at any other time (a fixture's set-up, a teardown, between tests) for
# every test, since what a shared fixture did may decide any of them.
_reached: dict[str, set[str]] = {}
_outside: set[str] = set()
_running: str | None = None  # the node id of the graded test in its call phase
_entries_read = 0  # how far the entries file of the tests' own processes has been read


def _record(region: str) -> None:
    running = _running
    (_reached.setdefault(running, set()) if running is not None else _outside).add(region)


def _read_entries() -> set[str]:
    """The regions the tests' processes have entered since the last read."""
    global _entries_read
    path = os.environ.get("KAFKA_LITE_GRADE_ENTRIES")
    if not path or not os.path.exists(path):
        return set()
    with open(path, "rb") as f:
        f.seek(_entries_read)
        data = f.read()
    complete = data[: data.rfind(b"\n") + 1]  # a line still being written is read next time
    _entries_read += len(complete)
    return set(complete.decode().split())


def pytest_configure(config: pytest.Config) -> None:
    try:
        from kafka_lite.grading import region_entries
    except ImportError:  # a toy package graded by the grader's own tests: nothing is marked
        return
    region_entries.recorder = _record


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    global _running
    _outside.update(_read_entries())
    _running = item.nodeid if item.nodeid in _results else None
    try:
        yield
    finally:
        if _running is not None:
            _reached.setdefault(_running, set()).update(_read_entries())
        _running = None


def _marker_arg(item: pytest.Item, name: str) -> int | None:
    marker = item.get_closest_marker(name)
    return int(marker.args[0]) if marker is not None and marker.args else None


@pytest.hookimpl(trylast=True)  # after pytest's own -k deselection: record only the tests that run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    lab = int(os.environ["KAFKA_LITE_LAB"])
    stages = {int(n) for n in os.environ.get("KAFKA_LITE_STAGE", "").split(",") if n}
    keep, drop = [], []
    for item in items:
        wanted = _marker_arg(item, "lab") == lab and (not stages or _marker_arg(item, "stage") in stages)
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    for item in keep:
        points = _marker_arg(item, "points")
        _results[item.nodeid] = {
            "test": item.name,
            "stage": _marker_arg(item, "stage"),
            "points": points if points is not None else 1,
            "passed": False,
            "error_type": None,
            "error": "not run",
            "traceback": "",
            "frames": [],
            "output": "",
        }


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    result = _results.get(item.nodeid)
    if result is None:
        return
    captured = "".join(
        f"--- {title} ---\n{text.rstrip()}\n" for title, text in report.sections if text.strip()
    )
    if captured and report.when in ("call", "teardown"):
        result["output"] = captured
    if report.when == "call" and report.passed:
        result.update(passed=True, error_type=None, error="")
    elif report.failed and result["error"] in ("not run", ""):
        # The first failure is kept: a failing setup, not the teardown that follows it.
        if call.excinfo is not None:
            message = call.excinfo.exconly().strip()
            result.update(
                passed=False, error_type=call.excinfo.typename, error=message or call.excinfo.typename
            )
            result["frames"] = _frames(call.excinfo)
        else:
            lines = str(report.longrepr).strip().splitlines()
            result.update(passed=False, error_type="Error", error=lines[-1] if lines else "Error")
        result["traceback"] = report.longreprtext
        if captured:
            result["output"] = captured


def _frames(excinfo: pytest.ExceptionInfo) -> list[dict]:
    """``{path, line, function, source, repeated}`` for each frame, outermost first; consecutive frames
    at the same line of the same function are one, ``repeated`` times more (Python's own traceback
    says "[Previous line repeated 996 more times]")."""
    frames: list[dict] = []
    for entry in excinfo.traceback:
        where = (str(entry.path), entry.lineno + 1, entry.name)
        last = frames[-1] if frames else None
        if last is not None and (last["path"], last["line"], last["function"]) == where:
            last["repeated"] += 1
            continue
        frames.append(
            {
                "path": where[0],
                "line": where[1],
                "function": where[2],
                "source": _statement(*where[:2]),
                "repeated": 0,
            }
        )
    return frames


def _statement(path: str, line: int) -> str:
    """The first line of the statement that holds ``line`` (a call spread over lines shows where it
    starts, as pytest's own traceback does), or "" when the file's source cannot be read."""
    starts, ends = _statements(path)
    # The innermost statement holding the line is the one that starts last at or before it.
    i = bisect.bisect_right(starts, line)
    while i > 0 and ends[i - 1] < line:
        i -= 1
    first = starts[i - 1] if i > 0 else line
    return linecache.getline(path, first).strip()


@functools.cache
def _statements(path: str) -> tuple[list[int], list[int]]:
    """Where each statement of a file starts and ends, sorted by start: parsed once per file, where
    asking pytest for a frame's statement parses the whole file again for every frame (a failing run
    of a lab's tests spent most of its time there)."""
    try:
        tree = ast.parse("".join(linecache.getlines(path)))
    except (SyntaxError, ValueError):  # not Python source: show the frame's own line
        return [], []
    spans = sorted(
        (node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree) if isinstance(node, ast.stmt)
    )
    return [start for start, _ in spans], [end for _, end in spans]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("KAFKA_LITE_GRADE_REPORT")
    _outside.update(_read_entries())
    results = [{**r, "regions": sorted(_reached.get(nodeid, ()))} for nodeid, r in _results.items()]
    if path:
        with open(path, "w", encoding="utf-8") as f:
            report = {
                "exitstatus": int(exitstatus),
                "results": results,
                "reached_outside_tests": sorted(_outside),
            }
            json.dump(report, f)
