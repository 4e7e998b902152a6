"""``reduce``, ``aggregate`` and ``count`` of a grouped stream: per-key results in the store and out,
repartitioning only when the key may have changed, records with a null key dropped."""

from __future__ import annotations

import pytest

from kafka_lite.streams.kstream import KeyValue, KStreamBuilder

from .support import LONG, STRING, driver_for, pipe, read_all

pytestmark = pytest.mark.unit


def test_reduce_folds_each_keys_values_from_the_first_one():
    builder = KStreamBuilder()
    joined = (
        builder.stream("in", key_serde=STRING, value_serde=STRING)
        .group_by_key(STRING, STRING)
        .reduce(lambda aggregate, value: aggregate + "," + value, "joined")
    )
    joined.to_stream().to("out", STRING, STRING)
    assert joined.get_store_name() == "joined"
    assert builder.internal_topic_names == set()  # the key is the source's: no repartition
    driver = driver_for(builder)
    for key, value in [("x", "1"), ("y", "2"), ("x", "3"), ("x", "4")]:
        pipe(driver, "in", key, value)
    assert read_all(driver, "out") == [("x", "1"), ("y", "2"), ("x", "1,3"), ("x", "1,3,4")]
    assert dict(driver.get_state_store("joined").all()) == {"x": "1,3,4", "y": "2"}
    assert "KSTREAM-REDUCE-0000000001" in builder.node_factories


def test_aggregate_after_map_repartitions_by_the_new_key():
    builder = KStreamBuilder()
    lengths = (
        builder.stream("in", key_serde=STRING, value_serde=STRING)
        .map(lambda key, value: KeyValue(value[0], value))  # key by the first letter
        .group_by_key(STRING, STRING)
        .aggregate(lambda: 0, lambda key, value, total: total + len(value), LONG, "lengths")
    )
    lengths.to_stream().to("out", STRING, LONG)
    assert builder.internal_topic_names == {"lengths-repartition"}
    driver = driver_for(builder)
    for key, value in [("1", "apple"), ("2", "avocado"), ("3", "banana"), ("4", "apricot")]:
        pipe(driver, "in", key, value)
    assert read_all(driver, "app-lengths-repartition") == [
        ("a", "apple"), ("a", "avocado"), ("b", "banana"), ("a", "apricot"),
    ]  # fmt: skip
    assert read_all(driver, "out", STRING, LONG) == [("a", 5), ("a", 12), ("b", 6), ("a", 19)]
    assert dict(driver.get_state_store("lengths").all()) == {"a": 19, "b": 6}


def test_aggregate_starts_from_the_initializer_for_each_key():
    builder = KStreamBuilder()
    builder.stream("in", key_serde=STRING, value_serde=STRING).group_by_key(STRING, STRING).aggregate(
        lambda: "<", lambda key, value, aggregate: aggregate + value, STRING, "concat"
    ).to_stream().to("out", STRING, STRING)
    driver = driver_for(builder)
    for key, value in [("k", "a"), ("j", "b"), ("k", "c")]:
        pipe(driver, "in", key, value)
    assert read_all(driver, "out") == [("k", "<a"), ("j", "<b"), ("k", "<ac")]


def test_a_record_with_no_key_is_not_counted():
    builder = KStreamBuilder()
    # group_by to None: dropped by the filter before the repartition topic.
    builder.stream("in", value_serde=STRING).group_by(
        lambda key, value: None if value == "skip" else value, STRING, STRING
    ).count("by-value")
    # group_by_key with no repartition: dropped by the aggregate itself.
    builder.stream("keyed", key_serde=STRING, value_serde=STRING).group_by_key(STRING, STRING).count("by-key")
    driver = driver_for(builder)
    for value in ["v", "skip", "v", "w"]:
        pipe(driver, "in", None, value)
    pipe(driver, "keyed", None, "x")
    pipe(driver, "keyed", "k", "x")
    assert read_all(driver, "app-by-value-repartition") == [("v", "v"), ("v", "v"), ("w", "w")]
    assert dict(driver.get_state_store("by-value").all()) == {"v": 2, "w": 1}
    assert dict(driver.get_state_store("by-key").all()) == {"k": 1}


def test_group_by_key_after_map_values_does_not_repartition():
    builder = KStreamBuilder()
    builder.stream("in", key_serde=STRING, value_serde=STRING).map_values(str.upper).group_by_key(
        STRING, STRING
    ).count("c")
    assert builder.internal_topic_names == set()
    builder.set_application_id("app")
    assert len(builder.topic_groups()) == 1  # one sub-topology: nothing between source and count
