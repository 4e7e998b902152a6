"""ReplaceField: drop fields (a blacklist), keep only some (a whitelist), and rename them.

Mirrors: org.apache.kafka.connect.transforms.ReplaceField, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/ReplaceField.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: ``ReplaceField$Key``/``$Value`` are ``ReplaceFieldKey``/``ReplaceFieldValue``.

``blacklist=password`` drops a field before it reaches a sink (or Kafka, from a source);
``whitelist=id,name`` keeps those fields only; ``renames=name:full_name`` renames one. A field in
both lists is dropped: the blacklist wins. Renaming is applied to what the lists let through, and
the lists name fields as the input has them. With a schema, the new struct schema keeps the old
one's name, version and doc, and has the kept fields in their old order.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import ConfigDef, Importance, Type
from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import Schema, SchemaBuilder
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.lru_cache import LRUCache
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.requirements import require_map, require_struct
from kafka_lite.connect.transforms.util.schema_util import copy_schema_basics
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig


class ConfigName:
    BLACKLIST = "blacklist"
    WHITELIST = "whitelist"
    RENAME = "renames"


PURPOSE = "field replacement"


def parse_rename_mappings(mappings: list[str]) -> dict[str, str]:
    """``["abc:xyz", "foo:bar"]`` as ``{"abc": "xyz", "foo": "bar"}``; a mapping that is not two
    names around one colon is a ``ConfigException``."""
    m = {}
    for mapping in mappings:
        parts = mapping.split(":")
        # Java's String.split drops trailing empty strings: "abc:" is one part there, and refused.
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2:
            raise ConfigException(ConfigName.RENAME, mappings, "Invalid rename mapping: " + mapping)
        m[parts[0]] = parts[1]
    return m


class _RenameMappingsValidator:
    def __call__(self, name: str, value: Any) -> None:
        parse_rename_mappings(value)

    def __str__(self) -> str:
        return "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"


class ReplaceField(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Filter or rename fields.<p/>Use the concrete transformation type designed for the record key "
        "(<code>org.apache.kafka.connect.transforms.ReplaceField$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.ReplaceField$Value</code>)."
    )

    CONFIG_DEF = (
        ConfigDef()
        .define(ConfigName.BLACKLIST, Type.LIST, [], importance=Importance.MEDIUM,
                doc="Fields to exclude. This takes precedence over the whitelist.")
        .define(ConfigName.WHITELIST, Type.LIST, [], importance=Importance.MEDIUM,
                doc="Fields to include. If specified, only these fields will be used.")
        .define(ConfigName.RENAME, Type.LIST, [], _RenameMappingsValidator(), Importance.MEDIUM,
                "Field rename mappings.")
    )  # fmt: skip

    def configure(self, configs: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, configs)
        self._blacklist = config.get_list(ConfigName.BLACKLIST)
        self._whitelist = config.get_list(ConfigName.WHITELIST)
        self._renames = parse_rename_mappings(config.get_list(ConfigName.RENAME))
        self._reverse_renames = {new: old for old, new in self._renames.items()}
        self._schema_update_cache: LRUCache[Schema, Schema] | None = LRUCache(16)

    def filter(self, field_name: str) -> bool:
        """Whether the field is kept: not blacklisted, and whitelisted if there is a whitelist."""
        return field_name not in self._blacklist and (not self._whitelist or field_name in self._whitelist)

    def renamed(self, field_name: str) -> str:
        return self._renames.get(field_name, field_name)

    def reverse_renamed(self, field_name: str) -> str:
        return self._reverse_renames.get(field_name, field_name)

    def apply(self, record: R) -> R:
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    def _apply_schemaless(self, record: R) -> R:
        value = require_map(self.operating_value(record), PURPOSE)
        updated_value = {
            self.renamed(field_name): field_value
            for field_name, field_value in value.items()
            if self.filter(field_name)
        }
        return self.new_record(record, None, updated_value)

    def _apply_with_schema(self, record: R) -> R:
        value = require_struct(self.operating_value(record), PURPOSE)

        updated_schema = self._schema_update_cache.get(value.schema)
        if updated_schema is None:
            updated_schema = self._make_updated_schema(value.schema)
            self._schema_update_cache.put(value.schema, updated_schema)

        # Walk the new schema and find each field's value under its old name.
        updated_value = Struct(updated_schema)
        for field in updated_schema.fields():
            updated_value.put(field.name, value.get(self.reverse_renamed(field.name)))

        return self.new_record(record, updated_schema, updated_value)

    def _make_updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields():
            if self.filter(field.name):
                builder.field(self.renamed(field.name), field.schema)
        return builder.build()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def close(self) -> None:
        self._schema_update_cache = None


class ReplaceFieldKey(KeyPart[R], ReplaceField[R]):
    """``ReplaceField$Key``: filters and renames the key's fields."""


class ReplaceFieldValue(ValuePart[R], ReplaceField[R]):
    """``ReplaceField$Value``: filters and renames the value's fields."""
