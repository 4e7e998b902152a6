"""The in-memory store over a sorted map: any run of puts and deletes leaves it answering ``get``,
``all`` and ``range`` exactly as a dict with its keys sorted would; iterators are snapshots."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.streams.state.internals.in_memory_key_value_store import InMemoryKeyValueStore
from kafka_lite.streams.state.key_value_store import KeyValue

pytestmark = pytest.mark.unit

# Short keys over few byte values, so puts land on keys already there and ranges meet real entries;
# 0x00 and 0xff are in, for the unsigned order.
keys = st.binary(min_size=0, max_size=3).map(lambda b: bytes(x % 4 * 85 for x in b))
operations = st.lists(
    st.one_of(
        st.tuples(st.just("put"), keys, st.binary(min_size=0, max_size=2)),
        st.tuples(st.just("put"), keys, st.none()),  # a None value deletes
        st.tuples(st.just("delete"), keys, st.none()),
    ),
    max_size=60,
)


def reference_range(reference: dict[bytes, bytes], from_key: bytes, to_key: bytes) -> list[KeyValue]:
    return [KeyValue(k, reference[k]) for k in sorted(reference) if from_key <= k <= to_key]


@settings(max_examples=150, deadline=None)
@given(operations, keys, keys)
def test_the_store_answers_as_a_dict_with_sorted_keys(ops, from_key, to_key):
    store = InMemoryKeyValueStore("s")
    reference: dict[bytes, bytes] = {}
    for op, key, value in ops:
        if op == "put":
            store.put(key, value)
            if value is None:
                reference.pop(key, None)
            else:
                reference[key] = value
        else:
            assert store.delete(key) == reference.pop(key, None)
    assert list(store.all()) == [KeyValue(k, reference[k]) for k in sorted(reference)]
    assert list(store.range(from_key, to_key)) == reference_range(reference, from_key, to_key)
    assert store.approximate_num_entries() == len(reference)
    for _, key, _ in ops:
        assert store.get(key) == reference.get(key)


def test_an_iterator_is_a_snapshot_the_store_may_change_under():
    store = InMemoryKeyValueStore("s")
    store.put_all([(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])
    seen = []
    with store.all() as it:
        for kv in it:
            seen.append(kv)
            store.delete(b"c")  # what the iterator shows was fixed when it was made
            store.put(b"bb", b"new")
    assert seen == [KeyValue(b"a", b"1"), KeyValue(b"b", b"2"), KeyValue(b"c", b"3")]
    assert [kv.key for kv in store.all()] == [b"a", b"b", b"bb"]


def test_a_range_whose_bounds_are_reversed_is_empty():
    store = InMemoryKeyValueStore("s")
    store.put_all([(b"a", b"1"), (b"b", b"2")])
    assert list(store.range(b"b", b"a")) == []


def test_close_empties_the_store():
    store = InMemoryKeyValueStore("s")
    store.put(b"a", b"1")
    store.close()
    assert (store.approximate_num_entries(), list(store.all())) == (0, [])
