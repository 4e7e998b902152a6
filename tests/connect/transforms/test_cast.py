"""Cast changes the type of fields or of the whole key or value, as Kafka 0.11.0's CastTest checks;
its config errors, and Java's narrowing, parsing and writing of numbers."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_FLOAT32_SCHEMA,
    OPTIONAL_INT16_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Type,
)
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.transforms.cast import CastKey, CastValue

pytestmark = pytest.mark.unit


def configured(spec: str, cls: type = CastValue):
    xform = cls()
    xform.configure({"spec": spec})
    return xform


def value_record(schema, value) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, None, None, schema, value)


def test_config_empty() -> None:
    with pytest.raises(ConfigException, match=r"^Must specify at least one field to cast\.$"):
        configured("")


def test_config_invalid_target_type() -> None:
    with pytest.raises(ConfigException, match=r"^Invalid type found in casting spec: faketype$"):
        configured("foo:faketype")


def test_config_unsupported_type() -> None:
    with pytest.raises(
        ConfigException, match=r"does not support casting to/from ARRAY; supported types are \[INT8,"
    ):
        configured("foo:array")


def test_config_invalid_map() -> None:
    with pytest.raises(ConfigException, match=r"Invalid rename mapping: foo:int8:extra$"):
        configured("foo:int8:extra")


def test_config_mixed_whole_and_field_transformation() -> None:
    with pytest.raises(ConfigException, match=r"may ony specify a single cast in their spec$"):
        configured("foo:int8,int32")


@pytest.mark.parametrize(
    ("spec", "value", "expected"),
    [
        ("int8", 42, 42),
        ("int16", 42, 42),
        ("int32", 42, 42),
        ("int64", 42, 42),
        ("float32", 42, 42.0),
        ("float64", 42, 42.0),
        ("boolean", 42, True),
        ("boolean", 0, False),
        ("string", 42, "42"),
    ],
)
def test_cast_whole_record_value_with_schema(spec: str, value: int, expected) -> None:
    transformed = configured(spec).apply(value_record(INT32_SCHEMA, value))

    assert transformed.value_schema.type is Type[spec.upper()]
    assert transformed.value == expected
    assert type(transformed.value) is type(expected)


def test_cast_whole_record_key_with_schema() -> None:
    record = SourceRecord(None, None, "topic", 0, INT32_SCHEMA, 42, None, None)

    transformed = configured("int8", CastKey).apply(record)

    assert (transformed.key_schema.type, transformed.key) == (Type.INT8, 42)


def test_cast_whole_record_default_value() -> None:
    schema = SchemaBuilder.float32().default_value(-42.125).build()

    transformed = configured("int32").apply(value_record(schema, 42.0))

    assert transformed.value_schema.type is Type.INT32
    assert transformed.value == 42
    assert transformed.value_schema.default_value == -42


@pytest.mark.parametrize(
    ("spec", "value", "expected"),
    [("int8", 42, 42), ("int64", 42, 42), ("string", 42, "42"), ("string", True, "true"), ("string", 1e10, "1.0E10"),
     ("int32", "-17", -17), ("boolean", "TRUE", True), ("boolean", "yes", False), ("float64", "1.5", 1.5)],
)  # fmt: skip
def test_cast_whole_record_value_schemaless(spec: str, value, expected) -> None:
    transformed = configured(spec).apply(value_record(None, value))

    assert transformed.value_schema is None
    assert transformed.value == expected


@pytest.mark.parametrize(
    ("spec", "value", "expected"),
    [("int8", 300, 44), ("int8", -129, 127), ("int16", 70000, 4464), ("int32", 2**31, -(2**31)), ("int8", 3.9, 3),
     ("int32", 1e20, 2**31 - 1), ("int64", -2.5, -2), ("float32", 0.1, 0.10000000149011612), ("boolean", 0.5, False)],
)  # fmt: skip
def test_narrowing_as_java_does_it(spec: str, value, expected) -> None:
    assert configured(spec).apply(value_record(None, value)).value == expected


def test_string_out_of_range_for_the_type() -> None:
    with pytest.raises(DataException, match=r"^Value \(128\) was out of range for requested data type$"):
        configured("int8").apply(value_record(None, "128"))


def test_cast_whole_record_value_schemaless_unsupported_type() -> None:
    with pytest.raises(DataException, match="does not support casting to/from ARRAY"):
        configured("int8").apply(value_record(None, ["foo"]))


def test_cast_fields_with_schema() -> None:
    xform = configured("int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,"
                       "boolean:int8,string:int32,optional:int32")  # fmt: skip
    schema = (
        SchemaBuilder.struct().field("int8", INT8_SCHEMA).field("int16", OPTIONAL_INT16_SCHEMA)
        .field("int32", SchemaBuilder.int32().default_value(2).build()).field("int64", INT64_SCHEMA)
        .field("float32", FLOAT32_SCHEMA).field("float64", SchemaBuilder.float64().default_value(-1.125).build())
        .field("boolean", BOOLEAN_SCHEMA).field("string", STRING_SCHEMA).field("optional", OPTIONAL_FLOAT32_SCHEMA)
        .build()
    )  # fmt: skip
    value = (
        Struct(schema).put("int8", 8).put("int16", 16).put("int32", 32).put("int64", 64).put("float32", 32.0)
        .put("float64", -64.0).put("boolean", True).put("string", "42")
    )  # the optional field is left out  # fmt: skip

    transformed = xform.apply(value_record(schema, value))

    out, out_schema = transformed.value, transformed.value_schema
    assert [(f.name, f.schema.type) for f in out_schema.fields()] == [
        ("int8", Type.INT16), ("int16", Type.INT32), ("int32", Type.INT64), ("int64", Type.BOOLEAN),
        ("float32", Type.FLOAT64), ("float64", Type.BOOLEAN), ("boolean", Type.INT8), ("string", Type.INT32),
        ("optional", Type.INT32)]  # fmt: skip
    assert out_schema.field("int16").schema.optional
    assert out_schema.field("int32").schema.default_value == 2
    assert out_schema.field("float64").schema.default_value is True
    assert {f.name: out.get(f.name) for f in out_schema.fields()} == {
        "int8": 8, "int16": 16, "int32": 32, "int64": True, "float32": 32.0, "float64": True, "boolean": 1,
        "string": 42, "optional": None}  # fmt: skip


def test_cast_fields_schemaless() -> None:
    xform = configured("int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,"
                       "boolean:int8,string:int32")  # fmt: skip
    value = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "float32": 32.0, "float64": -64.0, "boolean": True,
             "string": "42"}  # fmt: skip

    transformed = xform.apply(value_record(None, value))

    assert transformed.value_schema is None
    assert transformed.value == {"int8": 8, "int16": 16, "int32": 32, "int64": True, "float32": 32.0,
                                 "float64": True, "boolean": 1, "string": 42}  # fmt: skip


def test_struct_field_of_an_unsupported_type() -> None:
    schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).field("blob", BYTES_SCHEMA).build()

    with pytest.raises(DataException, match=r"^Unexpected type in Cast transformation: BYTES$"):
        configured("id:int64").apply(value_record(schema, Struct(schema).put("id", 1).put("blob", b"")))
