"""processing.guarantee=exactly_once (KIP-129): the settings it implies, the calls a task makes on its
transactional producer and when, and the state a task finds after an unclean stop."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.time import MockTime
from kafka_lite.consumer.mock_consumer import MockConsumer
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.streams.processor import TaskId, TopologyBuilder
from kafka_lite.streams.processor.internals.processor_state_manager import ProcessorStateManager
from kafka_lite.streams.processor.internals.record_collector_impl import RecordCollectorImpl
from kafka_lite.streams.processor.internals.stream_task import StreamTask
from kafka_lite.streams.state.internals.offset_checkpoint import CHECKPOINT_FILE_NAME
from kafka_lite.streams.state.state_directory import StateDirectory
from kafka_lite.streams.streams_config import StreamsConfig
from tests.streams.support import raw
from tests.streams.test_stream_task import TP, ConsumerDouble, Counter, ProducerSpy, StoreSupplier

pytestmark = pytest.mark.unit

EOS = {"application.id": "app", "bootstrap.servers": "localhost:9092", "processing.guarantee": "exactly_once"}


def test_exactly_once_reads_committed_data_commits_often_and_gives_each_task_its_transactional_id():
    config = StreamsConfig(EOS)
    assert config.eos_enabled
    assert config["commit.interval.ms"] == 100, "Kafka 0.11's default under exactly_once"
    assert config.get_consumer_configs("t1")["isolation.level"] == "read_committed"
    assert config.get_restore_consumer_configs("t1")["isolation.level"] == "read_committed"
    producer = config.get_producer_configs("t1", "0_3")
    assert producer["transactional.id"] == "app-0_3"
    assert producer["client.id"] == "t1-0_3-producer"
    with pytest.raises(ConfigException, match="per task"):
        config.get_producer_configs("t1")


def test_at_least_once_keeps_its_settings_and_an_explicit_commit_interval_is_kept():
    config = StreamsConfig({**EOS, "processing.guarantee": "at_least_once"})
    assert config["commit.interval.ms"] == 30_000
    assert "isolation.level" not in config.get_consumer_configs("t1")
    assert "transactional.id" not in config.get_producer_configs("t1")
    assert StreamsConfig({**EOS, "commit.interval.ms": 2000})["commit.interval.ms"] == 2000


def test_an_unknown_processing_guarantee_is_refused_naming_the_setting():
    with pytest.raises(ConfigException, match=r"processing\.guarantee"):
        StreamsConfig({**EOS, "processing.guarantee": "exactly-once"})


class TransactionalProducerSpy(ProducerSpy):
    """The transactional calls a task makes, in kafka_lite's ``KafkaProducer`` names, in ``events``."""

    def init_transactions(self):
        self.events.append(("init_transactions",))

    def begin_transaction(self):
        self.events.append(("begin_transaction",))

    def send_offsets_to_transaction(self, offsets, consumer_group_id):
        self.events.append(("send_offsets_to_transaction", dict(offsets), consumer_group_id))

    def commit_transaction(self):
        self.events.append(("commit_transaction",))

    def abort_transaction(self):
        self.events.append(("abort_transaction",))

    def close(self):
        self.events.append(("producer.close",))


def _eos_task(tmp_path, events):
    builder = TopologyBuilder().add_source("src", "in").add_processor("count", Counter, "src")
    builder.add_state_store(StoreSupplier("counts", events), "count")
    task_id = TaskId(0, 0)
    directory = StateDirectory("app", tmp_path, MockTime())
    state_mgr = ProcessorStateManager(
        "app", task_id, [TP], MockConsumer(), False, directory, eos_enabled=True
    )
    producer = TransactionalProducerSpy(events)
    config = {"processing.guarantee": "exactly_once"}
    return StreamTask(
        task_id, "app", [TP], builder.build(0), ConsumerDouble(events), RecordCollectorImpl(producer, "0_0"),
        state_mgr, config, producer,
    )  # fmt: skip


def test_a_task_fences_its_predecessor_then_commits_its_offsets_inside_its_transaction(tmp_path):
    events = []
    task = _eos_task(tmp_path, events)
    assert events == [("init_transactions",), ("begin_transaction",)], "fenced and begun before any record"
    events.clear()
    task.add_records(TP, [raw("in", 0, 41, 1, b"x"), raw("in", 0, 42, 2, b"x")])
    task.process()
    task.process()
    task.commit()
    assert events == [
        ("flush", "counts"),
        ("producer.flush",),
        ("send_offsets_to_transaction", {TP: OffsetAndMetadata(43)}, "app"),
        ("commit_transaction",),
        ("begin_transaction",),
    ], "offsets go into the transaction, never through the consumer's commit_sync"
    assert task.transaction_in_flight


