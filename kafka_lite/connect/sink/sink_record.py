"""A record the worker hands a sink task: Connect data, with its place in Kafka.

Mirrors: org.apache.kafka.connect.sink.SinkRecord
         (connect/api/src/main/java/org/apache/kafka/connect/sink/SinkRecord.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``timestamp_type`` is kafka_lite's ``TimestampType`` (or None); ``new_record`` is Kafka
         0.10.2's (KIP-66, for transformations).
"""

from __future__ import annotations

from typing import Any

from kafka_lite.connect.connector.connect_record import ConnectRecord
from kafka_lite.connect.data.schema import Schema


class SinkRecord(ConnectRecord):
    def __init__(
        self,
        topic: str,
        partition: int,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        kafka_offset: int,
        timestamp: int | None = None,
        timestamp_type: Any = None,
    ) -> None:
        super().__init__(topic, partition, key_schema, key, value_schema, value, timestamp)
        self.kafka_offset = kafka_offset
        self.timestamp_type = timestamp_type

    def new_record(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
    ) -> SinkRecord:
        return SinkRecord(topic, kafka_partition, key_schema, key, value_schema, value, self.kafka_offset,
                          timestamp, self.timestamp_type)  # fmt: skip
