"""Joins, each on a small script checked against outputs worked out by hand: KStream-KTable
(``join``, ``left_join``), KStream-KStream within ``JoinWindows`` (``join``, ``left_join``,
``outer_join``, with records on both sides, late ones, and the window's bounds), and KTable-KTable
(``join``, ``left_join``, ``outer_join``, with updates and tombstones on both sides)."""

from __future__ import annotations

import pytest

from kafka_lite.streams.kstream import JoinWindows, KStreamBuilder

from .support import STRING, driver_for, pipe, read_all

pytestmark = pytest.mark.unit


def joiner(value, other):
    return f"{value}+{other}"


# -- KStream-KTable --------------------------------------------------------------------------------


def _stream_table(method: str, lower_the_table: bool = False):
    builder = KStreamBuilder()
    table = builder.table("t", "t-store", key_serde=STRING, value_serde=STRING)
    if lower_the_table:
        table = table.map_values(str.lower)  # not stored again: read through its value getter
    stream = builder.stream("s", key_serde=STRING, value_serde=STRING)
    getattr(stream, method)(table, joiner).to("out", STRING, STRING)
    return driver_for(builder)


def _stream_table_script(driver):
    pipe(driver, "s", "a", "1")  # before the table has a row for a
    pipe(driver, "t", "a", "X")  # a table update emits nothing
    pipe(driver, "s", "a", "2")
    pipe(driver, "s", "b", "3")  # b has no row
    pipe(driver, "t", "a", None)  # a tombstone deletes a's row
    pipe(driver, "s", "a", "4")
    out = read_all(driver, "out")
    driver.close()
    return out


def test_stream_table_join_emits_only_records_that_find_a_row():
    assert _stream_table_script(_stream_table("join")) == [("a", "2+X")]


def test_stream_table_left_join_emits_every_record():
    assert _stream_table_script(_stream_table("left_join")) == [
        ("a", "1+None"), ("a", "2+X"), ("b", "3+None"), ("a", "4+None"),
    ]  # fmt: skip


def test_stream_table_join_reads_a_table_that_is_computed_not_stored():
    assert _stream_table_script(_stream_table("join", lower_the_table=True)) == [("a", "2+x")]


# -- KStream-KStream -------------------------------------------------------------------------------

# A record of L at t joins R's records in [t - 10, t + 5]; one of R at t joins L's in [t - 5, t + 10].
WINDOWS = JoinWindows.of(0).before(10).after(5)

SCRIPT = [  # (topic, key, value, timestamp)
    ("L", "a", "l1", 100),  # R is empty
    ("R", "a", "r1", 104),  # L in [99, 114]: l1
    ("R", "a", "r2", 120),  # L in [115, 130]: nothing
    ("L", "a", "l2", 112),  # R in [102, 117]: r1 (r2 at 120 is after t + 5)
    ("L", "a", "l3", 126),  # R in [116, 131]: r2
    ("R", "a", "r3", 95),  # late; L in [90, 105]: l1
    ("L", "b", "x", 100),  # no b on R
    ("L", "a", "l4", 130),  # R in [120, 135]: r2, exactly t - before
    ("R", "a", "r4", 135),  # L in [130, 145]: l4, exactly t - after; not l3 at 126
]


def _stream_stream(method: str):
    builder = KStreamBuilder()
    left = builder.stream("L", key_serde=STRING, value_serde=STRING)
    right = builder.stream("R", key_serde=STRING, value_serde=STRING)
    getattr(left, method)(right, joiner, WINDOWS, STRING, STRING, STRING).to("out", STRING, STRING)
    driver = driver_for(builder)
    for topic, key, value, timestamp in SCRIPT:
        pipe(driver, topic, key, value, timestamp)
    out = read_all(driver, "out")
    driver.close()
    return out


def test_windowed_join_joins_each_pair_within_the_window_once():
    assert _stream_stream("join") == [
        ("a", "l1+r1"), ("a", "l2+r1"), ("a", "l3+r2"), ("a", "l1+r3"), ("a", "l4+r2"), ("a", "l4+r4"),
    ]  # fmt: skip


