"""Lab 14's page view count (one-minute windows, kept ten minutes), computed over one topic by
kafka_lite Streams and by Spark through the ``kafka_lite`` source: equal on the same records, and
different on a view that comes later than Spark's watermark (the chapter 9 guide's "Streams beside
Spark").

The views come in three rounds, each read by both before the next is produced: the first in order,
the second with views up to 48 s older than the newest seen so far (within Spark's one-minute
watermark delay), the third a single view 246 s older than the newest, whose window Spark's
watermark has already closed and Streams still keeps."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.spark.page_view_counts import page_view_counts
from kafka_lite.streams.examples import page_view_demo
from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from tests.streams.cluster.support import running
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.spark

VIEWS, COUNTS = page_view_demo.PAGE_VIEWS_TOPIC, page_view_demo.PAGE_VIEW_COUNTS_TOPIC
MINUTE = page_view_demo.WINDOW_SIZE_MS
# Half an hour ago, rounded down to a window's start: the windows are T0, T0 + 1 min, ... Recent,
# since the broker deletes a segment whose newest record is older than its retention (7 days).
T0 = (int(time.time() * 1000) - 30 * MINUTE) // MINUTE * MINUTE
WATERMARK_DELAY = "1 minute"

# (user, page, seconds after T0), in the order produced.
IN_ORDER = [("u1", "/home", 6), ("u2", "/cart", 18), ("u3", "/home", 36), ("u1", "/pay", 54),
            ("u2", "/cart", 72), ("u4", "/home", 84), ("u3", "/pay", 108), ("u1", "/home", 126),
            ("u4", "/cart", 150)]  # fmt: skip
# Each at most 48 s older than the newest view before it.
OUT_OF_ORDER = [("u2", "/home", 102), ("u3", "/pay", 186), ("u4", "/home", 228), ("u1", "/cart", 186),
                ("u2", "/pay", 264), ("u3", "/home", 216), ("u1", "/cart", 294), ("u4", "/pay", 252)]  # fmt: skip
# 246 s older than the newest (294 s): Spark's watermark is at 294 - 60 = 234 s, past its window's
# end (60 s); Streams keeps the window ten minutes.
TOO_LATE = [("u2", "/home", 48)]


def oracle(views: list[tuple[str, str, int]]) -> dict[str, int]:
    """The count per "page@window start", written plainly."""
    return dict(Counter(f"{page}@{T0 + s * 1000 - s * 1000 % MINUTE}" for _, page, s in views))


def produce(bootstrap: str, views: list[tuple[str, str, int]]) -> None:
    """Send the views with explicit CreateTime timestamps, and wait for every acknowledgement."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="beside-spark-producer")
    try:
        futures = [
            producer.send(VIEWS, key=user.encode(), value=page.encode(), timestamp_ms=T0 + s * 1000)
            for user, page, s in views
        ]
        producer.flush()
        for future in futures:
            future.get()
    finally:
        producer.close()


def streams_updates(bootstrap: str) -> dict[str, list[int]]:
    """Every count the Streams program wrote, in order, per "page@window start"."""
    updates = defaultdict(list)
    for record in read_topic(bootstrap, COUNTS):
        key = json.loads(record.key)
        updates[f"{key['page']}@{key['window_start']}"].append(
            int.from_bytes(record.value, "big", signed=True)
        )
    return dict(updates)


def streams_counts(bootstrap: str) -> dict[str, int]:
    """The latest count per window: the table the output's changelog describes."""
    return {window: counts[-1] for window, counts in streams_updates(bootstrap).items()}


def spark_counts(rows) -> dict[str, int]:
    """``page_view_counts``' rows as "page@window start" -> count. In update mode a micro-batch
    writes a row for each window it changed, so a window's count is its largest row."""
    counts: dict[str, int] = {}
    for row in rows:
        name = f"{row['page']}@{row['window_start']}"
        counts[name] = max(counts.get(name, 0), row["count"])
    return counts


def start_stream(spark, source: dict[str, str], table: str, checkpoint: str):
    """``page_view_counts`` under a one-minute watermark, each micro-batch's changed windows appended
    to the in-memory table ``table`` (update mode)."""
    views = spark.readStream.format("kafka_lite").options(**source).option("startingOffsets", "earliest")
    counts = page_view_counts(views.load(), WATERMARK_DELAY)
    writer = counts.writeStream.format("memory").queryName(table).outputMode("update")
    return writer.option("checkpointLocation", checkpoint).start()


def test_streams_and_spark_count_the_same_windows_until_a_view_is_later_than_the_watermark(
    spark, cluster, tmp_path
):
    bootstrap = cluster.bootstrap_servers
    cluster.create_topic(VIEWS, partitions=2)
    cluster.create_topic(COUNTS, partitions=2)
    source = {"kafka.bootstrap.servers": bootstrap, "subscribe": VIEWS}
    builder = KStreamBuilder()
    page_view_demo.page_view_counts(builder)
    table = f"beside_{topic_name('page_view_counts').replace('-', '_')}"

    query = None
    produced: list[tuple[str, str, int]] = []
    with running(builder, bootstrap, topic_name("page-view-counts"), tmp_path / "state"):
        try:
            for round_ in (IN_ORDER, OUT_OF_ORDER, TOO_LATE):
                produce(bootstrap, round_)
                produced += round_
                expected = oracle(produced)
                # Started after the first round is written, so that its first micro-batch is that round.
                query = query or start_stream(spark, source, table, str(tmp_path / "checkpoint"))
                query.processAllAvailable()
                wait_until(lambda: streams_counts(bootstrap) == expected, 30,  # noqa: B023 (called here, in this round)
                           "Streams to count the round")  # fmt: skip
            streamed = spark_counts(spark.table(table).collect())
            progress = query.recentProgress
        finally:
            if query is not None:
                query.stop()

    # --8<-- [start:beside]
    # A batch query has no watermark: it counts every view, as Streams does.
    batch = spark_counts(page_view_counts(spark.read.format("kafka_lite").options(**source).load()).collect())
    in_streams = streams_counts(bootstrap)
    assert in_streams == batch == oracle(produced)

    # The view after the watermark: Spark's stream dropped it, Streams counted it in its window.
    late_window = f"/home@{T0}"
    assert sum(op["numRowsDroppedByWatermark"] for p in progress for op in p["stateOperators"]) == 1
    assert streamed == {**batch, late_window: batch[late_window] - 1}
    assert in_streams[late_window] == 3

    # Streams' record cache forwards a window's count at most once per commit: its output is a
    # changelog of counts. Round 1's two views of the window give 2 (1 first only if a commit fell
    # between them); the late view, 3.
    assert streams_updates(bootstrap)[late_window] in ([2, 3], [1, 2, 3])
    # --8<-- [end:beside]
