"""Unmodified confluent-kafka (librdkafka) transactions against the 3-broker kafka_lite cluster: a
transactional producer (``transactional.id``; init, begin, commit, abort) writing to two
partitions, and read_committed / read_uncommitted consumers reading it back, as Kafka 0.11's
transaction coordinator and partition side serve them."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from tests.support.kraft_cluster import zookeeper_only
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]


def read_all(bootstrap: str, topic: str, isolation_level: str, expected: int) -> list[bytes]:
    """Every value a consumer of ``isolation_level`` reads from both partitions; polls until
    ``expected`` arrived and a few empty polls followed (so that an extra record would be seen)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"unused-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
            "isolation.level": isolation_level,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in (0, 1)])
        values, empty_polls = [], 0
        while empty_polls < (4 if len(values) >= expected else 30):
            msg = consumer.poll(0.5)
            if msg is None:
                empty_polls += 1
                continue
            assert msg.error() is None, msg.error()
            values.append(msg.value())
        return values
    finally:
        consumer.close()


# ZooKeeper only, to keep the tier short: commit, abort and read_committed are the transaction
# coordinator's and the log's, alike in both modes; the next test runs a transaction on KRaft too
@zookeeper_only
def test_committed_records_are_read_on_both_partitions_and_aborted_ones_only_read_uncommitted(cluster):
    topic = topic_name("ck-txn")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": f"ck-{uuid.uuid4().hex[:8]}"}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(4):
        producer.produce(topic, f"committed-{i}".encode(), partition=i % 2)
    producer.commit_transaction(30)
    producer.begin_transaction()
    for i in range(2):
        producer.produce(topic, f"aborted-{i}".encode(), partition=i % 2)
    producer.flush(30)
    producer.abort_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed-last", partition=1)
    producer.commit_transaction(30)

    committed = {f"committed-{i}".encode() for i in range(4)} | {b"committed-last"}
    aborted = {b"aborted-0", b"aborted-1"}
    read_committed = read_all(cluster.bootstrap_servers, topic, "read_committed", len(committed))
    assert sorted(read_committed) == sorted(committed)
    read_uncommitted = read_all(
        cluster.bootstrap_servers, topic, "read_uncommitted", len(committed | aborted)
    )
    assert sorted(read_uncommitted) == sorted(committed | aborted)


def test_offsets_sent_to_a_transaction_are_committed_with_it(cluster):
    """send_offsets_to_transaction: AddOffsetsToTxn then TxnOffsetCommit. An aborted transaction's
    offset (partition 1) never becomes the group's; the next, committed one's (partition 0) does.
    The group's offsets change when the marker reaches __consumer_offsets, after commit_transaction
    returns, hence the wait; the abort's marker was written before the next transaction could start."""
    topic = topic_name("ck-txn-offsets")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    group = f"ck-txn-group-{uuid.uuid4().hex[:6]}"
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                         "enable.auto.commit": False})  # fmt: skip
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": f"ck-{uuid.uuid4().hex[:8]}"}
    )
    try:
        producer.init_transactions(30)
        for partition, offset, commit in ((1, 9, False), (0, 3, True)):
            producer.begin_transaction()
            producer.produce(topic, b"out", partition=0)
            producer.send_offsets_to_transaction(
                [TopicPartition(topic, partition, offset)], consumer.consumer_group_metadata(), 30
            )
            if commit:
                producer.commit_transaction(30)
            else:
                producer.abort_transaction(30)

        def committed() -> list[int]:
            return [
                tp.offset
                for tp in consumer.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=10)
            ]

        offsets = wait_until(
            lambda: (o := committed())[0] == 3 and o, what="the committed transaction's offset"
        )
        assert offsets[1] < 0  # the aborted transaction's offset: none
    finally:
        consumer.close()
