"""Schedulers: MockScheduler runs exactly what falls due; KafkaScheduler runs tasks on its thread."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.utils.scheduler import KafkaScheduler, MockScheduler

pytestmark = pytest.mark.unit


def test_mock_scheduler_runs_periodic_and_one_shot_tasks_in_time_order():
    time = MockTime(start_ms=0)
    scheduler = MockScheduler(time)
    scheduler.startup()
    runs = []
    scheduler.schedule(
        "every-100", lambda: runs.append(("p", time.milliseconds())), delay_ms=100, period_ms=100
    )
    scheduler.schedule("once-250", lambda: runs.append(("o", time.milliseconds())), delay_ms=250)
    assert scheduler.tick() == 0
    assert scheduler.advance(350) == 4
    assert runs == [("p", 100), ("p", 200), ("o", 250), ("p", 300)]
    assert scheduler.task_names() == ["every-100"]


def test_a_failing_task_keeps_its_schedule():
    time = MockTime(start_ms=0)
    scheduler = MockScheduler(time)
    scheduler.startup()
    calls = []

    def boom():
        calls.append(1)
        raise RuntimeError("boom")

    scheduler.schedule("boom", boom, delay_ms=10, period_ms=10)
    scheduler.advance(35)
    assert len(calls) == 3


def test_kafka_scheduler_runs_on_its_thread_and_stops():
    scheduler = KafkaScheduler()
    scheduler.startup()
    done = threading.Event()
    names = []
    scheduler.schedule("now", lambda: (names.append(threading.current_thread().name), done.set()))
    assert done.wait(timeout=10)
    scheduler.shutdown()
    assert names == ["kafka-scheduler"]
    with pytest.raises(RuntimeError, match="not running"):
        scheduler.schedule("late", lambda: None)
