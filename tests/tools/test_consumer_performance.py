"""ConsumerPerformance's lines under ``MockTime``: the summary's rates over the whole run and over
the fetch time (the run less its rebalances), and the detailed lines' windows."""

from __future__ import annotations

import time

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.tools.consumer_performance import ConsumerPerfStats, JoinTimer, format_date, header

pytestmark = pytest.mark.unit

MB = 1024 * 1024


def test_format_date_is_kafkas_with_milliseconds(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")  # local time, as Kafka's SimpleDateFormat: pinned here
    time.tzset()
    try:
        assert format_date(1_500_000_000_123) == "2017-07-14 02:40:00:123"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_summary_splits_the_run_into_rebalance_and_fetch_time():
    time = MockTime()
    stats = ConsumerPerfStats(time)
    timer = JoinTimer(stats)
    timer.on_partitions_revoked(set())
    time.sleep(500)  # the join takes 500 ms
    timer.on_partitions_assigned({("t", 0)})
    time.sleep(1500)
    stats.messages_read, stats.bytes_read, stats.end_ms = 3000, 2 * MB, time.milliseconds()
    fields = stats.summary().split(", ")
    assert fields[0] == format_date(stats.start_ms) and fields[1] == format_date(stats.start_ms + 2000)
    # 2 MB and 3000 records in 2 s, of which 500 ms joining: 1.5 s of fetching
    assert fields[2:] == ["2.0000", "1.0000", "3000", "1500.0000", "500", "1500", "1.3333", "2000.0000"]
    assert len(fields) == len(header(False).split(", "))


def test_detailed_lines_report_each_window_then_start_a_new_one():
    time = MockTime()
    stats = ConsumerPerfStats(time)
    stats.join_time_ms_in_round = 200
    time.sleep(1000)
    stats.messages_read, stats.bytes_read = 1000, MB
    first = stats.detailed(time.milliseconds()).split(", ")
    assert first[1:] == ["0", "1.0000", "1.0000", "1000", "1000.0000", "200", "800", "1.2500", "1250.0000"]
    time.sleep(2000)
    stats.messages_read, stats.bytes_read = 3000, 2 * MB
    second = stats.detailed(time.milliseconds()).split(", ")
    assert second[1:] == ["0", "2.0000", "0.5000", "3000", "1000.0000", "0", "2000", "0.5000", "1000.0000"]
    assert len(second) == len(header(True).split(", "))
