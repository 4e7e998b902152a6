"""The source side's guarantee, without a broker: an offset is stored only after the producer
acknowledged every record sent before it, and records sent during a commit wait for the next one."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.time import SYSTEM
from kafka_lite.connect.data.schema import STRING_SCHEMA
from kafka_lite.connect.json.json_converter import JsonConverter
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.transformation_chain import TransformationChain
from kafka_lite.connect.runtime.worker_config import StandaloneConfig
from kafka_lite.connect.runtime.worker_source_task import WorkerSourceTask
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.source.source_task import SourceTask
from kafka_lite.connect.storage.offset_backing_store import MemoryOffsetBackingStore
from kafka_lite.connect.storage.offset_storage_reader import OffsetStorageReaderImpl
from kafka_lite.connect.storage.offset_storage_writer import OffsetStorageWriter
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from tests.connect.recording_listener import RecordingListener
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit


class HeldSend:
    """A record's send, held: the test completes it by calling the callback given to ``send``."""

    def __init__(self, callback) -> None:
        self.callback = callback

    def acknowledge(self, offset: int) -> None:
        self.callback(
            type("RecordMetadata", (), {"topic": "lines", "partition": 0, "offset": offset})(), None
        )

    def fail(self, error: BaseException) -> None:
        self.callback(None, error)


class HeldProducer:
    """Sends nothing: each record waits until the test acknowledges it (or fails it)."""

    def __init__(self) -> None:
        self.sent: list[tuple[bytes, HeldSend]] = []

    def send(self, topic, value=None, key=None, partition=None, timestamp_ms=None, callback=None):
        self.sent.append((value, HeldSend(callback)))

    def close(self, timeout=None):
        pass


class CommitRecording(SourceTask):
    """Notes the records ``commit_record`` is told were written."""

    def __init__(self) -> None:
        self.committed: list[SourceRecord] = []

    def version(self):
        return "test"

    def start(self, props):
        pass

    def poll(self):
        return None

    def stop(self):
        pass

    def commit_record(self, record):
        self.committed.append(record)


class NoTask(SourceTask):
    def version(self):
        return "test"

    def start(self, props):
        pass

    def poll(self):
        return None

    def stop(self):
        pass


def json_converter(schemas: bool) -> JsonConverter:
    c = JsonConverter()
    c.configure({"schemas.enable": str(schemas).lower()}, False)
    return c


def line(position: int) -> SourceRecord:
    return SourceRecord({"filename": "in.txt"}, {"position": position}, "lines", None, None, None,
                        STRING_SCHEMA, f"line ending at {position}")  # fmt: skip


def new_worker_task(
    store: MemoryOffsetBackingStore,
    connector: str = "source",
    task: SourceTask | None = None,
    chain: TransformationChain | None = None,
) -> WorkerSourceTask:
    internal = json_converter(False)
    config = StandaloneConfig({"key.converter": "x", "value.converter": "x", "internal.key.converter": "x",
                               "internal.value.converter": "x", "offset.storage.file.filename": "unused",
                               "offset.flush.timeout.ms": 5000})  # fmt: skip
    return WorkerSourceTask(
        ConnectorTaskId(connector, 0), task or NoTask(), RecordingListener(), TargetState.STARTED, json_converter(True), json_converter(True),
        chain or TransformationChain.no_op(), HeldProducer(),
        OffsetStorageReaderImpl(store, connector, internal, internal),
        OffsetStorageWriter(store, connector, internal, internal), config, SYSTEM,
    )  # fmt: skip


@pytest.fixture
def store():
    store = MemoryOffsetBackingStore()
    store.start()
    yield store
    store.stop()


@pytest.fixture
def worker_task(store):
    return new_worker_task(store)


def committed_position(task: WorkerSourceTask) -> int | None:
    offset = task.offset_reader.offset({"filename": "in.txt"})
    return None if offset is None else offset["position"]


def test_offsets_are_stored_only_once_the_producer_acknowledged_their_records(worker_task):
    worker_task.to_send = [line(10), line(20)]
    assert worker_task.send_records()
    (_, first), (_, second) = worker_task.producer.sent
    result = {}
    commit = threading.Thread(target=lambda: result.setdefault("ok", worker_task.commit_offsets()))
    commit.start()
    wait_until(lambda: worker_task.flushing, what="the commit to take its snapshot of the offsets")
    # The acknowledgement takes the task's monitor, which the commit holds until it waits: from
    # here on the commit is waiting, and the first record's callback has woken nothing that may go on.
    first.acknowledge(0)
    commit.join(0.5)
    assert commit.is_alive(), "the commit must wait for the second record too"
    assert committed_position(worker_task) is None
    second.acknowledge(1)
    commit.join(5)
    assert result == {"ok": True}
    assert committed_position(worker_task) == 20


