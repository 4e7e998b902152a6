"""Checks that a record's key or value has the shape a transformation works on.

Mirrors: org.apache.kafka.connect.transforms.util.Requirements
         (connect/transforms/src/main/java/.../util/Requirements.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book)
Differs: "found:" names the Python class (``int``), where Kafka's names the Java one.

Most transformations work on a ``Struct`` when the record has a schema and on a map (a ``dict``)
when it has none; anything else is a ``DataException`` that names what the transformation is for
(its *purpose*) and what it found, so a user who points ``InsertField$Value`` at a string value
reads ``Only Map objects supported in absence of schema for [field insertion], found: str``.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.connect.connector.connect_record import ConnectRecord
from kafka_lite.connect.data.schema import Schema
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.sink.sink_record import SinkRecord


def require_schema(schema: Schema | None, purpose: str) -> None:
    if schema is None:
        raise DataException(f"Schema required for [{purpose}]")


def require_map(value: Any, purpose: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataException(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {_null_safe_class_name(value)}"
        )
    return value


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataException(
            f"Only Struct objects supported for [{purpose}], found: {_null_safe_class_name(value)}"
        )
    return value


def require_sink_record(record: ConnectRecord, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataException(
            f"Only SinkRecord supported for [{purpose}], found: {_null_safe_class_name(record)}"
        )
    return record


def _null_safe_class_name(x: Any) -> str:
    return "null" if x is None else type(x).__name__
