"""Offsets and planning without Spark: Spark's offset JSON, ranges split by minPartitions, the read
limit shared as Spark's rateLimit shares it, and data loss as failOnDataLoss decides."""

from __future__ import annotations

import logging

import pytest

from kafka_lite.spark.offsets import (
    DataLossException,
    OffsetRange,
    check_range_start,
    from_json_dict,
    get_ranges,
    plan_micro_batch,
    rate_limit,
    to_json_dict,
)

pytestmark = pytest.mark.unit


def test_offset_json_is_sparks():
    offsets = {("b", 1): 7, ("a", 10): 3, ("a", 2): 5}
    nested = to_json_dict(offsets)
    assert nested == {"a": {"2": 5, "10": 3}, "b": {"1": 7}}
    assert from_json_dict(nested) == offsets
    assert from_json_dict('{"a":{"2":5,"10":3},"b":{"1":7}}') == offsets  # as a checkpoint holds it


def test_ranges_without_min_partitions_are_one_per_partition_and_never_empty():
    ranges = [OffsetRange("t", 0, 0, 10), OffsetRange("t", 1, 5, 5), OffsetRange("t", 2, 3, 4)]
    assert get_ranges(ranges) == [OffsetRange("t", 0, 0, 10), OffsetRange("t", 2, 3, 4)]
    assert get_ranges(ranges, min_partitions=2) == [OffsetRange("t", 0, 0, 10), OffsetRange("t", 2, 3, 4)]


def test_min_partitions_splits_the_large_ranges_as_kafka_offset_range_calculator_does():
    # Spark's KafkaOffsetRangeCalculatorSuite: sizes 1 and 10 000 with minPartitions 3: the small one
    # stays whole, the large one takes the two remaining parts.
    ranges = [OffsetRange("t", 1, 1, 2), OffsetRange("t", 2, 1, 10_001)]
    assert get_ranges(ranges, min_partitions=3) == [
        OffsetRange("t", 1, 1, 2),
        OffsetRange("t", 2, 1, 5_001),
        OffsetRange("t", 2, 5_001, 10_001),
    ]
    # Uneven sizes: the last part of a range takes the remainder; parts round half up (Scala's round).
    split = get_ranges([OffsetRange("t", 0, 0, 10), OffsetRange("t", 1, 0, 30)], min_partitions=4)
    assert split == [
        OffsetRange("t", 0, 0, 10),
        OffsetRange("t", 1, 0, 10),
        OffsetRange("t", 1, 10, 20),
        OffsetRange("t", 1, 20, 30),
    ]
    assert sum(r.size for r in split) == 40
    # 25 / 50 * 5 = 2.5 parts: Scala rounds half up, to 3 (Python's round would give 2).
    halves = get_ranges([OffsetRange("t", 0, 0, 25), OffsetRange("t", 1, 0, 25)], min_partitions=5)
    assert [(r.partition, r.size) for r in halves] == [(0, 8), (0, 8), (0, 9), (1, 8), (1, 8), (1, 9)]


def test_rate_limit_shares_the_limit_by_backlog_and_never_starves_a_partition():
    start = {("t", 0): 0, ("t", 1): 0, ("t", 2): 100}
    latest = {("t", 0): 1000, ("t", 1): 10, ("t", 2): 100}
    limited = rate_limit(101, start, latest, {})
    # backlog 1000 and 10 of 1010: 101 * 1000/1010 = 100.0 -> 100; 101 * 10/1010 = 1.0 -> 1
    assert limited == {("t", 0): 100, ("t", 1): 1, ("t", 2): 100}
    # a share under one offset is rounded up: the small partition still moves
    assert rate_limit(10, {("t", 0): 0, ("t", 1): 0}, {("t", 0): 1000, ("t", 1): 1}, {}) == {
        ("t", 0): 9,
        ("t", 1): 1,
    }
    # a limit above the backlog reads everything
    assert rate_limit(10**6, start, latest, {}) == latest
    # a partition new since the start begins at its earliest offset
    assert rate_limit(10, {("t", 0): 0}, {("t", 0): 10, ("t", 1): 20}, {("t", 1): 10}) == {
        ("t", 0): 5,
        ("t", 1): 15,
    }


def test_a_micro_batch_plan_starts_new_partitions_at_earliest_and_reports_lost_ones(caplog):
    start = {("t", 0): 5}
    end = {("t", 0): 9, ("t", 1): 4}
    assert plan_micro_batch(start, end, {("t", 1): 0}, fail_on_data_loss=True) == [
        OffsetRange("t", 0, 5, 9),
        OffsetRange("t", 1, 0, 4),
    ]
    with pytest.raises(
        DataLossException, match=r"Added partition t-1 starts from 2 instead of 0.*failOnDataLoss"
    ):
        plan_micro_batch(start, end, {("t", 1): 2}, fail_on_data_loss=True)
    with pytest.raises(DataLossException, match=r"\[t-0\] are gone"):
        plan_micro_batch({("t", 0): 5, ("t", 1): 0}, {("t", 1): 4}, {}, fail_on_data_loss=True)
    with caplog.at_level(logging.WARNING):
        plan = plan_micro_batch({("t", 0): 9}, {("t", 0): 3}, {}, fail_on_data_loss=False)
    assert plan == []
    assert "offset was changed from 9 to 3" in caplog.text and '"failOnDataLoss" to "true"' in caplog.text


def test_a_range_below_the_log_start_fails_or_skips_forward(caplog):
    range_ = OffsetRange("t", 0, 10, 50)
    assert check_range_start(range_, log_start_offset=5, fail_on_data_loss=True) == 10
    with pytest.raises(
        DataLossException, match=r"records in \[10, 20\) are gone.*\"failOnDataLoss\" to \"false\""
    ):
        check_range_start(range_, log_start_offset=20, fail_on_data_loss=True)
    with caplog.at_level(logging.WARNING):
        assert check_range_start(range_, log_start_offset=20, fail_on_data_loss=False) == 20
    assert "records in [10, 20) are gone" in caplog.text
    assert check_range_start(range_, log_start_offset=80, fail_on_data_loss=False) == 50  # all gone
