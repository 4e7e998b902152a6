"""Time and MockTime: mock time moves only when told, and wakes its waiters when it does."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.time import SYSTEM, MockTime, wait_until

pytestmark = pytest.mark.unit


def test_mock_time_moves_only_when_advanced():
    time = MockTime(start_ms=1_000)
    assert time.milliseconds() == 1_000
    assert time.milliseconds() == 1_000
    time.sleep(250)
    assert time.milliseconds() == 1_250
    assert time.nanoseconds() == 250_000_000
    with pytest.raises(ValueError, match="backwards"):
        time.advance(-1)


def test_auto_tick_advances_on_every_read():
    time = MockTime(auto_tick_ms=5, start_ms=0)
    assert [time.milliseconds() for _ in range(3)] == [5, 10, 15]


def test_wait_for_times_out_on_mock_time_not_real_time():
    time = MockTime()
    cond = threading.Condition()
    result = {}

    def waiter():
        with cond:
            result["ok"] = time.wait_for(cond, lambda: False, timeout_ms=10_000)

    t = threading.Thread(target=waiter)
    t.start()
    # Ten mock seconds pass in one call; the waiter must notice and give up, without real sleeping.
    time.advance(10_000)
    t.join(timeout=5)
    assert not t.is_alive()
    assert result == {"ok": False}


def test_wait_for_returns_when_the_predicate_holds():
    time = MockTime()
    cond = threading.Condition()
    state = {"ready": False}
    result = {}

    def waiter():
        with cond:
            result["ok"] = time.wait_for(cond, lambda: state["ready"], timeout_ms=60_000)

    t = threading.Thread(target=waiter)
    t.start()
    with cond:
        state["ready"] = True
        cond.notify_all()
    t.join(timeout=5)
    assert result == {"ok": True}
    assert time.milliseconds() == MockTime().milliseconds()  # no mock time had to pass


def test_system_time_is_monotonic():
    a = SYSTEM.nanoseconds()
    b = SYSTEM.nanoseconds()
    assert b >= a
    assert SYSTEM.milliseconds() > 1_500_000_000_000


def test_wait_until_returns_what_the_condition_returned_once_it_is_truthy():
    time = MockTime()
    answers = iter([None, 0, [], "led by 2"])
    assert wait_until(lambda: next(answers), "a leader", 1, time) == "led by 2"
    assert time.milliseconds() == 1_500_000_000_000 + 3 * 20  # three polls apart, on the mock clock


def test_wait_until_counts_an_exception_as_not_yet_and_names_the_last_one_when_time_runs_out():
    time = MockTime()
    calls = []

    def refused():
        calls.append(time.milliseconds())
        raise ConnectionRefusedError("node 3 restarting")

    with pytest.raises(TimeoutError, match=r"after 0.1 s waiting for node 3 .*ConnectionRefusedError"):
        wait_until(refused, "node 3", 0.1, time, poll_ms=40)
    assert len(calls) == 4  # at 0, 40, 80 and 120 ms: the deadline (100 ms) is passed after the fourth
