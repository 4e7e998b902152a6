"""ExtractField replaces a key or value by one of its fields, as Kafka 0.11.0's ExtractFieldTest checks."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import INT32_SCHEMA, STRING_SCHEMA, SchemaBuilder
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.transforms.extract_field import ExtractFieldKey, ExtractFieldValue

pytestmark = pytest.mark.unit


def configured(cls: type = ExtractFieldKey, field: str = "magic"):
    xform = cls()
    xform.configure({"field": field})
    return xform


def test_schemaless() -> None:
    record = SinkRecord("test", 0, None, {"magic": 42}, None, None, 0)

    transformed = configured().apply(record)

    assert transformed.key_schema is None
    assert transformed.key == 42


def test_schemaless_missing_field_is_null() -> None:
    assert configured().apply(SinkRecord("test", 0, None, {"other": 1}, None, None, 0)).key is None


def test_with_schema() -> None:
    key_schema = SchemaBuilder.struct().field("magic", INT32_SCHEMA).build()
    key = Struct(key_schema).put("magic", 42)

    transformed = configured().apply(SinkRecord("test", 0, key_schema, key, None, None, 0))

    assert transformed.key_schema == INT32_SCHEMA
    assert transformed.key == 42


def test_value_variant_with_schema_keeps_the_key() -> None:
    schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).field("name", STRING_SCHEMA).build()
    value = Struct(schema).put("id", 7).put("name", "ann")

    transformed = configured(ExtractFieldValue, "name").apply(
        SinkRecord("t", 0, STRING_SCHEMA, "k", schema, value, 0)
    )

    assert (transformed.key_schema, transformed.key) == (STRING_SCHEMA, "k")
    assert (transformed.value_schema, transformed.value) == (STRING_SCHEMA, "ann")


def test_field_the_schema_lacks() -> None:
    schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).build()

    with pytest.raises(DataException, match=r"^Unknown field: magic$"):
        configured().apply(SinkRecord("t", 0, schema, Struct(schema).put("id", 1), None, None, 0))


def test_schemaless_key_must_be_a_map() -> None:
    with pytest.raises(DataException, match=r"\[field extraction\], found: int"):
        configured().apply(SinkRecord("t", 0, None, 42, None, None, 0))


def test_field_is_required() -> None:
    with pytest.raises(ConfigException, match="Missing required configuration 'field'"):
        ExtractFieldKey().configure({})
