"""Helpers the tests that write through real clients share: fresh topic names, kafka-python's
consumer as an independent reader of what was written, and kafka_lite's own consumer reading a
topic to its end."""

from __future__ import annotations

import uuid


def topic_name(prefix: str) -> str:
    """A topic of this test's own: tests share one cluster per session."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int, **kwargs) -> list:
    """Read ``expected`` records from the beginning of ``topic``'s partitions with kafka-python
    (at most 10 s without a record), as an oracle independent of kafka_lite's own clients."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=10_000, **kwargs)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        consumer.seek_to_beginning()
        records = []
        for record in consumer:
            records.append(record)
            if len(records) >= expected:
                break
        return records
    finally:
        consumer.close()


def read_topic(bootstrap: str, topic: str, client_id: str = "topic-reader", **login) -> list:
    """Every record of ``topic`` up to its end offsets at the time of the call, partition by
    partition, read with kafka_lite's ``KafkaConsumer`` (no group), as the user ``login`` names
    (kafka-python's ``security_protocol``, ``sasl_*`` arguments) on a secure cluster."""
    from kafka_lite import KafkaConsumer
    from tests.support.waiting import wait_until

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id=client_id, **login)
    try:
        partitions = [(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        assert partitions, f"{topic} has no partitions"
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        end = consumer.end_offsets(partitions)
        records: list = []
        wait_until(
            lambda: (
                records.extend(r for rs in consumer.poll(200).values() for r in rs)
                or all(consumer.position(tp) >= end[tp] for tp in partitions)
            ),
            what=f"the records of {topic} up to {end}",
        )
        return records
    finally:
        consumer.close()
