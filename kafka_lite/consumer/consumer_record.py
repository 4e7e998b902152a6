"""One record as the consumer hands it to the application.

Mirrors: org.apache.kafka.clients.consumer.ConsumerRecord
         (clients/src/main/java/org/apache/kafka/clients/consumer/ConsumerRecord.java, Kafka 0.11.0)
Book:    chapter 4, 4.1.5 (the consumer getting records), 4.1.6 (consuming messages)
Differs: a named tuple with kafka-python's fields in kafka-python's order (``topic, partition,
         leader_epoch, offset, timestamp, timestamp_type, key, value, headers, checksum,
         serialized_key_size, serialized_value_size, serialized_header_size``), so a program written
         for kafka-python reads it unchanged; ``repr`` is Kafka's ``toString``. ``leader_epoch`` is
         -1 (unknown), as kafka-python gives it where the broker does not send one: Fetch v5 has no
         epochs. ``checksum`` is ``None`` for a v2 record, which has no CRC of its own (the batch
         has one), as Kafka 0.11's ``checksumOrNull``. Headers are a tuple of ``Header(key,
         value)`` (Kafka 0.11's ``Headers``), empty for the older formats.

The offset is the record's absolute offset in its partition; ``serialized_key_size`` and
``serialized_value_size`` are the sizes of the key and value bytes before deserialization, -1 for a
null key or value (Kafka's ``NULL_SIZE``); ``serialized_header_size`` is the headers' keys (UTF-8)
and values together, -1 when there are none (kafka-python's count).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.record.default_record import Header

NULL_SIZE = -1
NO_TIMESTAMP = -1
UNKNOWN_LEADER_EPOCH = -1


class ConsumerRecord(NamedTuple):
    topic: str
    partition: int
    leader_epoch: int
    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: Any
    value: Any
    headers: tuple[Header, ...]
    checksum: int | None
    serialized_key_size: int
    serialized_value_size: int
    serialized_header_size: int

    def __repr__(self) -> str:
        # Kafka's ConsumerRecord.toString, in its order.
        return (
            f"ConsumerRecord(topic = {self.topic}, partition = {self.partition}, offset = {self.offset}, "
            f"{self.timestamp_type.display_name} = {self.timestamp}, serialized key size = {self.serialized_key_size}, "
            f"serialized value size = {self.serialized_value_size}, headers = {self.headers!r}, "
            f"key = {self.key!r}, value = {self.value!r})"
        )


def serialized_header_size(headers: tuple[Header, ...]) -> int:
    """The bytes of the headers' keys (UTF-8) and values, -1 for none (kafka-python's
    ``serialized_header_size``)."""
    if not headers:
        return NULL_SIZE
    return sum(len(key.encode()) + (0 if value is None else len(value)) for key, value in headers)
