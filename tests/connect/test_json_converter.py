"""The JSON converter writes what Kafka's writes, byte for byte, with and without the schema envelope,
and reads it back to the same Connect data."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from kafka_lite.connect.data import date as date_type
from kafka_lite.connect.data import time as time_type
from kafka_lite.connect.data import timestamp as timestamp_type
from kafka_lite.connect.data.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_FLOAT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
)
from kafka_lite.connect.data.schema_and_value import SchemaAndValue
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.json.json_converter import JsonConverter, write_json

pytestmark = pytest.mark.unit


def converter(schemas_enable: bool | None = None) -> JsonConverter:
    c = JsonConverter()
    c.configure({} if schemas_enable is None else {"schemas.enable": str(schemas_enable).lower()}, False)
    return c


# What Kafka 0.10.1's JsonConverter writes (its JsonConverterTest and the quick start's topic).
GOLDEN_WITH_SCHEMAS = [
    (STRING_SCHEMA, "a line", b'{"schema":{"type":"string","optional":false},"payload":"a line"}'),
    (None, None, b'{"schema":null,"payload":null}'),
    (BOOLEAN_SCHEMA, True, b'{"schema":{"type":"boolean","optional":false},"payload":true}'),
    (INT32_SCHEMA, 12, b'{"schema":{"type":"int32","optional":false},"payload":12}'),
    (FLOAT64_SCHEMA, 12.34, b'{"schema":{"type":"double","optional":false},"payload":12.34}'),
    (OPTIONAL_FLOAT32_SCHEMA, 0.1, b'{"schema":{"type":"float","optional":true},"payload":0.1}'),
    (BYTES_SCHEMA, b"test-string", b'{"schema":{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="}'),
    (OPTIONAL_STRING_SCHEMA, None, b'{"schema":{"type":"string","optional":true},"payload":null}'),
    (SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2, 3],
     b'{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,2,3]}'),
    (SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(), {"key1": 12, "key2": 15},
     b'{"schema":{"type":"map","keys":{"type":"string","optional":false},'
     b'"values":{"type":"int32","optional":false},"optional":false},"payload":{"key1":12,"key2":15}}'),
    (SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build(), {1: 12, 2: 15},
     b'{"schema":{"type":"map","keys":{"type":"int32","optional":false},'
     b'"values":{"type":"int32","optional":false},"optional":false},"payload":[[1,12],[2,15]]}'),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "value", "expected"), GOLDEN_WITH_SCHEMAS)
def test_with_schemas_the_envelope_is_kafkas_byte_for_byte(schema, value, expected):
    c = converter()
    assert c.from_connect_data("topic", schema, value) == expected
    back = c.to_connect_data("topic", expected)
    assert back.schema == schema
    assert back.value == value


def test_a_struct_lists_its_fields_with_their_names_after_their_schemas():
    schema = (
        SchemaBuilder.struct().name("com.example.Person").version(2)
        .field("name", STRING_SCHEMA).field("age", INT32_SCHEMA).field("nick", OPTIONAL_STRING_SCHEMA).build()
    )  # fmt: skip
    value = Struct(schema).put("name", "Ann").put("age", 41)
    expected = (
        b'{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},'
        b'{"type":"int32","optional":false,"field":"age"},{"type":"string","optional":true,"field":"nick"}],'
        b'"optional":false,"name":"com.example.Person","version":2},'
        b'"payload":{"name":"Ann","age":41,"nick":null}}'
    )
    c = converter()
    assert c.from_connect_data("topic", schema, value) == expected
    assert c.to_connect_data("topic", expected).value == value


def test_without_schemas_only_the_payload_is_written_and_types_are_inferred_on_reading():
    c = converter(schemas_enable=False)
    assert c.from_connect_data("topic", STRING_SCHEMA, "a line") == b'"a line"'
    assert c.from_connect_data("topic", None, {"a": [1, 2.5, True]}) == b'{"a":[1,2.5,true]}'
    assert c.from_connect_data("topic", None, None) is None
    back = c.to_connect_data("topic", b'{"position":42}')
    assert back.schema is None and back.value == {"position": 42}
    assert c.to_connect_data("topic", None) == (None, None)


def test_with_schemas_plain_json_is_refused_and_the_message_says_how_to_read_it():
    with pytest.raises(DataException, match=r"schemas\.enable=false"):
        converter().to_connect_data("topic", b'{"position":42}')


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1.0"), (100.0, "100.0"), (0.001, "0.001"), (0.0001, "1.0E-4"), (1234567.0, "1234567.0"),
     (12345678.0, "1.2345678E7"), (1e20, "1.0E20"), (-2.5, "-2.5"), (0.0, "0.0")],
)  # fmt: skip
def test_doubles_are_spelled_as_javas_double_to_string(value, text):
    assert write_json(value) == text


def test_strings_are_escaped_as_jackson_escapes_them():
    assert write_json('tab\there "quoted" \\ \x1f é') == '"tab\\there \\"quoted\\" \\\\ \\u001F é"'


def test_a_required_null_without_default_is_a_data_error():
    with pytest.raises(DataException, match="null value for field that is required"):
        converter().from_connect_data("topic", STRING_SCHEMA, None)


# -- logical types (Kafka 0.11's LOGICAL_CONVERTERS) ------------------------------------------------------

INSTANT = datetime(2017, 6, 27, 12, 30, 15, 250000, tzinfo=UTC)  # 1498566615250 ms since the epoch


@pytest.mark.parametrize(
    ("schema", "logical", "payload"),
    [
        (timestamp_type.SCHEMA, INSTANT, 1498566615250),
        (date_type.SCHEMA, datetime(2017, 6, 27, tzinfo=UTC), 17344),  # days since the epoch
        (time_type.SCHEMA, datetime(1970, 1, 1, 12, 30, 15, 250000, tzinfo=UTC), 45015250),  # ms of the day
    ],
    ids=["Timestamp", "Date", "Time"],
)
def test_a_logical_value_is_written_as_its_primitive_and_read_back_as_itself(schema, logical, payload):
    data = converter().from_connect_data("t", schema, logical)
    envelope = json.loads(data)
    assert envelope["payload"] == payload
    assert envelope["schema"]["name"] == schema.name and envelope["schema"]["version"] == 1
    assert converter().to_connect_data("t", data) == SchemaAndValue(schema, logical)


def test_a_struct_field_of_a_logical_type_round_trips():
    schema = SchemaBuilder.struct().field("line", STRING_SCHEMA).field("at", timestamp_type.SCHEMA).build()
    value = Struct(schema).put("line", "foo").put("at", INSTANT)
    data = converter().from_connect_data("t", schema, value)
    assert json.loads(data)["payload"] == {"line": "foo", "at": 1498566615250}
    assert converter().to_connect_data("t", data).value == value


def test_a_logical_schema_with_a_value_of_the_wrong_type_is_refused_with_kafkas_message():
    with pytest.raises(DataException, match="Invalid type for Timestamp, expected Date but was"):
        converter().from_connect_data("t", timestamp_type.SCHEMA, 1498566615250)
    envelope = b'{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp"},"payload":"x"}'
    with pytest.raises(DataException):
        converter().to_connect_data("t", envelope)
    # A plain INT64 is a number, never taken for a time.
    assert (
        converter().to_connect_data("t", b'{"schema":{"type":"int64","optional":false},"payload":5}').value
        == 5
    )


def test_a_record_whose_transformation_inserted_a_timestamp_is_written():
    """InsertField's ``timestamp.field`` adds a Timestamp field to a struct: the converter writes it."""
    from kafka_lite.connect.source.source_record import SourceRecord
    from kafka_lite.connect.transforms.insert_field import InsertFieldValue

    insert = InsertFieldValue()
    insert.configure({"timestamp.field": "at"})
    schema = SchemaBuilder.struct().field("line", STRING_SCHEMA).build()
    record = SourceRecord(
        None, None, "t", 0, None, None, schema, Struct(schema).put("line", "foo"), 1498566615250
    )
    transformed = insert.apply(record)
    data = converter().from_connect_data("t", transformed.value_schema, transformed.value)
    assert json.loads(data)["payload"] == {"line": "foo", "at": 1498566615250}
