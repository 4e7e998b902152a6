"""One record as the consumer hands it to the application.

Mirrors: org.apache.kafka.clients.consumer.ConsumerRecord
         (clients/src/main/java/org/apache/kafka/clients/consumer/ConsumerRecord.java, Kafka 0.11.0)
Book:    chapter 4, 4.1.5 (the consumer getting records), 4.1.6 (consuming messages)
Differs: ``checksum`` is the message's CRC for the v0/v1 formats and ``None`` for a v2 record, which
         has no CRC of its own (the batch has one), as Kafka 0.11's ``checksumOrNull``; Kafka 0.11
         computes a CRC for v2 records on demand, which we leave out. Headers are a tuple of
         ``Header(key, value)`` (Kafka 0.11's ``Headers``), empty for the older formats.

The offset is the record's absolute offset in its partition; ``serialized_key_size`` and
``serialized_value_size`` are the sizes of the key and value bytes before deserialization, -1 for a
null key or value (Kafka's ``NULL_SIZE``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.record.default_record import Header

NULL_SIZE = -1
NO_TIMESTAMP = -1


class ConsumerRecord(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: TimestampType
    checksum: int | None
    serialized_key_size: int
    serialized_value_size: int
    key: Any
    value: Any
    headers: tuple[Header, ...] = ()

    def __repr__(self) -> str:
        # Kafka's ConsumerRecord.toString, in its order.
        return (
            f"ConsumerRecord(topic = {self.topic}, partition = {self.partition}, offset = {self.offset}, "
            f"{self.timestamp_type.display_name} = {self.timestamp}, serialized key size = {self.serialized_key_size}, "
            f"serialized value size = {self.serialized_value_size}, headers = {self.headers!r}, "
            f"key = {self.key!r}, value = {self.value!r})"
        )
