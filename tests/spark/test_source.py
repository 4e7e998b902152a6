"""The kafka_lite data source read through the network back-end, checked against kafka_lite's own
consumer: exact ranges across segment rolls and compacted gaps, headers, both row paths, streaming
restarts, and option errors that fail before any Spark job starts."""

from __future__ import annotations

import json

import pytest
from pyspark.testing import assertSchemaEqual

from kafka_lite.spark import KAFKA_SCHEMA
from kafka_lite.spark.source import KAFKA_SCHEMA_WITH_HEADERS
from tests.spark.spark_topics import consume, produce, read, rows
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until

pytestmark = pytest.mark.spark

ORDERS_PER_PARTITION = 60


def order(i: int, partition: int) -> tuple:
    key = None if i % 11 == 0 else b"customer-%d" % (i % 7)
    headers = [("trace", b"t%d" % i), ("empty", None)] if i % 5 == 0 else None
    value = None if i == 13 else b'{"order": %d, "amount": %d}' % (i, i * 3)
    return key, value, headers, partition


@pytest.fixture(scope="module")
def kafka(zookeeper, tmp_path_factory):
    """Two brokers with the cleaner on: ``orders`` (3 partitions, segments of 1 KiB, headers, a null
    key and a null value) and ``prices`` (compacted, with gaps the cleaner left)."""
    cluster = LiteCluster(
        zookeeper.connect_string, tmp_path_factory.mktemp("spark-source"), brokers=2,
        **{"log.cleaner.enable": True, "log.cleaner.backoff.ms": 100},
    )  # fmt: skip
    cluster.start()
    try:
        cluster.create_topic("orders", partitions=3, segment_bytes=1024)
        produce(
            cluster.bootstrap_servers,
            "orders",
            [order(i, p) for p in range(3) for i in range(ORDERS_PER_PARTITION)],
        )
        cluster.create_topic("prices", partitions=2, cleanup_policy="compact", segment_bytes=400,
                             min_cleanable_dirty_ratio=0.01)  # fmt: skip
        produce(cluster.bootstrap_servers, "prices",
                [(b"sku-%d" % (i % 4), b"%d" % i, None, i % 2) for i in range(240)])  # fmt: skip

        def compacted() -> bool:
            remaining = consume(cluster.bootstrap_servers, {("prices", 0): (0, 120), ("prices", 1): (0, 120)})
            return len(remaining) < 200

        wait_until(compacted, timeout_s=60, what="the cleaner to compact prices")

        def cleaned_for_good() -> bool:
            # No pass left that the cleaner would make on prices: a test's reads cannot straddle one.
            return not any(
                c.dirty_bytes > 0 and c.cleanable_ratio > c.log.config.min_cleanable_ratio
                for server in cluster.servers
                for c in server.log_manager.cleaner.cleanable_logs()
                if c.tp[0] == "prices"
            )

        wait_until(cleaned_for_good, timeout_s=60, what="the cleaner's last pass over prices")
        yield cluster
    finally:
        cluster.stop()


def test_a_batch_read_returns_exactly_the_requested_ranges(spark, kafka):
    servers = kafka.bootstrap_servers
    starting = {"orders": {"0": 7, "1": -2, "2": 45}}
    ending = {"orders": {"0": 52, "1": 30, "2": -1}}
    options = {
        "kafka.bootstrap.servers": servers,
        "subscribe": "orders",
        "startingOffsets": json.dumps(starting),
        "endingOffsets": json.dumps(ending),
        "includeHeaders": "true",
    }
    expected = consume(servers, {("orders", 0): (7, 52), ("orders", 1): (0, 30), ("orders", 2): (45, 60)})
    arrow = read(spark, **options)
    assertSchemaEqual(arrow.schema, KAFKA_SCHEMA_WITH_HEADERS)
    got = rows(arrow)
    assert got == expected
    assert any(
        r[7] == [("trace", b"t10"), ("empty", None)] for r in got
    )  # headers round-trip, null value too
    assert any(r[3] is None for r in got) and any(r[4] is None for r in got)
    # The plain tuple path gives the same rows, and so does a read split into more Spark partitions.
    assert rows(read(spark, **options, **{"kafka_lite.rows": "tuples"})) == expected
    split = read(spark, **options, minPartitions="6")
    assert split.rdd.getNumPartitions() >= 6
    assert rows(split) == expected


