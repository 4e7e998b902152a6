"""What kafka_lite's producer writes, every real client reads back exactly: kafka-python,
confluent-kafka (librdkafka) and kcat each read the same records (keys, binary values, headers with
null and empty values, timestamps; null keys and a null value too) at the partition and offset the
producer's futures named.

One produce is shared by the three readers (a module fixture), to keep the tier short.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest
from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_CREATE_TIME, Consumer
from confluent_kafka import TopicPartition as CkTopicPartition

from kafka_lite import KafkaProducer
from tests.support.topics import consume_all, topic_name

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

PARTITIONS = 3
RECORDS = 60
GET_TIMEOUT_S = 15
BASE_TIMESTAMP = 1_600_000_000_000  # 2020: the topic keeps records forever, so retention leaves them


def records_to_send() -> list[tuple]:
    """(key, value, headers, timestamp) for each record: binary values (every byte value can appear),
    several headers per record, null and empty header values, and some null keys and values."""
    rng = random.Random(12)
    records = []
    for i in range(RECORDS):
        key = None if i % 10 == 3 else f"key-{i}".encode()
        value = None if i == 7 else rng.randbytes(40) + bytes([i])
        headers = (
            [] if i % 5 == 0 else [("h", f"{i}".encode()), ("null", None), ("empty", b""), ("h", b"\x00\xff")]
        )
        records.append((key, value, headers, BASE_TIMESTAMP + i * 1000))
    return records


@pytest.fixture(scope="module")
def written(cluster) -> tuple[str, dict]:
    """The topic and, per (partition, offset) the producer's futures named, the record written there."""
    topic = topic_name("kl-read-back")
    cluster.create_topic(topic, partitions=PARTITIONS, retention_ms=-1)
    sent = records_to_send()
    with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, linger_ms=5) as producer:
        futures = [
            producer.send(topic, value, key=key, headers=headers, timestamp_ms=ts)
            for key, value, headers, ts in sent
        ]
        metadata = [f.get(GET_TIMEOUT_S) for f in futures]
    assert {md.partition for md in metadata} == set(range(PARTITIONS)), (
        "the records spread over every partition"
    )
    return topic, {(md.partition, md.offset): record for md, record in zip(metadata, sent, strict=True)}


def test_kafka_python_reads_back_exactly_what_was_written(cluster, written):
    topic, expected = written
    records = consume_all(cluster.bootstrap_servers, topic, PARTITIONS, RECORDS)
    read = {(r.partition, r.offset): (r.key, r.value, list(r.headers), r.timestamp) for r in records}
    assert read == expected


def test_confluent_kafka_reads_back_exactly_what_was_written(cluster, written):
    topic, expected = written
    consumer = Consumer(
        {"bootstrap.servers": cluster.bootstrap_servers, "group.id": "unused", "enable.auto.commit": False}
    )
    read = {}
    try:
        consumer.assign([CkTopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        empty_polls = 0
        while len(read) < RECORDS and empty_polls < 20:
            msg = consumer.poll(0.5)
            if msg is None:
                empty_polls += 1
                continue
            assert msg.error() is None, msg.error()
            timestamp_type, timestamp = msg.timestamp()
            assert timestamp_type == TIMESTAMP_CREATE_TIME
            read[(msg.partition(), msg.offset())] = (msg.key(), msg.value(), msg.headers() or [], timestamp)
    finally:
        consumer.close()
    assert read == expected


def test_kcat_reads_back_exactly_what_was_written(cluster, written):
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    if kcat is None:
        pytest.fail("kcat is not installed: scripts/bootstrap installs it (apt-get install kcat)")
    topic, expected = written
    result = subprocess.run(
        [kcat, "-b", cluster.bootstrap_servers, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-J"],
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    read = {}
    # kcat's JSON escapes control characters and quotes but passes other bytes through as they are:
    # surrogateescape keeps every byte of a binary key or value through the decode and back.
    for line in result.stdout.decode("utf-8", "surrogateescape").splitlines():
        msg = json.loads(line)
        assert msg["tstype"] == "create"
        names_and_values = msg.get("headers", [])
        headers = [
            (name, _bytes(value))
            for name, value in zip(names_and_values[0::2], names_and_values[1::2], strict=True)
        ]
        read[(msg["partition"], msg["offset"])] = (
            _bytes(msg["key"]),
            _bytes(msg["payload"]),
            headers,
            msg["ts"],
        )
    assert read == expected


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8", "surrogateescape")
