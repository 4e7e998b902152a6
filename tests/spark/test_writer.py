"""The kafka_lite sink: a DataFrame written to a topic reads back equal, batch and streaming; a
DataFrame the sink cannot take fails with Spark's message, before any job starts."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.spark.spark_topics import read
from tests.support.cluster import LiteCluster

pytestmark = pytest.mark.spark

SCHEMA = "key string, value binary, partition int, headers array<struct<key:string,value:binary>>"


@pytest.fixture(scope="module")
def kafka(zookeeper, tmp_path_factory):
    cluster = LiteCluster(zookeeper.connect_string, tmp_path_factory.mktemp("spark-writer"), brokers=2)
    cluster.start()
    try:
        cluster.create_topic("written", partitions=3)
        cluster.create_topic("copied", partitions=2)
        yield cluster
    finally:
        cluster.stop()


def written_rows() -> list[tuple]:
    return [
        (
            None if i % 9 == 0 else f"k{i % 4}",
            b"value-%d" % i,
            i % 3,
            [("n", b"%d" % i)] if i % 4 == 0 else [],
        )
        for i in range(120)
    ]


def as_written(df) -> Counter:
    """Key, value, partition and headers of each row, as a multiset."""
    return Counter(
        (
            None if r.key is None else bytes(r.key),
            bytes(r.value),
            r.partition,
            tuple((h.key, bytes(h.value)) for h in r.headers),
        )
        for r in df.select("key", "value", "partition", "headers").collect()
    )


def test_a_dataframe_written_in_batch_and_by_a_stream_reads_back_equal(spark, kafka, tmp_path):
    servers = kafka.bootstrap_servers
    df = spark.createDataFrame(written_rows(), SCHEMA).repartition(4)
    df.write.format("kafka_lite").option("kafka.bootstrap.servers", servers).option("topic", "written").mode(
        "append"
    ).save()
    back = read(
        spark, **{"kafka.bootstrap.servers": servers, "subscribe": "written", "includeHeaders": "true"}
    )
    expected = Counter((None if k is None else k.encode(), v, p, tuple(h)) for k, v, p, h in written_rows())
    assert as_written(back) == expected

    # A stream copies the topic to another one; its partitioner picks the partitions this time.
    query = (
        spark.readStream.format("kafka_lite")
        .option("kafka.bootstrap.servers", servers).option("subscribe", "written")
        .option("startingOffsets", "earliest").option("includeHeaders", "true").load()
        .select("key", "value", "headers")
        .writeStream.format("kafka_lite")
        .option("kafka.bootstrap.servers", servers).option("topic", "copied")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True).start()
    )  # fmt: skip
    assert query.awaitTermination(120), "the query did not finish within 120 s"
    assert query.exception() is None
    copied = read(
        spark, **{"kafka.bootstrap.servers": servers, "subscribe": "copied", "includeHeaders": "true"}
    )

    def without_partition(counter: Counter) -> Counter:
        return Counter({(k, v, h): n for (k, v, _, h), n in counter.items()})

    assert without_partition(as_written(copied)) == without_partition(expected)


def test_what_the_sink_cannot_take_fails_before_any_job(spark, kafka):
    servers = kafka.bootstrap_servers
    context = spark.sparkContext
    context.setJobGroup("kafka_lite-sink-errors", "bad writes")
    cases = [
        (spark.createDataFrame([("k",)], "key string"), {"topic": "written"}, "Required attribute 'value' not found"),
        (spark.createDataFrame([("v",)], "value string"), {}, "topic option required when no 'topic' attribute"),
        (spark.createDataFrame([("v", 1)], "value string, key int"), {"topic": "t"}, "key attribute type must be a string or binary"),
        (spark.createDataFrame([("v",)], "value string"), {"topic": "t", "kafka.lingr.ms": "5"}, "Unknown configuration 'lingr.ms'"),
    ]  # fmt: skip
    try:
        for df, options, message in cases:
            with pytest.raises(Exception, match=message):
                df.write.format("kafka_lite").option("kafka.bootstrap.servers", servers).options(
                    **options
                ).mode("append").save()
        value_only = spark.createDataFrame([("v",)], "value string")
        with pytest.raises(Exception, match="Allowed save modes are Append"):
            value_only.write.format("kafka_lite").option("kafka.bootstrap.servers", servers).option(
                "topic", "t"
            ).mode("overwrite").save()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert context.statusTracker().getJobIdsForGroup("kafka_lite-sink-errors") == []
