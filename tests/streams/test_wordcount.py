"""The word count example against a Python oracle: for any lines, every output record is the word and
its running count (a UTF-8 key, an 8-byte big-endian long), and the "Counts" store ends equal to a
``collections.Counter`` of the words found with ``re.findall``."""

from __future__ import annotations

import re
import struct
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.streams.examples.wordcount import build_wordcount, split_words
from kafka_lite.streams.kstream import KStreamBuilder
from kafka_lite.streams.test_utils import TopologyTestDriver

pytestmark = pytest.mark.unit

INPUT, OUTPUT = "streams-plaintext-input", "streams-wordcount-output"


def oracle_words(line: str) -> list[str]:
    """The words as the oracle sees them: maximal runs of word characters, lower-cased."""
    return re.findall(r"\w+", line.lower())


def run_wordcount(lines: list[tuple[bytes | None, str]]) -> tuple[list[tuple[bytes, bytes]], dict[str, int]]:
    """Pipe ``(key, line)`` records through the example; its raw output records and its store."""
    builder = build_wordcount(KStreamBuilder(), INPUT, OUTPUT)
    driver = TopologyTestDriver(builder, {"application.id": "streams-wordcount"})
    try:
        for key, line in lines:
            driver.pipe_input(INPUT, key, line.encode("utf-8"))
        output = []
        while (record := driver.read_output(OUTPUT)) is not None:
            output.append((record.key, record.value))
        return output, dict(driver.get_state_store("Counts").all())
    finally:
        driver.close()


def expected(lines: list[tuple[bytes | None, str]]) -> tuple[list[tuple[bytes, bytes]], dict[str, int]]:
    counts: Counter[str] = Counter()
    output = []
    for _, line in lines:
        for word in oracle_words(line):
            counts[word] += 1
            output.append((word.encode("utf-8"), struct.pack(">q", counts[word])))
    return output, dict(counts)


LINES = [
    (None, "Hello Kafka Streams"),
    (b"k1", "All streams lead to Kafka"),
    (None, "...Join Kafka Summit!"),  # leading punctuation: no empty first word
    (b"k2", "hello, hello...  HELLO?"),
    (None, ""),
    (None, "Café CAFÉ naïve"),  # \w and lower() are Unicode-aware
]


def test_counts_equal_the_oracle_record_by_record():
    output, store = run_wordcount(LINES)
    assert (output, store) == expected(LINES)
    assert store["hello"] == 4 and store["kafka"] == 3 and store["café"] == 2
    assert output[0] == (b"hello", b"\x00\x00\x00\x00\x00\x00\x00\x01"), "Serdes.Long: 8 bytes, big-endian"
    assert "" not in store, "empty words are dropped"


def test_split_words_lower_cases_and_drops_empty_words():
    assert split_words("  To be, or NOT to be:  ") == ["to", "be", "or", "not", "to", "be"]
    assert split_words("!!!") == []


def test_the_topology_repartitions_by_word_before_counting():
    builder = build_wordcount(KStreamBuilder(), INPUT, OUTPUT)
    builder.set_application_id("wc")
    groups = builder.topic_groups()
    assert [sorted(g.source_topics) for g in groups.values()] == [[INPUT], ["wc-Counts-repartition"]]
    assert set(groups[1].state_changelog_topics) == {"wc-Counts-changelog"}
    assert groups[1].sink_topics == {OUTPUT}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("abAB é1_-,. \t"), max_size=20), max_size=6))
def test_any_lines_count_as_the_oracle_counts(texts):
    lines = [(None, text) for text in texts]
    assert run_wordcount(lines) == expected(lines)
