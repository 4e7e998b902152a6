"""The key-value stores, bytes and typed: order, ranges, put_if_absent, delete, restore, persistence."""

import pytest

from kafka_lite.streams.errors import InvalidStateStoreException
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.internals.in_memory_key_value_store import InMemoryKeyValueStore
from kafka_lite.streams.state.internals.rocksdb_store import RocksDBStore
from kafka_lite.streams.state.key_value_store import KeyValue
from kafka_lite.streams.state.stores import Stores
from tests.streams.state.support import MockContext

pytestmark = pytest.mark.unit


@pytest.fixture(params=["in_memory", "rocksdb"])
def bytes_store(request, tmp_path):
    store = InMemoryKeyValueStore("s") if request.param == "in_memory" else RocksDBStore("s")
    context = MockContext(tmp_path)
    store.init(context, store)
    yield store
    store.close()


def test_all_is_ordered_by_key_bytes_unsigned(bytes_store):
    for key in [b"b", b"\xff", b"a", b"\x00", b"ab"]:
        bytes_store.put(key, key + b"!")
    with bytes_store.all() as it:
        assert [kv.key for kv in it] == [b"\x00", b"a", b"ab", b"b", b"\xff"]
    assert bytes_store.approximate_num_entries() >= 1


def test_range_is_inclusive_at_both_ends(bytes_store):
    bytes_store.put_all([(bytes([i]), b"v%d" % i) for i in range(10)])
    with bytes_store.range(b"\x03", b"\x06") as it:
        assert list(it) == [KeyValue(bytes([i]), b"v%d" % i) for i in range(3, 7)]
    with bytes_store.range(b"\x03\x00", b"\x04") as it:
        assert [kv.key for kv in it] == [b"\x04"]


def test_put_if_absent_and_delete(bytes_store):
    assert bytes_store.put_if_absent(b"k", b"1") is None
    assert bytes_store.put_if_absent(b"k", b"2") == b"1"
    assert bytes_store.get(b"k") == b"1"
    assert bytes_store.delete(b"k") == b"1"
    assert bytes_store.get(b"k") is None
    assert bytes_store.delete(b"k") is None
    bytes_store.put(b"x", b"1")
    bytes_store.put(b"x", None)  # a None value deletes
    assert list(bytes_store.all()) == []


def test_restore_callback_replays_a_changelog_into_an_empty_store(tmp_path):
    for store in (InMemoryKeyValueStore("r", logged=True), RocksDBStore("r", logged=True)):
        context = MockContext(tmp_path / store.__class__.__name__)
        store.init(context, store)
        root, logging_enabled, _ = context.registered["r"]
        assert root is store and logging_enabled is True
        context.restore("r", [(b"a", b"1"), (b"b", b"2"), (b"a", b"3"), (b"b", None)])
        assert list(store.all()) == [KeyValue(b"a", b"3")]
        store.close()


def test_rocksdb_store_persists_across_close_and_reopen(tmp_path):
    context = MockContext(tmp_path)
    store = RocksDBStore("counts")
    store.init(context, store)
    store.put(b"a", b"1")
    store.put_all([(b"b", b"2"), (b"c", b"3")])
    store.close()
    assert (tmp_path / "rocksdb" / "counts").is_dir()
    with pytest.raises(InvalidStateStoreException, match="Store counts is currently closed"):
        store.get(b"a")

    reopened = RocksDBStore("counts")
    reopened.init(context, reopened)
    assert list(reopened.all()) == [KeyValue(b"a", b"1"), KeyValue(b"b", b"2"), KeyValue(b"c", b"3")]
    assert reopened.persistent()
    reopened.close()


def test_closing_a_rocksdb_store_closes_its_iterators(tmp_path):
    store = RocksDBStore("s")
    store.init(MockContext(tmp_path), store)
    store.put(b"a", b"1")
    store.put(b"b", b"2")
    it = store.all()
    assert next(it) == KeyValue(b"a", b"1")
    store.close()
    with pytest.raises(InvalidStateStoreException, match="RocksDB store s has closed"):
        next(it)


@pytest.mark.parametrize("kind", ["in_memory", "persistent"])
def test_typed_store_from_stores_orders_long_keys_as_numbers(kind, tmp_path):
    factory = Stores.create("counts").with_keys(Serdes.Long()).with_values(Serdes.String())
    supplier = getattr(factory, kind)().disable_logging().build()
    assert supplier.name == "counts" and not supplier.logging_enabled()
    store = supplier.get()
    context = MockContext(tmp_path)
    store.init(context, store)
    assert context.registered["counts"][0] is store  # the outermost store is registered
    for key in [300, 2, 1_000_000, 0]:
        store.put(key, f"v{key}")
    assert [kv.key for kv in store.all()] == [0, 2, 300, 1_000_000]
    assert list(store.range(1, 300)) == [KeyValue(2, "v2"), KeyValue(300, "v300")]
    assert store.put_if_absent(2, "other") == "v2"
    assert store.delete(300) == "v300"
    assert store.get(300) is None
    assert store.persistent() is (kind == "persistent")
    store.close()
    assert not store.is_open()
