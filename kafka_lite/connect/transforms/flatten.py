"""Flatten: turn nested structs (or maps) into one level, joining the field names with a delimiter.

Mirrors: org.apache.kafka.connect.transforms.Flatten, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/Flatten.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: Flatten came in Kafka 0.11.0, among KIP-66's transformations)
Differs: ``Flatten$Key``/``$Value`` are ``FlattenKey``/``FlattenValue``; a null in a map does not end
         the flattening of that map (0.11.0's returns there, losing the fields after it; later
         Kafka's goes on), and a null nested struct gives null fields (0.11.0's fails).

A sink that writes rows has columns, not nested records: ``{"user": {"id": 1, "name": "ann"}}``
becomes ``{"user.id": 1, "user.name": "ann"}``. With a schema, the flat schema is built from the
nested one: a field is optional if it or any struct above it is, since an absent parent leaves
it null; and it takes its default from its own schema, or else from the parent's default struct.
Arrays and maps inside a struct have no flat form and are refused, as Kafka refuses them.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import ConfigDef, Importance
from kafka_lite.common.config import Type as ConfigType
from kafka_lite.connect.data.schema import Schema, SchemaBuilder, Type, schema_type
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.lru_cache import LRUCache
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.requirements import require_map, require_struct
from kafka_lite.connect.transforms.util.schema_util import copy_schema_basics
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig

DELIMITER_CONFIG = "delimiter"
DELIMITER_DEFAULT = "."

PURPOSE = "flattening"

# The types that are copied as they are; STRUCT (and a map, without a schema) is descended into.
_PRIMITIVES = frozenset(t for t in Type if t.is_primitive)


class Flatten(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Flatten a nested data structure, generating names for each field by concatenating the field names at each "
        "level with a configurable delimiter character. Applies to Struct when schema present, or a Map "
        "in the case of schemaless data. The default delimiter is '.'."
        "<p/>Use the concrete transformation type designed for the record key "
        "(<code>org.apache.kafka.connect.transforms.Flatten$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.Flatten$Value</code>)."
    )

    CONFIG_DEF = ConfigDef().define(
        DELIMITER_CONFIG, ConfigType.STRING, DELIMITER_DEFAULT, importance=Importance.MEDIUM,
        doc="Delimiter to insert between field names from the input record when generating field names for the "
            "output record",
    )  # fmt: skip

    def configure(self, props: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, props)
        self._delimiter = config.get_string(DELIMITER_CONFIG)
        self._schema_update_cache: LRUCache[Schema, Schema] | None = LRUCache(16)

    def apply(self, record: R) -> R:
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    def close(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    # -- without a schema: maps ------------------------------------------------------------------

    def _apply_schemaless(self, record: R) -> R:
        value = require_map(self.operating_value(record), PURPOSE)
        new_value: dict[str, Any] = {}
        self._flatten_map(value, "", new_value)
        return self.new_record(record, None, new_value)

    def _flatten_map(
        self, original: dict[str, Any], field_name_prefix: str, new_record: dict[str, Any]
    ) -> None:
        for key, value in original.items():
            field_name = self._field_name(field_name_prefix, key)
            if value is None:
                new_record[field_name] = None
                continue
            inferred_type = schema_type(value)
            if inferred_type is None:
                raise DataException(
                    f"Flatten transformation was passed a value of type {type(value).__name__} "
                    "which is not supported by Connect's data API"
                )
            if inferred_type in _PRIMITIVES:
                new_record[field_name] = value
            elif inferred_type is Type.MAP:
                self._flatten_map(require_map(value, PURPOSE), field_name, new_record)
            else:
                raise DataException(
                    f"Flatten transformation does not support {type(value).__name__} "
                    f"for record without schemas (for field {field_name})."
                )

    # -- with a schema: structs ------------------------------------------------------------------

    def _apply_with_schema(self, record: R) -> R:
        value = require_struct(self.operating_value(record), PURPOSE)

        updated_schema = self._schema_update_cache.get(value.schema)
        if updated_schema is None:
            builder = copy_schema_basics(value.schema, SchemaBuilder.struct())
            default_value = value.schema.default_value
            self._build_updated_schema(value.schema, "", builder, value.schema.optional, default_value)
            updated_schema = builder.build()
            self._schema_update_cache.put(value.schema, updated_schema)

        updated_value = Struct(updated_schema)
        self._build_with_schema(value, "", updated_value)
        return self.new_record(record, updated_schema, updated_value)

    def _build_updated_schema(self, schema: Schema, field_name_prefix: str, new_schema: SchemaBuilder,
                              optional: bool, default_from_parent: Struct | None) -> None:  # fmt: skip
        """Add ``schema``'s fields to ``new_schema``, flat; ``optional`` is whether any struct above
        is optional, ``default_from_parent`` the default the struct above gives this one."""
        for field in schema.fields():
            field_name = self._field_name(field_name_prefix, field.name)
            field_is_optional = optional or field.schema.optional
            field_default_value = None
            if field.schema.default_value is not None:
                field_default_value = field.schema.default_value
            elif default_from_parent is not None:
                field_default_value = default_from_parent.get(field.name)

            if field.schema.type in _PRIMITIVES:
                new_schema.field(
                    field_name,
                    self._convert_field_schema(field.schema, field_is_optional, field_default_value),
                )
            elif field.schema.type is Type.STRUCT:
                self._build_updated_schema(
                    field.schema, field_name, new_schema, field_is_optional, field_default_value
                )
            else:
                raise DataException(
                    f"Flatten transformation does not support {field.schema.type.name} "
                    f"for record without schemas (for field {field_name})."
                )

    @staticmethod
    def _convert_field_schema(orig: Schema, optional: bool, default_from_parent: Any) -> Schema:
        """A primitive field's schema in the flat struct: optional, or with a default, if the
        nesting above made it so. Not cached: only the top-level schema's translation is."""
        builder = copy_schema_basics(orig)
        if optional:
            builder.optional()
        if default_from_parent is not None:
            builder.default_value(default_from_parent)
        return builder.build()

    def _build_with_schema(self, record: Struct | None, field_name_prefix: str, new_record: Struct) -> None:
        if record is None:
            return  # an absent optional struct: its flat fields stay null (or take their defaults)
        for field in record.schema.fields():
            field_name = self._field_name(field_name_prefix, field.name)
            if field.schema.type in _PRIMITIVES:
                new_record.put(field_name, record.get(field.name))
            elif field.schema.type is Type.STRUCT:
                self._build_with_schema(record.get(field.name), field_name, new_record)
            else:
                raise DataException(
                    f"Flatten transformation does not support {field.schema.type.name} "
                    f"for record without schemas (for field {field_name})."
                )

    def _field_name(self, prefix: str, field_name: str) -> str:
        return field_name if not prefix else prefix + self._delimiter + field_name


class FlattenKey(KeyPart[R], Flatten[R]):
    """``Flatten$Key``: flattens the record's key."""


class FlattenValue(ValuePart[R], Flatten[R]):
    """``Flatten$Value``: flattens the record's value."""
