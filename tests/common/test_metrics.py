"""Sensor: the count, total, maximum and mean of what was recorded."""

from __future__ import annotations

import pytest

from kafka_lite.common.metrics import Sensor

pytestmark = pytest.mark.unit


def test_a_sensor_keeps_count_total_max_and_mean():
    sensor = Sensor("fetch-latency")
    assert (sensor.count, sensor.total, sensor.max, sensor.avg) == (0, 0.0, 0.0, 0.0)
    for value in (4, 10, 1):
        sensor.record(value)
    assert (sensor.count, sensor.total, sensor.max, sensor.avg) == (3, 15.0, 10, 5.0)
    negative = Sensor("offset-delta")
    negative.record(-3)
    assert negative.max == -3, "the first value is the maximum, whatever its sign"
    assert repr(sensor) == "Sensor('fetch-latency', count=3, avg=5, max=10)"
