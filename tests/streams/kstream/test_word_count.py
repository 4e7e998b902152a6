"""Word count in the DSL: split, group by the word (through a repartition topic), count, write out.
Its output and its store equal a ``collections.Counter`` over the same lines."""

from __future__ import annotations

import struct
from collections import Counter

import pytest

from kafka_lite.streams.examples.wordcount import build_wordcount, split_words
from kafka_lite.streams.kstream import KStreamBuilder

from .support import APPLICATION_ID, LONG, driver_for, pipe

pytestmark = pytest.mark.unit

LINES = [
    "Hello Kafka Streams",
    "All streams lead to Kafka",
    "Join Kafka Summit!",
    "hello, hello... HELLO?",
    "",
]


def word_count_builder() -> KStreamBuilder:
    """The word count example's topology (kafka_lite/streams/examples/wordcount.py)."""
    return build_wordcount(KStreamBuilder(), "text-lines", "word-counts")


def test_word_count_output_and_store_equal_a_counter_over_the_lines():
    driver = driver_for(word_count_builder())
    oracle: Counter[str] = Counter()
    expected_output = []
    for line in LINES:
        pipe(driver, "text-lines", None, line)
        for word in split_words(line):
            oracle[word] += 1
            expected_output.append((word.encode("utf-8"), struct.pack(">q", oracle[word])))

    raw_output = []
    while (record := driver.read_output("word-counts")) is not None:
        raw_output.append((record.key, record.value))
    # Keys are the UTF-8 words, values 8-byte big-endian longs: one update per word occurrence.
    assert raw_output == expected_output
    assert raw_output[:3] == [(b"hello", b"\x00" * 7 + b"\x01"), (b"kafka", b"\x00" * 7 + b"\x01"),
                              (b"streams", b"\x00" * 7 + b"\x01")]  # fmt: skip

    store = driver.get_state_store("Counts")
    assert dict(store.all()) == dict(oracle)
    assert store.get("hello") == 4 and store.get("kafka") == 3 and store.get("streams") == 2


def test_the_words_go_through_the_repartition_topic_named_after_the_store():
    builder = word_count_builder()
    builder.set_application_id(APPLICATION_ID)
    repartition_topic = "app-Counts-repartition"
    assert builder.internal_topic_names == {"Counts-repartition"}
    assert repartition_topic in builder.source_topics()
    groups = builder.topic_groups()
    # Two sub-topologies, joined only by the topic: the split writes it, the count reads it.
    assert groups[0].source_topics == {"text-lines"} and groups[0].sink_topics == {repartition_topic}
    assert groups[1].source_topics == {repartition_topic} and groups[1].sink_topics == {"word-counts"}
    assert set(groups[1].inter_source_topics) == {repartition_topic}
    assert set(groups[1].state_changelog_topics) == {"app-Counts-changelog"}

    driver = driver_for(builder)
    pipe(driver, "text-lines", "line-1", "to be or not to be")
    through = []
    while (record := driver.read_output(repartition_topic)) is not None:
        through.append((record.key, record.value))
    # Re-keyed by the word, the value unchanged; then read back in and counted.
    assert through == [(w.encode(), w.encode()) for w in ["to", "be", "or", "not", "to", "be"]]
    assert driver.offsets[next(tp for tp in driver.offsets if tp.topic == repartition_topic)] == 6
    assert dict(driver.get_state_store("Counts").all()) == {"to": 2, "be": 2, "or": 1, "not": 1}


def test_the_count_is_logged_to_its_changelog():
    driver = driver_for(word_count_builder())
    pipe(driver, "text-lines", None, "a b a")
    changelog = []
    while (record := driver.read_output("app-Counts-changelog")) is not None:
        changelog.append((record.key, LONG.deserializer().deserialize("", record.value)))
    assert changelog == [(b"a", 1), (b"b", 1), (b"a", 2)]


def test_the_generated_node_names_follow_kafkas_counter():
    builder = word_count_builder()
    # The aggregate is named before the repartition sink, filter and source it reads from, as in
    # Kafka's KGroupedStreamImpl.doAggregate; nodes are added in topological order.
    assert list(builder.node_factories) == [
        "KSTREAM-SOURCE-0000000000",
        "KSTREAM-FLATMAPVALUES-0000000001",
        "KSTREAM-KEY-SELECT-0000000002",
        "KSTREAM-FILTER-0000000005",
        "KSTREAM-SINK-0000000004",
        "KSTREAM-SOURCE-0000000006",
        "KSTREAM-AGGREGATE-0000000003",
        "KTABLE-TOSTREAM-0000000007",
        "KSTREAM-SINK-0000000008",
    ]
    assert builder.new_name("KSTREAM-MAP-") == "KSTREAM-MAP-0000000009"
