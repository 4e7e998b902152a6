"""The stream thread's scheduler, Kafka 0.11.0's: one record from each task in turn until nothing is
buffered, then each task's punctuations and requested commits; the commit clock checked every so
many records once processing one poll's records outlasts ``commit.interval.ms``.

The thread's methods run on a stand-in holding only what they read (its tasks, its clock), as the
exactly-once tests do; the tasks are real ``StreamTask``s over a real topology."""

from __future__ import annotations

import types

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.mock_consumer import MockConsumer
from kafka_lite.streams.processor import AbstractProcessor, TaskId, TopologyBuilder
from kafka_lite.streams.processor.internals.processor_state_manager import ProcessorStateManager
from kafka_lite.streams.processor.internals.record_collector_impl import RecordCollectorImpl
from kafka_lite.streams.processor.internals.stream_task import StreamTask
from kafka_lite.streams.processor.internals.stream_thread import (
    UNLIMITED_RECORDS,
    StreamThread,
    adjust_records_processed_before_commit,
)
from kafka_lite.streams.state.state_directory import StateDirectory
from kafka_lite.streams.test_utils.topology_test_driver import DriverProducer
from tests.streams.support import raw

pytestmark = pytest.mark.unit


class Events:
    """What happened, in order: records processed, punctuations, offsets committed."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def commit_sync(self, offsets) -> None:
        self.log.append(("commit", {tp.partition: o.offset for tp, o in offsets.items()}))

    def pause(self, *partitions) -> None:
        pass

    def resume(self, *partitions) -> None:
        pass


class Seen(AbstractProcessor):
    def __init__(self, events: Events, commit_on: bytes | None = None) -> None:
        super().__init__()
        self.events, self.commit_on = events, commit_on

    def init(self, context) -> None:
        super().init(context)
        context.schedule(1000)

    def process(self, key, value) -> None:
        self.events.log.append(("process", self.context().partition(), value))
        if value == self.commit_on:
            self.context().commit()

    def punctuate(self, timestamp) -> None:
        self.events.log.append(("punctuate", self.context().task_id().partition))


def _task(partition: int, events: Events, state_dir, commit_on: bytes | None = None) -> StreamTask:
    tp = TopicPartition("in", partition)
    builder = (
        TopologyBuilder()
        .add_source("src", "in")
        .add_processor("seen", lambda: Seen(events, commit_on), "src")
    )
    task_id = TaskId(0, partition)
    directory = StateDirectory("app", state_dir / str(partition), MockTime())
    state_mgr = ProcessorStateManager("app", task_id, [tp], MockConsumer(), False, directory)
    return StreamTask(
        task_id, "app", [tp], builder.build(0), events, RecordCollectorImpl(DriverProducer(1), str(task_id)),
        state_mgr, {},
    )  # fmt: skip


def _thread(tasks: list[StreamTask], time: MockTime, commit_time_ms: int = 30_000):
    """A stand-in thread with the loop's steps bound to it."""
    thread = types.SimpleNamespace(
        active_tasks={t.id: t for t in tasks}, standby_tasks={}, time=time, commit_time_ms=commit_time_ms,
        last_commit_ms=time.milliseconds(), log_prefix="t",
    )  # fmt: skip
    for step in ("process_and_punctuate", "maybe_punctuate", "maybe_commit", "commit_all", "commit_one"):
        setattr(thread, step, types.MethodType(getattr(StreamThread, step), thread))
    return thread


def test_one_record_from_each_task_in_turn_then_punctuations_and_requested_commits(tmp_path):
    events = Events()
    a, b = _task(0, events, tmp_path, commit_on=b"a1"), _task(1, events, tmp_path)
    a.add_records(
        TopicPartition("in", 0), [raw("in", 0, o, 5000 + o, b"k", f"a{o}".encode()) for o in range(3)]
    )
    b.add_records(TopicPartition("in", 1), [raw("in", 1, 0, 5000, b"k", b"b0")])
    thread = _thread([a, b], MockTime(start_ms=0))

    processed = thread.process_and_punctuate(UNLIMITED_RECORDS)

    assert processed == 4
    assert events.log == [
        ("process", 0, b"a0"),
        ("process", 1, b"b0"),
        ("process", 0, b"a1"),  # asks for a commit: honoured once the poll's records are done
        ("process", 0, b"a2"),
        ("punctuate", 0),
        ("commit", {0: 3}),
        ("punctuate", 1),
    ], "round robin over the tasks until nothing is buffered; then, task by task, punctuate and commit"


