"""The data source's options, parsed and checked without Spark: Spark's names, Spark's errors, and a
message naming the option for everything kafka_lite does not take."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.spark.options import (
    OPTIONS,
    OffsetSpec,
    parse_partition_offsets,
    parse_partitions,
    parse_sink_options,
    parse_source_options,
)

pytestmark = pytest.mark.unit

SERVERS = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def source(streaming: bool = False, **options: str):
    return parse_source_options({**SERVERS, **options}, streaming=streaming)


def fails(match: str, streaming: bool = False, **options: str) -> None:
    with pytest.raises(IllegalArgumentException, match=match):
        source(streaming, **options)


def test_subscribe_assign_and_pattern():
    assert source(subscribe=" orders, ,payments ").topics == ("orders", "payments")
    assert source(assign='{"b":[1,0],"a":[2]}').assigned == (("a", 2), ("b", 0), ("b", 1))
    assert source(subscribePattern="or.*").pattern == "or.*"


def test_exactly_one_way_to_name_the_topics():
    fails(
        "One of the following options must be specified for Kafka source: assign, subscribe, subscribePattern"
    )
    fails("Only one of the following options can be specified.*subscribe, assign|assign, subscribe",
          subscribe="a", assign='{"a":[0]}')  # fmt: skip
    fails("No topics to subscribe to as specified value for option 'subscribe'", subscribe=" , ")
    fails("option 'assign'", assign="orders")
    fails("Option 'assign': expected e.g.", assign='{"a":["x"]}')
    fails("Option 'subscribePattern'.*not a regular expression", subscribePattern="(")


def test_option_names_ignore_case_as_sparks_do():
    # Spark hands a case-insensitive map whose keys come out lower-cased; a plain dict may keep them.
    parsed = parse_source_options(
        {
            "KAFKA.BOOTSTRAP.SERVERS": "h:1",
            "SUBSCRIBE": "t",
            "includeheaders": "TRUE",
            "maxoffsetspertrigger": "5",
        },
        streaming=True,
    )
    assert parsed.include_headers is True
    assert parsed.max_offsets_per_trigger == 5


def test_starting_and_ending_offsets():
    assert source(subscribe="t").starting == OffsetSpec("earliest", option="startingOffsets")
    assert source(True, subscribe="t").starting.kind == "latest"  # streams start at latest, as Spark's
    spec = source(
        subscribe="t", startingOffsets='{"t":{"0":23,"1":-2}}', endingOffsets='{"t":{"0":30,"1":-1}}'
    )
    assert spec.starting.offsets == {("t", 0): 23, ("t", 1): -2}
    assert spec.ending.offsets == {("t", 0): 30, ("t", 1): -1}
    assert source(subscribe="t", startingTimestamp="1000").starting == OffsetSpec(
        "timestamp", timestamp=1000, option="startingTimestamp"
    )


def test_bad_offsets_name_their_option():
    fails("Option 'startingOffsets': expected e.g.", subscribe="t", startingOffsets="{not json")
    fails("Option 'endingOffsets': expected e.g.", subscribe="t", endingOffsets='{"t":{"0":"x"}}')
    fails("starting offset can't be latest for batch queries", subscribe="t", startingOffsets="latest")
    fails("startingOffsets for t-0 can't be latest", subscribe="t", startingOffsets='{"t":{"0":-1}}')
    fails("ending offset can't be earliest", subscribe="t", endingOffsets="earliest")
    fails(
        "Option 'endingOffsets': ending offset not valid in streaming",
        True,
        subscribe="t",
        endingOffsets="latest",
    )
    fails("must name the same topic-partitions", subscribe="t",
          startingOffsets='{"t":{"0":1}}', endingOffsets='{"t":{"1":5}}')  # fmt: skip
    fails("t-0 starts at 9, after its end 5", subscribe="t",
          startingOffsets='{"t":{"0":9}}', endingOffsets='{"t":{"0":5}}')  # fmt: skip
    fails("Option 'startingTimestamp': expected a single long value", subscribe="t", startingTimestamp="noon")


def test_numbers_and_booleans_name_their_option():
    fails(
        "Option 'maxOffsetsPerTrigger' must be a whole number, got 'ten'",
        True,
        subscribe="t",
        maxOffsetsPerTrigger="ten",
    )
    fails("Option 'maxOffsetsPerTrigger' must be positive", True, subscribe="t", maxOffsetsPerTrigger="0")
    fails("Option 'minPartitions' must be a whole number", subscribe="t", minPartitions="1.5")
    fails("Option 'failOnDataLoss' must be true or false", subscribe="t", failOnDataLoss="yes")
    fails("Option 'kafka_lite.rows' must be arrow or tuples", subscribe="t", **{"kafka_lite.rows": "pandas"})
    fails("Option 'kafka.check.crcs' must be true or false", subscribe="t", **{"kafka.check.crcs": "no"})
    assert source(subscribe="t").client.check_crcs, "checked unless told otherwise, as Kafka's consumer"
    assert not source(subscribe="t", **{"kafka.check.crcs": "FALSE"}).client.check_crcs


def test_where_to_read_from():
    fails("Option 'kafka.bootstrap.servers' is empty", subscribe="t", **{"kafka.bootstrap.servers": " "})
    with pytest.raises(
        IllegalArgumentException, match=r"Option 'kafka\.bootstrap\.servers' must be specified"
    ):
        parse_source_options({"subscribe": "t"}, streaming=False)
    with pytest.raises(IllegalArgumentException, match="cannot both be set"):
        source(subscribe="t", **{"kafka_lite.log.dirs": "/tmp/x"})
    offline = parse_source_options({"subscribe": "t", "kafka_lite.log.dirs": "/a, /b"}, streaming=False)
    assert offline.client.log_dirs == ("/a", "/b") and offline.client.bootstrap_servers is None


def test_options_not_implemented_are_rejected_by_name():
    fails(
        "Option 'minOffsetsPerTrigger' is not implemented by kafka_lite",
        True,
        subscribe="t",
        minOffsetsPerTrigger="5",
    )
    fails("Option 'groupIdPrefix' is not implemented", subscribe="t", groupIdPrefix="x")
    fails("Option 'kafka.group.id' is not implemented", subscribe="t", **{"kafka.group.id": "g"})
    fails("Unknown option 'subscribepatern'", subscribe="t", subscribePatern="x")
    fails("Option 'kafka.fetch.min.bytes' is not implemented by kafka_lite's reader", subscribe="t",
          **{"kafka.fetch.min.bytes": "1"})  # fmt: skip


def test_kafka_settings_spark_forbids():
    fails("Kafka option 'auto.offset.reset' is not supported.*startingOffsets", subscribe="t",
          **{"kafka.auto.offset.reset": "earliest"})  # fmt: skip
    fails("'key.deserializer' is not supported", subscribe="t", **{"kafka.key.deserializer": "x"})
    fails("'value.deserializer' is not supported", subscribe="t", **{"kafka.value.deserializer": "x"})
    fails("'enable.auto.commit' is not supported", subscribe="t", **{"kafka.enable.auto.commit": "true"})
    fails("'interceptor.classes' is not supported", subscribe="t", **{"kafka.interceptor.classes": "x"})
    passed_on = source(subscribe="t", **{"kafka.request.timeout.ms": "1500", "kafka.client.id": "lab"})
    assert passed_on.client.request_timeout_ms == 1500
    assert passed_on.client.kafka_params["client.id"] == "lab"


def test_sink_options():
    sink = parse_sink_options({**SERVERS, "topic": " out ", "kafka.acks": "all", "kafka.linger.ms": "5"})
    assert sink.topic == "out"
    assert sink.producer_params == {"acks": "all", "linger.ms": "5"}
    # Spark hands a stream's sink its own checkpointLocation with the others: not an error.
    assert parse_sink_options({**SERVERS, "topic": "t", "checkpointLocation": "/tmp/ck"}).topic == "t"
    with pytest.raises(IllegalArgumentException, match=r"'key\.serializer' is not supported"):
        parse_sink_options({**SERVERS, "kafka.key.serializer": "x"})
    with pytest.raises(IllegalArgumentException, match="Option 'subscribe' is for reading"):
        parse_sink_options({**SERVERS, "subscribe": "t"})
    with pytest.raises(IllegalArgumentException, match="writing needs running brokers"):
        parse_sink_options({"kafka_lite.log.dirs": "/x", "topic": "t"})


def test_the_option_table_names_every_option_of_sparks_kafka_source_and_sink():
    names = {o.name for o in OPTIONS}
    spark = {
        "assign", "subscribe", "subscribePattern", "kafka.bootstrap.servers", "startingTimestamp",
        "startingOffsetsByTimestamp", "startingOffsets", "endingTimestamp", "endingOffsetsByTimestamp",
        "endingOffsets", "startingOffsetsByTimestampStrategy", "failOnDataLoss", "kafkaConsumer.pollTimeoutMs",
        "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "maxOffsetsPerTrigger", "minOffsetsPerTrigger",
        "maxTriggerDelay", "minPartitions", "maxRecordsPerPartition", "groupIdPrefix", "kafka.group.id",
        "includeHeaders", "topic",
    }  # fmt: skip
    assert spark <= names
    assert all(o.note for o in OPTIONS)


def test_json_helpers():
    assert parse_partitions('{"t":[1,0]}') == (("t", 0), ("t", 1))
    assert parse_partition_offsets('{"t":{"3":7}}', "startingOffsets") == {("t", 3): 7}
    with pytest.raises(IllegalArgumentException, match="No topicpartitions to assign"):
        parse_partitions("{}")
