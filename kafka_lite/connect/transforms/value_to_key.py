"""ValueToKey: make the record's key from some fields of its value.

Mirrors: org.apache.kafka.connect.transforms.ValueToKey
         (connect/transforms/src/main/java/.../transforms/ValueToKey.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: a field the value's schema lacks is a ``DataException`` naming it, where 0.11.0's fails
         with a NullPointerException.

A source connector that reads rows (``SqliteSourceConnector``) often has no key: every record
goes to a partition the producer picks in turn, and a compacted topic cannot keep "the latest row
of each id". ``fields=id`` copies the value's ``id`` into a new key, a struct (or a map) with the
one field ``id``; records of one id then share a partition and a compaction key. The value is
left as it is. One class, not a Key and a Value: it always reads the value and writes the key.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance, Type
from kafka_lite.connect.data.schema import Schema, SchemaBuilder
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.lru_cache import LRUCache
from kafka_lite.connect.transforms.util.non_empty_list_validator import NonEmptyListValidator
from kafka_lite.connect.transforms.util.requirements import require_map, require_struct
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig

FIELDS_CONFIG = "fields"

PURPOSE = "copying fields from value to key"


class ValueToKey(Transformation[R]):
    OVERVIEW_DOC = "Replace the record key with a new key formed from a subset of fields in the record value."

    CONFIG_DEF = ConfigDef().define(
        FIELDS_CONFIG, Type.LIST, NO_DEFAULT_VALUE, NonEmptyListValidator(), Importance.HIGH,
        "Field names on the record value to extract as the record key.",
    )  # fmt: skip

    def configure(self, configs: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, configs)
        self._fields = config.get_list(FIELDS_CONFIG)
        self._value_to_key_schema_cache: LRUCache[Schema, Schema] | None = LRUCache(16)

    def apply(self, record: R) -> R:
        if record.value_schema is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    def _apply_schemaless(self, record: R) -> R:
        value = require_map(record.value, PURPOSE)
        key = {field: value.get(field) for field in self._fields}
        return record.new_record(record.topic, record.kafka_partition, None, key,
                                 record.value_schema, record.value, record.timestamp)  # fmt: skip

    def _apply_with_schema(self, record: R) -> R:
        value = require_struct(record.value, PURPOSE)

        key_schema = self._value_to_key_schema_cache.get(value.schema)
        if key_schema is None:
            key_schema_builder = SchemaBuilder.struct()
            for field in self._fields:
                value_field = value.schema.field(field)
                if value_field is None:
                    raise DataException(f"Field does not exist: {field}")
                key_schema_builder.field(field, value_field.schema)
            key_schema = key_schema_builder.build()
            self._value_to_key_schema_cache.put(value.schema, key_schema)

        key = Struct(key_schema)
        for field in self._fields:
            key.put(field, value.get(field))

        return record.new_record(record.topic, record.kafka_partition, key_schema, key,
                                 value.schema, value, record.timestamp)  # fmt: skip

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def close(self) -> None:
        self._value_to_key_schema_cache = None