def test_a_set_record_count_checks_the_commit_clock_while_the_records_are_processed(tmp_path):
    events = Events()
    a, b = _task(0, events, tmp_path), _task(1, events, tmp_path)
    a.add_records(TopicPartition("in", 0), [raw("in", 0, o, 1, b"k", f"a{o}".encode()) for o in range(3)])
    b.add_records(TopicPartition("in", 1), [raw("in", 1, o, 1, b"k", f"b{o}".encode()) for o in range(3)])
    time = MockTime(start_ms=0)
    thread = _thread([a, b], time, commit_time_ms=100)
    time.sleep(101)  # the interval has passed: the first check commits

    thread.process_and_punctuate(4)

    commits = [i for i, e in enumerate(events.log) if e[0] == "commit"]
    assert [events.log[i] for i in commits] == [("commit", {0: 2}), ("commit", {1: 2})]
    assert commits[0] == 4, "checked after the second round, the fourth record: both tasks commit there"
    assert [e for e in events.log[commits[1] + 1 :] if e[0] == "process"] == [
        ("process", 0, b"a2"),
        ("process", 1, b"b2"),
    ], "and the rest is processed after"


@pytest.mark.parametrize(
    ("previous", "processed", "latency_ms", "expected"),
    [
        (UNLIMITED_RECORDS, 1000, 100, UNLIMITED_RECORDS),  # faster than the interval: poll to poll
        (UNLIMITED_RECORDS, 1000, 0, UNLIMITED_RECORDS),  # too quick to measure
        (UNLIMITED_RECORDS, 1000, 2000, 500),  # twice the interval: check every 500 records
        (UNLIMITED_RECORDS, 3, 4000, 1),  # at least one
        (500, 1000, 250, 4000),  # set once: it follows the rate, up as well as down
        (500, 1000, 0, UNLIMITED_RECORDS),
    ],
)
def test_the_record_count_fits_the_commit_interval_at_the_rate_measured(
    previous, processed, latency_ms, expected
):
    assert adjust_records_processed_before_commit(previous, processed, latency_ms, 1000) == expected


def test_shutdown_commits_the_input_offsets_only_after_the_cached_counts_are_written():
    """0.10.2's order (KAFKA-4561): a word count's cached counts reach the output and the changelog
    before the offsets of the words that made them are committed."""
    from kafka_lite.streams.examples.wordcount import build_wordcount
    from kafka_lite.streams.kstream import KStreamBuilder
    from kafka_lite.streams.test_utils import TopologyTestDriver

    driver = TopologyTestDriver(
        build_wordcount(KStreamBuilder(), "text-lines", "word-counts"),
        {"application.id": "app"},
        commit_after_each_record=False,
    )
    order: list[str] = []
    send, commit_sync = driver.producer.send, driver.consumer.commit_sync
    driver.producer.send = lambda topic, *args, **kw: order.append(topic) or send(topic, *args, **kw)
    driver.consumer.commit_sync = lambda offsets: order.append("commit") or commit_sync(offsets)
    driver.pipe_input("text-lines", None, b"a b a")
    assert "word-counts" not in order, "the counts wait in the cache"
    thread = types.SimpleNamespace(
        active_tasks={driver.task.id: driver.task}, standby_tasks={}, producer=driver.producer,
        restore_consumer=MockConsumer(), eos_enabled=False, log_prefix="t",
    )  # fmt: skip
    for step in ("_commit_after_state_is_written", "_perform_on_all_tasks"):
        setattr(thread, step, types.MethodType(getattr(StreamThread, step), thread))

    StreamThread.shutdown_tasks_and_state(thread, rethrow=True)

    assert order[-1] == "commit" and order.count("commit") == 1, order
    assert {"word-counts", "app-Counts-changelog"} <= set(order[: order.index("commit")]), order
