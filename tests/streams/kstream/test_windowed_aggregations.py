"""Windowed ``count`` and ``reduce``: tumbling and hopping windows, Windowed keys out, and a
window's update lost once its store segment has expired (``until``)."""

from __future__ import annotations

import pytest

from kafka_lite.streams.kstream import KStreamBuilder, SessionWindows, TimeWindows, Windowed
from kafka_lite.streams.kstream.internals.windowed_serde import windowed_serde
from kafka_lite.streams.kstream.windows import TimeWindow

from .support import LONG, STRING, driver_for, pipe, read_all

pytestmark = pytest.mark.unit

WINDOWED_STRING = windowed_serde(STRING)


def _windowed_count(windows, store="counts", **config):
    builder = KStreamBuilder()
    counts = (
        builder.stream("in", key_serde=STRING, value_serde=STRING)
        .group_by_key(STRING, STRING)
        .count(store, windows)
    )
    counts.to_stream().to("out", WINDOWED_STRING, LONG)
    return driver_for(builder, **config)


def _out(driver):
    """``(key, window start, count)`` of each update written."""
    return [(w.key, w.window.start, n) for w, n in read_all(driver, "out", WINDOWED_STRING, LONG)]


def test_windows_for_lists_tumbling_and_hopping_window_starts():
    assert TimeWindows.of(10).windows_for(25) == {20: TimeWindow(20, 30)}
    assert sorted(TimeWindows.of(10).advance_by(5).windows_for(25)) == [20, 25]
    assert sorted(TimeWindows.of(10).advance_by(5).windows_for(3)) == [0]
    with pytest.raises(ValueError, match="advance interval"):
        TimeWindows.of(10).advance_by(11)


def test_tumbling_count_counts_each_key_per_window():
    driver = _windowed_count(TimeWindows.of(10))
    for key, timestamp in [("a", 1), ("a", 9), ("b", 5), ("a", 10), ("a", 3)]:
        pipe(driver, "in", key, "v", timestamp)
    assert _out(driver) == [("a", 0, 1), ("a", 0, 2), ("b", 0, 1), ("a", 10, 1), ("a", 0, 3)]
    store = driver.get_state_store("counts")
    with store.fetch("a", 0, 100) as found:
        assert [(e.key, e.value) for e in found] == [(0, 3), (10, 1)]
    driver.close()


def test_hopping_count_updates_every_window_a_record_falls_in():
    driver = _windowed_count(TimeWindows.of(10).advance_by(5))
    for key, timestamp in [("a", 3), ("a", 7), ("a", 12)]:
        pipe(driver, "in", key, "v", timestamp)
    # t=3 is in [0,10) only; t=7 in [0,10) and [5,15); t=12 in [5,15) and [10,20).
    # Each record updates its windows oldest first: those the fetch found, then the new ones.
    assert _out(driver) == [("a", 0, 1), ("a", 0, 2), ("a", 5, 1), ("a", 5, 2), ("a", 10, 1)]
    driver.close()


def test_an_expired_windows_update_is_lost():
    # Retention 60 s in 3 segments: a segment spans 60 s (the minimum), and 3 are kept. No cache
    # (size 0): the store below is all there is.
    driver = _windowed_count(TimeWindows.of(10_000).until(60_000), cache_max_bytes_buffering=0)
    pipe(driver, "in", "a", "v", 1_000)
    pipe(driver, "in", "a", "v", 2_000)
    pipe(driver, "in", "a", "v", 200_000)  # segment 3: segment 0, holding window 0, is dropped
    pipe(driver, "in", "a", "v", 3_000)  # late, for window 0: its count of 2 is gone
    assert _out(driver) == [("a", 0, 1), ("a", 0, 2), ("a", 200_000, 1), ("a", 0, 1)]
    with driver.get_state_store("counts").fetch("a", 0, 300_000) as found:
        assert [(e.key, e.value) for e in found] == [(200_000, 1)]
    driver.close()


