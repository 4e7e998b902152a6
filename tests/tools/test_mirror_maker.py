"""MirrorMaker without a cluster: the whitelist as Kafka's ``TopicFilter`` reads it, the default and a
loaded message handler, the no-data-loss defaults, a thread's flush-then-commit order over fake
clients (what it commits is what it sent, and nothing after a failed send), and the command's
one-line errors. Against two real clusters: tests/tools/mirror_maker/."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.cli.main import main
from kafka_lite.common.errors import KafkaException, WakeupException
from kafka_lite.common.record.constants import NO_TIMESTAMP, TimestampType
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.consumer_record import ConsumerRecord
from kafka_lite.producer.future_record_metadata import RecordMetadata
from kafka_lite.producer.producer_record import ProducerRecord
from kafka_lite.tools.mirror_maker import (
    DefaultMirrorMakerMessageHandler,
    InternalRebalanceListenerForNewConsumer,
    MirrorMakerException,
    MirrorMakerMessageHandler,
    MirrorMakerNewConsumer,
    MirrorMakerProducer,
    MirrorMakerState,
    MirrorMakerThread,
    consumer_configs,
    load_message_handler,
    producer_config,
    whitelist_regex,
)
from kafka_lite.utils.ports import free_port

pytestmark = pytest.mark.unit


def record(topic="t", partition=0, offset=0, key=b"k", value=b"v", timestamp=1_700_000_000_000, headers=()):
    return ConsumerRecord(topic, partition, -1, offset, timestamp, TimestampType.CREATE_TIME, key, value,
                          tuple(headers), None, -1, -1, -1)  # fmt: skip


# -- the whitelist ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, regex",
    [
        ("orders", "orders"),
        ("orders,payments", "orders|payments"),  # ',' is '|'
        (" orders, pay.* ", "orders|pay.*"),  # trimmed, spaces dropped
        ('"orders.*"', "orders.*"),  # quotes from a properties file dropped
        ("'a,b'", "a|b"),
    ],
)
def test_the_whitelist_reads_as_kafka_s_topic_filter(raw, regex):
    assert whitelist_regex(raw) == regex


def test_a_whitelist_that_is_no_regex_is_refused_with_kafka_s_wording():
    with pytest.raises(MirrorMakerException, match=r"^orders\[ is an invalid regex\."):
        whitelist_regex("orders[")


# -- the message handler ------------------------------------------------------------------------------


def test_the_default_handler_copies_key_value_timestamp_and_headers_but_not_the_partition():
    headers = [Header("trace", b"1"), Header("empty", None)]
    [out] = DefaultMirrorMakerMessageHandler().handle(record(partition=2, headers=headers))
    assert out == ProducerRecord("t", b"v", b"k", None, 1_700_000_000_000, [("trace", b"1"), ("empty", None)])


def test_the_default_handler_leaves_a_missing_timestamp_to_the_producer():
    [out] = DefaultMirrorMakerMessageHandler().handle(record(timestamp=NO_TIMESTAMP, key=None))
    assert out.timestamp_ms is None and out.key is None and out.headers is None


class UpperCaseHandler(MirrorMakerMessageHandler):
    """A handler for the tests: upper-cases values into the topic ``<topic><suffix>``."""

    def __init__(self, suffix: str = "") -> None:
        self.suffix = suffix

    def handle(self, record):
        return [ProducerRecord(record.topic + self.suffix, record.value.upper(), record.key)]


def test_a_handler_is_loaded_by_name_with_its_argument():
    handler = load_message_handler(f"{__name__}:UpperCaseHandler", "-copy")
    assert handler.handle(record())[0] == ProducerRecord("t-copy", b"V", b"k")


@pytest.mark.parametrize(
    "name, message",
    [
        ("no_such_module_xyz:Handler", "class could not be found"),
        (
            f"{__name__}:record",
            "is not a subclass of kafka_lite.tools.mirror_maker.MirrorMakerMessageHandler",
        ),
    ],
)
def test_a_handler_that_cannot_be_loaded_is_named(name, message):
    with pytest.raises(MirrorMakerException, match=message):
        load_message_handler(name)


# -- configs ------------------------------------------------------------------------------------------


def test_the_no_data_loss_defaults_give_way_to_the_user_s_settings():
    config = producer_config({"bootstrap.servers": "b:9092", "acks": "1"})
    assert config["acks"] == "1"
    assert config["max.in.flight.requests.per.connection"] == "1"
    assert config["retries"] == str(2**31 - 1) and config["max.block.ms"] == str(2**63 - 1)
    configs = consumer_configs({"bootstrap.servers": "a:9092", "group.id": "mm"}, 2)
    assert [c["client.id"] for c in configs] == ["mm-0", "mm-1"]
    assert all(c["enable.auto.commit"] == "false" for c in configs)
    with pytest.raises(MirrorMakerException, match=r"group\.id is missing"):
        consumer_configs({"bootstrap.servers": "a:9092"}, 1)


# -- a thread over fake clients -----------------------------------------------------------------------


class FakeConsumer:
    """Hands out the batches it is given, one per poll; records every commit in ``events``."""

    def __init__(self, batches, events, time):
        self.batches, self.events, self.time = list(batches), events, time
        self.listener = None
        self.woken = threading.Event()

    def subscribe(self, pattern, listener):
        self.listener = listener

    def poll(self, timeout_ms):
        if self.woken.is_set():
            self.woken.clear()
            raise WakeupException("woken")
        self.time.sleep(100)  # each poll moves the clock on
        if not self.batches:
            self.woken.wait(0.01)
            return {}
        batch = self.batches.pop(0)
        return {TopicPartition(batch[0].topic, batch[0].partition): batch}

    def commit_sync(self, offsets):
        self.events.append(("commit", {tp.partition: om.offset for tp, om in offsets.items()}))

    def wakeup(self):
        self.woken.set()

    def close(self):
        self.events.append(("close",))


class FakeProducer:
    """Completes every send at once through its callback: written, or failed for ``fail_values``."""

    def __init__(self, events, fail_values=()):
        self.events, self.fail_values = events, set(fail_values)

    def send(self, topic, value, key, partition, timestamp_ms, headers, callback=None):
        self.events.append(("send", value))
        if value in self.fail_values:
            callback(None, KafkaException("broker said no"))
        else:
            callback(RecordMetadata(topic, 0, TopicPartition(topic, 0), 0, -1, None, -1, -1, -1), None)

    def flush(self):
        self.events.append(("flush",))

    def close(self, timeout=None):
        self.events.append(("producer-close", timeout))


def run_thread(batches, fail_values=(), interval_ms=150):
    events, time, state = [], MockTime(), MirrorMakerState()
    consumer = MirrorMakerNewConsumer(FakeConsumer(batches, events, time), "t")
    producer = MirrorMakerProducer(FakeProducer(events, fail_values), True, state)
    thread = MirrorMakerThread(consumer, 0, producer, DefaultMirrorMakerMessageHandler(), interval_ms, state,
                               lambda: events.append(("abnormal-exit",)), time)  # fmt: skip
    thread.start()
    return thread, events, state


def test_a_thread_flushes_then_commits_the_offsets_after_what_it_sent():
    batches = [[record(offset=o, value=b"%d" % o) for o in (0, 1)], [record(offset=2, value=b"2")]]
    thread, events, state = run_thread(batches)
    state.is_shutting_down = True  # as MirrorMaker.shutdown sets it
    _wait(lambda: ("send", b"2") in events)
    thread.shutdown()
    thread.await_shutdown()
    # Every commit follows a flush and covers exactly the records sent since the last commit (Kafka's
    # commit clears what it committed: a commit with nothing new sent is empty).
    last_sent = None
    for i, event in enumerate(events):
        if event[0] == "send":
            last_sent = int(event[1])
        if event[0] == "commit":
            assert events[i - 1] == ("flush",), events
            assert event[1] == ({} if last_sent is None else {0: last_sent + 1}), events
            last_sent = None
    assert ("commit", {0: 3}) in events and events[-1] == ("close",)
    assert ("abnormal-exit",) not in events
    # The callback of a record written does nothing: nothing dropped, nothing failed.
    assert (state.num_dropped_messages, state.failure) == (0, None)


def test_after_a_failed_send_the_thread_stops_and_commits_nothing_more():
    batches = [
        [record(offset=0, value=b"ok")],
        [record(offset=1, value=b"bad")],
        [record(offset=2, value=b"x")],
    ]
    thread, events, state = run_thread(batches, fail_values={b"bad"}, interval_ms=0)
    thread.await_shutdown()
    assert ("commit", {0: 1}) in events  # before the failure
    assert ("producer-close", 0) in events and state.exiting_on_send_failure
    after = events[events.index(("send", b"bad")) :]
    assert not [e for e in after if e[0] == "commit"], f"committed after the failed send: {events}"
    assert ("send", b"x") not in events
    assert events[-1] == ("abnormal-exit",) and state.num_dropped_messages == 1


def test_losing_partitions_in_a_rebalance_flushes_then_commits_what_was_sent():
    events, time, state = [], MockTime(), MirrorMakerState()
    consumer = MirrorMakerNewConsumer(FakeConsumer([[record(offset=7)]], events, time), "t")
    producer = MirrorMakerProducer(FakeProducer(events), True, state)
    producer.send(DefaultMirrorMakerMessageHandler().handle(consumer.receive())[0])
    InternalRebalanceListenerForNewConsumer(consumer, producer, state).on_partitions_revoked(
        [TopicPartition("t", 0)]
    )
    assert events == [("send", b"v"), ("flush",), ("commit", {0: 8})]


def _wait(condition, timeout_s=5.0):
    import time

    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


# -- the command's errors -----------------------------------------------------------------------------


@pytest.fixture
def configs(tmp_path):
    nowhere = f"127.0.0.1:{free_port()}"
    consumer = tmp_path / "consumer.properties"
    consumer.write_text(f"bootstrap.servers={nowhere}\ngroup.id=mm\n")
    producer = tmp_path / "producer.properties"
    producer.write_text(f"bootstrap.servers={nowhere}\n")
    return consumer, producer


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c, p: ["--consumer.config", str(c.parent / "missing.properties")], "does not exist"),
        (
            lambda c, p: c.write_text(c.read_text() + "no.such.setting=1\n"),
            "Unknown configuration 'no.such.setting'",
        ),
        (lambda c, p: ["--whitelist", "orders["], r"orders\[ is an invalid regex"),
        (lambda c, p: c.write_text("bootstrap.servers=127.0.0.1:1\n"), "group.id is missing"),
        (
            lambda c, p: p.write_text(p.read_text() + "group.id=mm\n"),
            "producer.properties: Unknown configuration 'group.id'",
        ),
        (lambda c, p: ["--message.handler", "no_such_module_xyz:H"], "class could not be found"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(configs, capsys, change, message):
    consumer, producer = configs
    extra = change(consumer, producer)
    extra = extra if isinstance(extra, list) else []
    argv = ["mirror-maker", "--consumer.config", str(consumer), "--producer.config", str(producer),
            "--whitelist", "t", *extra]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "kafka-lite mirror-maker:" in line]
    assert len(lines) == 1 and message.replace("\\", "") in " ".join(err.split()), err
    assert "Traceback" not in err


def test_abort_on_send_failure_takes_true_or_false(configs, capsys):
    consumer, producer = configs
    with pytest.raises(SystemExit) as exit_info:
        main(["mirror-maker", "--consumer.config", str(consumer), "--producer.config", str(producer),
              "--whitelist", "t", "--abort.on.send.failure", "yes"])  # fmt: skip
    assert exit_info.value.code == 2
    assert "'yes' is not true or false" in capsys.readouterr().err


def test_a_wait_of_long_max_value_ms_does_not_overflow_python_s_lock():
    # max.block.ms = Long.MAX_VALUE, as MirrorMaker sets it, reaches Time.wait_for.
    from kafka_lite.common.time import SYSTEM

    condition, done = threading.Condition(), threading.Event()

    def finish():
        done.set()
        with condition:
            condition.notify_all()

    threading.Timer(0.05, finish).start()
    with condition:
        assert SYSTEM.wait_for(condition, done.is_set, 2**63 - 1)
