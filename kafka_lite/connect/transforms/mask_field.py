"""MaskField: replace some fields' values with the "zero" of their type (0, false, "", an empty list ...).

Mirrors: org.apache.kafka.connect.transforms.MaskField, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/MaskField.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)
Differs: ``MaskField$Key``/``$Value`` are ``MaskFieldKey``/``MaskFieldValue``; the zeros are
         Python's: one ``int`` and one ``float`` stand for Java's four integer and two floating
         types, ``Decimal`` for ``BigDecimal``, a UTC ``datetime`` for ``java.util.Date``.

``fields=ssn,salary`` keeps the fields (so the schema, and a sink's table, stay as they are) but
not what they hold. The zero is chosen by the value's own class, as Kafka chooses it by
``getClass()``, so a masked field keeps its type and a struct stays valid for its schema. A null
stays null. A class with no zero (bytes, a struct) is a ``DataException``: masking it silently
as something else would break the schema.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance, Type
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.non_empty_list_validator import NonEmptyListValidator
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.requirements import require_map, require_struct
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig

FIELDS_CONFIG = "fields"

PURPOSE = "mask fields"

# By exact class, as Kafka's map is looked up by getClass(): a bool is an int in Python, and
# must mask to False, not 0.
PRIMITIVE_VALUE_MAPPING: dict[type, Any] = {
    bool: False,
    int: 0,
    float: 0.0,
    Decimal: Decimal(0),
    datetime: datetime(1970, 1, 1, tzinfo=UTC),
    str: "",
}


def masked(value: Any) -> Any:
    if value is None:
        return None
    masked_value = PRIMITIVE_VALUE_MAPPING.get(type(value))
    if masked_value is None:
        if isinstance(value, list):
            masked_value = []
        elif isinstance(value, dict):
            masked_value = {}
        else:
            raise DataException(f"Cannot mask value of type: {type(value).__name__}")
    return masked_value


class MaskField(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Mask specified fields with a valid null value for the field type (i.e. 0, false, empty string, and so on)."
        "<p/>Use the concrete transformation type designed for the record key "
        "(<code>org.apache.kafka.connect.transforms.MaskField$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.MaskField$Value</code>)."
    )

    CONFIG_DEF = ConfigDef().define(
        FIELDS_CONFIG,
        Type.LIST,
        NO_DEFAULT_VALUE,
        NonEmptyListValidator(),
        Importance.HIGH,
        "Names of fields to mask.",
    )

    def configure(self, props: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, props)
        self._masked_fields = set(config.get_list(FIELDS_CONFIG))

    def apply(self, record: R) -> R:
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    def _apply_schemaless(self, record: R) -> R:
        value = require_map(self.operating_value(record), PURPOSE)
        updated_value = dict(value)
        for field in self._masked_fields:
            # As Kafka's: a masked field the map lacks is added, with a null.
            updated_value[field] = masked(value.get(field))
        return self.new_record(record, self.operating_schema(record), updated_value)

    def _apply_with_schema(self, record: R) -> R:
        value = require_struct(self.operating_value(record), PURPOSE)
        updated_value = Struct(value.schema)
        for field in value.schema.fields():
            orig_field_value = value.get(field.name)
            updated_value.put(
                field.name,
                masked(orig_field_value) if field.name in self._masked_fields else orig_field_value,
            )
        return self.new_record(record, self.operating_schema(record), updated_value)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def close(self) -> None:
        pass


class MaskFieldKey(KeyPart[R], MaskField[R]):
    """``MaskField$Key``: masks fields of the record's key."""


class MaskFieldValue(ValuePart[R], MaskField[R]):
    """``MaskField$Value``: masks fields of the record's value."""
