"""HoistField: wrap the whole key or value in a struct (or a map) of one field.

Mirrors: org.apache.kafka.connect.transforms.HoistField, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/HoistField.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: ``HoistField$Key`` and ``HoistField$Value`` are ``HoistFieldKey`` and ``HoistFieldValue``.

With ``field=line``, a file source's value ``"hello"`` becomes ``{"line": "hello"}``; with the
schema ``STRING`` it becomes a ``Struct`` whose schema has the one field ``line`` of that schema.
A sink that writes structs as rows (a database, ``SqliteSinkConnector``) can then take records
whose values are bare strings or numbers.

Like most of Kafka's transformations it comes as an abstract class with a ``Key`` and a ``Value``
subclass: the abstract class says what to do with "the data", and the subclass says which half
of the record the data is (``operating_schema``, ``operating_value``) and how to put the result
back (``new_record``), all three from the mixin it inherits, ``KeyPart`` or ``ValuePart``
(``transforms/util/record_part.py``). A connector's config picks one by its Kafka class name,
``transforms.wrap.type=org.apache.kafka.connect.transforms.HoistField$Value``.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance, Type
from kafka_lite.connect.data.schema import Schema, SchemaBuilder
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.lru_cache import LRUCache
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig

FIELD_CONFIG = "field"


class HoistField(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Wrap data using the specified field name in a Struct when schema present, or a Map in the case of "
        "schemaless data.<p/>Use the concrete transformation type designed for the record key "
        "(<code>org.apache.kafka.connect.transforms.HoistField$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.HoistField$Value</code>)."
    )

    CONFIG_DEF = ConfigDef().define(
        FIELD_CONFIG, Type.STRING, NO_DEFAULT_VALUE, importance=Importance.MEDIUM,
        doc="Field name for the single field that will be created in the resulting Struct or Map.",
    )  # fmt: skip

    def configure(self, props: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, props)
        self._field_name = config.get_string(FIELD_CONFIG)
        self._schema_update_cache: LRUCache[Schema, Schema] | None = LRUCache(16)

    def apply(self, record: R) -> R:
        schema = self.operating_schema(record)
        value = self.operating_value(record)

        if schema is None:
            return self.new_record(record, None, {self._field_name: value})

        updated_schema = self._schema_update_cache.get(schema)
        if updated_schema is None:
            updated_schema = SchemaBuilder.struct().field(self._field_name, schema).build()
            self._schema_update_cache.put(schema, updated_schema)

        updated_value = Struct(updated_schema).put(self._field_name, value)
        return self.new_record(record, updated_schema, updated_value)

    def close(self) -> None:
        self._schema_update_cache = None

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF


class HoistFieldKey(KeyPart[R], HoistField[R]):
    """``HoistField$Key``: wraps the record's key."""


class HoistFieldValue(ValuePart[R], HoistField[R]):
    """``HoistField$Value``: wraps the record's value."""
