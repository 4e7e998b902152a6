"""The stream task and its context: forwarding down the graph, punctuation by stream time, state
store access, back-pressure by pausing partitions, and a commit that commits offset + 1 after
flushing the stores and the output."""

from __future__ import annotations

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.mock_consumer import MockConsumer
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.streams.errors import StreamsException, TopologyBuilderException
from kafka_lite.streams.processor import AbstractProcessor, TaskId, TopologyBuilder
from kafka_lite.streams.processor.internals.processor_state_manager import ProcessorStateManager
from kafka_lite.streams.processor.internals.record_collector_impl import RecordCollectorImpl
from kafka_lite.streams.processor.internals.stream_task import StreamTask
from kafka_lite.streams.state.state_directory import StateDirectory
from kafka_lite.streams.test_utils.topology_test_driver import DriverProducer
from tests.streams.support import raw
from tests.streams.test_topology_test_driver import DictStore

pytestmark = pytest.mark.unit
TP = TopicPartition("in", 0)


class ConsumerDouble:
    """The consumer calls a task makes, in kafka_lite's ``KafkaConsumer`` shapes, written to ``events``."""

    def __init__(self, events):
        self.events = events

    def commit_sync(self, offsets):
        self.events.append(("commit_sync", dict(offsets)))

    def pause(self, *partitions):
        self.events.append(("pause", partitions))

    def resume(self, *partitions):
        self.events.append(("resume", partitions))


class Recorder(AbstractProcessor):
    """Remembers what reaches it, and the context's view of the record at that moment."""

    def __init__(self, seen, name):
        super().__init__()
        self.seen, self.name = seen, name

    def process(self, key, value):
        ctx = self.context()
        self.seen.append((self.name, key, value, ctx.topic(), ctx.offset(), ctx.timestamp()))


def _state_manager(state_dir, task_id):
    """The real state manager in ``state_dir``, with nothing to restore."""
    directory = StateDirectory("app", state_dir, MockTime())
    return ProcessorStateManager("app", task_id, [TP], MockConsumer(), False, directory)


def _task(builder, state_dir, events=None, **config):
    events = [] if events is None else events
    task_id = TaskId(0, 0)
    state_mgr = _state_manager(state_dir, task_id)
    return StreamTask(
        task_id,
        "app",
        [TP],
        builder.build(0),
        ConsumerDouble(events),
        RecordCollectorImpl(DriverProducer(1), "0_0"),
        state_mgr,
        config,
    )


def _forwarding_topology(router, seen):
    builder = TopologyBuilder().add_source("src", "in")
    builder.add_processor("router", lambda: router, "src")
    for name in ("a", "b", "c"):
        builder.add_processor(name, lambda name=name: Recorder(seen, name), "router")
    return builder


class Router(AbstractProcessor):
    def process(self, key, value):
        if value == b"all":
            self.context().forward(key, value)
        elif value == b"second":
            self.context().forward(key, value, child=1)
        else:
            self.context().forward(key, value, child=value.decode())


def test_forward_reaches_every_child_in_order_or_one_child_by_index_or_by_name(tmp_path):
    seen = []
    task = _task(_forwarding_topology(Router(), seen), tmp_path)
    task.add_records(
        TP,
        [
            raw("in", 0, 0, 100, b"k", b"all"),
            raw("in", 0, 1, 101, b"k", b"second"),
            raw("in", 0, 2, 102, b"k", b"c"),
        ],
    )
    while task.process():
        pass
    assert seen == [
        ("a", b"k", b"all", "in", 0, 100),
        ("b", b"k", b"all", "in", 0, 100),
        ("c", b"k", b"all", "in", 0, 100),
        ("b", b"k", b"second", "in", 1, 101),
        ("c", b"k", b"c", "in", 2, 102),
    ]


class Ticker(AbstractProcessor):
    def __init__(self, fired):
        super().__init__()
        self.fired = fired

    def init(self, context):
        super().init(context)
        context.schedule(10)

    def process(self, key, value):
        pass

    def punctuate(self, timestamp):
        assert self.context().topic() is None, "a punctuation has no record"
        self.fired.append(timestamp)


