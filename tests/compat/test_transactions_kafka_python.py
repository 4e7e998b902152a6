"""Transactions across clients: kafka-python 3.0's transactional KafkaProducer against kafka_lite's
brokers, read by kafka_lite's read_committed consumer; and kafka_lite's transactional producer read
by kafka-python's read_committed consumer. Committed records are read, aborted ones are not."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer as KpConsumer
from kafka import KafkaProducer as KpProducer
from kafka import TopicPartition as KpTopicPartition

from kafka_lite import KafkaProducer
from tests.producer.test_transactions_integration import read, run_transactions, values
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]


def test_kafka_pythons_transactions_are_read_committed_by_kafka_lite(cluster):
    topic = topic_name("kp-txn")
    cluster.create_topic(topic, partitions=2)
    producer = KpProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id=topic_name("kp-tid"))
    run_transactions(producer, topic, 2, ("aborted", 4, False), ("committed", 6, True))
    committed = read(cluster, topic, 2, "read_committed", at_least=6)
    assert sorted(v for _, v in committed) == sorted(values("committed", 6))
    assert len(read(cluster, topic, 2, "read_uncommitted", at_least=10)) == 10


def test_kafka_lites_transactions_are_read_committed_by_kafka_python(cluster):
    topic = topic_name("kl-txn")
    cluster.create_topic(topic, partitions=1)
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, transactional_id=topic_name("kl-tid")
    )
    run_transactions(producer, topic, 1, ("aborted", 1, False), ("committed", 1, True))
    consumer = KpConsumer(bootstrap_servers=cluster.bootstrap_servers, isolation_level="read_committed",
                          consumer_timeout_ms=500)  # fmt: skip
    consumer.assign([KpTopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    seen: list[bytes] = []
    try:
        wait_until(
            lambda: seen.extend(r.value for r in consumer) or seen, 20, "kafka-python's read_committed poll"
        )
    finally:
        consumer.close()
    assert seen == [b"committed0"]
