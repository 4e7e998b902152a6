"""Unmodified kafka-python and confluent-kafka against a LogAppendTime topic and a topic bounding its
CreateTime timestamps: the broker's time reaches their producers' metadata and their consumers'
records with the LogAppendTime type, and a record too far from the broker's clock comes back to the
producer as INVALID_TIMESTAMP."""

from __future__ import annotations

import time

import confluent_kafka
import kafka
import kafka.errors
import pytest

from tests.compat.test_confluent_kafka import consume
from tests.support.topics import consume_all, topic_name

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

HOUR_MS = 3_600_000


def now_ms() -> int:
    return int(time.time() * 1000)


def test_kafka_python_sees_the_brokers_log_append_time(cluster):
    topic = topic_name("ts-kp-append")
    cluster.create_topic(topic, partitions=1, message_timestamp_type="LogAppendTime")
    before = now_ms()
    producer = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, linger_ms=20)
    try:
        futures = [producer.send(topic, b"v%d" % i, partition=0, timestamp_ms=1_000 + i) for i in range(3)]
        producer.flush()
        stamps = {f.get(10).timestamp for f in futures}  # one batch, one broker time
    finally:
        producer.close()
    (append_time,) = stamps
    assert before <= append_time <= now_ms()
    records = consume_all(cluster.bootstrap_servers, topic, 1, 3)
    assert [(r.timestamp, r.timestamp_type) for r in records] == [(append_time, 1)] * 3


def test_kafka_python_producer_gets_invalid_timestamp(cluster):
    topic = topic_name("ts-kp-maxdiff")
    cluster.create_topic(topic, partitions=1, message_timestamp_difference_max_ms=HOUR_MS)
    producer = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    try:
        with pytest.raises(kafka.errors.InvalidTimestampError):
            producer.send(topic, b"old", partition=0, timestamp_ms=now_ms() - 2 * HOUR_MS).get(10)
    finally:
        producer.close()  # kafka-python's sender takes the error as fatal: this producer is done
    producer = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    try:
        assert producer.send(topic, b"now", partition=0).get(10).offset == 0  # nothing was written
    finally:
        producer.close()


def test_confluent_kafka_consumer_reports_log_append_time(cluster):
    topic = topic_name("ts-ck-append")
    cluster.create_topic(topic, partitions=1, message_timestamp_type="LogAppendTime")
    before = now_ms()
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i in range(3):
        producer.produce(topic, b"v%d" % i, partition=0, timestamp=1_000 + i)
    assert producer.flush(10) == 0
    after = now_ms()
    messages = consume(cluster.bootstrap_servers, topic, [0], 3)
    assert [m.value() for m in messages] == [b"v0", b"v1", b"v2"]
    for m in messages:
        kind, stamp = m.timestamp()
        assert kind == confluent_kafka.TIMESTAMP_LOG_APPEND_TIME and before <= stamp <= after