def test_records_sent_during_a_commit_wait_for_the_next_one(worker_task):
    worker_task.to_send = [line(10)]
    worker_task.send_records()
    commit = threading.Thread(target=worker_task.commit_offsets)
    commit.start()
    while not worker_task.flushing:  # the commit has taken its snapshot of the offsets
        threading.Event().wait(0.001)
    worker_task.to_send = [line(20)]
    worker_task.send_records()  # goes to the backlog: not part of this commit
    worker_task.producer.sent[0][1].acknowledge(0)
    commit.join(5)
    assert committed_position(worker_task) == 10
    assert next(iter(worker_task.outstanding_messages.values())).value.endswith(b'"line ending at 20"}')
    worker_task.producer.sent[1][1].acknowledge(1)
    assert worker_task.commit_offsets()
    assert committed_position(worker_task) == 20


def test_records_are_sent_as_the_converters_write_them(worker_task):
    worker_task.to_send = [line(10)]
    worker_task.send_records()
    value, _ = worker_task.producer.sent[0]
    assert value == b'{"schema":{"type":"string","optional":false},"payload":"line ending at 10"}'


class PollRecordingTask(NoTask):
    """Each poll is an event in the listener's timeline, between its status events."""

    def __init__(self, listener: RecordingListener) -> None:
        self.listener = listener
        self.stopped = threading.Event()

    def poll(self):
        self.listener._record("poll", None)
        self.stopped.wait(0.01)  # as a source with no new data waits a little
        return None

    def stop(self):
        self.stopped.set()


def test_a_paused_source_task_stops_polling_until_resumed(worker_task, store):
    listener = worker_task.status_listener
    worker_task.task = PollRecordingTask(listener)
    worker_task.start()
    wait_until(lambda: "poll" in listener.names(), what="the task to poll")
    worker_task.transition_to(TargetState.PAUSED)
    wait_until(lambda: "pause" in listener.names(), what="the task to report PAUSED")
    # The pause is held while a task that is not paused, polling the same source, polls many times:
    # a paused task that went on polling would have polled too, however fast or slow the machine.
    running = new_worker_task(store, "running-source")
    running.task = PollRecordingTask(running.status_listener)
    running.start()
    wait_until(lambda: running.status_listener.names().count("poll") >= 20, what="the running task to poll")
    running.stop()
    assert running.await_stop(5000)
    worker_task.transition_to(TargetState.STARTED)
    wait_until(lambda: listener.names()[-1] == "poll" and "resume" in listener.names(),
               what="the task to resume polling")  # fmt: skip
    worker_task.stop()
    assert worker_task.await_stop(5000)
    names = listener.names()
    assert names[0] == "startup" and names[-1] == "shutdown"
    assert (names.count("pause"), names.count("resume")) == (1, 1), names
    paused = names[names.index("pause") + 1 : names.index("resume")]
    assert paused == [], f"polled while paused: {names}"


def test_a_task_created_paused_starts_only_when_resumed(worker_task):
    listener = worker_task.status_listener
    worker_task.task = PollRecordingTask(listener)
    worker_task.target_state = TargetState.PAUSED
    worker_task.start()
    wait_until(lambda: listener.names() == ["pause"], what="the task to report PAUSED")
    worker_task.transition_to(TargetState.STARTED)
    wait_until(lambda: "poll" in listener.names(), what="the task to start")
    worker_task.stop()
    assert worker_task.await_stop(5000)
    assert listener.names()[:2] == ["pause", "startup"]


def test_a_failed_record_counts_as_sent_and_is_not_committed_to_the_task(store):
    task = CommitRecording()
    worker_task = new_worker_task(store, task=task)
    worker_task.to_send = [line(10), line(20)]
    assert worker_task.send_records()
    (_, first), (_, second) = worker_task.producer.sent
    first.fail(RuntimeError("broker said no"))
    second.acknowledge(0)
    # Logged and counted as sent, as Kafka 0.10.1 does: the commit does not wait for it.
    assert worker_task.outstanding_messages == {}
    assert [r.source_offset for r in task.committed] == [{"position": 20}]
    assert worker_task.commit_offsets()
    assert committed_position(worker_task) == 20
