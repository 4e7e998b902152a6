"""InsertField: add fields taken from the record's metadata (topic, partition, offset, timestamp) or a fixed value.

Mirrors: org.apache.kafka.connect.transforms.InsertField, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/InsertField.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: ``InsertField$Key`` and ``InsertField$Value`` are ``InsertFieldKey`` and ``InsertFieldValue``;
         the timestamp field of a struct holds a ``datetime`` in UTC (Kafka's ``java.util.Date``).

Each setting names the field to add: ``topic.field=source_topic`` adds the record's topic as
``source_topic``. A sink that writes rows can so keep where each row came from, or a source can
stamp its records with an instance id (``static.field`` and ``static.value``).

With a schema, the value must be a ``Struct``: the new schema is the old one's fields followed by
the inserted ones, under the old schema's name, version and doc. A field name may end in ``!``
(the inserted field's schema is required) or ``?`` (optional, as with no suffix).
Without a schema, the value must be a map, and the fields are added to a copy of it. A field
whose data the record lacks (no partition, no timestamp) is left out of a map and null in a struct.
``offset.field`` needs a ``SinkRecord``: only a record read from Kafka has an offset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_lite.common.config import ConfigDef, Importance, Type
from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data import timestamp as Timestamp
from kafka_lite.connect.data.schema import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
)
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.lru_cache import LRUCache
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.requirements import require_map, require_sink_record, require_struct
from kafka_lite.connect.transforms.util.schema_util import copy_schema_basics
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig


class ConfigName:
    TOPIC_FIELD = "topic.field"
    PARTITION_FIELD = "partition.field"
    OFFSET_FIELD = "offset.field"
    TIMESTAMP_FIELD = "timestamp.field"
    STATIC_FIELD = "static.field"
    STATIC_VALUE = "static.value"


OPTIONALITY_DOC = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."

PURPOSE = "field insertion"

OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()


@dataclass(frozen=True)
class InsertionSpec:
    """A field to insert: its name, and whether its schema is optional (``?`` or no suffix) or not (``!``)."""

    name: str
    optional: bool

    @classmethod
    def parse(cls, spec: str | None) -> InsertionSpec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return cls(spec[:-1], True)
        if spec.endswith("!"):
            return cls(spec[:-1], False)
        return cls(spec, True)


class InsertField(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Insert field(s) using attributes from the record metadata or a configured static value."
        "<p/>Use the concrete transformation type designed for the record key "
        "(<code>org.apache.kafka.connect.transforms.InsertField$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.InsertField$Value</code>)."
    )

    CONFIG_DEF = (
        ConfigDef()
        .define(ConfigName.TOPIC_FIELD, Type.STRING, None, importance=Importance.MEDIUM,
                doc="Field name for Kafka topic. " + OPTIONALITY_DOC)
        .define(ConfigName.PARTITION_FIELD, Type.STRING, None, importance=Importance.MEDIUM,
                doc="Field name for Kafka partition. " + OPTIONALITY_DOC)
        .define(ConfigName.OFFSET_FIELD, Type.STRING, None, importance=Importance.MEDIUM,
                doc="Field name for Kafka offset - only applicable to sink connectors.<br/>" + OPTIONALITY_DOC)
        .define(ConfigName.TIMESTAMP_FIELD, Type.STRING, None, importance=Importance.MEDIUM,
                doc="Field name for record timestamp. " + OPTIONALITY_DOC)
        .define(ConfigName.STATIC_FIELD, Type.STRING, None, importance=Importance.MEDIUM,
                doc="Field name for static data field. " + OPTIONALITY_DOC)
        .define(ConfigName.STATIC_VALUE, Type.STRING, None, importance=Importance.MEDIUM,
                doc="Static field value, if field name configured.")
    )  # fmt: skip

    def configure(self, props: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, props)
        self._topic_field = InsertionSpec.parse(config.get_string(ConfigName.TOPIC_FIELD))
        self._partition_field = InsertionSpec.parse(config.get_string(ConfigName.PARTITION_FIELD))
        self._offset_field = InsertionSpec.parse(config.get_string(ConfigName.OFFSET_FIELD))
        self._timestamp_field = InsertionSpec.parse(config.get_string(ConfigName.TIMESTAMP_FIELD))
        self._static_field = InsertionSpec.parse(config.get_string(ConfigName.STATIC_FIELD))
        self._static_value = config.get_string(ConfigName.STATIC_VALUE)

        specs = (self._topic_field, self._partition_field, self._offset_field, self._timestamp_field,
                 self._static_field)  # fmt: skip
        if all(spec is None for spec in specs):
            raise ConfigException("No field insertion configured")

        if self._static_field is not None and self._static_value is None:
            raise ConfigException(
                ConfigName.STATIC_VALUE,
                None,
                "No value specified for static field: " + self._static_field.name,
            )

        self._schema_update_cache: LRUCache[Schema, Schema] | None = LRUCache(16)

    def apply(self, record: R) -> R:
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    def _apply_schemaless(self, record: R) -> R:
        value = require_map(self.operating_value(record), PURPOSE)

        updated_value = dict(value)

        if self._topic_field is not None:
            updated_value[self._topic_field.name] = record.topic
        if self._partition_field is not None and record.kafka_partition is not None:
            updated_value[self._partition_field.name] = record.kafka_partition
        if self._offset_field is not None:
            updated_value[self._offset_field.name] = require_sink_record(record, PURPOSE).kafka_offset
        if self._timestamp_field is not None and record.timestamp is not None:
            # Schemaless data has no logical types: the timestamp stays the number it is.
            updated_value[self._timestamp_field.name] = record.timestamp
        if self._static_field is not None and self._static_value is not None:
            updated_value[self._static_field.name] = self._static_value

        return self.new_record(record, None, updated_value)

    def _apply_with_schema(self, record: R) -> R:
        value = require_struct(self.operating_value(record), PURPOSE)

        updated_schema = self._schema_update_cache.get(value.schema)
        if updated_schema is None:
            updated_schema = self._make_updated_schema(value.schema)
            self._schema_update_cache.put(value.schema, updated_schema)

        updated_value = Struct(updated_schema)

        for field in value.schema.fields():
            updated_value.put(field.name, value.get(field.name))

        if self._topic_field is not None:
            updated_value.put(self._topic_field.name, record.topic)
        if self._partition_field is not None and record.kafka_partition is not None:
            updated_value.put(self._partition_field.name, record.kafka_partition)
        if self._offset_field is not None:
            updated_value.put(self._offset_field.name, require_sink_record(record, PURPOSE).kafka_offset)
        if self._timestamp_field is not None and record.timestamp is not None:
            # The field's schema is the Timestamp logical type, so the struct holds the instant.
            updated_value.put(
                self._timestamp_field.name, Timestamp.to_logical(Timestamp.SCHEMA, record.timestamp)
            )
        if self._static_field is not None and self._static_value is not None:
            updated_value.put(self._static_field.name, self._static_value)

        return self.new_record(record, updated_schema, updated_value)

    def _make_updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())

        for field in schema.fields():
            builder.field(field.name, field.schema)

        if self._topic_field is not None:
            builder.field(
                self._topic_field.name,
                OPTIONAL_STRING_SCHEMA if self._topic_field.optional else STRING_SCHEMA,
            )
        if self._partition_field is not None:
            builder.field(
                self._partition_field.name,
                OPTIONAL_INT32_SCHEMA if self._partition_field.optional else INT32_SCHEMA,
            )
        if self._offset_field is not None:
            builder.field(
                self._offset_field.name,
                OPTIONAL_INT64_SCHEMA if self._offset_field.optional else INT64_SCHEMA,
            )
        if self._timestamp_field is not None:
            builder.field(
                self._timestamp_field.name,
                OPTIONAL_TIMESTAMP_SCHEMA if self._timestamp_field.optional else Timestamp.SCHEMA,
            )
        if self._static_field is not None:
            builder.field(
                self._static_field.name,
                OPTIONAL_STRING_SCHEMA if self._static_field.optional else STRING_SCHEMA,
            )

        return builder.build()

    def close(self) -> None:
        self._schema_update_cache = None

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF


class InsertFieldKey(KeyPart[R], InsertField[R]):
    """``InsertField$Key``: inserts into the record's key."""


class InsertFieldValue(ValuePart[R], InsertField[R]):
    """``InsertField$Value``: inserts into the record's value."""
