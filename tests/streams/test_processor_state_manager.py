"""The state manager: restoring logged stores from their changelogs (from the checkpoint when there is
one), the checkpoint written at close with the producer's acknowledged offsets + 1, a store
registered once only, standby updates, the task directory's lock, and a real task (under the test
driver) checkpointing what its collector had acknowledged."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.mock_consumer import MockConsumer
from kafka_lite.streams.errors import LockException
from kafka_lite.streams.processor import AbstractProcessor, TopologyBuilder
from kafka_lite.streams.processor.internals.processor_state_manager import (
    ProcessorStateManager,
    store_changelog_topic,
)
from kafka_lite.streams.processor.task_id import TaskId
from kafka_lite.streams.serialization import Serdes
from kafka_lite.streams.state.internals.in_memory_key_value_store import InMemoryKeyValueStore
from kafka_lite.streams.state.internals.offset_checkpoint import CHECKPOINT_FILE_NAME, OffsetCheckpoint
from kafka_lite.streams.state.internals.rocksdb_store import RocksDBStore
from kafka_lite.streams.state.state_directory import StateDirectory
from kafka_lite.streams.state.stores import Stores
from kafka_lite.streams.test_utils.topology_test_driver import TopologyTestDriver
from tests.streams.support import raw

pytestmark = pytest.mark.unit

TASK = TaskId(0, 3)
SOURCES = [TopicPartition("in", 3)]
COUNTS = TopicPartition("app-counts-changelog", 3)  # the changelog partition numbered as the task's


class StoreContext:
    """What a logged store's ``init`` reads from its context: ``register`` (to the state manager) and
    ``state_dir`` (the task's directory), as ``ProcessorContextImpl`` gives them."""

    def __init__(self, state_mgr: ProcessorStateManager) -> None:
        self.state_mgr = state_mgr

    def state_dir(self):
        return self.state_mgr.base_dir

    def register(self, store, logging_enabled, restore_callback) -> None:
        self.state_mgr.register(store, logging_enabled, restore_callback)


def _state_manager(tmp_path, restore_consumer, is_standby=False) -> ProcessorStateManager:
    directory = StateDirectory("app", tmp_path, MockTime())
    return ProcessorStateManager("app", TASK, SOURCES, restore_consumer, is_standby, directory)


def _changelog(*entries: tuple[bytes, bytes | None], start: int = 0, consumer=None) -> MockConsumer:
    """A restore consumer whose ``app-counts-changelog`` partition 3 holds ``entries`` from ``start``."""
    consumer = MockConsumer() if consumer is None else consumer
    for offset, (key, value) in enumerate(entries, start):
        consumer.add_record(raw(COUNTS.topic, COUNTS.partition, offset, 0, key, value))
    return consumer


def _register(state_mgr: ProcessorStateManager, store):
    store.init(StoreContext(state_mgr), store)
    return store


def _contents(store) -> dict[bytes, bytes]:
    return {kv.key: kv.value for kv in store.all()}


def test_restore_replays_the_whole_changelog_into_an_empty_in_memory_store(tmp_path):
    consumer = _changelog((b"a", b"1"), (b"b", b"1"), (b"a", b"2"))
    state_mgr = _state_manager(tmp_path, consumer)
    store = _register(state_mgr, InMemoryKeyValueStore("counts", logged=True))
    assert state_mgr.restored == {"counts": 3}
    assert _contents(store) == {b"a": b"2", b"b": b"1"}, "the last value of each key wins"
    assert state_mgr.restored_offsets == {COUNTS: 3}
    assert consumer.assignment() == set(), "the restore consumer is let go for the next task"


def test_restore_replays_the_whole_changelog_into_an_empty_rocksdb_store(tmp_path):
    state_mgr = _state_manager(tmp_path, _changelog((b"a", b"1"), (b"b", b"1"), (b"c", b"1"), (b"a", b"2")))
    store = _register(state_mgr, RocksDBStore("counts", logged=True))
    assert state_mgr.restored == {"counts": 4}
    assert _contents(store) == {b"a": b"2", b"b": b"1", b"c": b"1"}


@pytest.mark.parametrize("make_store", [InMemoryKeyValueStore, RocksDBStore])
def test_a_tombstone_in_the_changelog_deletes_the_key(tmp_path, make_store):
    state_mgr = _state_manager(tmp_path, _changelog((b"a", b"1"), (b"b", b"1"), (b"a", None)))
    store = _register(state_mgr, make_store("counts", logged=True))
    assert _contents(store) == {b"b": b"1"}, "a null value is a delete"
    assert state_mgr.restored == {"counts": 3}


def test_a_store_without_logging_is_kept_and_not_restored(tmp_path):
    consumer = _changelog((b"a", b"1"))
    state_mgr = _state_manager(tmp_path, consumer)
    store = _register(state_mgr, InMemoryKeyValueStore("counts"))
    assert state_mgr.get_store("counts") is store
    assert state_mgr.restored == {} and consumer.poll_calls == 0


def test_close_checkpoints_each_persistent_logged_store_at_the_acknowledged_offset_plus_one(tmp_path):
    consumer = _changelog()
    consumer.add_record(raw("app-cache-changelog", 3, 0, 0, b"k", b"v"))
    state_mgr = _state_manager(tmp_path, consumer)
    _register(state_mgr, RocksDBStore("counts", logged=True))
    _register(state_mgr, InMemoryKeyValueStore("cache", logged=True))
    cache = TopicPartition("app-cache-changelog", 3)
    state_mgr.close({COUNTS: 41, cache: 7, TopicPartition("out", 3): 9})
    written = OffsetCheckpoint(tmp_path / "app" / "0_3" / CHECKPOINT_FILE_NAME).read()
    assert written == {COUNTS: 42}, (
        "the collector acknowledged offset 41: the store holds everything before 42; "
        "the in-memory store is not checkpointed, an output topic is not a changelog"
    )


def test_a_clean_restart_restores_a_persistent_store_nothing_and_an_in_memory_store_everything(tmp_path):
    consumer = _changelog((b"a", b"1"), (b"b", b"1"), (b"a", b"2"))
    consumer.add_record(raw("app-cache-changelog", 3, 0, 0, b"k", b"v"))
    first = _state_manager(tmp_path, consumer)
    _register(first, RocksDBStore("counts", logged=True))
    _register(first, InMemoryKeyValueStore("cache", logged=True))
    assert first.restored == {"counts": 3, "cache": 1}
    first.close({})  # nothing written since the restore: the checkpoint is where restoring ended

    second = _state_manager(tmp_path, consumer)
    assert not (second.base_dir / CHECKPOINT_FILE_NAME).exists(), (
        "the checkpoint is deleted once read: a crash from now on must restore from the beginning"
    )
    counts = _register(second, RocksDBStore("counts", logged=True))
    cache = _register(second, InMemoryKeyValueStore("cache", logged=True))
    assert second.restored == {"counts": 0, "cache": 1}
    assert _contents(counts) == {b"a": b"2", b"b": b"1"}, "the state came back from disk, not the changelog"
    assert _contents(cache) == {b"k": b"v"}


def test_a_changelog_grown_past_the_checkpoint_restores_only_its_tail(tmp_path):
    consumer = _changelog((b"a", b"1"), (b"b", b"1"), (b"c", b"1"))
    first = _state_manager(tmp_path, consumer)
    _register(first, RocksDBStore("counts", logged=True))
    first.close({COUNTS: 2})  # checkpoint 3
    # Another instance ran the task meanwhile and wrote two more changes.
    _changelog((b"a", b"2"), (b"d", b"1"), start=3, consumer=consumer)

    second = _state_manager(tmp_path, consumer)
    counts = _register(second, RocksDBStore("counts", logged=True))
    assert second.restored == {"counts": 2}, "offsets 3 and 4 only: the store held 0..2 on disk"
    assert _contents(counts) == {b"a": b"2", b"b": b"1", b"c": b"1", b"d": b"1"}
    assert second.restored_offsets == {COUNTS: 5}


def test_a_checkpoint_past_the_changelogs_end_wipes_the_store_and_restores_it_from_scratch(tmp_path):
    """A state directory kept from another cluster: its checkpoint is past the end of this cluster's
    changelog, and its store holds keys this changelog never had. As Kafka 1.1 reinitializes such a
    store, it is deleted and restored from the changelog's beginning."""
    first = _state_manager(tmp_path, _changelog((b"a", b"1"), (b"b", b"1"), (b"c", b"1")))
    _register(first, RocksDBStore("counts", logged=True))
    first.close({COUNTS: 2})  # checkpoint 3
    second = _state_manager(tmp_path, _changelog((b"x", b"9")))  # the new cluster's changelog: 1 record
    counts = _register(second, RocksDBStore("counts", logged=True))
    assert _contents(counts) == {b"x": b"9"}, "the old cluster's keys are gone; the new changelog's is in"
    assert second.restored == {"counts": 1}
    assert second.restored_offsets == {COUNTS: 1}


def test_a_store_registered_twice_is_refused_with_kafkas_message(tmp_path):
    state_mgr = _state_manager(tmp_path, _changelog())
    _register(state_mgr, InMemoryKeyValueStore("counts", logged=True))
    with pytest.raises(
        IllegalArgumentException, match=r"^task \[0_3\] Store counts has already been registered\.$"
    ):
        _register(state_mgr, InMemoryKeyValueStore("counts", logged=True))


def test_a_store_may_not_be_named_as_the_checkpoint_file(tmp_path):
    state_mgr = _state_manager(tmp_path, _changelog())
    with pytest.raises(IllegalArgumentException, match=r"Illegal store name: \.checkpoint"):
        _register(state_mgr, InMemoryKeyValueStore(CHECKPOINT_FILE_NAME))


def test_the_task_directory_is_locked_until_close(tmp_path):
    state_mgr = _state_manager(tmp_path, _changelog())
    with pytest.raises(LockException, match="Failed to lock the state directory"):
        _state_manager(tmp_path, _changelog())
    state_mgr.close({})
    _state_manager(tmp_path, _changelog()).close({})


def test_a_standby_task_applies_the_changelog_records_its_thread_fetches(tmp_path):
    consumer = _changelog((b"a", b"1"))
    state_mgr = _state_manager(tmp_path, consumer, is_standby=True)
    counts = _register(state_mgr, RocksDBStore("counts", logged=True))
    assert state_mgr.restored == {} and consumer.poll_calls == 0, "a standby restores nothing at register"
    assert state_mgr.checkpointed() == {COUNTS: -1}, "no checkpoint: read the changelog from its beginning"
    records = [raw(COUNTS.topic, 3, 0, 0, b"a", b"1"), raw(COUNTS.topic, 3, 1, 0, b"b", b"1")]
    state_mgr.update_standby_states(COUNTS, records)
    assert _contents(counts) == {b"a": b"1", b"b": b"1"}
    state_mgr.close({})
    assert OffsetCheckpoint(tmp_path / "app" / "0_3" / CHECKPOINT_FILE_NAME).read() == {COUNTS: 2}


def test_the_changelog_topic_is_named_after_the_application_and_the_store():
    assert store_changelog_topic("app", "counts") == COUNTS.topic


class Put(AbstractProcessor):
    def init(self, context):
        super().init(context)
        self.store = context.get_state_store("counts")

    def process(self, key, value):
        self.store.put(key, value)


def test_a_task_closing_checkpoints_what_its_collector_had_acknowledged(tmp_path):
    builder = TopologyBuilder().add_source("src", "in").add_processor("put", Put, "src")
    supplier = Stores.create("counts").with_keys(Serdes.Bytes()).with_values(Serdes.Bytes()).persistent()
    builder.add_state_store(supplier.build(), "put")
    driver = TopologyTestDriver(builder, {"application.id": "app", "state.dir": str(tmp_path)})
    for key in (b"a", b"b", b"a"):
        driver.pipe_input("in", key, b"v")
    changelog = [driver.read_output("app-counts-changelog") for _ in range(3)]
    assert [r.key for r in changelog] == [b"a", b"b", b"a"], "each put went to the changelog"
    driver.close()
    written = OffsetCheckpoint(tmp_path / "app" / "0_0" / CHECKPOINT_FILE_NAME).read()
    assert written == {TopicPartition("app-counts-changelog", 0): 3}, "offsets 0..2 acknowledged: 2 + 1"
