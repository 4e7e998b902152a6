"""The caching stores over real stacks (``Stores...enable_caching()``): puts wait in the cache, a
flush writes the store below and its changelog and calls the flush listener with ``(key, new, old)``
in the context of the update; reads merge the cache with the store below."""

from __future__ import annotations

import pytest

from kafka_lite.streams.processor.internals.processor_record_context import ProcessorRecordContext
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.internals.thread_cache import ThreadCache
from kafka_lite.streams.state.stores import Stores
from tests.streams.state.support import MockContext

pytestmark = pytest.mark.unit

STRING = Serdes.String()
MINUTE = 60_000


class CacheContext(MockContext):
    """The store-side context, with a thread cache and the record in hand."""

    def __init__(self, state_dir, cache_bytes: int = 10_000) -> None:
        super().__init__(state_dir)
        self.cache = ThreadCache("test", cache_bytes)
        self.record_context: ProcessorRecordContext | None = None

    def get_cache(self) -> ThreadCache:
        return self.cache

    def set_record_context(self, record_context) -> None:
        self.record_context = record_context

    def at(self, offset: int, timestamp: int) -> None:
        """Make the record at ``offset`` of topic "in" the one being processed."""
        self.record_context = ProcessorRecordContext(timestamp, offset, 3, "in")

    def offset(self) -> int:
        return self.record_context.offset

    def timestamp(self) -> int:
        return self.record_context.timestamp

    def partition(self) -> int:
        return self.record_context.partition

    def topic(self) -> str:
        return self.record_context.topic


def cached_key_value_store(tmp_path, cache_bytes=10_000):
    supplier = Stores.create("s").with_keys(STRING).with_values(STRING).in_memory().enable_caching().build()
    store = supplier.get()
    context = CacheContext(tmp_path, cache_bytes)
    store.init(context, store)
    forwarded = []
    store.set_flush_listener(
        lambda key, new, old: forwarded.append((key, new, old, context.record_context.offset))
    )
    return store, context, forwarded


def below(store):
    """What the store under the cache holds, as strings."""
    with store.underlying.all() as entries:
        return {k.decode(): v.decode() for k, v in entries}


def changelog(context):
    return [(k.decode(), None if v is None else v.decode(), ts) for _, k, v, _, ts in context.collector.sent]


def test_puts_stay_in_the_cache_until_a_flush_writes_each_key_once(tmp_path):
    store, context, forwarded = cached_key_value_store(tmp_path)
    context.at(0, 100)
    store.put("a", "1")
    context.at(1, 110)
    store.put("b", "1")
    context.at(2, 120)
    store.put("a", "2")
    assert store.get("a") == "2" and below(store) == {} and changelog(context) == [] and forwarded == []
    context.set_record_context(None)  # a commit happens between records
    store.flush()
    # In the order of each key's last put, each with the context of that put; no old values yet.
    assert forwarded == [("b", "1", None, 1), ("a", "2", None, 2)]
    assert changelog(context) == [("b", "1", 110), ("a", "2", 120)]
    assert below(store) == {"a": "2", "b": "1"}
    assert context.record_context is None, "the flush puts the context back"
    context.at(3, 130)
    store.put("a", "3")
    store.flush()
    assert forwarded[-1] == ("a", "3", "2", 3), "the old value is the store's, from the last flush"


def test_a_delete_is_a_cached_tombstone_forwarded_on_flush(tmp_path):
    store, context, forwarded = cached_key_value_store(tmp_path)
    context.at(0, 100)
    store.put("a", "1")
    store.flush()
    context.at(1, 110)
    assert store.delete("a") == "1"
    assert store.get("a") is None and below(store) == {"a": "1"}
    store.flush()
    assert forwarded[-1] == ("a", None, "1", 1) and below(store) == {}
    assert changelog(context)[-1] == ("a", None, 110)


