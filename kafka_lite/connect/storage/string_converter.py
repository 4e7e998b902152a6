"""The string converter: any value as its string in UTF-8; bytes read back as an optional string.

Mirrors: org.apache.kafka.connect.storage.StringConverter
         (connect/api/src/main/java/org/apache/kafka/connect/storage/StringConverter.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``converter.encoding`` (and ``key.``/``value.``-prefixed) names a Python codec, as
         Kafka's names a Java charset; the schema is ignored when writing, as in Kafka.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.connect.data.schema import OPTIONAL_STRING_SCHEMA, Schema
from kafka_lite.connect.data.schema_and_value import SchemaAndValue
from kafka_lite.connect.storage.converter import Converter


class StringConverter(Converter):
    def __init__(self) -> None:
        self.encoding = "utf-8"

    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        # Kafka's StringSerializer reads key.serializer.encoding / value.serializer.encoding, then
        # serializer.encoding; StringConverter passes "converter.encoding" down as both.
        prefix = "key" if is_key else "value"
        self.encoding = str(
            configs.get(f"{prefix}.converter.encoding") or configs.get("converter.encoding") or "utf-8"
        )

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        return None if value is None else str(value).encode(self.encoding)

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_STRING_SCHEMA, None if value is None else value.decode(self.encoding))
