"""How a command reports an application's failure: the error and every cause under it."""

from __future__ import annotations

import pytest

from kafka_lite.cli import with_causes

pytestmark = pytest.mark.unit


def test_an_error_shows_each_cause_under_it_as_a_java_trace_does():
    try:
        try:
            try:
                raise KeyError("the checkpoint")
            except KeyError as e:
                raise ValueError("task [1_0] could not restore") from e
        except ValueError as e:
            raise RuntimeError("Failed to rebalance") from e
    except RuntimeError as e:
        assert with_causes(e).splitlines() == [
            "RuntimeError: Failed to rebalance",
            "Caused by: ValueError: task [1_0] could not restore",
            "Caused by: KeyError: 'the checkpoint'",
        ]
