"""HoistField wraps a key or value in a one-field map (schemaless) or struct (with a schema), as
Kafka 0.11.0's HoistFieldTest checks."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import INT32_SCHEMA, STRING_SCHEMA, Type
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.transforms.hoist_field import HoistFieldKey, HoistFieldValue

pytestmark = pytest.mark.unit


def test_schemaless_key_becomes_a_map_of_one_field() -> None:
    xform = HoistFieldKey()
    xform.configure({"field": "magic"})
    record = SinkRecord("test", 0, None, 42, None, None, 0)

    transformed = xform.apply(record)

    assert transformed.key_schema is None
    assert transformed.key == {"magic": 42}
    assert isinstance(transformed, SinkRecord) and transformed.kafka_offset == 0


def test_key_with_schema_becomes_a_struct_whose_one_field_has_the_old_schema() -> None:
    xform = HoistFieldKey()
    xform.configure({"field": "magic"})
    record = SinkRecord("test", 0, INT32_SCHEMA, 42, None, None, 0)

    transformed = xform.apply(record)

    assert transformed.key_schema.type is Type.STRUCT
    assert [f.name for f in transformed.key_schema.fields()] == ["magic"]
    assert transformed.key_schema.field("magic").schema == record.key_schema
    assert isinstance(transformed.key, Struct) and transformed.key.get("magic") == 42


def test_value_variant_leaves_the_key_alone() -> None:
    xform = HoistFieldValue()
    xform.configure({"field": "line"})
    record = SinkRecord("test", 3, STRING_SCHEMA, "k", STRING_SCHEMA, "hello", 7, timestamp=1000)

    transformed = xform.apply(record)

    assert (transformed.key_schema, transformed.key) == (STRING_SCHEMA, "k")
    assert transformed.value.get("line") == "hello"
    assert (transformed.topic, transformed.kafka_partition, transformed.timestamp) == ("test", 3, 1000)


def test_records_of_one_schema_share_the_wrapped_schema() -> None:
    xform = HoistFieldValue()
    xform.configure({"field": "line"})

    first = xform.apply(SinkRecord("test", 0, None, None, STRING_SCHEMA, "a", 0))
    second = xform.apply(SinkRecord("test", 0, None, None, STRING_SCHEMA, "b", 1))

    assert first.value_schema is second.value_schema


def test_field_is_required() -> None:
    with pytest.raises(ConfigException, match="Missing required configuration 'field'"):
        HoistFieldValue().configure({})
