"""The window store: fetch by key and time, segments by time, expiry as stream time passes retention."""

import struct

import pytest

from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.internals.segments import segment_interval
from kafka_lite.streams.state.key_value_store import KeyValue
from kafka_lite.streams.state.stores import Stores
from tests.streams.state.support import MockContext

pytestmark = pytest.mark.unit

MINUTE = 60_000


def window_store(
    tmp_path, retention=2 * MINUTE, num_segments=3, retain_duplicates=False, logged=False, key_serde=None
):
    factory = (
        Stores.create("w").with_keys(key_serde or Serdes.String()).with_values(Serdes.String()).persistent()
    )
    factory = factory.windowed(MINUTE, retention, num_segments, retain_duplicates)
    supplier = (factory.enable_logging() if logged else factory.disable_logging()).build()
    store = supplier.get()
    context = MockContext(tmp_path)
    store.init(context, store)
    return store, context


def fetch(store, key, time_from, time_to):
    with store.fetch(key, time_from, time_to) as it:
        return list(it)


def segment_dirs(tmp_path):
    return sorted(p.name for p in (tmp_path / "w").iterdir())


def test_segment_interval_is_kafkas():
    assert segment_interval(24 * 60 * MINUTE, 3) == 12 * 60 * MINUTE
    assert segment_interval(MINUTE, 3) == MINUTE  # never under a minute
    assert segment_interval(10 * MINUTE, 2) == 10 * MINUTE


def test_fetch_returns_the_keys_entries_in_the_time_range_in_order(tmp_path):
    store, _ = window_store(tmp_path)
    for ts in [90_000, 0, 30_000, 60_000, 119_999]:
        store.put("k", f"v{ts}", ts)
    store.put("other", "x", 30_000)
    assert fetch(store, "k", 30_000, 90_000) == [(30_000, "v30000"), (60_000, "v60000"), (90_000, "v90000")]
    assert fetch(store, "k", 0, 0) == [KeyValue(0, "v0")]
    assert fetch(store, "k", 91_000, 119_000) == []
    assert fetch(store, "missing", 0, 200_000) == []
    store.close()


def test_fetch_skips_other_keys_that_sort_inside_the_range(tmp_path):
    store, _ = window_store(tmp_path, key_serde=Serdes.ByteArray())
    store.put(b"a", "a@5", 5)
    store.put(b"a\x00", "a0@5", 5)  # b"a\x00" + ts sorts between b"a" + 0 and b"a" + 1000
    assert fetch(store, b"a", 0, 1000) == [(5, "a@5")]
    assert fetch(store, b"a\x00", 0, 1000) == [(5, "a0@5")]
    store.close()


def test_put_without_a_timestamp_takes_the_records(tmp_path):
    store, context = window_store(tmp_path)
    context.record_timestamp = 42
    store.put("k", "v")
    assert fetch(store, "k", 0, 100) == [(42, "v")]
    store.close()


def test_duplicates_are_kept_only_when_retained(tmp_path):
    store, _ = window_store(tmp_path / "plain")
    store.put("k", "first", 10)
    store.put("k", "second", 10)
    assert fetch(store, "k", 0, 20) == [(10, "second")]
    store.close()

    store, _ = window_store(tmp_path / "dups", retain_duplicates=True)
    store.put("k", "first", 10)
    store.put("k", "second", 10)
    assert fetch(store, "k", 0, 20) == [(10, "first"), (10, "second")]
    store.close()


def test_segments_roll_over_and_expire_as_stream_time_passes_retention(tmp_path):
    store, _ = window_store(tmp_path, retention=2 * MINUTE, num_segments=3)  # interval: one minute
    store.put("k", "a", 0)
    store.put("k", "b", MINUTE)
    store.put("k", "c", 2 * MINUTE)
    assert segment_dirs(tmp_path) == ["w-197001010000", "w-197001010001", "w-197001010002"]
    assert [ts for ts, _ in fetch(store, "k", 0, 10 * MINUTE)] == [0, MINUTE, 2 * MINUTE]

    store.put("k", "d", 3 * MINUTE)  # a fourth segment: the first is dropped, files and all
    assert segment_dirs(tmp_path) == ["w-197001010001", "w-197001010002", "w-197001010003"]
    assert [ts for ts, _ in fetch(store, "k", 0, 10 * MINUTE)] == [MINUTE, 2 * MINUTE, 3 * MINUTE]

    store.put("k", "late", 30_000)  # its segment has expired: the put is dropped
    assert fetch(store, "k", 0, MINUTE - 1) == []

    store.put("k", "e", 5 * MINUTE)  # two segments on: minutes 1 and 2 go
    assert segment_dirs(tmp_path) == ["w-197001010003", "w-197001010005"]
    assert [ts for ts, _ in fetch(store, "k", 0, 10 * MINUTE)] == [3 * MINUTE, 5 * MINUTE]
    store.close()


def test_segments_are_reopened_after_a_restart(tmp_path):
    store, _ = window_store(tmp_path)
    store.put("k", "a", 0)
    store.put("k", "b", MINUTE)
    store.close()
    reopened, _ = window_store(tmp_path)
    assert fetch(reopened, "k", 0, MINUTE) == [(0, "a"), (MINUTE, "b")]
    reopened.close()


def test_a_logged_window_store_logs_binary_keys(tmp_path):
    store, context = window_store(tmp_path, logged=True, retain_duplicates=True)
    context.record_timestamp = 7
    store.put("k", "v", 1000)
    key = b"k" + struct.pack(">qi", 1000, 1)  # key, timestamp, sequence number
    assert context.collector.sent == [("app-w-changelog", key, b"v", 3, 7)]
    store.close()

    # ... which a new store restores from, into the right segment
    fresh, fresh_context = window_store(tmp_path / "fresh")
    fresh_context.restore("w", [(key, b"v")])
    assert fetch(fresh, "k", 0, 2000) == [(1000, "v")]
    fresh.close()


def test_windowed_needs_persistent_and_two_segments():
    with pytest.raises(ValueError, match="persistent"):
        Stores.create("w").with_keys(Serdes.String()).with_values(Serdes.String()).in_memory().windowed(1)
    with pytest.raises(ValueError, match="at least 2 segments"):
        Stores.create("w").with_keys(Serdes.String()).with_values(Serdes.String()).persistent().windowed(
            1, num_segments=1
        )
