"""The topology test driver: a word count with a dict-backed store runs record by record through
the real ``StreamTask``; its output and its store equal a count made by hand."""

from __future__ import annotations

import os

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from kafka_lite.streams.errors import StreamsException
from kafka_lite.streams.processor import AbstractProcessor, TopologyBuilder, WallclockTimestampExtractor
from kafka_lite.streams.test_utils import TopologyTestDriver

pytestmark = pytest.mark.unit


class DictStore:
    """A key-value store kept in a dict: a test double obeying the store contract (``name``,
    ``init`` registering with the context, ``flush``, ``close``, ``persistent``, ``is_open``)."""

    def __init__(self, name):
        self.name = name
        self.data = {}
        self.open = False
        self.flushes = 0

    def init(self, context, root):
        context.register(root, True, self.restore)
        self.open = True

    def restore(self, key, value):
        self.data[key] = value

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        self.data[key] = value

    def flush(self):
        self.flushes += 1

    def close(self):
        self.open = False

    def persistent(self):
        return False

    def is_open(self):
        return self.open


class DictStoreSupplier:
    def __init__(self, name):
        self.name = name

    def get(self):
        return DictStore(self.name)


class WordCount(AbstractProcessor):
    """Splits each line into words, counts them in the store 'counts', forwards (word, new count)."""

    def init(self, context):
        super().init(context)
        self.counts = context.get_state_store("counts")

    def process(self, key, line):
        for word in line.lower().split():
            count = (self.counts.get(word) or 0) + 1
            self.counts.put(word, count)
            self.context().forward(word, count)


def word_count_builder():
    builder = TopologyBuilder()
    builder.add_source("lines", "text-lines", value_deserializer=bytes.decode)
    builder.add_processor("count", WordCount, "lines")
    builder.add_state_store(DictStoreSupplier("counts"), "count")
    builder.add_sink(
        "out", "word-counts", "count", key_serializer=str.encode, value_serializer=lambda n: str(n).encode()
    )
    return builder


LINES = ["the cat sat", "The dog", "the cat ran"]
EXPECTED = [("the", 1), ("cat", 1), ("sat", 1), ("the", 2), ("dog", 1), ("the", 3), ("cat", 2), ("ran", 1)]


def test_word_count_output_and_store_equal_the_count_by_hand():
    driver = TopologyTestDriver(word_count_builder(), {"application.id": "word-count"})
    for i, line in enumerate(LINES):
        driver.pipe_input("text-lines", None, line.encode(), timestamp=1000 + i)
    output = []
    while (record := driver.read_output("word-counts", bytes.decode, lambda b: int(b))) is not None:
        output.append((record.key, record.value, record.timestamp_ms))
    assert [(k, v) for k, v, _ in output] == EXPECTED
    # Each output carries the timestamp of the line that caused it.
    assert [ts for _, _, ts in output] == [1000, 1000, 1000, 1001, 1001, 1002, 1002, 1002]
    store = driver.get_state_store("counts")
    assert store.data == {"the": 3, "cat": 2, "sat": 1, "dog": 1, "ran": 1}
    assert store.flushes == 3, "the driver commits after each input, and a commit flushes the stores"
    assert driver.consumer.committed(TopicPartition("text-lines", 0)) == OffsetAndMetadata(3)
    driver.close()
    assert not store.is_open()
    state_dir = driver._temp_state_dir.name
    driver.close()  # a second close does nothing, and fails on nothing
    assert not store.is_open() and not os.path.exists(state_dir)


def test_read_output_is_none_when_nothing_is_left():
    driver = TopologyTestDriver(word_count_builder(), {"application.id": "word-count"})
    assert driver.read_output("word-counts") is None
    driver.pipe_input("text-lines", None, b"one", timestamp=5)
    record = driver.read_output("word-counts")
    assert (record.key, record.value) == (b"one", b"1"), "without deserializers, the bytes as written"
    assert driver.read_output("word-counts") is None


class EverySecond(AbstractProcessor):
    """Forwards the number of records seen since the last punctuation, every 1000 ms of stream time."""

    def init(self, context):
        super().init(context)
        self.seen = 0
        context.schedule(1000)

    def process(self, key, value):
        self.seen += 1

    def punctuate(self, timestamp):
        self.context().forward(b"seen", f"{timestamp}:{self.seen}".encode())
        self.seen = 0


def _every_second_driver(time=None, **config):
    builder = TopologyBuilder().add_source("src", "in").add_processor("tick", EverySecond, "src")
    builder.add_sink("out", "ticks", "tick")
    return TopologyTestDriver(
        builder, {"application.id": "ticks", **config}, initial_wall_clock_time_ms=0, time=time
    )


def test_punctuation_follows_stream_time_not_the_wall_clock():
    driver = _every_second_driver()
    driver.pipe_input("in", None, b"x", timestamp=500)  # first stream time: the schedule starts here
    driver.pipe_input("in", None, b"x", timestamp=900)
    driver.advance_wall_clock_time(10_000)
    assert [driver.read_output("ticks").value] == [b"500:1"]
    assert driver.read_output("ticks") is None, "a wall clock moving fires nothing in 0.10.1"
    driver.pipe_input("in", None, b"x", timestamp=1500)
    assert driver.read_output("ticks").value == b"1500:2"


def test_a_wallclock_extractor_reads_the_drivers_clock():
    time = MockTime(start_ms=0)
    driver = _every_second_driver(time, **{"timestamp.extractor": WallclockTimestampExtractor(time)})
    driver.pipe_input("in", None, b"x", timestamp=999_999)  # ignored: the clock decides
    driver.advance_wall_clock_time(1000)
    driver.pipe_input("in", None, b"x", timestamp=0)
    assert [driver.read_output("ticks").value, driver.read_output("ticks").value] == [b"0:1", b"1000:1"]


def test_an_unknown_input_partition_is_refused():
    driver = _every_second_driver()
    with pytest.raises(StreamsException, match="in-1 is not an input of this driver"):
        driver.pipe_input("in", None, b"x", timestamp=1, partition=1)


def test_a_config_without_application_id_is_refused():
    with pytest.raises(ValueError, match=r"application\.id"):
        TopologyTestDriver(word_count_builder(), {})
