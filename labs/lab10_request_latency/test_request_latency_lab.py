"""Lab 10 graded tests: request latency percentiles per API and broker, from ``_request_metrics``.

The data is the lab data (``kafka_lite.spark.lab_data``): a real cluster's log dirs after a scripted
day, during which every broker's ``RequestMetricsTopicReporter`` published one JSON sample per
request it served. The tests read the topic once per module with the ``kafka_lite`` source's
offline back-end, parse the samples with Python's ``json`` and work out every expected answer in
plain Python (percentiles as ``percentile_approx`` has them below 10,000 values: the smallest value
with at least that share of the values at or below it). Each test hands the student's function a
DataFrame built from those rows, so its plan holds only the student's work, and checks the physical
plan for Python evaluation: the handout forbids UDFs.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

import pytest
from pyspark.sql import functions as F

from kafka_lite.spark import lab_data
from kafka_lite.spark.labs import request_latency as rl
from kafka_lite.spark.labs.checks import assert_columns, assert_no_python, assert_rows

pytestmark = [pytest.mark.lab(10), pytest.mark.spark, pytest.mark.timeout(120)]

RECORDS_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, ts_us long, timestampType int"
)
FIELDS_SCHEMA = (
    "time_us long, broker_id int, api string, api_version int, client_id string, request_bytes int, "
    "response_bytes int, " + ", ".join(f"{phase} double" for phase in rl.PHASES)
)


# -- the data, read once ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def metric_records(spark):
    """The topic's records: (key, value, partition, offset, timestamp µs)."""
    rows = (
        lab_data.read(spark, lab_data.REQUEST_METRICS_TOPIC)
        .select("key", "value", "partition", "offset", F.unix_micros("timestamp"))
        .collect()
    )
    assert rows, f"the lab data's {lab_data.REQUEST_METRICS_TOPIC} topic is empty"
    return [(bytes(k) if k is not None else None, bytes(v), p, o, ts) for k, v, p, o, ts in rows]


@pytest.fixture(scope="module")
def samples(metric_records):
    """The samples the brokers' own requests made, as tuples in METRICS_COLUMNS' order (time in µs)."""
    return expected_samples(metric_records)


def expected_samples(records):
    out = []
    for _key, value, _p, _o, _ts in records:
        s = json.loads(value)
        if s["client_id"].startswith(rl.REPORTER_CLIENT_PREFIX):
            continue
        out.append((s["time_ms"] * 1000, *(s[name] for name in rl.METRICS_COLUMNS[1:])))
    return out


def _records_df(spark, records):
    rows = [(k, v, lab_data.REQUEST_METRICS_TOPIC, p, o, ts, 0) for k, v, p, o, ts in records]
    return spark.createDataFrame(rows, RECORDS_SCHEMA).select(
        "key", "value", "topic", "partition", "offset",
        F.timestamp_micros("ts_us").alias("timestamp"), "timestampType",
    )  # fmt: skip


def _metrics_df(spark, samples):
    return spark.createDataFrame(samples, FIELDS_SCHEMA).select(
        F.timestamp_micros("time_us").alias("time"), *rl.METRICS_COLUMNS[1:]
    )


def _collect(df, columns, times=()):
    return [
        tuple(r)
        for r in df.select(*[F.unix_micros(c) if c in times else F.col(c) for c in columns]).collect()
    ]


# -- the answers, worked out in plain Python ------------------------------------------------------------


