"""A record in Connect's terms: a topic and partition, a key and a value, each with its schema.

Mirrors: org.apache.kafka.connect.connector.ConnectRecord
         (connect/api/src/main/java/org/apache/kafka/connect/connector/ConnectRecord.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``new_record`` is Kafka 0.10.2's (KIP-66, for transformations).

Keys and values are Connect data (a ``str``, an ``int``, a ``Struct`` ...), not bytes: the worker's
converters turn them into bytes and back. A ``None`` schema means "schemaless": the converter
infers what it can from the value.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.connect.data.schema import Schema


class ConnectRecord:
    def __init__(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None = None,
    ) -> None:
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp

    def new_record(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
    ) -> ConnectRecord:
        """A record of the same kind with these fields, keeping what only the kind has (a source
        record's partition and offset, a sink record's Kafka offset): Kafka 0.10.2's ``newRecord``,
        which transformations build their output with."""
        return ConnectRecord(topic, kafka_partition, key_schema, key, value_schema, value, timestamp)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = None  # mutable, as Kafka's records are compared but never used as keys

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"
