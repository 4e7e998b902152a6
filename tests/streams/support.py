"""Raw consumer records for the streams tests, as the consumer hands them to a task."""

from __future__ import annotations

from kafka_lite.common.record.constants import TimestampType
from kafka_lite.consumer.consumer_record import ConsumerRecord


def raw(
    topic: str,
    partition: int,
    offset: int,
    timestamp: int,
    key: bytes | None = None,
    value: bytes | None = b"v",
):
    return ConsumerRecord(
        topic, partition, -1, offset, timestamp, TimestampType.CREATE_TIME, key, value, (), None,
        -1 if key is None else len(key), -1 if value is None else len(value), -1,
    )  # fmt: skip