def percentile(values, q):
    """percentile_approx below its accuracy: the smallest value with a share q of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def column(name):
    return rl.METRICS_COLUMNS.index(name)


def expected_percentiles(samples):
    groups = defaultdict(list)
    for s in samples:
        groups[(s[column("broker_id")], s[column("api")])].append(s)
    out = []
    for (broker, api), rows in groups.items():

        def values(name, rows=rows):
            return [r[column(name)] for r in rows]

        total = values("total_time_ms")
        out.append((
            broker, api, len(rows), percentile(total, 0.5), percentile(total, 0.99),
            percentile(values("request_queue_time_ms"), 0.99), percentile(values("local_time_ms"), 0.99),
            percentile(values("remote_time_ms"), 0.99), max(total),
        ))  # fmt: skip
    return out


def expected_windows(samples, seconds):
    width = seconds * 1_000_000
    windows = defaultdict(list)
    for s in samples:
        t = s[column("time")]
        windows[(s[column("api")], t - t % width)].append(s[column("total_time_ms")])
    return [
        (api, start, start + width, len(totals), percentile(totals, 0.99))
        for (api, start), totals in windows.items()
    ]


def expected_slowest(samples, n):
    by_client = defaultdict(list)
    for s in samples:
        by_client[s[column("client_id")]].append(s)
    rows = []
    for client, mine in by_client.items():
        totals = [s[column("total_time_ms")] for s in mine]
        slowest = min(mine, key=lambda s: (-s[column("total_time_ms")], s[column("api")]))
        rows.append((client, len(mine), percentile(totals, 0.99), max(totals), slowest[column("api")]))
    rows.sort(key=lambda r: (-r[2], r[0]))
    return rows[:n]


def _sample(t_s, broker, api, client, total, queue=0.0, local=0.0, remote=0.0, version=0):
    """A hand-made sample, as the reporter writes it."""
    return {
        "broker_id": broker, "time_ms": 1_700_000_000_000 + int(t_s * 1000), "api": api,
        "api_version": version, "client_id": client, "request_bytes": 100, "response_bytes": 50,
        "request_queue_time_ms": queue, "local_time_ms": local, "remote_time_ms": remote,
        "response_queue_time_ms": 0.0, "response_send_time_ms": 0.0, "total_time_ms": total,
    }  # fmt: skip


def _as_records(samples):
    return [
        (str(s["broker_id"]).encode(), json.dumps(s).encode(), s["broker_id"], i, s["time_ms"] * 1000)
        for i, s in enumerate(samples)
    ]


# -- stage 1: the samples as columns ----------------------------------------------------------------------


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_every_sample_becomes_a_row_of_its_fields(spark, metric_records, samples):
    got_df = rl.parse_request_metrics(_records_df(spark, metric_records))
    assert_columns(got_df, rl.METRICS_COLUMNS, "parse_request_metrics")
    assert_no_python(got_df, "parse_request_metrics")
    got = _collect(got_df, rl.METRICS_COLUMNS, {"time"})
    assert_rows(
        got, samples, rl.METRICS_COLUMNS, 5,
        f"parse_request_metrics on the lab data's {lab_data.REQUEST_METRICS_TOPIC}",
    )  # fmt: skip


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_the_columns_have_the_fields_types_and_time_is_a_timestamp(spark):
    records = _as_records([_sample(0.25, 1, "Fetch", "c", 500.5, remote=499.0, version=5)])
    got_df = rl.parse_request_metrics(_records_df(spark, records))
    assert_columns(got_df, rl.METRICS_COLUMNS, "parse_request_metrics")
    types = dict(got_df.dtypes)
    expected = {
        "time": "timestamp", "broker_id": "int", "api": "string", "api_version": "int",
        "client_id": "string", "request_bytes": "int", "response_bytes": "int",
        **dict.fromkeys(rl.PHASES, "double"),
    }  # fmt: skip
    wrong = {name: (types[name], want) for name, want in expected.items() if types[name] != want}
    assert not wrong, f"column types (got, expected): {wrong}"
    got = _collect(got_df, ["time", "api_version", "remote_time_ms", "total_time_ms"], {"time"})
    assert got == [(1_700_000_000_250_000, 5, 499.0, 500.5)], (
        f"time_ms 1700000000250 should become the timestamp 2023-11-14 22:13:20.250 UTC; got {got}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_the_reporters_own_requests_are_left_out(spark):
    records = _as_records([
        _sample(0, 0, "Produce", "orders-service", 3.0),
        _sample(0, 0, "Produce", f"{rl.REPORTER_CLIENT_PREFIX}0", 2.0),
        _sample(1, 2, "Produce", f"{rl.REPORTER_CLIENT_PREFIX}2", 2.0),
        _sample(1, 2, "Metadata", "request-metrics-dashboard", 1.0),
    ])  # fmt: skip
    got_df = rl.parse_request_metrics(_records_df(spark, records))
    assert_no_python(got_df, "parse_request_metrics")
    got = sorted(r.client_id for r in got_df.select("client_id").collect())
    assert got == ["orders-service", "request-metrics-dashboard"], (
        f"the clients left: {got}; only ids starting with {rl.REPORTER_CLIENT_PREFIX!r} are the reporter's"
    )


# -- stage 2: percentiles per broker and API --------------------------------------------------------------


@pytest.mark.stage(2)
@pytest.mark.points(4)
def test_percentiles_per_broker_and_api(spark, samples):
    got_df = rl.latency_percentiles(_metrics_df(spark, samples))
    assert_columns(got_df, rl.PERCENTILE_COLUMNS, "latency_percentiles")
    assert_no_python(got_df, "latency_percentiles")
    got = _collect(got_df, rl.PERCENTILE_COLUMNS)
    expected = expected_percentiles(samples)
    assert_rows(got, expected, rl.PERCENTILE_COLUMNS, 2, "latency_percentiles on the lab data")
    apis = {row[1] for row in got}
    assert {"Produce", "Fetch", "OffsetCommit", "JoinGroup"} <= apis, f"APIs seen: {sorted(apis)}"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_percentiles_of_ten_requests(spark):
    # Totals 1..10 ms on one broker's Fetch: the median is 5 (half the values at or below it), the
    # 99th percentile 10; remote times 0, 0, ..., 0, 9: its 99th percentile is 9.
    rows = [
        _sample(i, 0, "Fetch", "c", float(i + 1), queue=0.5 * i, remote=9.0 if i == 9 else 0.0)
        for i in range(10)
    ]
    rows.append(_sample(0, 1, "Fetch", "c", 7.0))
    samples = expected_samples(_as_records(rows))
    got_df = rl.latency_percentiles(_metrics_df(spark, samples))
    assert_columns(got_df, rl.PERCENTILE_COLUMNS, "latency_percentiles")
    assert_no_python(got_df, "latency_percentiles")
    got = _collect(got_df, rl.PERCENTILE_COLUMNS)
    expected = [
        (0, "Fetch", 10, 5.0, 10.0, 4.5, 0.0, 9.0, 10.0),
        (1, "Fetch", 1, 7.0, 7.0, 0.0, 0.0, 0.0, 7.0),
    ]
    assert_rows(got, expected, rl.PERCENTILE_COLUMNS, 2, "latency_percentiles on eleven hand-made Fetches")


# -- stage 3: over time, and the slowest clients ----------------------------------------------------------


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_the_99th_percentile_per_api_and_five_second_window(spark, samples):
    got_df = rl.latency_per_window(_metrics_df(spark, samples), "5 seconds")
    assert_columns(got_df, rl.WINDOW_COLUMNS, "latency_per_window")
    assert_no_python(got_df, "latency_per_window")
    got = _collect(got_df, rl.WINDOW_COLUMNS, {"window_start", "window_end"})
    assert_rows(
        got, expected_windows(samples, 5), rl.WINDOW_COLUMNS, 2,
        "latency_per_window(metrics, '5 seconds') on the lab data",
    )  # fmt: skip


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_the_slowest_clients_come_first_with_their_slowest_api(spark, samples):
    got_df = rl.slowest_clients(_metrics_df(spark, samples), 3)
    assert_columns(got_df, rl.CLIENT_COLUMNS, "slowest_clients")
    assert_no_python(got_df, "slowest_clients")
    got = [tuple(r) for r in got_df.collect()]
    expected = expected_slowest(samples, 3)
    assert got == expected, (
        "slowest_clients(metrics, 3), in order:\n"
        + "\n".join(f"  got      {g}" for g in got)
        + "\n"
        + "\n".join(f"  expected {e}" for e in expected)
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_slowest_clients_breaks_ties_by_client_id(spark):
    rows = [
        _sample(0, 0, "Produce", "b", 9.0), _sample(1, 0, "Fetch", "b", 9.0),
        _sample(0, 1, "Fetch", "a", 9.0), _sample(1, 1, "Metadata", "c", 1.0),
    ]  # fmt: skip
    got_df = rl.slowest_clients(_metrics_df(spark, expected_samples(_as_records(rows))), 2)
    assert_no_python(got_df, "slowest_clients")
    got = [tuple(r) for r in got_df.collect()]
    assert got == [("a", 1, 9.0, 9.0, "Fetch"), ("b", 2, 9.0, 9.0, "Fetch")], (
        f"two clients with a p99 of 9 ms: a before b; b's slowest API is Fetch (Fetch and Produce tie "
        f"at 9 ms, and Fetch comes first alphabetically); c is third and left out. Got {got}"
    )
