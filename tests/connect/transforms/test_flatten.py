"""Flatten joins nested field names into one level, for structs (with optionality and defaults carried
down) and maps, as Kafka 0.11.0's FlattenTest checks."""

from __future__ import annotations

import pytest

from kafka_lite.connect.data.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Type,
)
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.transforms.flatten import FlattenKey, FlattenValue

pytestmark = pytest.mark.unit

SUPPORTED = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "float32": 32.0, "float64": 64.0, "boolean": True,
             "string": "stringy", "bytes": b"bytes"}  # fmt: skip
SCHEMAS = {"int8": INT8_SCHEMA, "int16": INT16_SCHEMA, "int32": INT32_SCHEMA, "int64": INT64_SCHEMA,
           "float32": FLOAT32_SCHEMA, "float64": FLOAT64_SCHEMA, "boolean": BOOLEAN_SCHEMA, "string": STRING_SCHEMA,
           "bytes": BYTES_SCHEMA}  # fmt: skip


def configured(props: dict[str, str] | None = None, cls: type = FlattenValue):
    xform = cls()
    xform.configure(props or {})
    return xform


def value_record(schema, value) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, None, None, schema, value)


def test_top_level_struct_required() -> None:
    with pytest.raises(DataException, match=r"Only Struct objects supported for \[flattening\]"):
        configured().apply(value_record(INT32_SCHEMA, 42))


def test_top_level_map_required() -> None:
    with pytest.raises(
        DataException, match=r"Only Map objects supported in absence of schema for \[flattening\]"
    ):
        configured().apply(value_record(None, 42))


def test_nested_struct() -> None:
    builder = SchemaBuilder.struct()
    for name, schema in SCHEMAS.items():
        builder.field(name, schema)
    supported_types_schema = builder.build()
    one_level_schema = SchemaBuilder.struct().field("B", supported_types_schema).build()
    two_level_schema = SchemaBuilder.struct().field("A", one_level_schema).build()
    supported_types = Struct(supported_types_schema)
    for name, value in SUPPORTED.items():
        supported_types.put(name, value)
    two_level = Struct(two_level_schema).put("A", Struct(one_level_schema).put("B", supported_types))

    transformed = configured().apply(value_record(two_level_schema, two_level))

    assert transformed.value_schema.type is Type.STRUCT
    flat = transformed.value
    assert [(f.name, f.schema) for f in flat.schema.fields()] == [(f"A.B.{n}", s) for n, s in SCHEMAS.items()]
    assert {f.name: flat.get(f.name) for f in flat.schema.fields()} == {
        f"A.B.{n}": v for n, v in SUPPORTED.items()
    }


def test_nested_map_with_delimiter() -> None:
    transformed = configured({"delimiter": "#"}).apply(value_record(None, {"A": {"B": dict(SUPPORTED)}}))

    assert transformed.value_schema is None
    assert transformed.value == {f"A#B#{n}": v for n, v in SUPPORTED.items()}


def test_optional_field_struct() -> None:
    supported_types_schema = SchemaBuilder.struct().field("opt_int32", OPTIONAL_INT32_SCHEMA).build()
    one_level_schema = SchemaBuilder.struct().field("B", supported_types_schema).build()
    one_level = Struct(one_level_schema).put("B", Struct(supported_types_schema).put("opt_int32", None))

    transformed = configured().apply(value_record(one_level_schema, one_level))

    assert transformed.value_schema.type is Type.STRUCT
    assert transformed.value.get("B.opt_int32") is None
    assert transformed.value_schema.field("B.opt_int32").schema == OPTIONAL_INT32_SCHEMA


def test_null_in_a_map_keeps_the_fields_after_it() -> None:
    transformed = configured().apply(value_record(None, {"B": {"opt_int32": None, "after": 1}}))

    assert transformed.value == {"B.opt_int32": None, "B.after": 1}


def test_key() -> None:
    src = SourceRecord(None, None, "topic", None, None, {"A": {"B": 12}}, None, None)

    transformed = configured(cls=FlattenKey).apply(src)

    assert transformed.key_schema is None
    assert transformed.key == {"A.B": 12}


def test_unsupported_type_in_map() -> None:
    with pytest.raises(
        DataException, match=r"^Flatten transformation does not support list .*\(for field foo\)\.$"
    ):
        configured().apply(value_record(None, {"foo": ["bar", "baz"]}))


def test_unsupported_type_in_struct() -> None:
    schema = SchemaBuilder.struct().field("ids", SchemaBuilder.array(INT32_SCHEMA).build()).build()

    with pytest.raises(DataException, match=r"does not support ARRAY .*\(for field ids\)\.$"):
        configured().apply(value_record(schema, Struct(schema).put("ids", [1])))


def test_optional_and_default_values_nested() -> None:
    # A field under an optional struct is optional; the parent's default struct gives the default of
    # a field that has none of its own.
    opt_field_schema = SchemaBuilder.string().optional().default_value("child_default").build()
    fields_only = (
        SchemaBuilder.struct()
        .optional()
        .field("req_field", STRING_SCHEMA)
        .field("opt_field", opt_field_schema)
    )
    child_default_value = Struct(fields_only.build()).put("req_field", "req_default")
    schema = fields_only.default_value(child_default_value).build()
    value = Struct(schema)  # left empty, the struct being optional

    transformed = configured().apply(value_record(schema, value))

    flat_schema = transformed.value_schema
    assert flat_schema.type is Type.STRUCT
    assert len(flat_schema.fields()) == 2
    assert (
        flat_schema.field("req_field").schema
        == SchemaBuilder.string().optional().default_value("req_default").build()
    )
    assert flat_schema.field("opt_field").schema == opt_field_schema
    assert transformed.value.get("req_field") == "req_default"


def test_absent_optional_nested_struct_gives_null_fields() -> None:
    inner = SchemaBuilder.struct().optional().field("x", INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).field("inner", inner).build()

    transformed = configured().apply(value_record(schema, Struct(schema).put("id", 1)))

    assert transformed.value_schema.field("inner.x").schema.optional
    assert (transformed.value.get("id"), transformed.value.get("inner.x")) == (1, None)
