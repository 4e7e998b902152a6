"""Rate and SimpleRate over sampled windows, and a QuotaSensor's check against its quota, on MockTime:
values land in windows, the rate divides by the time the live windows span, and what was recorded
ages out once all the windows have passed."""

from __future__ import annotations

import pytest

from kafka_lite.common.quota import MetricConfig, Quota, QuotaViolationException
from kafka_lite.common.rate import QuotaSensor, Rate, SimpleRate
from kafka_lite.common.time import MockTime

pytestmark = pytest.mark.unit

T0 = 1_000_000


def test_simple_rate_divides_by_the_elapsed_time_but_never_less_than_one_window():
    config = MetricConfig(samples=3, time_window_ms=1000)
    rate = SimpleRate()
    rate.record(config, 1000, T0)
    assert rate.measure(config, T0 + 10) == 1000.0, "10 ms after the first value: one window, not 10 ms"
    rate.record(config, 2000, T0 + 1500)
    assert rate.measure(config, T0 + 2000) == pytest.approx(3000 / 2.0)


def test_rate_assumes_all_but_one_window_have_passed():
    config = MetricConfig(samples=3, time_window_ms=1000)
    rate = Rate()
    rate.record(config, 3000, T0)
    # half a second of history in three one-second windows: two whole windows plus the half
    assert rate.measure(config, T0 + 500) == pytest.approx(3000 / 2.5)


def test_samples_rotate_and_the_oldest_is_reused():
    config = MetricConfig(samples=2, time_window_ms=1000)
    rate = SimpleRate()
    for i, value in enumerate((100, 200, 400)):
        rate.record(config, value, T0 + i * 1000)
    assert sorted(s.value for s in rate.stat.samples) == [200, 400], "the first window was recycled"
    assert len(rate.stat.samples) == 2


def test_a_sensor_crosses_its_bound_then_falls_back_as_the_windows_age_out():
    time = MockTime(start_ms=T0)
    config = MetricConfig(samples=11, time_window_ms=1000, quota=Quota.upper_bound(1000))
    sensor = QuotaSensor("byte-rate", SimpleRate(), config, time)

    sensor.record(900)
    sensor.check_quotas()  # 900 B over one window: within 1000 B/s
    with pytest.raises(QuotaViolationException) as e:
        sensor.record(600)  # recorded, and reported over the bound
    assert (e.value.value, e.value.bound) == (1500.0, 1000)
    with pytest.raises(QuotaViolationException):
        sensor.check_quotas()

    time.sleep(1000)  # 1500 B over 1 s, still over
    with pytest.raises(QuotaViolationException):
        sensor.check_quotas()
    time.sleep(600)  # 1500 B over 1.6 s: below 1000 B/s again
    sensor.check_quotas()
    assert sensor.measure() == pytest.approx(1500 / 1.6)

    with pytest.raises(QuotaViolationException):
        sensor.record(10_000)
    time.sleep(11 * 1000)  # every window is older than all eleven together: reset
    assert sensor.measure() == 0.0
    sensor.check_quotas()


def test_a_sensor_without_a_quota_is_never_violated_and_a_lower_bound_works_the_other_way():
    time = MockTime(start_ms=T0)
    sensor = QuotaSensor("byte-rate", SimpleRate(), MetricConfig(samples=2, time_window_ms=1000), time)
    sensor.record(10**12)
    sensor.check_quotas()
    assert not Quota.lower_bound(5).acceptable(4) and Quota.lower_bound(5).acceptable(5)
    assert Quota.upper_bound(5).acceptable(5) and not Quota.upper_bound(5).acceptable(5.1)
