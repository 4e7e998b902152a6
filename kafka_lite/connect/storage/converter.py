"""A converter: Connect data (a schema and a value) to the bytes of a Kafka record, and back.

Mirrors: org.apache.kafka.connect.storage.Converter
         (connect/api/src/main/java/org/apache/kafka/connect/storage/Converter.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.

Connectors never see bytes: a source task returns ``SourceRecord`` s of Connect data and the
worker's converters write them; a sink task gets ``SinkRecord`` s the converters read. So the
format of the data in Kafka (JSON with or without schemas, plain strings, raw bytes) is chosen in
the worker config (``key.converter``, ``value.converter``) and any connector works with any.
Settings reach a converter with the prefix stripped: ``value.converter.schemas.enable=false``
configures the value converter with ``schemas.enable=false``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from kafka_lite.connect.data.schema import Schema
from kafka_lite.connect.data.schema_and_value import SchemaAndValue


class Converter(ABC):
    @abstractmethod
    def configure(self, configs: dict[str, Any], is_key: bool) -> None: ...

    @abstractmethod
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None: ...

    @abstractmethod
    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue: ...
