"""A record a source task returns from ``poll``: Connect data, with where it came from.

Mirrors: org.apache.kafka.connect.source.SourceRecord
         (connect/api/src/main/java/org/apache/kafka/connect/source/SourceRecord.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``new_record`` is Kafka 0.10.2's (KIP-66, for transformations).

``source_partition`` names a stream of the source system (``{"filename": "test.txt"}``) and
``source_offset`` a place in it (``{"position": 42}``). Both are small maps of primitives: the
worker writes them to the offset store after the record reached Kafka, and the task reads the
last one back through its context when it starts again.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.connect.connector.connect_record import ConnectRecord
from kafka_lite.connect.data.schema import Schema


class SourceRecord(ConnectRecord):
    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        topic: str,
        kafka_partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
    ) -> None:
        super().__init__(topic, kafka_partition, key_schema, key, value_schema, value, timestamp)
        self.source_partition = source_partition
        self.source_offset = source_offset

    def new_record(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
    ) -> SourceRecord:
        return SourceRecord(self.source_partition, self.source_offset, topic, kafka_partition,
                            key_schema, key, value_schema, value, timestamp)  # fmt: skip
