"""Unmodified confluent-kafka (librdkafka) against a 3-broker kafka_lite cluster, default settings
unless a test says otherwise (librdkafka: acks=all, ApiVersions v3 -> UNSUPPORTED_VERSION -> v0).

On the KRaft cluster the codec-and-acks sweep runs one pair, acks=all with snappy: a codec is the
client's business, which no controller sees (``codec_and_acks_sweep``). A test that moves a
leadership runs on ZooKeeper only."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_lite.testing.logs import read_all
from tests.support.kraft_cluster import codec_and_acks_sweep, zookeeper_only
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]


def consume(
    bootstrap: str, topic: str, partitions: list[int], expected: int, offset=OFFSET_BEGINNING
) -> list:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "unused",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, offset) for p in partitions])
        records, empty_polls = [], 0
        while len(records) < expected and empty_polls < 20:
            msg = consumer.poll(0.5)
            if msg is None:
                empty_polls += 1
                continue
            assert msg.error() is None, msg.error()
            records.append(msg)
        return records
    finally:
        consumer.close()


def test_admin_create_list_describe(cluster):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    name = topic_name("ck-admin")
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=6, replication_factor=1)], operation_timeout=10
    )
    futures[name].result(timeout=15)
    cluster.wait_for_leaders(name, 6)
    metadata = admin.list_topics(timeout=10)
    assert name in metadata.topics
    partitions = metadata.topics[name].partitions
    assert len(partitions) == 6 and {p.leader for p in partitions.values()} == {0, 1, 2}
    assert sorted(metadata.brokers) == [0, 1, 2] and metadata.controller_id in (0, 1, 2)
    again = admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=1)])
    with pytest.raises(Exception, match=r"TOPIC_ALREADY_EXISTS|already exists"):
        again[name].result(timeout=15)


def test_admin_delete_topics(cluster):
    """``AdminClient.delete_topics`` (DeleteTopics): the topic leaves the metadata and every broker's
    disk; an unknown topic fails with UNKNOWN_TOPIC_OR_PART."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    name, missing = topic_name("ck-delete"), topic_name("ck-missing")
    cluster.create_topic(name, partitions=3)
    futures = admin.delete_topics([name, missing], operation_timeout=10)
    assert futures[name].result(timeout=15) is None
    with pytest.raises(Exception, match=r"UNKNOWN_TOPIC_OR_PART"):
        futures[missing].result(timeout=15)
    # the controller answered once its own metadata dropped the topic; the other brokers follow
    wait_until(lambda: name not in admin.list_topics(timeout=10).topics, what=f"{name} out of the metadata")
    wait_until(lambda: not list(cluster.directory.glob(f"**/{name}-*")), what=f"{name}'s directories deleted")


@codec_and_acks_sweep(["0", "1", "all"], ["none", "gzip", "snappy", "lz4"], on_kraft=("all", "snappy"))
def test_produce_and_consume_every_codec_and_acks(cluster, acks, codec):
    name = topic_name("ck")
    cluster.create_topic(name, partitions=3)
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "acks": acks, "compression.type": codec}
    )
    delivered, sent = [], {}

    def on_delivery(err, msg):
        assert err is None, err
        delivered.append(msg)

    for i in range(300):
        key, value = f"k{i}".encode(), uuid.uuid4().bytes * (i % 7 + 1)
        sent[key] = value
        producer.produce(
            name, key=key, value=value, headers=[("i", str(i).encode())], on_delivery=on_delivery
        )
    assert producer.flush(20) == 0
    assert len(delivered) == 300
    records = consume(cluster.bootstrap_servers, name, [0, 1, 2], 300)
    assert {m.key(): m.value() for m in records} == sent
    assert all(dict(m.headers())["i"] == m.key()[1:] for m in records)


def test_idempotent_producer_and_consume_from_an_offset(cluster):
    name = topic_name("ck-idem")
    cluster.create_topic(name, partitions=1)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True})
    for i in range(100):
        producer.produce(name, value=f"v{i}".encode())
    assert producer.flush(20) == 0
    records = consume(cluster.bootstrap_servers, name, [0], 20, offset=80)
    assert [m.value() for m in records] == [f"v{i}".encode() for i in range(80, 100)]
    assert [m.offset() for m in records] == list(range(80, 100))


def test_offsets_for_times(cluster):
    name = topic_name("ck-times")
    # Records stamped in 2023 are past the default 7-day retention: keep them, or the retention check
    # (30 s after a broker starts) may delete them under the test.
    cluster.create_topic(name, partitions=1, retention_ms=-1)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    base = 1_700_000_000_000
    for i in range(30):
        producer.produce(name, value=b"x", timestamp=base + i * 1000)
    assert producer.flush(20) == 0
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "unused"})
    try:
        (found,) = consumer.offsets_for_times([TopicPartition(name, 0, base + 10_500)], timeout=10)
        assert found.offset == 11
        low, high = consumer.get_watermark_offsets(TopicPartition(name, 0), timeout=10)
        assert (low, high) == (0, 30)
    finally:
        consumer.close()


# ZooKeeper only: the leadership moves by a ZooKeeper reassignment, and the new leader's log is read in process
@zookeeper_only
def test_producer_recovers_from_not_leader_for_partition(cluster):
    name = topic_name("ck-move")
    cluster.create_topic(name, partitions=1, replication_factor=2)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all"})
    producer.produce(name, value=b"before")
    assert producer.flush(20) == 0
    new = cluster.move_leader(name, 0)
    errors = []
    producer.produce(name, value=b"after", on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(30) == 0
    assert errors == [None]
    # The follower had replicated "before", so the new leader holds both, in order.
    new_log = cluster.server(new).replica_manager.get_partition((name, 0)).log
    assert [r.value for r in read_all(new_log)] == [b"before", b"after"]