def test_the_cache_still_holds_an_expired_window_until_it_is_evicted():
    # As 0.10.1: a flushed entry stays in the cache, clean. The late record's fetch finds window 0's
    # count there although its segment is gone, and counts on from it; the put below is dropped.
    driver = _windowed_count(TimeWindows.of(10_000).until(60_000))
    pipe(driver, "in", "a", "v", 1_000)
    pipe(driver, "in", "a", "v", 2_000)
    pipe(driver, "in", "a", "v", 200_000)
    pipe(driver, "in", "a", "v", 3_000)
    assert _out(driver) == [("a", 0, 1), ("a", 0, 2), ("a", 200_000, 1), ("a", 0, 3)]
    with driver.get_state_store("counts").fetch("a", 0, 300_000) as found:
        assert [(e.key, e.value) for e in found] == [(0, 3), (200_000, 1)]
    driver.close()


def test_windowed_reduce_and_the_windowed_key_serde():
    builder = KStreamBuilder()
    builder.stream("in", key_serde=STRING, value_serde=STRING).group_by_key(STRING, STRING).reduce(
        lambda agg, value: agg + value, "joined", TimeWindows.of(10)
    ).to_stream().to("out", WINDOWED_STRING, STRING)
    driver = driver_for(builder)
    for value, timestamp in [("x", 1), ("y", 2), ("z", 11)]:
        pipe(driver, "in", "k", value, timestamp)
    out = read_all(driver, "out", WINDOWED_STRING, STRING)
    driver.close()
    assert [(w.key, w.window.start, v) for w, v in out] == [("k", 0, "x"), ("k", 0, "xy"), ("k", 10, "z")]
    raw = WINDOWED_STRING.serializer().serialize("t", Windowed("k", TimeWindow(10, 20)))
    assert raw == b"k" + (10).to_bytes(8, "big")


def test_a_record_in_the_gap_merges_two_sessions():
    builder = KStreamBuilder()
    builder.stream("in", key_serde=STRING, value_serde=STRING).group_by_key(STRING, STRING).count(
        "sessions", SessionWindows.with_(5)
    ).to_stream().to("out", WINDOWED_STRING, LONG)
    driver = driver_for(builder)
    pipe(driver, "in", "a", "v", 0)  # session [0, 0]
    pipe(driver, "in", "a", "v", 10)  # 10 ms later, more than the gap: session [10, 10]
    pipe(driver, "in", "b", "v", 5)  # another key's session
    pipe(driver, "in", "a", "v", 5)  # within 5 ms of both: they merge into [0, 10]
    pipe(driver, "in", "a", "v", 12)  # extends [0, 10] to [0, 12]
    # The merge deletes the two sessions downstream (None) and sends the merged one.
    assert _out(driver) == [
        ("a", 0, 1), ("a", 10, 1), ("b", 5, 1), ("a", 0, None), ("a", 10, None), ("a", 0, 3),
        ("a", 0, None), ("a", 0, 4),
    ]  # fmt: skip
    with driver.get_state_store("sessions").find_sessions("a", 0, 100) as found:
        assert [(s.key.window.start, s.key.window.end, s.value) for s in found] == [(0, 12, 4)]
    driver.close()


def test_session_reduce_merges_by_the_reducer():
    builder = KStreamBuilder()
    builder.stream("in", key_serde=STRING, value_serde=STRING).group_by_key(STRING, STRING).reduce(
        lambda agg, value: agg + value, "joined", SessionWindows.with_(5)
    ).to_stream().to("out", WINDOWED_STRING, STRING)
    driver = driver_for(builder)
    for value, timestamp in [("x", 0), ("z", 10), ("y", 5)]:
        pipe(driver, "in", "k", value, timestamp)
    out = [(w.window.start, v) for w, v in read_all(driver, "out", WINDOWED_STRING, STRING)]
    assert out == [(0, "x"), (10, "z"), (0, None), (10, None), (0, "xzy")]
    driver.close()
