"""A struct: a value with named fields, each of the type its ``Schema`` gives.

Mirrors: org.apache.kafka.connect.data.Struct
         (connect/api/src/main/java/org/apache/kafka/connect/data/Struct.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: ``put`` checks that the field exists and that a required field is not set to None,
         not the Python type of the value (Kafka's ``ConnectSchema.validateValue``).
"""

from __future__ import annotations

from typing import Any

from kafka_lite.connect.data.schema import Schema, Type
from kafka_lite.connect.errors import DataException


class Struct:
    def __init__(self, schema: Schema) -> None:
        if schema.type is not Type.STRUCT:
            raise DataException("Not a struct schema: " + repr(schema))
        self.schema = schema
        self._values: list[Any] = [None] * len(schema.fields())

    def put(self, field_name: str, value: Any) -> Struct:
        field = self._lookup(field_name)
        if value is None and not field.schema.optional and field.schema.default_value is None:
            raise DataException(
                f'Invalid value: null used for required field: "{field_name}", schema type: {field.schema.type.name}'
            )
        self._values[field.index] = value
        return self

    def get(self, field_name: str) -> Any:
        field = self._lookup(field_name)
        value = self._values[field.index]
        return field.schema.default_value if value is None else value

    def _lookup(self, field_name: str):
        field = self.schema.field(field_name)
        if field is None:
            raise DataException(field_name + " is not a valid field name")
        return field

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and other.schema == self.schema and other._values == self._values

    __hash__ = None

    def __repr__(self) -> str:
        inner = ",".join(f"{f.name}={self._values[f.index]!r}" for f in self.schema.fields())
        return f"Struct{{{inner}}}"
