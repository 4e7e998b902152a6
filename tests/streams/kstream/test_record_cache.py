"""The record cache under the DSL: a word count's updates within one commit interval reach the
changelog and the output once per word, and with ``cache.max.bytes.buffering=0`` once per update."""

from __future__ import annotations

import struct

import pytest

from kafka_lite.streams.examples.wordcount import build_wordcount
from kafka_lite.streams.kstream import KStreamBuilder
from kafka_lite.streams.test_utils import TopologyTestDriver

from .support import APPLICATION_ID, STRING, pipe, read_all

pytestmark = pytest.mark.unit

WORDS = [f"w{i:02d}" for i in range(100)]
LINES = 100  # each line holds every word once: 10,000 words, 100 distinct


def word_count_driver(**config) -> TopologyTestDriver:
    builder = build_wordcount(KStreamBuilder(), "text-lines", "word-counts")
    settings = {"application.id": APPLICATION_ID, **config}
    return TopologyTestDriver(builder, settings, commit_after_each_record=False)


@pytest.mark.parametrize(
    ("config", "expected_records"),
    [({}, len(WORDS)), ({"cache.max.bytes.buffering": 0}, len(WORDS) * LINES)],
    ids=["cache-10MB", "cache-0"],
)
def test_a_commit_interval_of_word_count_writes_one_record_per_word(config, expected_records):
    driver = word_count_driver(**config)
    line = " ".join(WORDS)
    for _ in range(LINES):
        pipe(driver, "text-lines", None, line)
    driver.commit()  # the end of the commit interval
    changelog = driver.producer.history[f"{APPLICATION_ID}-Counts-changelog"]
    output = driver.producer.history["word-counts"]
    assert len(changelog) == expected_records, "one changelog record per word (per update without a cache)"
    assert len(output) == expected_records
    # Whatever was held back, the last record of each word is its full count.
    last = {record.key.decode(): struct.unpack(">q", record.value)[0] for record in output}
    assert last == dict.fromkeys(WORDS, LINES)
    driver.close()


def test_a_table_source_forwards_its_keys_last_value_at_the_commit():
    builder = KStreamBuilder()
    builder.table("users", "users-store", STRING, STRING).to_stream().to("out", STRING, STRING)
    driver = TopologyTestDriver(builder, {"application.id": APPLICATION_ID}, commit_after_each_record=False)
    for key, value in [("alice", "a1"), ("bob", "b1"), ("alice", "a2")]:
        pipe(driver, "users", key, value)
    assert read_all(driver, "out") == []
    assert driver.get_state_store("users-store").get("alice") == "a2", "reads see the cache"
    driver.commit()
    # One record per key, in the order of each key's last update.
    assert read_all(driver, "out") == [("bob", "b1"), ("alice", "a2")]
    driver.close()
