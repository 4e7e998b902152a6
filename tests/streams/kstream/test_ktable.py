"""KTable: a topic read as a table (updates replace, a tombstone deletes), and ``filter``,
``filter_not``, ``map_values`` on its ``Change`` records, with and without old values."""

from __future__ import annotations

import pytest

from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.kstream import Change, KStreamBuilder
from kafka_lite.streams.processor import AbstractProcessor

from .support import STRING, driver_for, pipe, read_all

pytestmark = pytest.mark.unit

UPDATES = [("a", "5"), ("b", "20"), ("a", "15"), ("b", None), ("a", "7"), ("c", "1")]


class ChangeRecorder(AbstractProcessor):
    """Records the ``Change`` each table node forwards, to see the old values."""

    def __init__(self, seen):
        super().__init__()
        self.seen = seen

    def process(self, key, change):
        self.seen.append((key, change))


def prices_table(builder):
    return builder.table("prices", "prices-store", key_serde=STRING, value_serde=STRING)


def test_a_table_keeps_the_latest_value_per_key_and_a_tombstone_deletes():
    builder = KStreamBuilder()
    table = prices_table(builder)
    table.to_stream().to("out", STRING, STRING)
    assert list(builder.node_factories) == [
        "KSTREAM-SOURCE-0000000000",
        "KTABLE-SOURCE-0000000001",
        "KTABLE-TOSTREAM-0000000002",
        "KSTREAM-SINK-0000000003",
    ]
    driver = driver_for(builder)
    for key, value in UPDATES:
        pipe(driver, "prices", key, value)
    assert read_all(driver, "out") == UPDATES  # every update, the tombstone as (b, None)
    assert dict(driver.get_state_store(table.get_store_name()).all()) == {"a": "7", "c": "1"}
    # The topic is the store's changelog: the store is not logged again.
    assert builder.source_store_to_source_topic == {"prices-store": "prices"}
    assert driver.read_output("app-prices-store-changelog") is None


def test_filter_without_old_values_sends_a_delete_for_every_failing_record():
    builder = KStreamBuilder()
    prices_table(builder).filter(lambda key, value: int(value) >= 10).to("big", STRING, STRING)
    driver = driver_for(builder)
    for key, value in UPDATES:
        pipe(driver, "prices", key, value)
    # (a, 5) and (c, 1) never passed, yet downstream gets deletes for them.
    assert read_all(driver, "big") == [
        ("a", None), ("b", "20"), ("a", "15"), ("b", None), ("a", None), ("c", None),
    ]  # fmt: skip


def test_filter_with_old_values_sends_a_delete_only_for_a_record_that_stops_passing():
    builder = KStreamBuilder()
    table = prices_table(builder)
    big = table.filter(lambda key, value: int(value) >= 10)
    big.enable_sending_old_values()  # as a downstream join or aggregation would
    assert table.processor_supplier.send_old_values  # turned on up to the source
    seen = []
    builder.add_processor("recorder", lambda: ChangeRecorder(seen), big.name)
    big.to("big", STRING, STRING)
    driver = driver_for(builder)
    for key, value in UPDATES:
        pipe(driver, "prices", key, value)
    assert seen == [
        ("b", Change("20", None)),
        ("a", Change("15", None)),  # a was 5, which did not pass: its old value is None
        ("b", Change(None, "20")),  # the tombstone of a row that passed
        ("a", Change(None, "15")),  # 15 -> 7 stops passing
    ]
    assert read_all(driver, "big") == [("b", "20"), ("a", "15"), ("b", None), ("a", None)]


def test_filter_not_keeps_what_filter_drops():
    builder = KStreamBuilder()
    table = prices_table(builder)
    small = table.filter_not(lambda key, value: int(value) >= 10)
    small.enable_sending_old_values()
    small.to("small", STRING, STRING)
    driver = driver_for(builder)
    for key, value in UPDATES:
        pipe(driver, "prices", key, value)
    assert read_all(driver, "small") == [("a", "5"), ("a", None), ("a", "7"), ("c", "1")]


def test_map_values_maps_new_and_old_values_and_keeps_deletes():
    builder = KStreamBuilder()
    doubled = prices_table(builder).map_values(lambda value: str(2 * int(value)))
    doubled.enable_sending_old_values()
    seen = []
    builder.add_processor("recorder", lambda: ChangeRecorder(seen), doubled.name)
    doubled.to_stream().to("out", STRING, STRING)
    driver = driver_for(builder)
    for key, value in UPDATES[:4]:
        pipe(driver, "prices", key, value)
    assert seen == [
        ("a", Change("10", None)),
        ("b", Change("40", None)),
        ("a", Change("30", "10")),
        ("b", Change(None, "40")),
    ]
    assert read_all(driver, "out") == [("a", "10"), ("b", "40"), ("a", "30"), ("b", None)]
    assert doubled.get_store_name() == "prices-store"  # the table's rows are the source's store


def test_an_aggregated_table_sends_old_values_when_asked():
    builder = KStreamBuilder()
    counts = (
        builder.stream("in", key_serde=STRING, value_serde=STRING).group_by_key(STRING, STRING).count("n")
    )
    odd = counts.filter(lambda key, count: count % 2 == 1)
    odd.enable_sending_old_values()
    seen = []
    builder.add_processor("recorder", lambda: ChangeRecorder(seen), odd.name)
    driver = driver_for(builder)
    for _ in range(3):
        pipe(driver, "in", "k", "v")
    assert seen == [("k", Change(1, None)), ("k", Change(None, 1)), ("k", Change(3, None))]


def test_table_through_reads_the_topic_back_as_a_new_table():
    builder = KStreamBuilder()
    copy = prices_table(builder).map_values(str.upper).through("copy", "copy-store", STRING, STRING)
    driver = driver_for(builder)
    pipe(driver, "prices", "a", "x")
    pipe(driver, "prices", "b", "y")
    assert copy.get_store_name() == "copy-store"
    assert dict(driver.get_state_store("copy-store").all()) == {"a": "X", "b": "Y"}


def test_a_table_record_needs_a_key():
    builder = KStreamBuilder()
    prices_table(builder)
    driver = driver_for(builder)
    with pytest.raises(StreamsException, match="Exception caught in process") as caught:
        pipe(driver, "prices", None, "1")
    assert "from store name prices-store should not be null" in str(caught.value.__cause__)
