"""One windowed count, computed over one topic by kafka_lite Streams and by Spark through the
``kafka_lite`` source: equal on the same records, and different on a record that comes later than
Spark's watermark (the chapter 9 guide's "Streams beside Spark").

The records come in three rounds, each read by both before the next is produced: the first in
order, the second with records up to 8 s older than the newest seen so far (within Spark's 10 s
watermark delay), the third a single record 41 s older than the newest, whose window Spark's
watermark has already closed."""

from __future__ import annotations

import time
from collections import Counter, defaultdict

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.spark.window_counts import window_counts
from kafka_lite.streams.examples.window_counts import build_window_counts
from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
from tests.streams.cluster.support import latest_counts, running
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.spark

SIZE_MS = 10_000
# Ten minutes ago, rounded down to a window's start: the windows are T0, T0 + 10 s, ... Recent, since
# the broker deletes a segment whose newest record is older than its retention (7 days) by timestamp.
T0 = (int(time.time() * 1000) - 600_000) // SIZE_MS * SIZE_MS
WATERMARK_DELAY = "10 seconds"

# (key, seconds after T0), in the order produced.
IN_ORDER = [("alice", 1), ("bob", 3), ("alice", 6), ("carol", 9), ("bob", 12), ("alice", 14),
            ("carol", 18), ("alice", 21), ("bob", 25)]  # fmt: skip
# Each is at most 8 s older than the newest record before it.
OUT_OF_ORDER = [("alice", 17), ("carol", 31), ("alice", 38), ("bob", 31), ("carol", 44), ("alice", 36),
                ("bob", 49), ("carol", 42)]  # fmt: skip
# 41 s older than the newest (49 s): Spark's watermark is at 49 - 10 = 39 s, past its window's end.
TOO_LATE = [("alice", 8)]


def oracle(records: list[tuple[str, int]]) -> dict[str, int]:
    """The count per "key@window start", written plainly."""
    return dict(Counter(f"{key}@{T0 + s * 1000 - s * 1000 % SIZE_MS}" for key, s in records))


def produce(bootstrap: str, topic: str, records: list[tuple[str, int]]) -> None:
    """Send the records with explicit CreateTime timestamps, and wait for every acknowledgement."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="beside-spark-producer")
    try:
        futures = [
            producer.send(topic, key=key.encode(), value=b"view", timestamp_ms=T0 + s * 1000)
            for key, s in records
        ]
        producer.flush()
        for future in futures:
            future.get()
    finally:
        producer.close()


def spark_counts(rows) -> dict[str, int]:
    """``window_counts``' rows as "key@start" -> count. In update mode a micro-batch writes a row
    for each window it changed, so a window's count is its largest row."""
    counts: dict[str, int] = {}
    for row in rows:
        name = f"{row['key']}@{row['window_start']}"
        counts[name] = max(counts.get(name, 0), row["count"])
    return counts


def start_stream(spark, source: dict[str, str], table: str, checkpoint: str):
    """``window_counts`` under a 10 s watermark, each micro-batch's changed windows appended to the
    in-memory table ``table`` (update mode)."""
    records = spark.readStream.format("kafka_lite").options(**source).option("startingOffsets", "earliest")
    counts = window_counts(records.load(), "10 seconds", WATERMARK_DELAY)
    writer = counts.writeStream.format("memory").queryName(table).outputMode("update")
    return writer.option("checkpointLocation", checkpoint).start()


def test_streams_and_spark_count_the_same_windows_until_a_record_is_later_than_the_watermark(
    spark, cluster, tmp_path
):
    bootstrap = cluster.bootstrap_servers
    views, counts_topic = topic_name("views"), topic_name("view-counts")
    cluster.create_topic(views, partitions=2)
    cluster.create_topic(counts_topic, partitions=2)
    source = {"kafka.bootstrap.servers": bootstrap, "subscribe": views}
    builder = build_window_counts(KStreamBuilder(), views, counts_topic, size_ms=SIZE_MS)
    table = f"beside_{counts_topic.replace('-', '_')}"

    query = None
    produced: list[tuple[str, int]] = []
    with running(builder, bootstrap, topic_name("window-counts"), tmp_path / "state"):
        try:
            for round_ in (IN_ORDER, OUT_OF_ORDER, TOO_LATE):
                produce(bootstrap, views, round_)
                produced += round_
                expected = oracle(produced)
                # Started after the first round is written, so that its first micro-batch is that round.
                query = query or start_stream(spark, source, table, str(tmp_path / "checkpoint"))
                query.processAllAvailable()
                wait_until(lambda: latest_counts(bootstrap, counts_topic) == expected, 30,  # noqa: B023 (called here, in this round)
                           "Streams to count the round")  # fmt: skip
            streamed = spark_counts(spark.table(table).collect())
            progress = query.recentProgress
        finally:
            if query is not None:
                query.stop()

    # --8<-- [start:beside]
    # A batch query has no watermark: it counts every record, as Streams does.
    batch = spark_counts(window_counts(spark.read.format("kafka_lite").options(**source).load()).collect())
    in_streams = latest_counts(bootstrap, counts_topic)
    assert in_streams == batch == oracle(produced)

    # The record after the watermark: Spark's stream dropped it, Streams counted it in its window.
    late_window = f"alice@{T0}"
    assert sum(op["numRowsDroppedByWatermark"] for p in progress for op in p["stateOperators"]) == 1
    assert streamed == {**batch, late_window: batch[late_window] - 1}
    assert in_streams[late_window] == 3

    # Streams forwards every update of a count as it makes it: its output is a changelog of counts.
    updates = defaultdict(list)
    for record in read_topic(bootstrap, counts_topic):
        updates[record.key.decode()].append(int.from_bytes(record.value, "big", signed=True))
    assert updates[late_window] == [1, 2, 3]
    # --8<-- [end:beside]
