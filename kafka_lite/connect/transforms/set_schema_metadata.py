"""SetSchemaMetadata: give the key's or value's schema a new name, version, or both.

Mirrors: org.apache.kafka.connect.transforms.SetSchemaMetadata, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/SetSchemaMetadata.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: ``SetSchemaMetadata$Key``/``$Value`` are ``SetSchemaMetadataKey``/``SetSchemaMetadataValue``;
         a schema that is not a struct keeps no fields, where 0.11.0's asks it for its fields
         and fails.

A schema's name is what a schema registry, or a sink that makes one table per schema, goes by:
``schema.name=com.example.User`` renames the schema a source connector made up. Everything else
about the schema (type, fields, optionality, doc) is kept. A ``Struct`` carries its schema, so a
struct key or value is copied into a struct of the new schema, field by field; any other value
does not refer to its schema and is kept as it is.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import ConfigDef, Importance, Type
from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import Schema
from kafka_lite.connect.data.schema import Type as SchemaType
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.requirements import require_schema
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig


class ConfigName:
    SCHEMA_NAME = "schema.name"
    SCHEMA_VERSION = "schema.version"


class SetSchemaMetadata(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Set the schema name, version or both on the record's key "
        "(<code>org.apache.kafka.connect.transforms.SetSchemaMetadata$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.SetSchemaMetadata$Value</code>) schema."
    )

    CONFIG_DEF = (
        ConfigDef()
        .define(
            ConfigName.SCHEMA_NAME, Type.STRING, None, importance=Importance.HIGH, doc="Schema name to set."
        )
        .define(
            ConfigName.SCHEMA_VERSION,
            Type.INT,
            None,
            importance=Importance.HIGH,
            doc="Schema version to set.",
        )
    )

    def configure(self, configs: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, configs)
        self._schema_name = config.get_string(ConfigName.SCHEMA_NAME)
        self._schema_version = config.get_int(ConfigName.SCHEMA_VERSION)
        if self._schema_name is None and self._schema_version is None:
            raise ConfigException("Neither schema name nor version configured")

    def apply(self, record: R) -> R:
        schema = self.operating_schema(record)
        require_schema(schema, "updating schema metadata")
        is_array = schema.type is SchemaType.ARRAY
        is_map = schema.type is SchemaType.MAP
        updated_schema = Schema(
            schema.type,
            schema.optional,
            schema.default_value,
            self._schema_name if self._schema_name is not None else schema.name,
            self._schema_version if self._schema_version is not None else schema.version,
            schema.doc,
            schema.parameters,
            schema.fields() if schema.type is SchemaType.STRUCT else None,
            schema.key_schema if is_map else None,
            schema.value_schema if is_map or is_array else None,
        )
        # A struct refers to its schema, so it is copied into a struct of the new one.
        return self.new_record(
            record, updated_schema, update_schema_in(self.operating_value(record), updated_schema)
        )

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def close(self) -> None:
        pass


class SetSchemaMetadataKey(KeyPart[R], SetSchemaMetadata[R]):
    """``SetSchemaMetadata$Key``: renames the key's schema."""


class SetSchemaMetadataValue(ValuePart[R], SetSchemaMetadata[R]):
    """``SetSchemaMetadata$Value``: renames the value's schema."""


def update_schema_in(key_or_value: Any, updated_schema: Schema) -> Any:
    """``key_or_value`` made to refer to ``updated_schema``: a struct is copied into a struct of the
    new schema, which must have the same fields; anything else (a null included) is returned as is."""
    if isinstance(key_or_value, Struct):
        new_struct = Struct(updated_schema)
        for field in updated_schema.fields():
            new_struct.put(field.name, key_or_value.get(field.name))
        return new_struct
    return key_or_value
