"""Unmodified aiokafka against a 3-broker kafka_lite cluster, default settings unless a test says
otherwise (aiokafka 0.14: ApiVersions v0, Produce v3 with record batches v2, acks=1).

On the KRaft cluster the codec-and-acks sweep runs one pair, acks=all with none: a codec is the
client's business, which no controller sees (``codec_and_acks_sweep``). A test that moves a
leadership runs on ZooKeeper only."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from kafka_lite.testing.logs import read_all
from tests.support.kraft_cluster import codec_and_acks_sweep, zookeeper_only
from tests.support.topics import topic_name

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]


async def consume(
    bootstrap: str, topic: str, partitions: int, expected: int, start: int | None = None
) -> list:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        if start is None:
            await consumer.seek_to_beginning(*tps)
        else:
            consumer.seek(tps[0], start)
        records = []
        while len(records) < expected:
            batch = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 15)
            for msgs in batch.values():
                records.extend(msgs)
        return records
    finally:
        await consumer.stop()


def test_admin_create_and_list(cluster):
    async def scenario():
        admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        await admin.start()
        try:
            name = topic_name("aio-admin")
            await admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=1)])
            cluster.wait_for_leaders(name, 3)
            assert name in await admin.list_topics()
        finally:
            await admin.close()

    asyncio.run(scenario())


@codec_and_acks_sweep([0, 1, "all"], [None, "gzip", "snappy", "lz4"], on_kraft=("all", None))
def test_produce_and_consume_every_codec_and_acks(cluster, acks, codec):
    name = topic_name("aio")
    cluster.create_topic(name, partitions=3)

    async def scenario():
        producer = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers, acks=acks, compression_type=codec
        )
        await producer.start()
        sent = {}
        try:
            futures = []
            for i in range(300):
                key, value = f"k{i}".encode(), uuid.uuid4().bytes * (i % 7 + 1)
                sent[key] = value
                futures.append(
                    await producer.send(name, value=value, key=key, headers=[("i", str(i).encode())])
                )
            await asyncio.gather(*futures)
        finally:
            await producer.stop()
        records = await consume(cluster.bootstrap_servers, name, 3, 300)
        assert {r.key: r.value for r in records} == sent
        assert all(dict(r.headers)["i"] == r.key[1:] for r in records)

    asyncio.run(scenario())


def test_consume_from_an_offset_and_offsets_for_times(cluster):
    name = topic_name("aio-offsets")
    # Records stamped in 2023 are past the default 7-day retention: keep them, or the retention check
    # (30 s after a broker starts) may delete them under the test.
    cluster.create_topic(name, partitions=1, retention_ms=-1)

    async def scenario():
        producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
        await producer.start()
        base = 1_700_000_000_000
        try:
            for i in range(40):
                await producer.send_and_wait(name, value=f"v{i}".encode(), timestamp_ms=base + i * 1000)
        finally:
            await producer.stop()
        records = await consume(cluster.bootstrap_servers, name, 1, 10, start=30)
        assert [r.value for r in records[:10]] == [f"v{i}".encode() for i in range(30, 40)]
        consumer = AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
        await consumer.start()
        try:
            tp = TopicPartition(name, 0)
            found = (await consumer.offsets_for_times({tp: base + 5_500}))[tp]
            assert (found.offset, found.timestamp) == (6, base + 6000)
        finally:
            await consumer.stop()

    asyncio.run(scenario())


# ZooKeeper only: the leadership moves by a ZooKeeper reassignment, and the new leader's log is read in process
@zookeeper_only
def test_producer_recovers_from_not_leader_for_partition(cluster):
    name = topic_name("aio-move")
    cluster.create_topic(name, partitions=1, replication_factor=2)

    async def scenario():
        producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
        await producer.start()
        try:
            await producer.send_and_wait(name, value=b"before")  # acks=all: the follower has it too
            new = cluster.move_leader(name, 0)
            metadata = await producer.send_and_wait(name, value=b"after")
            assert metadata.offset == 1  # right after the record the new leader had replicated
            return new
        finally:
            await producer.stop()

    new = asyncio.run(scenario())
    new_log = cluster.server(new).replica_manager.get_partition((name, 0)).log
    assert [r.value for r in read_all(new_log)] == [b"before", b"after"]
