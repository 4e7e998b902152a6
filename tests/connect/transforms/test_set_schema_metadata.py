"""SetSchemaMetadata renames and re-versions a schema, and moves a struct onto the new schema, as Kafka
0.11.0's SetSchemaMetadataTest checks."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import INT32_SCHEMA, STRING_SCHEMA, SchemaBuilder, Type
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.transforms.set_schema_metadata import (
    SetSchemaMetadataKey,
    SetSchemaMetadataValue,
    update_schema_in,
)

pytestmark = pytest.mark.unit


def configured(props: dict, cls: type = SetSchemaMetadataValue):
    xform = cls()
    xform.configure(props)
    return xform


def empty_struct_record() -> SinkRecord:
    return SinkRecord("", 0, None, None, SchemaBuilder.struct().build(), None, 0)


def test_schema_name_update() -> None:
    assert configured({"schema.name": "foo"}).apply(empty_struct_record()).value_schema.name == "foo"


def test_schema_version_update() -> None:
    assert configured({"schema.version": 42}).apply(empty_struct_record()).value_schema.version == 42


def test_schema_name_and_version_update_with_struct() -> None:
    schema = (
        SchemaBuilder.struct().name("my.orig.SchemaDefn").field("f1", STRING_SCHEMA).field("f2", INT32_SCHEMA)
    )
    schema = schema.doc("kept").build()
    value = Struct(schema).put("f1", "value1").put("f2", 1)

    updated = configured({"schema.name": "foo", "schema.version": "42"}).apply(
        SinkRecord("", 0, None, None, schema, value, 0)
    )

    new_schema = updated.value_schema
    assert (new_schema.name, new_schema.version, new_schema.doc) == ("foo", 42, "kept")
    assert updated.value.schema is new_schema
    assert (updated.value.get("f1"), updated.value.get("f2")) == ("value1", 1)
    for field in schema.fields():
        assert new_schema.field(field.name).index == field.index
        assert new_schema.field(field.name).schema is field.schema


def test_key_with_a_non_struct_schema() -> None:
    record = SinkRecord("", 0, SchemaBuilder.array(INT32_SCHEMA).optional().build(), [1, 2], None, None, 0)

    updated = configured({"schema.name": "ids"}, SetSchemaMetadataKey).apply(record)

    assert (updated.key_schema.type, updated.key_schema.name, updated.key_schema.optional) == (
        Type.ARRAY,
        "ids",
        True,
    )
    assert updated.key_schema.value_schema == INT32_SCHEMA
    assert updated.key == [1, 2]


def test_update_schema_of_non_struct_and_of_null() -> None:
    value = 1
    assert update_schema_in(value, INT32_SCHEMA) is value
    assert update_schema_in(None, INT32_SCHEMA) is None


def test_schema_required() -> None:
    with pytest.raises(DataException, match=r"^Schema required for \[updating schema metadata\]$"):
        configured({"schema.name": "foo"}).apply(SinkRecord("", 0, None, None, None, {}, 0))


def test_neither_name_nor_version() -> None:
    with pytest.raises(ConfigException, match=r"^Neither schema name nor version configured$"):
        configured({})


def test_version_must_be_an_int() -> None:
    with pytest.raises(ConfigException, match=r"schema\.version"):
        configured({"schema.version": "one"})
