"""Unmodified kafka-python against a 3-broker kafka_lite cluster, with its default settings unless a
test says otherwise (kafka-python 3.x: idempotent producer, acks=all, Metadata v4 / Produce v3).

On the KRaft cluster the codec-and-acks sweep runs one pair, acks=all with gzip: a codec is the
client's business, which no controller sees (``codec_and_acks_sweep``). A test that moves a
leadership runs on ZooKeeper only."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import UnknownTopicOrPartitionError

from kafka_lite.testing.logs import read_all
from tests.support.kraft_cluster import codec_and_acks_sweep, zookeeper_only
from tests.support.topics import consume_all, topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

CODECS = [None, "gzip", "snappy", "lz4"]


def test_admin_create_list_describe(cluster):
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        name = topic_name("kp-admin")
        admin.create_topics([NewTopic(name, num_partitions=6, replication_factor=1)])
        cluster.wait_for_leaders(name, 6)
        assert name in admin.list_topics()
        (described,) = admin.describe_topics([name])
        partitions = described["partitions"]
        assert len(partitions) == 6
        leaders = {p["leader_id"] for p in partitions}
        assert leaders == {0, 1, 2}, "replication factor 1 partitions are spread over the three brokers"
    finally:
        admin.close()


def test_admin_delete_topics(cluster):
    """``KafkaAdminClient.delete_topics`` (DeleteTopics): the topic leaves the metadata and every
    broker's disk; an unknown topic fails with UnknownTopicOrPartitionError."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        name = topic_name("kp-delete")
        cluster.create_topic(name, partitions=3)
        admin.delete_topics([name], timeout_ms=10_000)
        # the controller answered once its own metadata dropped the topic; the other brokers follow
        wait_until(lambda: name not in admin.list_topics(), what=f"{name} out of the metadata")
        wait_until(
            lambda: not list(cluster.directory.glob(f"**/{name}-*")),
            what=f"{name}'s directories deleted",
        )
        with pytest.raises(UnknownTopicOrPartitionError):
            admin.delete_topics([topic_name("kp-missing")], timeout_ms=10_000)
    finally:
        admin.close()


@codec_and_acks_sweep([0, 1, "all"], CODECS, on_kraft=("all", "gzip"))
def test_produce_and_consume_every_codec_and_acks(cluster, acks, codec):
    name = topic_name("kp")
    cluster.create_topic(name, partitions=3)
    kwargs = {"acks": acks, "compression_type": codec}
    if acks != "all":
        kwargs["enable_idempotence"] = False  # idempotence needs acks=all
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **kwargs)
    sent = {}
    futures = []
    for i in range(300):
        key, value = f"k{i}".encode(), uuid.uuid4().bytes * (i % 7 + 1)
        sent[key] = value
        futures.append(producer.send(name, key=key, value=value, headers=[("i", str(i).encode())]))
    producer.flush()
    offsets: dict[int, list[int]] = {}
    for f in futures:
        metadata = f.get(timeout=10)
        offsets.setdefault(metadata.partition, []).append(metadata.offset)
    if acks != 0:  # with an answer, each partition's records took its offsets 0, 1, 2, ... once each
        # (with acks=0 there is none, and the offsets kafka-python reports are its own count)
        assert {p: sorted(o) for p, o in offsets.items()} == {
            p: list(range(len(o))) for p, o in offsets.items()
        }
    producer.close()
    records = consume_all(cluster.bootstrap_servers, name, 3, 300)
    assert {r.key: r.value for r in records} == sent
    assert all(dict(r.headers)["i"] == r.key[1:] for r in records)


def test_consume_from_an_offset_and_offsets_for_times(cluster):
    name = topic_name("kp-offsets")
    # Records stamped in 2023 are past the default 7-day retention: keep them, or the retention check
    # (30 s after a broker starts) may delete them under the test.
    cluster.create_topic(name, partitions=1, retention_ms=-1)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    base_ts = 1_700_000_000_000
    for i in range(50):
        producer.send(name, value=f"v{i}".encode(), timestamp_ms=base_ts + i * 1000)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, consumer_timeout_ms=10_000)
    tp = TopicPartition(name, 0)
    consumer.assign([tp])
    consumer.seek(tp, 40)
    values = [r.value for _, r in zip(range(10), consumer, strict=False)]
    assert values == [f"v{i}".encode() for i in range(40, 50)]
    found = consumer.offsets_for_times({tp: base_ts + 20_500})[tp]
    assert (found.offset, found.timestamp) == (21, base_ts + 21_000)
    assert consumer.beginning_offsets([tp])[tp] == 0 and consumer.end_offsets([tp])[tp] == 50
    consumer.close()


# ZooKeeper only: the leadership moves by a ZooKeeper reassignment, and the new leader's log is read in process
@zookeeper_only
def test_producer_recovers_from_not_leader_for_partition(cluster):
    """The partition's leadership moves (as a controller's election would) while the producer's
    metadata still names the old leader: the old leader answers NOT_LEADER_FOR_PARTITION, the producer
    refreshes its metadata and the send succeeds at the new leader."""
    name = topic_name("kp-move")
    cluster.create_topic(name, partitions=1, replication_factor=2)
    # Idempotent, with acks=all: the follower that becomes leader has the old leader's records and,
    # replicated with them, the producer's sequence state, so the next sequence is accepted there.
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, retries=5, acks="all", enable_idempotence=True
    )
    producer.send(name, value=b"before").get(timeout=10)
    old = cluster.leader_of(name, 0)
    new = cluster.move_leader(name, 0)
    assert new != old
    metadata = producer.send(name, value=b"after").get(timeout=20)
    assert metadata.offset == 1  # right after the record the new leader had replicated
    producer.close()
    log_of_new = cluster.server(new).replica_manager.get_partition((name, 0)).log
    assert [r.value for r in read_all(log_of_new)] == [b"before", b"after"]