def test_subscribe_pattern_assign_and_the_schema_without_headers(spark, kafka):
    servers = kafka.bootstrap_servers
    everything = read(spark, **{"kafka.bootstrap.servers": servers, "subscribePattern": "ord.*"})
    assertSchemaEqual(everything.schema, KAFKA_SCHEMA)
    assert everything.count() == 3 * ORDERS_PER_PARTITION
    assigned = read(spark, **{"kafka.bootstrap.servers": servers, "assign": '{"orders":[2]}'})
    assert [tuple(r) for r in assigned.groupBy("partition").count().collect()] == [(2, ORDERS_PER_PARTITION)]
    # startingTimestamp: each partition from its first record at or after the time (ListOffsets by time);
    # partition 0 was written first, so every partition has one.
    everything_expected = consume(servers, {("orders", p): (0, ORDERS_PER_PARTITION) for p in range(3)})
    time = next(r[5] for r in everything_expected if r[1] == 0 and r[2] == 30)
    firsts = {p: min(r[2] for r in everything_expected if r[1] == p and r[5] >= time) for p in range(3)}
    since = read(spark, **{"kafka.bootstrap.servers": servers, "subscribe": "orders", "startingTimestamp": str(time),
                           "includeHeaders": "true"})  # fmt: skip
    assert rows(since) == [r for r in everything_expected if r[2] >= firsts[r[1]]]


def test_compacted_gaps_and_segment_rolls(spark, kafka):
    servers = kafka.bootstrap_servers
    expected = consume(servers, {("prices", 0): (0, 120), ("prices", 1): (0, 120)})
    got = rows(read(spark, **{"kafka.bootstrap.servers": servers, "subscribe": "prices"}))
    assert got == [(*r[:7], []) for r in expected]
    offsets = {r[2] for r in expected if r[1] == 0}
    gap = next(o for o in range(120) if o not in offsets)  # an offset the cleaner removed
    # A range ending at (and one starting at) a compacted offset still ends where it should.
    ranged = read(
        spark, **{"kafka.bootstrap.servers": servers, "assign": '{"prices":[0]}',
                  "startingOffsets": json.dumps({"prices": {"0": gap}}), "endingOffsets": json.dumps({"prices": {"0": 120}})},
    )  # fmt: skip
    assert rows(ranged) == [(*r[:7], []) for r in expected if r[1] == 0 and r[2] >= gap]
    upto = read(spark, **{"kafka.bootstrap.servers": servers, "assign": '{"prices":[0]}',
                          "endingOffsets": json.dumps({"prices": {"0": gap}})})  # fmt: skip
    assert rows(upto) == [(*r[:7], []) for r in expected if r[1] == 0 and r[2] < gap]


