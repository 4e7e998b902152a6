"""ValueToKey makes the key from fields of the value, as Kafka 0.11.0's ValueToKeyTest checks."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import INT32_SCHEMA, SchemaBuilder
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.transforms.value_to_key import ValueToKey

pytestmark = pytest.mark.unit


def configured(fields: str = "a,b") -> ValueToKey:
    xform = ValueToKey()
    xform.configure({"fields": fields})
    return xform


def test_schemaless() -> None:
    value = {"a": 1, "b": 2, "c": 3}

    transformed = configured().apply(SinkRecord("", 0, None, None, None, value, 0))

    assert transformed.key_schema is None
    assert transformed.key == {"a": 1, "b": 2}
    assert transformed.value is value


def test_with_schema() -> None:
    value_schema = (
        SchemaBuilder.struct()
        .field("a", INT32_SCHEMA)
        .field("b", INT32_SCHEMA)
        .field("c", INT32_SCHEMA)
        .build()
    )
    value = Struct(value_schema).put("a", 1).put("b", 2).put("c", 3)

    transformed = configured().apply(SinkRecord("", 0, None, None, value_schema, value, 0))

    expected_key_schema = SchemaBuilder.struct().field("a", INT32_SCHEMA).field("b", INT32_SCHEMA).build()
    assert transformed.key_schema == expected_key_schema
    assert transformed.key == Struct(expected_key_schema).put("a", 1).put("b", 2)
    assert (transformed.value_schema, transformed.value) == (value_schema, value)


def test_field_the_value_schema_lacks() -> None:
    schema = SchemaBuilder.struct().field("a", INT32_SCHEMA).build()

    with pytest.raises(DataException, match=r"^Field does not exist: b$"):
        configured().apply(SinkRecord("", 0, None, None, schema, Struct(schema).put("a", 1), 0))


def test_empty_fields_list() -> None:
    with pytest.raises(ConfigException) as e:
        configured("")
    assert str(e.value) == "Invalid value [] for configuration fields: Empty list"


def test_fields_is_required() -> None:
    with pytest.raises(ConfigException, match="Missing required configuration 'fields'"):
        ValueToKey().configure({})
