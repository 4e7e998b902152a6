"""The byte array converter: a record's bytes through unchanged, as an optional ``BYTES`` value.

Mirrors: org.apache.kafka.connect.converters.ByteArrayConverter
         (connect/runtime/src/main/java/org/apache/kafka/connect/converters/ByteArrayConverter.java, Kafka 0.11.0)
Book:    chapter 8, 8.3
Differs: Kafka 0.10.1 has no byte array converter (0.11 added it): it is here because copying
         bytes from topic to topic, untouched, is the simplest pipeline there is.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.connect.data.schema import OPTIONAL_BYTES_SCHEMA, Schema, Type
from kafka_lite.connect.data.schema_and_value import SchemaAndValue
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.storage.converter import Converter


class ByteArrayConverter(Converter):
    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        pass

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataException(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is not None and not isinstance(value, bytes | bytearray):
            raise DataException(f"ByteArrayConverter is not compatible with objects of type {type(value)}")
        return None if value is None else bytes(value)

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, value)