def test_punctuation_fires_by_stream_time_and_catches_up_after_a_jump(tmp_path):
    fired = []
    builder = TopologyBuilder().add_source("src", "in").add_processor("tick", lambda: Ticker(fired), "src")
    task = _task(builder, tmp_path)
    assert task.maybe_punctuate() is False, "no record yet: the stream time is not known"
    for offset, ts in enumerate([3, 7, 14, 15, 41]):
        task.add_records(TP, [raw("in", 0, offset, ts)])
        task.process()
        task.maybe_punctuate()
    assert fired == [3, 14, 41, 41]


class Counter(AbstractProcessor):
    def init(self, context):
        super().init(context)
        self.store = context.get_state_store("counts")

    def process(self, key, value):
        self.store.data[key] = self.store.data.get(key, 0) + 1
        self.context().commit()


class Store(DictStore):
    def __init__(self, name, events):
        super().__init__(name)
        self.events = events

    def flush(self):
        self.events.append(("flush", self.name))


class StoreSupplier:
    def __init__(self, name, events):
        self.name, self.events = name, events

    def get(self):
        return Store(self.name, self.events)


class ProducerSpy(DriverProducer):
    def __init__(self, events):
        super().__init__(1)
        self.events = events

    def flush(self):
        self.events.append(("producer.flush",))


def test_commit_flushes_stores_then_output_then_commits_the_next_offset_to_read(tmp_path):
    events = []
    builder = TopologyBuilder().add_source("src", "in").add_processor("count", Counter, "src")
    builder.add_state_store(StoreSupplier("counts", events), "count")
    task_id = TaskId(0, 0)
    task = StreamTask(
        task_id,
        "app",
        [TP],
        builder.build(0),
        ConsumerDouble(events),
        RecordCollectorImpl(ProducerSpy(events), "0_0"),
        _state_manager(tmp_path, task_id),
        {},
    )
    task.add_records(TP, [raw("in", 0, 41, 1, b"x"), raw("in", 0, 42, 2, b"x")])
    assert task.commit_needed() is False
    task.process()
    assert task.commit_needed() is True, "context.commit() is a request the task remembers"
    task.process()
    task.commit()
    assert events == [("flush", "counts"), ("producer.flush",), ("commit_sync", {TP: OffsetAndMetadata(43)})]
    assert task.commit_needed() is False
    assert task.get_store("counts").data == {b"x": 2}
    events.clear()
    task.commit()
    # Stores and output are flushed again, but nothing was processed since: no offsets to commit.
    assert events == [("flush", "counts"), ("producer.flush",)]


def test_a_processor_reaches_only_the_stores_it_was_connected_to(tmp_path):
    events = []
    builder = TopologyBuilder().add_source("src", "in").add_processor("count", Counter, "src")
    builder.add_processor("other", Counter, "src")
    builder.add_state_store(StoreSupplier("counts", events), "count")
    with pytest.raises(StreamsException) as error:
        _task(builder, tmp_path)
    cause = error.value.__cause__
    assert isinstance(cause, TopologyBuilderException)
    assert str(cause) == "Invalid topology building: Processor other has no access to StateStore counts"
    assert str(error.value) == "failed to initialize processor other"


def test_a_partition_is_paused_over_the_buffer_limit_and_resumed_when_back_at_it(tmp_path):
    events = []
    builder = TopologyBuilder().add_source("src", "in")
    task = _task(builder, tmp_path, events, **{"buffered.records.per.partition": 2})
    task.add_records(TP, [raw("in", 0, o, o) for o in range(2)])
    assert events == [], "at the limit, not over it"
    task.add_records(TP, [raw("in", 0, 2, 2)])
    assert events == [("pause", (TP,))]
    task.process()
    assert events == [("pause", (TP,)), ("resume", (TP,))]


def test_a_store_registers_only_while_the_task_initialises(tmp_path):
    events = []
    builder = TopologyBuilder().add_source("src", "in").add_processor("count", Counter, "src")
    builder.add_state_store(StoreSupplier("counts", events), "count")
    task = _task(builder, tmp_path, events)
    store = task.get_store("counts")
    assert store.is_open(), "registered from its init, while the task was made"
    with pytest.raises(RuntimeError, match="Can only create state stores during initialization"):
        Store("late", events).init(task.processor_context, None)
    task.close()
    task.close_state_manager()
    assert not store.is_open(), "the state manager closes the stores after the processors"
