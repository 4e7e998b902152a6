"""The sink side's commit, without a broker: the worker commits what the task's ``pre_commit``
returns, filtered to the partitions it owns and to what was put, and nothing when the task returns
``{}``; the commit before a rebalance goes through ``pre_commit`` too, and a task that keeps its own
offsets starts its partitions where it says in ``open``."""

from __future__ import annotations

import logging

import pytest

from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.transformation_chain import TransformationChain
from kafka_lite.connect.runtime.worker_config import StandaloneConfig
from kafka_lite.connect.runtime.worker_sink_task import WorkerSinkTask
from kafka_lite.connect.sink.sink_task import SinkTask
from kafka_lite.connect.storage.string_converter import StringConverter
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from tests.connect.recording_listener import RecordingListener

pytestmark = pytest.mark.unit

TOPIC = "lines"
TP0 = TopicPartition(TOPIC, 0)
TP1 = TopicPartition(TOPIC, 1)
NOT_ASSIGNED = TopicPartition("elsewhere", 0)
COMMIT_INTERVAL_MS = 1000


class InMemoryConsumer:
    """The calls a WorkerSinkTask makes of its consumer, over records held in memory.

    A rebalance happens in the poll after the test asks for it, as a group's does: the listener
    hears the revocation, then the assignment, and each new partition starts at its committed offset
    (0 if none). Commits are recorded and applied at once; an async commit's callback runs in the
    next poll, as Kafka's does.
    """

    def __init__(self) -> None:
        self.records: dict[TopicPartition, list[ConsumerRecord]] = {}
        self.positions: dict[TopicPartition, int] = {}
        self.paused_partitions: set[TopicPartition] = set()
        self.committed: dict[TopicPartition, OffsetAndMetadata] = {}
        self.commits: list[tuple[str, dict[TopicPartition, OffsetAndMetadata]]] = []
        self.listener = None
        self.next_assignment: list[TopicPartition] | None = None
        self.callbacks: list = []

    # -- what a test sets up ------------------------------------------------------------------------------

    def add_records(self, tp: TopicPartition, count: int) -> None:
        records = self.records.setdefault(tp, [])
        for _ in range(count):
            offset = len(records)
            value = f"line {offset}".encode()
            records.append(ConsumerRecord(tp.topic, tp.partition, -1, offset, 1_500_000_000_000,
                                          TimestampType.CREATE_TIME, None, value, (), None, -1, len(value),
                                          0))  # fmt: skip

    def rebalance(self, partitions: list[TopicPartition]) -> None:
        self.next_assignment = partitions

    # -- the consumer's calls -----------------------------------------------------------------------------

    def subscribe(self, topics, listener=None) -> None:
        self.listener = listener

    def assignment(self) -> set[TopicPartition]:
        return set(self.positions)

    def position(self, tp: TopicPartition) -> int:
        return self.positions[tp]

    def seek(self, tp: TopicPartition, offset: int) -> None:
        assert tp in self.positions, f"seek on {tp}, which is not assigned"
        self.positions[tp] = offset

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused_partitions.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused_partitions.difference_update(partitions)

    def poll(self, timeout_ms: int) -> dict[TopicPartition, list[ConsumerRecord]]:
        callbacks, self.callbacks = self.callbacks, []
        for callback, offsets in callbacks:
            callback(offsets, None)
        if self.next_assignment is not None:
            assigned, self.next_assignment = self.next_assignment, None
            self.listener.on_partitions_revoked(sorted(self.positions))
            self.positions = {tp: self.committed.get(tp, OffsetAndMetadata(0)).offset for tp in assigned}
            self.listener.on_partitions_assigned(assigned)
        fetched = {}
        for tp, position in self.positions.items():
            records = [r for r in self.records.get(tp, ()) if r.offset >= position]
            if records and tp not in self.paused_partitions:
                fetched[tp] = records
                self.positions[tp] = records[-1].offset + 1
        return fetched

    def commit_sync(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.commits.append(("sync", dict(offsets)))
        self.committed.update(offsets)

    def commit_async(self, offsets: dict[TopicPartition, OffsetAndMetadata], callback) -> None:
        self.commits.append(("async", dict(offsets)))
        self.committed.update(offsets)
        self.callbacks.append((callback, dict(offsets)))

    def wakeup(self) -> None:
        pass

    def close(self, autocommit: bool = True) -> None:
        pass


class InMemoryWorkerSinkTask(WorkerSinkTask):
    """A WorkerSinkTask whose consumer is the test's (Kafka's WorkerSinkTaskTest replaces
    ``createConsumer`` the same way)."""

    def __init__(self, consumer: InMemoryConsumer, **kwargs) -> None:
        super().__init__(**kwargs)
        self.in_memory_consumer = consumer

    def _create_consumer(self):
        return self.in_memory_consumer


class RecordingSinkTask(SinkTask):
    """Notes every record put and every call the worker makes around a commit, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.put_offsets: list[tuple[TopicPartition, int]] = []
        self.calls: list[tuple[str, object]] = []

    def version(self) -> str:
        return "test"

    def start(self, props) -> None:
        pass

    def put(self, records) -> None:
        self.put_offsets += [(TopicPartition(r.topic, r.kafka_partition), r.kafka_offset) for r in records]

    def flush(self, current_offsets) -> None:
        self.calls.append(("flush", dict(current_offsets)))

    def close(self, partitions) -> None:
        self.calls.append(("close", sorted(partitions)))

    def stop(self) -> None:
        pass


class OwnOffsetsSinkTask(RecordingSinkTask):
    """Keeps its own offsets: ``pre_commit`` returns ``durable`` (as the test sets it), and ``open``
    starts each partition from ``stored``."""

    def __init__(self) -> None:
        super().__init__()
        self.durable: dict[TopicPartition, OffsetAndMetadata] = {}
        self.stored: dict[TopicPartition, int] = {}

    def open(self, partitions) -> None:
        self.context.offset({tp: offset for tp, offset in self.stored.items() if tp in partitions})

    def pre_commit(self, current_offsets):
        self.calls.append(("pre_commit", dict(current_offsets)))
        return dict(self.durable)


class FailingPreCommitSinkTask(RecordingSinkTask):
    def pre_commit(self, current_offsets):
        raise RuntimeError("the sink is unreachable")


def started(task: SinkTask, consumer: InMemoryConsumer, time: MockTime, assigned: list[TopicPartition]):
    """A started WorkerSinkTask whose first poll assigns ``assigned``."""
    config = StandaloneConfig({"key.converter": "x", "value.converter": "x", "internal.key.converter": "x",
                               "internal.value.converter": "x", "offset.storage.file.filename": "unused",
                               "offset.flush.interval.ms": COMMIT_INTERVAL_MS})  # fmt: skip
    worker_task = InMemoryWorkerSinkTask(
        consumer, id=ConnectorTaskId("sink", 0), task=task, status_listener=RecordingListener(),
        initial_state=TargetState.STARTED, worker_config=config, key_converter=StringConverter(),
        value_converter=StringConverter(), transformation_chain=TransformationChain.no_op(), time=time,
    )  # fmt: skip
    worker_task.initialize({"topics": TOPIC})
    consumer.rebalance(assigned)
    worker_task.initialize_and_start()
    return worker_task


def commit(worker_task: WorkerSinkTask, time: MockTime) -> None:
    """One iteration at the commit's due time: it commits, and its poll completes an async commit."""
    time.sleep(COMMIT_INTERVAL_MS)
    worker_task.iteration()


def offsets(**by_partition: int) -> dict[TopicPartition, OffsetAndMetadata]:
    """``offsets(p0=5, p1=2)``: the offsets of partitions 0 and 1 of the test's topic."""
    return {TopicPartition(TOPIC, int(name[1:])): OffsetAndMetadata(o) for name, o in by_partition.items()}


def ignored(caplog) -> list[tuple[TopicPartition, str]]:
    """The partitions whose task-provided offset the worker logged as ignored, and why."""
    return [(r.args[0], r.getMessage().rsplit("-- ", 1)[1]) for r in caplog.records
            if r.getMessage().startswith("Ignoring invalid task provided offset")]  # fmt: skip


@pytest.fixture
def time():
    return MockTime()


@pytest.fixture
def consumer():
    return InMemoryConsumer()


def test_by_default_the_task_flushes_and_what_was_put_is_committed(time, consumer):
    consumer.add_records(TP0, 5)
    task = RecordingSinkTask()
    worker_task = started(task, consumer, time, [TP0])
    worker_task.iteration()
    assert task.put_offsets == [(TP0, o) for o in range(5)]
    commit(worker_task, time)
    assert task.calls == [("flush", offsets(p0=5))]
    assert consumer.commits == [("async", offsets(p0=5))]


def test_a_task_that_returns_its_own_offsets_is_committed_at_those(time, consumer):
    consumer.add_records(TP0, 5)
    task = OwnOffsetsSinkTask()
    worker_task = started(task, consumer, time, [TP0])
    worker_task.iteration()
    task.durable = offsets(p0=2)  # records 2, 3 and 4 were put, but are not in the sink yet
    commit(worker_task, time)
    assert task.calls == [("pre_commit", offsets(p0=5))], "pre_commit is told what was put; no flush"
    assert consumer.commits == [("async", offsets(p0=2))]
    commit(worker_task, time)
    assert consumer.commits == [("async", offsets(p0=2))], "nothing changed: no second commit"
    task.durable = offsets(p0=5)
    commit(worker_task, time)
    assert consumer.commits[-1] == ("async", offsets(p0=5))


def test_a_task_that_returns_an_empty_map_commits_nothing(time, consumer):
    consumer.add_records(TP0, 5)
    task = OwnOffsetsSinkTask()
    worker_task = started(task, consumer, time, [TP0])
    worker_task.iteration()
    commit(worker_task, time)
    commit(worker_task, time)
    assert consumer.commits == []
    assert [name for name, _ in task.calls] == ["pre_commit", "pre_commit"]
    assert not worker_task.committing, "a skipped commit is over: the next one starts on time"


def test_offsets_for_a_partition_not_assigned_are_ignored(time, consumer, caplog):
    consumer.add_records(TP0, 5)
    consumer.add_records(TP1, 2)
    task = OwnOffsetsSinkTask()
    worker_task = started(task, consumer, time, [TP0, TP1])
    worker_task.iteration()
    task.durable = {TP0: OffsetAndMetadata(3), NOT_ASSIGNED: OffsetAndMetadata(7)}
    with caplog.at_level(logging.WARNING, logger="kafka_lite.connect.runtime.worker_sink_task"):
        commit(worker_task, time)
    # TP1, which the task said nothing about, keeps the offset it had when assigned.
    assert consumer.commits == [("async", offsets(p0=3, p1=0))]
    assert ignored(caplog) == [(NOT_ASSIGNED, "partition not assigned")]


def test_an_offset_past_what_was_put_is_ignored(time, consumer, caplog):
    consumer.add_records(TP0, 5)
    consumer.add_records(TP1, 2)
    task = OwnOffsetsSinkTask()
    worker_task = started(task, consumer, time, [TP0, TP1])
    worker_task.iteration()
    task.durable = offsets(p0=9, p1=1)
    with caplog.at_level(logging.WARNING, logger="kafka_lite.connect.runtime.worker_sink_task"):
        commit(worker_task, time)
    assert consumer.commits == [("async", offsets(p0=0, p1=1))]
    assert ignored(caplog) == [(TP0, "not yet consumed")]


def test_the_commit_before_a_rebalance_commits_what_the_task_returns(time, consumer):
    consumer.add_records(TP0, 5)
    consumer.add_records(TP1, 3)
    task = OwnOffsetsSinkTask()
    worker_task = started(task, consumer, time, [TP0, TP1])
    worker_task.iteration()
    task.durable = offsets(p0=2, p1=1)
    consumer.rebalance([TP1])
    task.put_offsets.clear()
    worker_task.iteration()  # not yet time to commit: the rebalance commits
    assert task.calls == [("pre_commit", offsets(p0=5, p1=3)), ("close", [TP0, TP1])]
    assert consumer.commits == [("sync", offsets(p0=2, p1=1))]
    # TP1 comes back at its committed offset: the record the task had not written is put again.
    assert task.put_offsets == [(TP1, 1), (TP1, 2)]


def test_a_task_that_keeps_its_offsets_starts_where_it_says_in_open(time, consumer):
    consumer.add_records(TP0, 5)
    task = OwnOffsetsSinkTask()
    task.stored = {TP0: 3}
    worker_task = started(task, consumer, time, [TP0])
    worker_task.iteration()
    assert task.put_offsets == [(TP0, 3), (TP0, 4)]
    task.durable = offsets(p0=5)
    commit(worker_task, time)
    assert consumer.commits == [("async", offsets(p0=5))]


def test_a_failed_pre_commit_rewinds_to_the_last_commit(time, consumer):
    consumer.add_records(TP0, 5)
    task = FailingPreCommitSinkTask()
    worker_task = started(task, consumer, time, [TP0])
    worker_task.iteration()
    task.put_offsets.clear()
    commit(worker_task, time)
    assert consumer.commits == []
    assert worker_task.commit_failures == 1
    assert task.put_offsets == [(TP0, o) for o in range(5)], "everything since the last commit is put again"
