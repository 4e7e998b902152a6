"""InsertField adds the record's topic, partition, offset, timestamp or a fixed value as fields, to a
struct (copying its schema's name, version and doc) or to a map, as Kafka 0.11.0's InsertFieldTest
checks; and its two config errors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data import timestamp as Timestamp
from kafka_lite.connect.data.schema import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
)
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.transforms.insert_field import InsertFieldKey, InsertFieldValue

pytestmark = pytest.mark.unit

PROPS = {
    "topic.field": "topic_field!",
    "partition.field": "partition_field",
    "timestamp.field": "timestamp_field?",
    "static.field": "instance_id",
    "static.value": "my-instance-id",
}


def configured(props: dict[str, str], cls: type = InsertFieldValue):
    xform = cls()
    xform.configure(props)
    return xform


def test_top_level_struct_required() -> None:
    xform = configured({"topic.field": "topic_field"})
    record = SourceRecord(None, None, "", 0, value_schema=INT32_SCHEMA, value=42)

    with pytest.raises(
        DataException, match=r"Only Struct objects supported for \[field insertion\], found: int"
    ):
        xform.apply(record)


def test_schemaless_value_must_be_a_map() -> None:
    xform = configured({"topic.field": "topic_field"})

    with pytest.raises(DataException, match=r"Only Map objects supported in absence of schema .* found: str"):
        xform.apply(SourceRecord(None, None, "test", 0, None, None, None, "a line"))


def test_copy_schema_and_insert_configured_fields() -> None:
    xform = configured(PROPS)
    simple_struct_schema = (
        SchemaBuilder.struct()
        .name("name")
        .version(1)
        .doc("doc")
        .field("magic", OPTIONAL_INT64_SCHEMA)
        .build()
    )
    simple_struct = Struct(simple_struct_schema).put("magic", 42)
    record = SourceRecord(None, None, "test", 0, None, None, simple_struct_schema, simple_struct)

    transformed = xform.apply(record)

    schema, value = transformed.value_schema, transformed.value
    assert (schema.name, schema.version, schema.doc) == ("name", 1, "doc")
    assert [f.name for f in schema.fields()] == ["magic", "topic_field", "partition_field", "timestamp_field",
                                                 "instance_id"]  # fmt: skip
    assert schema.field("magic").schema == OPTIONAL_INT64_SCHEMA
    assert value.get("magic") == 42
    assert schema.field("topic_field").schema == STRING_SCHEMA  # "!": required
    assert value.get("topic_field") == "test"
    assert schema.field("partition_field").schema == OPTIONAL_INT32_SCHEMA  # no suffix: optional
    assert value.get("partition_field") == 0
    assert schema.field("timestamp_field").schema == Timestamp.builder().optional().build()
    assert value.get("timestamp_field") is None  # the record has no timestamp
    assert schema.field("instance_id").schema == OPTIONAL_STRING_SCHEMA
    assert value.get("instance_id") == "my-instance-id"
    assert isinstance(transformed, SourceRecord)

    # One input schema, one output schema, built once.
    transformed2 = xform.apply(
        SourceRecord(None, None, "test", 1, None, None, simple_struct_schema, Struct(simple_struct_schema))
    )
    assert transformed2.value_schema is transformed.value_schema


def test_schemaless_insert_configured_fields() -> None:
    xform = configured(PROPS)
    record = SourceRecord(None, None, "test", 0, None, None, None, {"magic": 42})

    value = xform.apply(record).value

    assert value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "instance_id": "my-instance-id",
    }
    assert record.value == {"magic": 42}  # the input's map is not changed


def test_sink_record_offset_and_timestamp_with_schema() -> None:
    xform = configured({"offset.field": "offset!", "timestamp.field": "ts!"})
    schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).build()
    # 2017-06-28T00:00:00.123Z, Kafka 0.11.0's release day.
    record = SinkRecord(
        "t", 2, None, None, schema, Struct(schema).put("id", 5), 1234, timestamp=1498608000123
    )

    transformed = xform.apply(record)

    assert transformed.value_schema.field("offset").schema == INT64_SCHEMA
    assert transformed.value_schema.field("ts").schema == Timestamp.SCHEMA
    assert transformed.value.get("offset") == 1234
    assert transformed.value.get("ts") == datetime(2017, 6, 28, 0, 0, 0, 123000, tzinfo=UTC)
    assert transformed.kafka_offset == 1234


def test_sink_record_offset_and_timestamp_schemaless() -> None:
    xform = configured({"offset.field": "offset", "timestamp.field": "ts"}, InsertFieldKey)
    record = SinkRecord("t", 2, None, {"id": 5}, None, "v", 1234, timestamp=1498608000123)

    transformed = xform.apply(record)

    assert transformed.key == {"id": 5, "offset": 1234, "ts": 1498608000123}
    assert transformed.value == "v"


def test_offset_needs_a_sink_record() -> None:
    xform = configured({"offset.field": "offset"})

    with pytest.raises(
        DataException, match=r"Only SinkRecord supported for \[field insertion\], found: SourceRecord"
    ):
        xform.apply(SourceRecord(None, None, "t", 0, None, None, None, {}))


def test_no_field_insertion_configured() -> None:
    with pytest.raises(ConfigException, match=r"^No field insertion configured$"):
        configured({"static.value": "x"})


def test_static_field_without_value() -> None:
    with pytest.raises(ConfigException) as e:
        configured({"static.field": "instance_id"})
    assert str(e.value) == (
        "Invalid value None for configuration static.value: No value specified for static field: instance_id"
    )
