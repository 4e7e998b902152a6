"""ExtractField: replace the key or value with one of its fields.

Mirrors: org.apache.kafka.connect.transforms.ExtractField, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/ExtractField.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: ``ExtractField$Key``/``$Value`` are ``ExtractFieldKey``/``ExtractFieldValue``; a field the
         schema lacks is a ``DataException`` naming it, where 0.11.0's fails with a
         NullPointerException.

The inverse of ``HoistField``: with ``field=id``, the key ``{"id": 42, "name": "x"}`` becomes
``42``, and a struct key's schema becomes the schema of its field ``id``. A common use is with
``ValueToKey``: copy ``id`` from the value into a struct key, then extract it, so that the key is
the plain id and records of one id go to one partition. Without a schema, a field the map lacks
gives a null; with a schema, the field must exist.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance, Type
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.requirements import require_map, require_struct
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig

FIELD_CONFIG = "field"

PURPOSE = "field extraction"


class ExtractField(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Extract the specified field from a Struct when schema present, or a Map in the case of schemaless data."
        "<p/>Use the concrete transformation type designed for the record key "
        "(<code>org.apache.kafka.connect.transforms.ExtractField$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.ExtractField$Value</code>)."
    )

    CONFIG_DEF = ConfigDef().define(
        FIELD_CONFIG,
        Type.STRING,
        NO_DEFAULT_VALUE,
        importance=Importance.MEDIUM,
        doc="Field name to extract.",
    )

    def configure(self, props: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, props)
        self._field_name = config.get_string(FIELD_CONFIG)

    def apply(self, record: R) -> R:
        schema = self.operating_schema(record)
        if schema is None:
            value = require_map(self.operating_value(record), PURPOSE)
            return self.new_record(record, None, value.get(self._field_name))
        value = require_struct(self.operating_value(record), PURPOSE)
        field = schema.field(self._field_name)
        if field is None:
            raise DataException(f"Unknown field: {self._field_name}")
        return self.new_record(record, field.schema, value.get(self._field_name))

    def close(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF


class ExtractFieldKey(KeyPart[R], ExtractField[R]):
    """``ExtractField$Key``: the key becomes one of its fields."""


class ExtractFieldValue(ValuePart[R], ExtractField[R]):
    """``ExtractField$Value``: the value becomes one of its fields."""
