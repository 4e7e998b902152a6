"""Lab 9 graded tests: consumer lag over time, from ``__consumer_offsets`` and the ``orders`` topic.

The data is the lab data (``kafka_lite.spark.lab_data``): a real cluster's log dirs after a scripted
day in which three groups (``billing``, ``analytics``, ``audit``) read ``orders`` at their own pace
and committed. The tests read it once per module with the ``kafka_lite`` source's offline back-end,
decode ``__consumer_offsets`` with ``consumer_offsets.offset_commits`` and work out every expected
answer in plain Python from the same rows, so the answers hold whatever times the run had. Each test
hands the student's function a DataFrame built from those rows (so its plan holds only the
student's work) and checks the physical plan for Python evaluation: the handout forbids UDFs.

Failure messages show the first rows that differ, expected beside what came back, with times as
``HH:MM:SS.mmm`` (UTC).
"""

from __future__ import annotations

import bisect
from collections import defaultdict

import pytest
from pyspark.sql import functions as F

from kafka_lite.spark import consumer_offsets, lab_data
from kafka_lite.spark.labs import consumer_lag
from kafka_lite.spark.labs.checks import assert_columns, assert_no_python, assert_rows

pytestmark = [pytest.mark.lab(9), pytest.mark.spark, pytest.mark.timeout(120)]

COMMITS_SCHEMA = (
    "group string, topic string, partition int, offset long, metadata string, commit_us long, "
    "expire_us long, record_partition int, record_offset long"
)
RECORDS_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, ts_us long, timestampType int"
)
COMMITTED_SCHEMA = (
    "group string, topic string, partition int, commit_us long, committed_offset long, advanced long"
)
LOG_END_SCHEMA = "topic string, partition int, ts_us long, log_end_offset long"


# -- the data, read once ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def commit_rows(spark):
    """Every offset commit record of __consumer_offsets, as plain tuples in COMMITS_SCHEMA's order."""
    decoded = consumer_offsets.offset_commits(lab_data.read(spark, consumer_offsets.TOPIC))
    rows = decoded.select(
        "group", "topic", "partition", "offset", "metadata",
        F.unix_micros("commit_timestamp"), F.unix_micros("expire_timestamp"),
        "record_partition", "record_offset",
    ).collect()  # fmt: skip
    assert rows, "the lab data's __consumer_offsets has no offset commits"
    return [tuple(r) for r in rows]


@pytest.fixture(scope="module")
def order_rows(spark):
    """The orders topic's records: (topic, partition, offset, timestamp in µs)."""
    rows = (
        lab_data.read(spark, lab_data.ORDERS_TOPIC)
        .select("topic", "partition", "offset", F.unix_micros("timestamp"))
        .collect()
    )
    assert rows, "the lab data's orders topic is empty"
    return [tuple(r) for r in rows]


def _commits_df(spark, rows):
    """offset_commits' columns and types, from plain tuples (times in µs)."""
    return spark.createDataFrame(rows, COMMITS_SCHEMA).select(
        "group", "topic", "partition", "offset", "metadata",
        F.timestamp_micros("commit_us").alias("commit_timestamp"),
        F.timestamp_micros("expire_us").alias("expire_timestamp"),
        "record_partition", "record_offset",
        F.timestamp_micros("commit_us").alias("record_timestamp"),
    )  # fmt: skip


def _records_df(spark, rows):
    """Spark's Kafka schema, from (topic, partition, offset, timestamp µs) tuples."""
    full = [(None, None, t, p, o, ts, 0) for t, p, o, ts in rows]
    return spark.createDataFrame(full, RECORDS_SCHEMA).select(
        "key", "value", "topic", "partition", "offset",
        F.timestamp_micros("ts_us").alias("timestamp"), "timestampType",
    )  # fmt: skip


def _committed_df(spark, rows):
    return spark.createDataFrame(rows, COMMITTED_SCHEMA).select(
        "group", "topic", "partition", F.timestamp_micros("commit_us").alias("commit_time"),
        "committed_offset", "advanced",
    )  # fmt: skip


