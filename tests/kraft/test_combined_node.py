"""One combined KRaft node (``process.roles=broker,controller``) as a process, formatted with
``kafka-lite storage format`` and started with ``kafka-lite broker start``, and unmodified kafka-python
against it: a topic created (CreateTopics forwarded to the controller), records produced with
acks=all, read back in a consumer group (its ``__consumer_offsets`` auto-created through the
controller) and the group's offsets committed and read back."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from tests.kraft.nodes import CombinedNodes
from tests.support.waiting import wait_until

pytestmark = pytest.mark.compat

TOPIC = "kraft-orders"
RECORDS = [f"order-{i}".encode() for i in range(20)]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    nodes = CombinedNodes(tmp_path_factory.mktemp("kraft-combined-node"), (1,))
    try:
        nodes.start_all()
        yield nodes
    finally:
        nodes.stop_all()


def test_kafka_python_creates_produces_and_consumes_in_a_group(node):
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap(1), request_timeout_ms=10_000)
    try:
        response = admin.create_topics([NewTopic(TOPIC, num_partitions=2, replication_factor=1)])
        assert [(t["name"], t["error_code"]) for t in response["topics"]] == [(TOPIC, 0)]
    finally:
        admin.close()
    led = wait_until(lambda: node.partition(1, TOPIC, 1), 10, "the new topic's partitions led")
    assert led["leader"] == 1 and led["isr"] == [1]

    producer = KafkaProducer(bootstrap_servers=node.bootstrap(1), acks="all", linger_ms=0)
    try:
        offsets = [
            producer.send(TOPIC, value, partition=i % 2).get(timeout=10).offset
            for i, value in enumerate(RECORDS)
        ]
    finally:
        producer.close()
    assert offsets == [i // 2 for i in range(len(RECORDS))]

    consumer = KafkaConsumer(
        TOPIC, bootstrap_servers=node.bootstrap(1), group_id="kraft-readers", auto_offset_reset="earliest",
        enable_auto_commit=False, consumer_timeout_ms=15_000,
    )  # fmt: skip
    try:
        seen = []
        for message in consumer:
            seen.append(message.value)
            if len(seen) == len(RECORDS):
                break
        consumer.commit()
        committed = {p: consumer.committed(TopicPartition(TOPIC, p)) for p in (0, 1)}
    finally:
        consumer.close()
    assert sorted(seen) == sorted(RECORDS)
    assert committed == {0: 10, 1: 10}
    assert node.partition(1, "__consumer_offsets") is not None, "created through the controller"
