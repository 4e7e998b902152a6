"""The record cache on its own: Kafka's size accounting, LRU eviction charged to the cache just
written, and the order in which dirty entries reach a store's flush listener."""

from __future__ import annotations

import pytest

from kafka_lite.streams.state.internals.lru_cache_entry import LRUCacheEntry
from kafka_lite.streams.state.internals.thread_cache import ThreadCache

pytestmark = pytest.mark.unit

# A 1-byte key and a 1-byte value from topic "t": the entry counts 1 + 21 (flag, two longs, an int)
# + 1 (the topic's characters) = 23 bytes, its node 1 (the key) + 24 (three references) + 23 = 48.
NODE_BYTES = 48
TWO_ENTRIES = 100  # a budget that holds two such entries and not three


def dirty(value: bytes, offset: int = 0) -> LRUCacheEntry:
    return LRUCacheEntry(value, True, offset, 1000 + offset, 0, "t")


def recording_cache(budget: int, *namespaces: str) -> tuple[ThreadCache, list]:
    """A cache whose listeners append ``(namespace, [(key, value), ...])`` per flush."""
    cache = ThreadCache("test", budget)
    flushed: list = []
    for namespace in namespaces:
        cache.add_dirty_entry_flush_listener(
            namespace,
            lambda entries, ns=namespace: flushed.append((ns, [(e.key, e.new_value) for e in entries])),
        )
    return cache, flushed


def test_an_entry_counts_its_key_value_topic_and_fixed_fields():
    cache, _ = recording_cache(10_000, "0_0-s")
    cache.put("0_0-s", b"k", dirty(b"v"))
    assert cache.size_bytes() == NODE_BYTES
    cache.put("0_0-s", b"k", dirty(b"vvvv"))  # an overwrite replaces the entry's bytes
    assert cache.size_bytes() == NODE_BYTES + 3
    cache.put("0_0-s", b"key2", dirty(None))  # a delete waiting to be flushed: no value bytes
    assert cache.size_bytes() == NODE_BYTES + 3 + (4 + 24 + 22)


def test_eviction_flushes_every_dirty_key_in_the_order_of_its_last_put():
    # Worked from NamedCache.put/evict and ThreadCache.maybeEvict (0.10.1):
    #   put a, put b          LRU: a b        dirty: a b         96 bytes
    #   put a (a=2)           LRU: b a        dirty: b a         96
    #   put c                 LRU: b a c      dirty: b a c       144 > 100: evict the eldest, b;
    #                         b is dirty, so the whole cache flushes: b=1, a=2, c=1 (c too: it was
    #                         put before the eviction); then b leaves        LRU: a c    96
    #   get a                 LRU: c a
    #   put d                 LRU: c a d      dirty: d           144: evict c, clean: no flush
    #   put e                 LRU: a d e      dirty: d e         144: evict a, clean: no flush
    #   flush                 d=1, e=1
    cache, flushed = recording_cache(TWO_ENTRIES, "0_0-s")
    ns = "0_0-s"
    cache.put(ns, b"a", dirty(b"1"))
    cache.put(ns, b"b", dirty(b"1"))
    cache.put(ns, b"a", dirty(b"2"))
    assert flushed == []
    cache.put(ns, b"c", dirty(b"1"))
    assert flushed == [(ns, [(b"b", b"1"), (b"a", b"2"), (b"c", b"1")])]
    assert cache.get(ns, b"b") is None and cache.get(ns, b"a").value == b"2"
    cache.put(ns, b"d", dirty(b"1"))
    cache.put(ns, b"e", dirty(b"1"))
    assert len(flushed) == 1, "clean entries leave without a flush"
    assert [cache.get(ns, k) is None for k in (b"a", b"c", b"d", b"e")] == [True, True, False, False]
    cache.flush(ns)
    assert flushed[1:] == [(ns, [(b"d", b"1"), (b"e", b"1")])]
    assert cache.num_evicts == 3


def test_the_cache_just_written_pays_for_the_threads_budget():
    cache, flushed = recording_cache(TWO_ENTRIES, "0_0-x", "0_1-y")
    cache.put("0_0-x", b"a", dirty(b"1"))
    cache.put("0_0-x", b"b", dirty(b"1"))
    cache.put("0_1-y", b"y", dirty(b"1"))  # over budget: y's own cache evicts, x keeps its entries
    assert flushed == [("0_1-y", [(b"y", b"1")])]
    assert cache.named_cache("0_0-x").size() == 2 and cache.named_cache("0_1-y").size() == 0


def test_a_zero_budget_flushes_each_put_as_it_is_made():
    cache, flushed = recording_cache(0, "0_0-s")
    for key in (b"a", b"b", b"a"):
        cache.put("0_0-s", key, dirty(b"1"))
    assert flushed == [("0_0-s", [(b"a", b"1")]), ("0_0-s", [(b"b", b"1")]), ("0_0-s", [(b"a", b"1")])]
    assert cache.size_bytes() == 0


def test_a_flushed_entry_carries_the_record_context_of_its_last_put():
    cache = ThreadCache("test", 10_000)
    contexts = []
    cache.add_dirty_entry_flush_listener(
        "0_0-s", lambda entries: contexts.extend(e.record_context for e in entries)
    )
    cache.put("0_0-s", b"k", dirty(b"1", offset=5))
    cache.put("0_0-s", b"k", dirty(b"2", offset=9))
    cache.flush("0_0-s")
    assert [(c.offset, c.timestamp, c.topic) for c in contexts] == [(9, 1009, "t")]


def test_range_reads_keys_in_byte_order_and_skips_what_was_evicted():
    cache, _ = recording_cache(10_000, "0_0-s")
    for key in (b"c", b"a", b"d", b"b"):
        cache.put("0_0-s", key, dirty(key))
    found = cache.range("0_0-s", b"b", b"c")
    assert [found.next().key for _ in range(2)] == [b"b", b"c"] and not found.has_next()
    everything = cache.all("0_0-s")
    cache.delete("0_0-s", b"c")
    keys = []
    while everything.has_next():
        keys.append(everything.next().key)
    assert keys == [b"a", b"b", b"d"]