def _log_end_df(spark, rows):
    return spark.createDataFrame(rows, LOG_END_SCHEMA).select(
        "topic", "partition", F.timestamp_micros("ts_us").alias("timestamp"), "log_end_offset"
    )


# -- the answers, worked out in plain Python ------------------------------------------------------------


def expected_committed(rows):
    """(group, topic, partition, commit µs, committed_offset, advanced) per commit, tombstones left out."""
    commits = sorted(
        (r for r in rows if r[3] is not None),
        key=lambda r: (r[0], r[1], r[2], r[5], r[7], r[8]),
    )
    out, previous = [], {}
    for group, topic, partition, offset, _meta, commit_us, _exp, _rp, _ro in commits:
        key = (group, topic, partition)
        advanced = offset - previous[key] if key in previous else None
        previous[key] = offset
        out.append((group, topic, partition, commit_us, offset, advanced))
    return out


def expected_log_end(rows):
    """(topic, partition, timestamp µs, log end offset) per partition and distinct record timestamp."""
    by_partition = defaultdict(lambda: defaultdict(lambda: -1))
    for topic, partition, offset, ts in rows:
        at = by_partition[(topic, partition)]
        at[ts] = max(at[ts], offset)
    out = []
    for (topic, partition), at in by_partition.items():
        highest = -1
        for ts in sorted(at):
            highest = max(highest, at[ts])
            out.append((topic, partition, ts, highest + 1))
    return out


def expected_lag(committed, log_end):
    """(group, topic, partition, commit µs, committed_offset, log_end_offset, lag) per commit."""
    steps = defaultdict(list)
    for topic, partition, ts, leo in sorted(log_end, key=lambda r: r[2]):
        steps[(topic, partition)].append((ts, leo))
    out = []
    for group, topic, partition, commit_us, offset, _advanced in committed:
        history = steps[(topic, partition)]
        i = bisect.bisect_right([ts for ts, _ in history], commit_us)
        leo = max((leo for _, leo in history[:i]), default=0)
        out.append((group, topic, partition, commit_us, offset, leo, leo - offset))
    return out


def expected_windows(lag, seconds):
    """(group, window start µs, window end µs, commits, max lag, avg lag) per group and window."""
    width = seconds * 1_000_000
    windows = defaultdict(list)
    for group, _t, _p, commit_us, _o, _leo, lag_value in lag:
        start = commit_us - commit_us % width
        windows[(group, start)].append(lag_value)
    return [
        (group, start, start + width, len(lags), max(lags), sum(lags) / len(lags))
        for (group, start), lags in windows.items()
    ]


# -- checking ---------------------------------------------------------------------------------------------


def _collect(df, columns, times):
    """The DataFrame's rows as tuples in ``columns``' order, the ``times`` columns as µs."""
    return [
        tuple(r)
        for r in df.select(*[F.unix_micros(c) if c in times else F.col(c) for c in columns]).collect()
    ]


T0 = 1_700_000_000_000_000  # a time in µs for the hand-made cases: 2023-11-14 22:13:20 UTC


def _s(seconds: float) -> int:
    return T0 + int(seconds * 1_000_000)


