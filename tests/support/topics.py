"""Helpers the tests that write through real clients share: fresh topic names, and kafka-python's
consumer as an independent reader of what was written."""

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