def test_closing_commits_the_last_transaction_without_beginning_another_and_then_checkpoints(tmp_path):
    events = []
    task = _eos_task(tmp_path, events)
    task.add_records(TP, [raw("in", 0, 7, 1, b"x")])
    task.process()
    events.clear()
    task.commit(start_new_transaction=False)
    assert events[-2:] == [
        ("send_offsets_to_transaction", {TP: OffsetAndMetadata(8)}, "app"),
        ("commit_transaction",),
    ]
    task.close_state_manager()
    task.close_producer()
    assert ("abort_transaction",) not in events
    assert events[-1] == ("producer.close",)
    assert (tmp_path / "app" / "0_0" / CHECKPOINT_FILE_NAME).exists()


def test_an_open_transaction_is_aborted_at_close_and_leaves_no_checkpoint(tmp_path):
    events = []
    task = _eos_task(tmp_path, events)
    task.add_records(TP, [raw("in", 0, 7, 1, b"x")])
    task.process()
    task.close_state_manager()
    task.close_producer()
    assert events[-2:] == [("abort_transaction",), ("producer.close",)]
    assert not (tmp_path / "app" / "0_0" / CHECKPOINT_FILE_NAME).exists(), (
        "the stores hold writes of an aborted transaction: no checkpoint may vouch for them"
    )


def _state_manager(tmp_path, eos_enabled):
    directory = StateDirectory("app", tmp_path, MockTime())
    return ProcessorStateManager(
        "app", TaskId(0, 0), [TP], MockConsumer(), False, directory, eos_enabled=eos_enabled
    )


def test_under_exactly_once_a_task_directory_without_a_checkpoint_is_wiped(tmp_path):
    store_dir = tmp_path / "app" / "0_0" / "rocksdb" / "counts"
    store_dir.mkdir(parents=True)
    (store_dir / "data").write_bytes(b"a write of an aborted transaction")
    state_mgr = _state_manager(tmp_path, eos_enabled=True)
    assert not (tmp_path / "app" / "0_0" / "rocksdb").exists()
    state_mgr.close({})


def test_a_checkpoint_or_at_least_once_keeps_the_stores_on_disk(tmp_path):
    task_dir = tmp_path / "app" / "0_0"
    (task_dir / "rocksdb" / "counts").mkdir(parents=True)
    _state_manager(tmp_path, eos_enabled=False).close({})
    assert (task_dir / "rocksdb" / "counts").exists(), "at-least-once restores on top of what is there"
    (task_dir / CHECKPOINT_FILE_NAME).write_text("0\n0\n")
    _state_manager(tmp_path, eos_enabled=True).close({})
    assert (task_dir / "rocksdb" / "counts").exists(), "a clean stop under exactly_once keeps the stores"


def test_a_thread_closing_its_tasks_under_exactly_once_commits_their_offsets_in_the_last_transaction(
    tmp_path,
):
    """The rebalance (or shutdown) path: processors closed first, then the last transaction commits
    with the offsets of what was processed; the output must never commit without them."""
    import types

    from kafka_lite.streams.processor.internals.stream_thread import StreamThread

    events = []
    task = _eos_task(tmp_path, events)
    task.add_records(TP, [raw("in", 0, 7, 1, b"x"), raw("in", 0, 8, 2, b"x")])
    task.process()
    task.process()
    events.clear()
    thread = types.SimpleNamespace(
        active_tasks={task.id: task}, standby_tasks={}, restore_consumer=MockConsumer(), log_prefix="t"
    )
    thread._perform_on_all_tasks = types.MethodType(StreamThread._perform_on_all_tasks, thread)
    StreamThread._shutdown_tasks_and_state_eos(thread, rethrow=True)
    assert ("send_offsets_to_transaction", {TP: OffsetAndMetadata(9)}, "app") in events
    assert events.index(("send_offsets_to_transaction", {TP: OffsetAndMetadata(9)}, "app")) < events.index(
        ("commit_transaction",)
    )
    assert ("abort_transaction",) not in events and events[-1] == ("producer.close",)


def test_the_commit_interval_counts_from_the_end_of_the_last_commit():
    """Under exactly_once each task's commit is a transaction, and committing them all can take longer
    than commit.interval.ms: the next commit still waits a whole interval after the last one ended,
    so the thread goes on processing between commits instead of committing after every record."""
    import types

    from kafka_lite.streams.processor.internals.stream_thread import StreamThread

    time = MockTime(start_ms=0)
    commits = []

    def commit_all():
        commits.append(time.milliseconds())
        time.sleep(500)  # five intervals' worth of transactions

    thread = types.SimpleNamespace(
        time=time, commit_time_ms=100, last_commit_ms=0, log_prefix="t", commit_all=commit_all
    )
    maybe_commit = types.MethodType(StreamThread.maybe_commit, thread)
    maybe_commit()
    assert commits == [], "not before the first interval has passed"
    time.sleep(101)
    maybe_commit()
    assert commits == [101]
    time.sleep(50)
    maybe_commit()
    assert commits == [101], "50 ms after the commit ended (at 601 ms) is within the interval"
    time.sleep(51)
    maybe_commit()
    assert commits == [101, 702]