def test_windowed_left_join_adds_none_for_a_left_record_that_finds_nothing_when_it_arrives():
    # R's records only fill R's store: a pair whose L record came first is never emitted.
    assert _stream_stream("left_join") == [
        ("a", "l1+None"), ("a", "l2+r1"), ("a", "l3+r2"), ("b", "x+None"), ("a", "l4+r2"),
    ]  # fmt: skip


def test_windowed_outer_join_adds_none_for_either_side():
    assert _stream_stream("outer_join") == [
        ("a", "l1+None"), ("a", "l1+r1"), ("a", "None+r2"), ("a", "l2+r1"), ("a", "l3+r2"),
        ("a", "l1+r3"), ("b", "x+None"), ("a", "l4+r2"), ("a", "l4+r4"),
    ]  # fmt: skip


def test_windowed_join_topology_has_a_store_per_side():
    builder = KStreamBuilder()
    left = builder.stream("L", key_serde=STRING, value_serde=STRING)
    left.join(builder.stream("R"), joiner, WINDOWS)
    assert set(builder.state_factories) == {
        "KSTREAM-JOINTHIS-0000000004-store",
        "KSTREAM-JOINOTHER-0000000005-store",
    }
    assert "KSTREAM-MERGE-0000000006" in builder.node_factories


# -- KTable-KTable ---------------------------------------------------------------------------------

TABLE_SCRIPT = [  # (topic, value) for the key k
    ("A", "a1"),  # B has no row
    ("B", "b1"),
    ("A", "a2"),  # an update
    ("B", None),  # B's row deleted
    ("A", "a3"),
    ("A", None),  # A's row deleted
    ("B", "b2"),
]


def _table_table(method: str):
    builder = KStreamBuilder()
    table_a = builder.table("A", "a-store", key_serde=STRING, value_serde=STRING)
    table_b = builder.table("B", "b-store", key_serde=STRING, value_serde=STRING)
    getattr(table_a, method)(table_b, joiner).to("out", STRING, STRING)
    driver = driver_for(builder)
    for topic, value in TABLE_SCRIPT:
        pipe(driver, topic, "k", value)
    out = [value for key, value in read_all(driver, "out")]
    driver.close()
    return out


def test_table_table_join_deletes_the_row_when_either_side_has_none():
    # Every update forwards a change, so a key with no joined row is sent as a tombstone.
    assert _table_table("join") == [None, "a1+b1", "a2+b1", None, None, None, None]


def test_table_table_left_join_keeps_the_left_rows():
    assert _table_table("left_join") == ["a1+None", "a1+b1", "a2+b1", "a2+None", "a3+None", None, None]


def test_table_table_outer_join_keeps_the_rows_of_either_side():
    assert _table_table("outer_join") == [
        "a1+None", "a1+b1", "a2+b1", "a2+None", "a3+None", None, "None+b2",
    ]  # fmt: skip


def test_a_joined_table_sends_old_values_when_asked():
    builder = KStreamBuilder()
    table_a = builder.table("A", "a-store", key_serde=STRING, value_serde=STRING)
    table_b = builder.table("B", "b-store", key_serde=STRING, value_serde=STRING)
    joined = table_a.join(table_b, joiner)
    changes = []
    joined.enable_sending_old_values()
    builder.add_processor("spy", _Spy(changes), joined.name)
    driver = driver_for(builder)
    for topic, value in [("A", "a1"), ("B", "b1"), ("A", "a2")]:
        pipe(driver, topic, "k", value)
    driver.close()
    assert [(c.new_value, c.old_value) for c in changes] == [
        (None, None),
        ("a1+b1", None),
        ("a2+b1", "a1+b1"),
    ]


class _Spy:
    def __init__(self, changes):
        self.changes = changes

    def __call__(self):
        from kafka_lite.streams.processor.processor import AbstractProcessor

        changes = self.changes

        class SpyProcessor(AbstractProcessor):
            def process(self, key, value):
                changes.append(value)

        return SpyProcessor()
