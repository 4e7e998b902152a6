"""ProducerPerformance's Stats under MockTime: counts, sampled latencies, Kafka's percentiles, and its
window and summary lines character for character."""

from __future__ import annotations

import random
import re

import pytest

from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.time import MockTime
from kafka_lite.tools.producer_performance import Stats, percentiles, random_payload

pytestmark = pytest.mark.unit

# Kafka's printTotal format, as a pattern: what a script reading its output expects.
SUMMARY = re.compile(
    r"^(\d+) records sent, (\d+\.\d{6}) records/sec \((\d+\.\d\d) MB/sec\), (\d+\.\d\d) ms avg latency, "
    r"(\d+\.\d\d) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$"
)


def test_the_summary_line_is_kafkas_to_the_character():
    time = MockTime()
    stats = Stats(1000, time=time)
    latencies = list(range(1, 1001))
    random.Random(7).shuffle(latencies)  # completions arrive out of order; the percentiles sort them
    for i, latency in enumerate(latencies):
        stats.record(i, latency, 100, time.milliseconds())
    time.sleep(2000)
    line = stats.total_line()
    assert line == (
        "1000 records sent, 500.000000 records/sec (0.05 MB/sec), 500.50 ms avg latency, "
        "1000.00 ms max latency, 501 ms 50th, 951 ms 95th, 991 ms 99th, 1000 ms 99.9th."
    )
    assert SUMMARY.match(line)


def test_the_percentiles_are_kafkas_nearest_rank_below():
    assert percentiles([5, 1, 4, 2, 3], 5, 0.5, 0.95, 0.99, 0.999) == [3, 5, 5, 5]
    assert percentiles([7, 9, 8, 0, 0], 3, 0.0, 0.5) == [7, 8], "only the first count are samples"
    assert percentiles([0], 0, 0.5, 0.999) == [0, 0], "no samples: Kafka reads the empty array's 0"


def test_one_latency_in_every_sampling_records_is_kept():
    stats = Stats(1_000_000, time=MockTime())
    assert stats.sampling == 2 and len(stats.latencies) == 500_001, "at most 500,000 samples"
    for i in range(10):
        stats.record(i, i * 10, 1, 0)
    assert stats.index == 5 and stats.latencies[:5] == [0, 20, 40, 60, 80]
    assert stats.count == 10 and stats.max_latency == 90, "every record counts; only samples are kept"
    assert percentiles(stats.latencies, stats.index, 0.5) == [40]


def test_a_window_line_every_reporting_interval():
    time = MockTime()
    lines: list[str] = []
    stats = Stats(100, reporting_interval_ms=5000, time=time, out=lines.append)
    for i, latency in enumerate([2, 4, 6, 8]):
        time.sleep(1000)
        stats.record(i, latency, 1024 * 1024, time.milliseconds())
    assert lines == []
    time.sleep(1000)
    stats.record(4, 10, 1024 * 1024, time.milliseconds())  # 5 s since the window opened
    assert lines == ["5 records sent, 1.0 records/sec (1.00 MB/sec), 6.0 ms avg latency, 10.0 max latency."]
    assert stats.window_count == 0 and stats.window_start == time.milliseconds(), "a new window"
    assert stats.count == 5, "the totals go on"


def test_a_callback_times_its_record_from_send_to_completion():
    time = MockTime()
    stats = Stats(10, time=time)
    first = stats.next_completion(time.milliseconds(), 100)
    time.sleep(3)
    second = stats.next_completion(time.milliseconds(), 100)
    time.sleep(4)
    second.on_completion(None)
    first.on_completion(None)
    assert (first.iteration, second.iteration) == (0, 1)
    assert (stats.count, stats.total_latency, stats.max_latency, stats.bytes) == (2, 11, 7, 200)
    assert sorted(stats.latencies[: stats.index]) == [4, 7]


def test_a_failed_send_is_counted_apart_from_the_latencies():
    time = MockTime()
    stats = Stats(10, time=time)
    callbacks = [stats.next_completion(time.milliseconds(), 100) for _ in range(3)]
    time.sleep(5)
    callbacks[0].on_completion(None)
    callbacks[1].on_error(TimeoutException("Expiring 1 record(s)"))
    callbacks[2].on_error(TimeoutException("Expiring 1 record(s) again"))
    assert (stats.count, stats.errors) == (1, 2)
    assert str(stats.first_error) == "Expiring 1 record(s)"
    assert stats.total_line().startswith("1 records sent,")


def test_the_payload_is_random_capital_letters_the_same_every_run():
    payload = random_payload(100)
    assert len(payload) == 100 and set(payload) <= set(range(ord("A"), ord("Z") + 1))
    assert len(set(payload)) > 10 and payload == random_payload(100)
    assert random_payload(0) == b""
