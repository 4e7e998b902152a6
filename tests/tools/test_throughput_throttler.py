"""ThroughputThrottler under MockTime: a loop that asks it after every send keeps the target pace,
to the millisecond, and an unthrottled or slower loop is never held back."""

from __future__ import annotations

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.tools.throughput_throttler import ThroughputThrottler

pytestmark = pytest.mark.unit


def _loop(throttler: ThroughputThrottler, time: MockTime, records: int, send_cost_ms: int = 0) -> int:
    """The perf tool's loop with sends that take ``send_cost_ms`` each; the mock ms it took."""
    start = time.milliseconds()
    for i in range(records):
        send_start_ms = time.milliseconds()
        time.sleep(send_cost_ms)
        if throttler.should_throttle(i, send_start_ms):
            throttler.throttle()
    return time.milliseconds() - start


@pytest.mark.parametrize("target", [1000, 3000, 250])
def test_instant_sends_are_held_to_the_target_rate(target):
    time = MockTime()
    throttler = ThroughputThrottler(target, time.milliseconds(), time)
    time.sleep(1)  # Kafka's check needs some time to have passed before it can say "too fast"
    records = 3 * target  # three seconds' worth at the target
    elapsed_ms = _loop(throttler, time, records) + 1
    # Each throttle owes 1/target s and pays in sleeps of >= 2 ms; the first record owes nothing (no
    # record was sent before it), so the loop ends at most one interval and one sleep short of the
    # exact pace, and never past it.
    interval_ms = 1000 / target
    assert 3000 - interval_ms - 2 <= elapsed_ms <= 3000, f"{records} records at {target}/s: {elapsed_ms} ms"


def test_a_fraction_of_a_millisecond_owed_is_carried_to_the_next_sleep():
    # At 3000/s each record owes 333,333 ns. A whole-millisecond sleep that dropped the rest would
    # sleep 2 ms per 7 records (3500/s): 6000 records in about 1714 ms. Carried, the pace is exact.
    time = MockTime()
    throttler = ThroughputThrottler(3000, time.milliseconds(), time)
    time.sleep(1)
    elapsed_ms = _loop(throttler, time, 6000) + 1
    assert abs(elapsed_ms - 2000) <= 2, elapsed_ms


def test_a_loop_slower_than_the_target_is_never_held_back():
    time = MockTime()
    throttler = ThroughputThrottler(1000, time.milliseconds(), time)
    assert _loop(throttler, time, 500, send_cost_ms=2) == 1000  # 500/s by itself: no sleep added


@pytest.mark.parametrize("target", [-1, -5.0])
def test_a_negative_target_means_no_limit(target):
    time = MockTime()
    throttler = ThroughputThrottler(target, time.milliseconds(), time)
    time.sleep(1)
    assert not throttler.should_throttle(1_000_000, time.milliseconds())
    assert _loop(throttler, time, 10_000) == 0
    throttler.throttle()  # asked anyway: nothing owed, no sleep
    assert throttler.sleep_deficit_ns == 0


def test_should_throttle_compares_the_rate_so_far_with_the_target():
    time = MockTime()
    start = time.milliseconds()
    throttler = ThroughputThrottler(100, start, time)
    assert not throttler.should_throttle(50, start), "no time passed yet: Kafka never throttles then"
    assert not throttler.should_throttle(100, start + 1000), "exactly on target"
    assert throttler.should_throttle(101, start + 1000)
    assert throttler.should_throttle(2, start + 10)


def test_sleeps_come_in_steps_of_at_least_two_milliseconds():
    time = MockTime()
    throttler = ThroughputThrottler(1000, time.milliseconds(), time)  # 1 ms owed per record
    before = time.milliseconds()
    throttler.throttle()
    assert time.milliseconds() == before, "1 ms owed is not yet worth a sleep"
    throttler.throttle()
    assert time.milliseconds() == before + 2 and throttler.sleep_deficit_ns == 0


def test_a_zero_target_is_refused():
    with pytest.raises(ValueError, match="-1 means no limit"):
        ThroughputThrottler(0, 0, MockTime())