def test_get_range_and_all_merge_the_cache_with_the_store_below(tmp_path):
    store, context, _ = cached_key_value_store(tmp_path)
    context.at(0, 100)
    store.put_all([("a", "1"), ("b", "1"), ("d", "1"), ("e", "1")])
    store.flush()
    context.at(1, 110)
    store.put("b", "2")  # newer in the cache than below
    store.put("c", "2")  # only in the cache
    store.delete("d")  # a delete in the cache hides the store's d
    assert below(store) == {"a": "1", "b": "1", "d": "1", "e": "1"}
    assert [store.get(k) for k in "abcde"] == ["1", "2", "2", None, "1"]
    with store.range("b", "d") as found:
        assert list(found) == [("b", "2"), ("c", "2")]
    with store.all() as found:
        assert list(found) == [("a", "1"), ("b", "2"), ("c", "2"), ("e", "1")]


def test_a_miss_fills_the_cache_with_a_clean_entry_that_leaves_without_a_flush(tmp_path):
    # Room for one entry: the read of a fills the cache; the put of b evicts a, which is clean.
    store, context, forwarded = cached_key_value_store(tmp_path, cache_bytes=60)
    context.at(0, 100)
    store.underlying.put(b"a", b"1")
    context.set_record_context(None)
    assert store.get("a") == "1"
    assert context.cache.named_cache("0_3-s").size() == 1
    context.at(0, 100)
    store.put("b", "1")
    assert forwarded == [] and context.cache.named_cache("0_3-s").size() == 1
    context.at(1, 110)
    store.put("c", "1")  # evicts b, which is dirty: flushed on the way out
    assert forwarded == [("b", "1", None, 0), ("c", "1", None, 1)]


def cached_window_store(tmp_path):
    supplier = (
        Stores.create("w")
        .with_keys(STRING)
        .with_values(STRING)
        .persistent()
        .windowed(MINUTE, 3 * MINUTE, 3, False)
        .enable_caching()
        .build()
    )
    store = supplier.get()
    context = CacheContext(tmp_path)
    store.init(context, store)
    forwarded = []
    store.set_flush_listener(
        lambda key, new, old: forwarded.append((key.key, key.window.start, key.window.end, new, old))
    )
    return store, context, forwarded


def fetch(store, key, time_from, time_to):
    with store.fetch(key, time_from, time_to) as found:
        return [(e.key, e.value) for e in found]


def test_window_fetch_merges_the_cache_with_the_store_below_by_window_start(tmp_path):
    store, context, forwarded = cached_window_store(tmp_path)
    context.at(0, 5)
    store.put("k", "old0", 0)
    store.put("k", "x60", MINUTE)
    store.flush()
    context.at(1, 125_000)
    store.put("k", "new0", 0)  # newer in the cache than below
    store.put("k", "x120", 2 * MINUTE)  # only in the cache
    store.put("kk", "other", MINUTE)  # a longer key: its windows are not k's
    assert fetch(store, "k", 0, 3 * MINUTE) == [(0, "new0"), (MINUTE, "x60"), (2 * MINUTE, "x120")]
    assert fetch(store, "kk", 0, 3 * MINUTE) == [(MINUTE, "other")]
    with store.underlying.fetch(b"k", 0, 3 * MINUTE) as found:
        assert [(e.key, e.value) for e in found] == [(0, b"old0"), (MINUTE, b"x60")]
    store.flush()
    # Each window forwarded with its old value from below; the window ends one size after its start.
    assert forwarded[2:] == [
        ("k", 0, MINUTE, "new0", "old0"),
        ("k", 2 * MINUTE, 3 * MINUTE, "x120", None),
        ("kk", MINUTE, 2 * MINUTE, "other", None),
    ]


def test_a_window_put_is_stamped_with_the_records_context_and_forwarded_in_it(tmp_path):
    store, context, _ = cached_window_store(tmp_path)
    seen = []
    store.set_flush_listener(lambda key, new, old: seen.append((key.window.start, context.timestamp())))
    context.at(7, 65_000)
    store.put("k", "v", MINUTE)
    context.set_record_context(None)
    store.flush()
    named = context.cache.named_cache("0_3-w")
    [cached] = [named.get(k) for k in named.sorted_keys]
    assert (cached.record_context.offset, cached.record_context.timestamp) == (7, 65_000)
    assert seen == [(MINUTE, 65_000)], "the window starts at 60000; its update goes out at the record's time"
    assert [timestamp for *_, timestamp in context.collector.sent] == [65_000], "the changelog's too"