# -- stage 1: the committed offsets over time -------------------------------------------------------------


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_every_commit_of_every_group_is_a_row_with_its_time_and_offset(spark, commit_rows):
    got_df = consumer_lag.committed_offsets(_commits_df(spark, commit_rows))
    assert_columns(got_df, consumer_lag.COMMITTED_COLUMNS, "committed_offsets")
    assert_no_python(got_df, "committed_offsets")
    expected = [r[:5] for r in expected_committed(commit_rows)]
    columns = consumer_lag.COMMITTED_COLUMNS[:5]
    got = _collect(got_df, columns, {"commit_time"})
    assert_rows(got, expected, columns, 4, "committed_offsets on the lab data's commits")


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_advanced_is_the_step_from_the_groups_previous_commit_on_the_partition(spark, commit_rows):
    got_df = consumer_lag.committed_offsets(_commits_df(spark, commit_rows))
    assert_columns(got_df, consumer_lag.COMMITTED_COLUMNS, "committed_offsets")
    expected = expected_committed(commit_rows)
    columns = consumer_lag.COMMITTED_COLUMNS
    got = _collect(got_df, columns, {"commit_time"})
    assert_rows(
        got, expected, columns, 5,
        "committed_offsets' advanced column (the group's previous commit on the same partition: "
        "null for its first)",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_tombstones_are_left_out_and_commits_in_one_millisecond_keep_their_write_order(spark):
    # Two commits of group g on t-0 in the same millisecond: the record written later (record_offset
    # 8) is the later commit, though its offset is lower (the consumer seeked back and committed).
    # A tombstone (offset null) deletes an offset: it is not a commit.
    rows = [
        ("g", "t", 0, 5, "", _s(0), _s(60), 1, 3),
        ("g", "t", 0, 12, "", _s(1), _s(61), 1, 7),
        ("g", "t", 0, 9, "", _s(1), _s(61), 1, 8),
        ("g", "t", 0, None, None, None, None, 1, 9),
        ("g", "t", 1, 4, "", _s(1), _s(61), 1, 6),
        ("h", "t", 0, 2, "", _s(0.5), _s(60.5), 2, 0),
    ]
    got_df = consumer_lag.committed_offsets(_commits_df(spark, rows))
    assert_columns(got_df, consumer_lag.COMMITTED_COLUMNS, "committed_offsets")
    assert_no_python(got_df, "committed_offsets")
    expected = [
        ("g", "t", 0, _s(0), 5, None),
        ("g", "t", 0, _s(1), 12, 7),
        ("g", "t", 0, _s(1), 9, -3),
        ("g", "t", 1, _s(1), 4, None),
        ("h", "t", 0, _s(0.5), 2, None),
    ]
    got = _collect(got_df, consumer_lag.COMMITTED_COLUMNS, {"commit_time"})
    assert_rows(
        got, expected, consumer_lag.COMMITTED_COLUMNS, 5,
        "committed_offsets on six hand-made records (a tombstone among them; two commits in one ms, the later "
        "one going back)",
    )  # fmt: skip


# -- stage 2: the log end offsets over time ---------------------------------------------------------------


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_log_end_offset_at_each_record_time_counts_every_record_up_to_it(spark, order_rows):
    got_df = consumer_lag.log_end_offsets(_records_df(spark, order_rows))
    assert_columns(got_df, consumer_lag.LOG_END_COLUMNS, "log_end_offsets")
    assert_no_python(got_df, "log_end_offsets")
    got = _collect(got_df, consumer_lag.LOG_END_COLUMNS, {"timestamp"})
    assert_rows(
        got, expected_log_end(order_rows), consumer_lag.LOG_END_COLUMNS, 3,
        "log_end_offsets on the orders topic (one row per partition and distinct record timestamp)",
    )  # fmt: skip


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_records_sharing_a_millisecond_give_one_row_and_the_log_end_offset_never_goes_back(spark):
    # p0: offsets 0-2 at 1 s (one batch, one timestamp), 3 at 2 s, then 4 stamped 1.5 s by a producer
    # whose clock lags.
    rows = [
        ("t", 0, 0, _s(1)), ("t", 0, 1, _s(1)), ("t", 0, 2, _s(1)),
        ("t", 0, 3, _s(2)), ("t", 0, 4, _s(1.5)),
        ("t", 1, 0, _s(3)),
    ]  # fmt: skip
    got_df = consumer_lag.log_end_offsets(_records_df(spark, rows))
    assert_columns(got_df, consumer_lag.LOG_END_COLUMNS, "log_end_offsets")
    assert_no_python(got_df, "log_end_offsets")
    expected = [("t", 0, _s(1), 3), ("t", 0, _s(1.5), 5), ("t", 0, _s(2), 5), ("t", 1, _s(3), 1)]
    got = _collect(got_df, consumer_lag.LOG_END_COLUMNS, {"timestamp"})
    assert_rows(
        got, expected, consumer_lag.LOG_END_COLUMNS, 3,
        "log_end_offsets on six hand-made records (three in one ms; one stamped earlier than its predecessor)",
    )  # fmt: skip


# -- stage 3: the lag at each commit, and per window ------------------------------------------------------


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_the_lag_of_each_commit_is_the_log_end_offset_at_its_time_minus_its_offset(
    spark, commit_rows, order_rows
):
    committed, log_end = expected_committed(commit_rows), expected_log_end(order_rows)
    got_df = consumer_lag.lag_at_commits(_committed_df(spark, committed), _log_end_df(spark, log_end))
    assert_columns(got_df, consumer_lag.LAG_COLUMNS, "lag_at_commits")
    assert_no_python(got_df, "lag_at_commits")
    expected = expected_lag(committed, log_end)
    got = _collect(got_df, consumer_lag.LAG_COLUMNS, {"commit_time"})
    assert_rows(got, expected, consumer_lag.LAG_COLUMNS, 5, "lag_at_commits on the lab data")
    billing = {row[6] for row in got if row[0] == "billing"}
    assert billing == {0}, (
        f"billing commits everything it has read, so its lag is 0 at every commit; got {billing}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_commit_before_any_record_has_lag_zero_and_every_commit_keeps_its_row(spark):
    committed = [
        ("g", "t", 0, _s(0.5), 0, None),  # before the partition's first record: log end 0
        ("g", "t", 0, _s(2), 2, 2),  # exactly at a record's time: that record counts
        ("g", "t", 0, _s(2), 2, 2),  # the same commit again: a row of its own
        ("g", "t", 1, _s(9), 0, None),  # a partition without records
        ("h", "t", 0, _s(5), 1, None),
    ]
    log_end = [("t", 0, _s(1), 2), ("t", 0, _s(2), 3), ("t", 0, _s(4), 7)]
    got_df = consumer_lag.lag_at_commits(_committed_df(spark, committed), _log_end_df(spark, log_end))
    assert_columns(got_df, consumer_lag.LAG_COLUMNS, "lag_at_commits")
    assert_no_python(got_df, "lag_at_commits")
    expected = [
        ("g", "t", 0, _s(0.5), 0, 0, 0),
        ("g", "t", 0, _s(2), 2, 3, 1),
        ("g", "t", 0, _s(2), 2, 3, 1),
        ("g", "t", 1, _s(9), 0, 0, 0),
        ("h", "t", 0, _s(5), 1, 7, 6),
    ]
    got = _collect(got_df, consumer_lag.LAG_COLUMNS, {"commit_time"})
    assert_rows(got, expected, consumer_lag.LAG_COLUMNS, 5, "lag_at_commits on five hand-made commits")


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_each_groups_lag_per_two_second_window(spark, commit_rows, order_rows):
    lag = expected_lag(expected_committed(commit_rows), expected_log_end(order_rows))
    lag_df = spark.createDataFrame(
        lag,
        "group string, topic string, partition int, commit_us long, committed_offset long, "
        "log_end_offset long, lag long",
    ).select(
        "group", "topic", "partition", F.timestamp_micros("commit_us").alias("commit_time"),
        "committed_offset", "log_end_offset", "lag",
    )  # fmt: skip
    got_df = consumer_lag.lag_per_window(lag_df, "2 seconds")
    assert_columns(got_df, consumer_lag.WINDOW_COLUMNS, "lag_per_window")
    assert_no_python(got_df, "lag_per_window")
    got = _collect(got_df, consumer_lag.WINDOW_COLUMNS, {"window_start", "window_end"})
    assert_rows(
        got, expected_windows(lag, 2), consumer_lag.WINDOW_COLUMNS, 2,
        "lag_per_window(lag, '2 seconds') on the lab data's lag",
    )  # fmt: skip
