"""A pytest plugin, loaded inside a grading run, that records each graded test's outcome.

No Kafka twin: the reporting half of kafka_lite's lab grader.

The grader copies this file beside its overlay as ``kafka_lite_grade_plugin`` and starts pytest in
a subprocess with ``-p kafka_lite_grade_plugin`` and the
environment variables ``KAFKA_LITE_LAB`` (which lab) and ``KAFKA_LITE_GRADE_REPORT`` (where to
write). Tests of other labs are deselected; for each graded test the JSON report holds its
points, whether it passed, and the exception type and message of a failure (setup errors count).
"""

from __future__ import annotations

import json
import os

import pytest

_results: dict[str, dict] = {}


def _lab() -> int:
    return int(os.environ["KAFKA_LITE_LAB"])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("lab")
        (keep if marker is not None and marker.args and marker.args[0] == _lab() else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    for item in keep:
        points = item.get_closest_marker("points")
        _results[item.nodeid] = {
            "test": item.name,
            "points": int(points.args[0]) if points else 1,
            "passed": False,
            "error_type": None,
            "error": "not run",
        }


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    result = _results.get(item.nodeid)
    if result is None:
        return
    if report.when == "call" and report.passed:
        result.update(passed=True, error_type=None, error="")
    elif report.failed and result["error"] in (
        "not run",
        "",
    ):  # keep the first failure (setup before teardown)
        if call.excinfo is not None:
            lines = call.excinfo.exconly().strip().splitlines()
            result.update(
                passed=False,
                error_type=call.excinfo.typename,
                error=lines[0] if lines else call.excinfo.typename,
            )
        else:
            result.update(
                passed=False, error_type="Error", error=str(report.longrepr).strip().splitlines()[-1]
            )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("KAFKA_LITE_GRADE_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"exitstatus": int(exitstatus), "results": list(_results.values())}, f)
