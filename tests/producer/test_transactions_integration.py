"""Transactions end to end on the 3-broker cluster: kafka_lite's transactional KafkaProducer and
its read_committed KafkaConsumer against kafka_lite's transaction coordinator and logs. A committed
transaction is read whole, an aborted one never (by read_committed) but in full by
read_uncommitted; offsets sent to a transaction count only once it commits; a second producer with
the same transactional id fences the first."""

from __future__ import annotations

import pytest

from kafka_lite import KafkaConsumer, KafkaProducer
from kafka_lite.common.errors import ProducerFencedException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]


def transactional_producer(cluster, transactional_id: str) -> KafkaProducer:
    return KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        transactional_id=transactional_id,
        max_block_ms=20_000,
        linger_ms=5,
    )


def read(cluster, topic: str, partitions: int, isolation_level: str, at_least: int = 0, **kw) -> list:
    """Every record a consumer with ``isolation_level`` reads from the start of ``topic``, once it
    has read ``at_least`` and a last empty poll says there is no more; as (partition, value)."""
    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, isolation_level=isolation_level, **kw
    )
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    seen: list = []

    def done() -> bool:
        batch = consumer.poll(timeout_ms=200)
        seen.extend((r.partition, r.value) for rs in batch.values() for r in rs)
        return len(seen) >= at_least and not batch

    try:
        wait_until(done, 20, f"{isolation_level} reading {topic}")
    finally:
        consumer.close()
    return seen


def run_transactions(producer, topic: str, partitions: int, *transactions: tuple[str, int, bool]) -> None:
    """``init_transactions``, then each transaction (value prefix, record count, commit or abort) in
    turn, records spread over the partitions; the producer is closed after. Any producer with Kafka's
    transactional methods: kafka_lite's, or kafka-python's."""
    try:
        producer.init_transactions()
        for prefix, count, commit in transactions:
            producer.begin_transaction()
            for i in range(count):
                producer.send(topic, f"{prefix}{i}".encode(), partition=i % partitions)
            if commit:
                producer.commit_transaction()
            else:
                producer.flush()  # the records are in the log before the abort marks them
                producer.abort_transaction()
    finally:
        producer.close()


def values(prefix: str, count: int) -> list[bytes]:
    return [f"{prefix}{i}".encode() for i in range(count)]


def test_a_committed_transaction_across_two_partitions_is_read_whole(cluster):
    topic = topic_name("txn-commit")
    cluster.create_topic(topic, partitions=2)
    run_transactions(transactional_producer(cluster, topic_name("tid")), topic, 2, ("v", 10, True))
    seen = read(cluster, topic, 2, "read_committed", at_least=10)
    assert sorted(v for _, v in seen) == sorted(values("v", 10))
    assert {p for p, _ in seen} == {0, 1}


def test_an_aborted_transaction_is_never_read_committed_but_is_read_uncommitted(cluster):
    topic = topic_name("txn-abort")
    cluster.create_topic(topic, partitions=2)
    producer = transactional_producer(cluster, topic_name("tid"))
    run_transactions(producer, topic, 2, ("aborted", 6, False), ("kept", 4, True))
    committed = read(cluster, topic, 2, "read_committed", at_least=4)
    assert sorted(v for _, v in committed) == sorted(values("kept", 4))
    uncommitted = read(cluster, topic, 2, "read_uncommitted", at_least=10)
    assert sorted(v for _, v in uncommitted) == sorted(values("aborted", 6) + values("kept", 4))


def test_offsets_sent_to_a_transaction_are_committed_only_with_it(cluster):
    topic = topic_name("txn-offsets")
    group = topic_name("txn-group")
    cluster.create_topic(topic, partitions=1)
    tp = TopicPartition(topic, 0)
    producer = transactional_producer(cluster, topic_name("tid"))
    watcher = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"x", partition=0)
        producer.send_offsets_to_transaction({tp: OffsetAndMetadata(7)}, group)
        producer.abort_transaction()
        assert watcher.committed(tp) is None, "an aborted transaction's offsets are never committed"

        producer.begin_transaction()
        producer.send(topic, b"y", partition=0)
        producer.send_offsets_to_transaction({tp: OffsetAndMetadata(11)}, group)
        assert watcher.committed(tp) is None, "not before the commit"
        producer.commit_transaction()
        wait_until(lambda: watcher.committed(tp) == 11, 10, "the offset committed with the transaction")
    finally:
        watcher.close()
        producer.close()


def test_a_second_producer_with_the_same_transactional_id_fences_the_first(cluster):
    topic = topic_name("txn-fence")
    cluster.create_topic(topic, partitions=1)
    transactional_id = topic_name("tid")
    first = transactional_producer(cluster, transactional_id)
    second = transactional_producer(cluster, transactional_id)
    try:
        first.init_transactions()
        first.begin_transaction()
        first.send(topic, b"from-the-first", partition=0).get(10)
        second.init_transactions()  # bumps the epoch: the first's open transaction is aborted
        second.begin_transaction()
        second.send(topic, b"from-the-second", partition=0)
        second.commit_transaction()
        with pytest.raises(ProducerFencedException):
            first.send(topic, b"late", partition=0).get(10)
            first.commit_transaction()
        with pytest.raises(ProducerFencedException):
            first.commit_transaction()
    finally:
        first.close()
        second.close()
    assert [v for _, v in read(cluster, topic, 1, "read_committed", at_least=1)] == [b"from-the-second"]


def test_a_read_committed_consumer_s_end_offset_is_the_last_stable_offset(cluster):
    """ListOffsets v2: while a transaction is open, read_committed's latest offset stops at its first
    record (the LSO); read_uncommitted's is the high watermark. After the commit both pass the marker."""
    topic = topic_name("txn-lso")
    cluster.create_topic(topic, partitions=1)
    tp = TopicPartition(topic, 0)
    plain = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    plain.send(topic, b"before", partition=0).get(20)
    plain.close()
    producer = transactional_producer(cluster, topic_name("lso-txn"))
    consumers = {
        level: KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, isolation_level=level)
        for level in ("read_committed", "read_uncommitted")
    }
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(3):
            producer.send(topic, f"open{i}".encode(), partition=0)
        producer.flush()
        assert consumers["read_committed"].end_offsets([tp])[tp] == 1, "the open transaction starts at 1"
        assert consumers["read_uncommitted"].end_offsets([tp])[tp] == 4
        producer.commit_transaction()
        # The marker is offset 4: once it is replicated, everything up to it is stable.
        wait_until(
            lambda: consumers["read_committed"].end_offsets([tp])[tp] == 5, 20, "the LSO past the marker"
        )
        assert consumers["read_uncommitted"].end_offsets([tp])[tp] == 5
    finally:
        producer.close()
        for consumer in consumers.values():
            consumer.close()