def test_a_stream_restarted_from_its_checkpoint_neither_skips_nor_repeats(spark, kafka, tmp_path):
    servers = kafka.bootstrap_servers
    kafka.create_topic("events", partitions=3)
    produce(servers, "events", [(b"k", b"first-%d" % i, None, i % 3) for i in range(90)])
    checkpoint, output = str(tmp_path / "checkpoint"), str(tmp_path / "output")

    # A file sink, as a job that must not lose or double a record would use: it writes each
    # micro-batch's files and commits them in its own log, so a restart shows exactly what the source
    # handed it. (foreachBatch would also do, but it calls back into this process through py4j's
    # callback server, which waits with select() and fails once a test worker holds 1,024 files.)
    def start(**trigger):
        stream = (
            spark.readStream.format("kafka_lite")
            .option("kafka.bootstrap.servers", servers)
            .option("subscribe", "events")
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "25")
            .load()
        )
        return (
            stream.selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
            .writeStream.format("json").option("path", output)
            .option("checkpointLocation", checkpoint).trigger(**trigger).start()
        )  # fmt: skip

    def batch_sizes(query) -> list[int]:
        return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]

    first = start(availableNow=True)
    assert first.awaitTermination(120), "the query did not finish within 120 s"
    assert first.exception() is None
    sizes = batch_sizes(first)
    assert sum(sizes) == 90 and max(sizes) <= 25 and len(sizes) >= 4
    assert json.loads(first.lastProgress["sources"][0]["endOffset"]) == {
        "events": {"0": 30, "1": 30, "2": 30}
    }

    produce(servers, "events", [(b"k", b"second-%d" % i, None, i % 3) for i in range(39)])
    second = start(processingTime="200 milliseconds")
    try:
        wait_until(
            lambda: sum(batch_sizes(second)) >= 39,
            timeout_s=90,
            what="the restarted query to read what was added",
        )
        produce(servers, "events", [(b"k", b"third-%d" % i, None, i % 3) for i in range(6)])
        wait_until(lambda: sum(batch_sizes(second)) >= 45, timeout_s=90, what="records added while it runs")
    finally:
        second.stop()
    records = [tuple(r) for r in spark.read.json(output).select("partition", "offset", "value").collect()]
    assert len(records) == len(set(records)) == 135  # nothing repeated, nothing skipped
    assert {(p, o) for p, o, _ in records} == {(p, o) for p in range(3) for o in range(45)}
    assert sorted(v for _, _, v in records if v.startswith("third-")) == sorted(
        f"third-{i}" for i in range(6)
    )


BAD_OPTIONS = [
    ({"subscribe": "orders", "assign": '{"orders":[0]}'}, "Only one of the following options"),
    (
        {},
        "One of the following options must be specified for Kafka source: assign, subscribe, subscribePattern",
    ),
    (
        {"subscribe": "orders", "startingOffsets": '{"orders":{"0":'},
        "Option 'startingOffsets': expected e.g.",
    ),
    (
        {"subscribe": "orders", "endingOffsets": '{"orders":{"0":5}}'},
        "Option 'endingOffsets': if it contains specific offsets",
    ),
    ({"subscribe": "orders", "minPartitions": "many"}, "Option 'minPartitions' must be a whole number"),
    (
        {"subscribe": "orders", "minOffsetsPerTrigger": "5"},
        "Option 'minOffsetsPerTrigger' is not implemented",
    ),
    (
        {"subscribe": "orders", "kafka.auto.offset.reset": "earliest"},
        "Kafka option 'auto.offset.reset' is not supported",
    ),
]


def test_option_errors_fail_before_any_job_starts(spark, kafka):
    context = spark.sparkContext
    context.setJobGroup("kafka_lite-option-errors", "bad options")
    try:
        for options, message in [
            *[({"kafka.bootstrap.servers": kafka.bootstrap_servers, **o}, m) for o, m in BAD_OPTIONS],
            (
                {
                    "kafka.bootstrap.servers": "127.0.0.1:1",
                    "subscribe": "orders",
                    "kafka.request.timeout.ms": "1500",
                },
                "Option 'kafka.bootstrap.servers': no broker of 127.0.0.1:1 answered",
            ),
        ]:
            with pytest.raises(Exception, match=message):
                read(spark, **options).collect()
        # A stream's options fail when the query starts, in the driver, before its first batch.
        query = (
            spark.readStream.format("kafka_lite")
            .options(**{"kafka.bootstrap.servers": kafka.bootstrap_servers, "subscribe": "orders"})
            .option("maxOffsetsPerTrigger", "ten").load()
            .writeStream.format("noop").start()
        )  # fmt: skip
        with pytest.raises(
            Exception, match="Option 'maxOffsetsPerTrigger' must be a whole number, got 'ten'"
        ):
            query.awaitTermination(60)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert context.statusTracker().getJobIdsForGroup("kafka_lite-option-errors") == []
