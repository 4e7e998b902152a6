"""Lab 9: consumer lag over time, from ``__consumer_offsets`` and the topic's own records.

No Kafka twin: the lag an operator watches, as ``kafka-consumer-groups.sh --describe`` prints it
(``LAG = LOG-END-OFFSET - CURRENT-OFFSET``, kafka.admin.ConsumerGroupCommand, Kafka 0.10.1) and as
lag monitors such as LinkedIn's Burrow follow it over time, here computed after the fact with Spark.
Book:    chapter 3, 3.5.2 (offsets committed to the internal topic); chapter 4, 4.4 (committing
         offsets); chapter 6, 6.1 (the log end offset)
Labs:    lab 9 (all three stages)

``kafka-consumer-groups.sh`` shows the lag *now*: it asks the coordinator for the committed offsets
and each partition's leader for its log end offset (ListOffsets, latest). Both are histories,
though. ``__consumer_offsets`` keeps every commit (until compaction), each with its commit time;
and the log end offset of a partition at time t is one past the largest offset of a record written
by then, which the topic's records and their timestamps say. So the lag at each commit is an as-of
join of the two histories: for each commit, the log end offset of its partition at the commit's time.

The functions take and return DataFrames and use only Spark's built-in functions (no Python UDF):
the work stays in the JVM, and the graders check the physical plan for Python evaluation.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

COMMITTED_COLUMNS = ["group", "topic", "partition", "commit_time", "committed_offset", "advanced"]
LOG_END_COLUMNS = ["topic", "partition", "timestamp", "log_end_offset"]
LAG_COLUMNS = ["group", "topic", "partition", "commit_time", "committed_offset", "log_end_offset", "lag"]
WINDOW_COLUMNS = ["group", "window_start", "window_end", "commits", "max_lag", "avg_lag"]


# -- stage 1: the committed offsets over time -----------------------------------------------------------


def committed_offsets(commits: DataFrame) -> DataFrame:
    """Each group's commits over time, one row per commit, with the columns ``COMMITTED_COLUMNS``.

    ``commits`` is ``consumer_offsets.offset_commits(...)`` of ``__consumer_offsets``: ``group``,
    ``topic``, ``partition``, ``offset``, ``metadata``, ``commit_timestamp``, ``expire_timestamp``,
    ``record_partition``, ``record_offset``, ``record_timestamp``. Leave out the tombstones (a null
    ``offset``: an offset deleted, not committed). Rename ``commit_timestamp`` to ``commit_time`` and
    ``offset`` to ``committed_offset``. ``advanced`` is how far this commit moved the group's offset
    on the partition: ``committed_offset`` minus the same group's previous commit on the same topic
    partition, null for its first commit. "Previous" is in the order the coordinator wrote them:
    by ``commit_time``, then ``record_partition``, then ``record_offset`` (one OffsetCommit request
    commits several partitions at the same millisecond).
    """
    # BEGIN SOLUTION
    order = Window.partitionBy("group", "topic", "partition").orderBy(
        "commit_timestamp", "record_partition", "record_offset"
    )
    return (
        commits.where(F.col("offset").isNotNull())
        .withColumn("advanced", F.col("offset") - F.lag("offset").over(order))
        .select(
            "group",
            "topic",
            "partition",
            F.col("commit_timestamp").alias("commit_time"),
            F.col("offset").alias("committed_offset"),
            "advanced",
        )
    )
    # END SOLUTION


# -- stage 2: the log end offsets over time ---------------------------------------------------------------


def log_end_offsets(records: DataFrame) -> DataFrame:
    """Each partition's log end offset over time, with the columns ``LOG_END_COLUMNS``.

    ``records`` is a topic as the ``kafka_lite`` source reads it (Spark's Kafka schema: ``key``,
    ``value``, ``topic``, ``partition``, ``offset``, ``timestamp``, ``timestampType``). One row per
    topic, partition and distinct record ``timestamp``: ``log_end_offset`` is the log end offset of
    the partition at that time, one past the largest offset of the partition's records whose
    timestamp is at or before it. (A producer's timestamps are its clock's: a later offset may carry
    an earlier time. The log end offset never goes back, so the largest offset *up to* the time
    counts, not the largest at that exact time.)
    """
    # BEGIN SOLUTION
    so_far = (
        Window.partitionBy("topic", "partition")
        .orderBy("timestamp")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    return (
        records.groupBy("topic", "partition", "timestamp")
        .agg(F.max("offset").alias("max_offset"))
        .select(
            "topic",
            "partition",
            "timestamp",
            (F.max("max_offset").over(so_far) + 1).alias("log_end_offset"),
        )
    )
    # END SOLUTION


# -- stage 3: the lag at each commit, and per window ----------------------------------------------------


def lag_at_commits(committed: DataFrame, log_end: DataFrame) -> DataFrame:
    """The lag of each commit, with the columns ``LAG_COLUMNS``.

    ``committed`` has stage 1's columns, ``log_end`` stage 2's. For each commit, ``log_end_offset``
    is its partition's log end offset at ``commit_time``: the ``log_end_offset`` of the latest row of
    ``log_end`` for the same topic and partition with ``timestamp`` at or before ``commit_time`` (0
    when there is none: nothing had been written yet). ``lag`` is ``log_end_offset -
    committed_offset``. Every commit has exactly one row (an as-of join: Spark has no such join, so
    build it from a join and an aggregation or a window).
    """
    # BEGIN SOLUTION
    # A row id per commit: two commits alike in every column still get a row each.
    c = committed.withColumn("commit_id", F.monotonically_increasing_id()).alias("c")
    e = log_end.alias("e")
    joined = c.join(
        e,
        (F.col("c.topic") == F.col("e.topic"))
        & (F.col("c.partition") == F.col("e.partition"))
        & (F.col("e.timestamp") <= F.col("c.commit_time")),
        "left",
    )
    # The log end offset only grows with time, so the latest one at or before the commit is the largest.
    keys = [F.col(f"c.{name}").alias(name) for name in ("commit_id", *COMMITTED_COLUMNS)]
    return (
        joined.groupBy(*keys)
        .agg(F.coalesce(F.max("e.log_end_offset"), F.lit(0)).alias("log_end_offset"))
        .select(
            "group",
            "topic",
            "partition",
            "commit_time",
            "committed_offset",
            "log_end_offset",
            (F.col("log_end_offset") - F.col("committed_offset")).alias("lag"),
        )
    )
    # END SOLUTION


def lag_per_window(lag: DataFrame, window_duration: str) -> DataFrame:
    """Each group's lag per tumbling window of ``commit_time``, with the columns ``WINDOW_COLUMNS``.

    ``lag`` has ``lag_at_commits``' columns; ``window_duration`` is Spark's interval string
    (``"2 seconds"``, ``"1 minute"``). One row per group and window that has commits:
    ``window_start`` and ``window_end`` bound the window, ``commits`` counts its commits (all
    partitions together), ``max_lag`` is their largest lag, ``avg_lag`` their mean (a double).
    """
    # BEGIN SOLUTION
    return (
        lag.groupBy("group", F.window("commit_time", window_duration).alias("w"))
        .agg(
            F.count("*").alias("commits"),
            F.max("lag").alias("max_lag"),
            F.avg("lag").alias("avg_lag"),
        )
        .select(
            "group",
            F.col("w.start").alias("window_start"),
            F.col("w.end").alias("window_end"),
            "commits",
            "max_lag",
            "avg_lag",
        )
    )
    # END SOLUTION
