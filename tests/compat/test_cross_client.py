"""Every record a client was told is written is read back by every other client, byte for byte.

Four producers (kafka-python, confluent-kafka, aiokafka, kcat) write keyed records with binary
values into one 3-partition topic; each waits for its acknowledgements. Then each of the four
clients reads the whole topic, and what it reads (partition, offset, key, value) must be exactly
what was acknowledged, and the same for all four.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as AioTopicPartition
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KpTopicPartition

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

PER_CLIENT = 150
PARTITIONS = 3


def value(i: int, client: str) -> bytes:
    # binary values (every byte value, NULs and newlines included), but kcat reads lines: its own
    # values stay printable; it reads the others' binary values back all the same
    return f"{client}-{i}-".encode() + (os.urandom(64) if client != "kcat" else uuid.uuid4().hex.encode())


def produce_kafka_python(bootstrap: str, topic: str) -> dict:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    acked = {}
    for i in range(PER_CLIENT):
        key, v = f"kp-{i}".encode(), value(i, "kp")
        md = producer.send(topic, key=key, value=v).get(timeout=20)
        acked[(md.partition, md.offset)] = (key, v)
    producer.close()
    return acked


def produce_confluent(bootstrap: str, topic: str) -> dict:
    producer = Producer({"bootstrap.servers": bootstrap})
    acked = {}

    def on_delivery(err, msg):
        assert err is None, err
        acked[(msg.partition(), msg.offset())] = (msg.key(), msg.value())

    for i in range(PER_CLIENT):
        producer.produce(topic, key=f"ck-{i}".encode(), value=value(i, "ck"), on_delivery=on_delivery)
    assert producer.flush(30) == 0
    return acked


def produce_aiokafka(bootstrap: str, topic: str) -> dict:
    async def run():
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        acked = {}
        try:
            for i in range(PER_CLIENT):
                key, v = f"aio-{i}".encode(), value(i, "aio")
                md = await producer.send_and_wait(topic, key=key, value=v)
                acked[(md.partition, md.offset)] = (key, v)
        finally:
            await producer.stop()
        return acked

    return asyncio.run(run())


def produce_kcat(bootstrap: str, topic: str) -> dict:
    """kcat reports no offsets, so its records are checked as a set: ``kcat -P`` exits non-zero unless
    every record was acknowledged (acks=all), and the set must be read back whole."""
    kcat = shutil.which("kcat")
    lines = [(f"kcat-{i}".encode(), value(i, "kcat")) for i in range(PER_CLIENT)]
    data = b"".join(k + b"\t" + v + b"\n" for k, v in lines)
    result = subprocess.run(
        [kcat, "-b", bootstrap, "-P", "-t", topic, "-K\t", "-X", "acks=all"],
        input=data,
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return {"kcat": set(lines)}


def read_kafka_python(bootstrap: str, topic: str, n: int) -> dict:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=10_000)
    consumer.assign([KpTopicPartition(topic, p) for p in range(PARTITIONS)])
    consumer.seek_to_beginning()
    got = {}
    for r in consumer:
        got[(r.partition, r.offset)] = (r.key, r.value)
        if len(got) == n:
            break
    consumer.close()
    return got


def read_confluent(bootstrap: str, topic: str, n: int) -> dict:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cross", "enable.auto.commit": False})
    consumer.assign([CkTopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    got, idle = {}, 0
    while len(got) < n and idle < 20:
        msg = consumer.poll(0.5)
        if msg is None:
            idle += 1
            continue
        assert msg.error() is None
        got[(msg.partition(), msg.offset())] = (msg.key(), msg.value())
    consumer.close()
    return got


def read_aiokafka(bootstrap: str, topic: str, n: int) -> dict:
    async def run():
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await consumer.start()
        got = {}
        try:
            tps = [AioTopicPartition(topic, p) for p in range(PARTITIONS)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            while len(got) < n:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 15)
                for records in batch.values():
                    for r in records:
                        got[(r.partition, r.offset)] = (r.key, r.value)
        finally:
            await consumer.stop()
        return got

    return asyncio.run(run())


def read_kcat(bootstrap: str, topic: str, n: int) -> dict:
    """kcat's %K/%S print key and value lengths, so binary values are split exactly."""
    out = subprocess.run(
        [shutil.which("kcat"), "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q",
         "-c", str(n), "-f", "%p %o %K %S|%k%s"],
        capture_output=True, timeout=60,
    ).stdout  # fmt: skip
    got, pos = {}, 0
    while pos < len(out):
        bar = out.index(b"|", pos)
        p, o, klen, vlen = (int(x) for x in out[pos:bar].split())
        start = bar + 1
        key = out[start : start + max(klen, 0)]
        val = out[start + max(klen, 0) : start + max(klen, 0) + vlen]
        got[(p, o)] = (key, val)
        pos = start + max(klen, 0) + vlen
    return got


def test_every_acknowledged_record_is_read_back_by_every_client(cluster):
    if shutil.which("kcat") is None:
        pytest.fail("kcat is not installed: scripts/bootstrap installs it")
    topic = f"cross-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, partitions=PARTITIONS)
    bootstrap = cluster.bootstrap_servers
    acked: dict = {}
    for produce in (produce_kafka_python, produce_confluent, produce_aiokafka):
        acked.update(produce(bootstrap, topic))
    kcat_written = produce_kcat(bootstrap, topic)["kcat"]
    total = 4 * PER_CLIENT
    reads = {
        "kafka-python": read_kafka_python(bootstrap, topic, total),
        "confluent-kafka": read_confluent(bootstrap, topic, total),
        "aiokafka": read_aiokafka(bootstrap, topic, total),
        "kcat": read_kcat(bootstrap, topic, total),
    }
    reference = reads["confluent-kafka"]
    assert len(reference) == total
    for position, record in acked.items():
        assert reference[position] == record, f"acknowledged record at {position} read back differently"
    kcat_read = {record for record in reference.values() if record[0].startswith(b"kcat-")}
    assert kcat_read == kcat_written
    for client, got in reads.items():
        assert got == reference, f"{client} read something else than confluent-kafka did"
