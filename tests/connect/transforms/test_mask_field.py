"""MaskField replaces fields' values with their type's zero, as Kafka 0.11.0's MaskFieldTest checks
(with Python's classes for Java's)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data import timestamp as Timestamp
from kafka_lite.connect.data.schema import (
    BOOLEAN_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
)
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.transforms.mask_field import MaskFieldKey, MaskFieldValue

pytestmark = pytest.mark.unit

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def transform(fields: list[str], cls: type = MaskFieldValue):
    xform = cls()
    xform.configure({"fields": fields})
    return xform


def record(schema, value) -> SinkRecord:
    return SinkRecord("", 0, None, None, schema, value, 0)


def test_schemaless() -> None:
    value = {
        "magic": 42, "bool": True, "int": 42, "float": 42.5, "string": "blabla",
        "date": datetime(2017, 6, 28, tzinfo=UTC), "bigdec": Decimal("42.0"), "list": [42], "map": {"key": "value"},
    }  # fmt: skip
    mask_fields = [k for k in value if k != "magic"]

    updated = transform(mask_fields).apply(record(None, value)).value

    assert updated == {"magic": 42, "bool": False, "int": 0, "float": 0.0, "string": "", "date": EPOCH,
                       "bigdec": Decimal(0), "list": [], "map": {}}  # fmt: skip
    assert updated["bool"] is False  # a bool's zero, not the int 0
    assert type(updated["float"]) is float


def test_with_schema() -> None:
    schema = (
        SchemaBuilder.struct().field("magic", INT32_SCHEMA).field("bool", BOOLEAN_SCHEMA).field("byte", INT8_SCHEMA)
        .field("long", INT64_SCHEMA).field("float", FLOAT32_SCHEMA).field("double", FLOAT64_SCHEMA)
        .field("string", STRING_SCHEMA).field("timestamp", Timestamp.SCHEMA)
        .field("array", SchemaBuilder.array(INT32_SCHEMA).build())
        .field("map", SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).build()).build()
    )  # fmt: skip
    value = (
        Struct(schema).put("magic", 42).put("bool", True).put("byte", 42).put("long", 42).put("float", 42.0)
        .put("double", 42.0).put("string", "hmm").put("timestamp", datetime(2017, 6, 28, tzinfo=UTC))
        .put("array", [1, 2, 3]).put("map", {"what": "what"})
    )  # fmt: skip
    mask_fields = [f.name for f in schema.fields() if f.name != "magic"]

    updated = transform(mask_fields).apply(record(schema, value)).value

    assert updated.schema is schema
    expected = {"magic": 42, "bool": False, "byte": 0, "long": 0, "float": 0.0, "double": 0.0, "string": "",
                "timestamp": EPOCH, "array": [], "map": {}}  # fmt: skip
    assert {f.name: updated.get(f.name) for f in schema.fields()} == expected


def test_null_stays_null_and_a_missing_field_is_added_as_null() -> None:
    updated = (
        transform(["a", "b"], MaskFieldKey).apply(SinkRecord("", 0, None, {"a": None}, None, None, 0)).key
    )

    assert updated == {"a": None, "b": None}


def test_bytes_cannot_be_masked() -> None:
    with pytest.raises(DataException, match=r"^Cannot mask value of type: bytes$"):
        transform(["b"]).apply(record(None, {"b": b"\x00"}))


def test_empty_fields_list() -> None:
    with pytest.raises(ConfigException, match="for configuration fields: Empty list"):
        transform([])
