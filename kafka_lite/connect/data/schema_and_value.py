"""A value and its schema, as a converter reads them from bytes.

Mirrors: org.apache.kafka.connect.data.SchemaAndValue
         (connect/api/src/main/java/org/apache/kafka/connect/data/SchemaAndValue.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: none.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafka_lite.connect.data.schema import Schema


class SchemaAndValue(NamedTuple):
    schema: Schema | None
    value: Any


NULL = SchemaAndValue(None, None)
