"""A schema: the type of a key or a value, so that a converter can write it and a sink read it back.

Mirrors: org.apache.kafka.connect.data.Schema, ConnectSchema, SchemaBuilder and Field
         (connect/api/src/main/java/org/apache/kafka/connect/data/Schema.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: one ``Schema`` class stands for the interface and ``ConnectSchema``; ``SchemaBuilder``
         builds one; no logical types (``Decimal``, ``Date``, ``Time``, ``Timestamp``) and no
         ``SchemaProjector``.

Connect's types are few and language-neutral: integers of 8 to 64 bits, floats of 32 and 64,
booleans, strings, bytes, and three containers (array, map, struct). Each Python value has one
type it maps to when no schema is given (``schema_type``), as each Java class does in Kafka:
an ``int`` is ``INT64`` and a ``float`` is ``FLOAT64``, Python having one of each.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from kafka_lite.connect.errors import DataException


class Type(enum.Enum):
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)


@dataclass(frozen=True)
class Field:
    name: str
    index: int
    schema: Schema


class Schema:
    """An immutable schema (Kafka's ``ConnectSchema``); compare with ``==``."""

    Type = Type

    def __init__(
        self,
        type: Type,
        optional: bool = False,
        default_value: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: dict[str, str] | None = None,
        fields: list[Field] | None = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
    ) -> None:
        self.type = type
        self.optional = optional
        self.default_value = default_value
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters = parameters
        self._fields = fields
        self.key_schema = key_schema
        self.value_schema = value_schema

    def is_optional(self) -> bool:
        return self.optional

    def fields(self) -> list[Field]:
        if self.type is not Type.STRUCT:
            raise DataException("Cannot list fields on non-struct type")
        return list(self._fields or [])

    def field(self, name: str) -> Field | None:
        if self.type is not Type.STRUCT:
            raise DataException("Cannot look up fields on non-struct type")
        return next((f for f in self._fields or [] if f.name == name), None)

    def _key(self) -> tuple:
        fields = tuple((f.name, f.index, f.schema) for f in self._fields or [])
        params = tuple(sorted((self.parameters or {}).items()))
        return (self.type, self.optional, self.default_value, self.name, self.version, self.doc,
                params, fields, self.key_schema, self.value_schema)  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.type, self.optional, self.name))

    def __repr__(self) -> str:
        return f"Schema{{{self.name + ':' if self.name else ''}{self.type.name}}}"


def schema_type(value: Any) -> Type | None:
    """The type a value of this Python class has when no schema says (Kafka's ``ConnectSchema.schemaType``)."""
    from kafka_lite.connect.data.struct import Struct

    for cls, type_ in ((bool, Type.BOOLEAN), (int, Type.INT64), (float, Type.FLOAT64), (str, Type.STRING),
                       ((bytes, bytearray), Type.BYTES), (list, Type.ARRAY), (dict, Type.MAP),
                       (Struct, Type.STRUCT)):  # fmt: skip
        if isinstance(value, cls):  # bool before int: a bool is an int in Python
            return type_
    return None


class SchemaBuilder:
    """Builds a ``Schema`` step by step: ``SchemaBuilder.struct().field("id", INT64_SCHEMA).build()``."""

    def __init__(self, type: Type) -> None:
        self.type = type
        self._optional = False
        self._default_value: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: list[Field] = []
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    @classmethod
    def type(cls, type: Type) -> SchemaBuilder:
        """A builder for any type (Kafka's ``SchemaBuilder.type``): what a transformation uses to
        copy a schema whose type it reads from another."""
        return cls(type)

    @classmethod
    def int8(cls) -> SchemaBuilder:
        return cls(Type.INT8)

    @classmethod
    def int16(cls) -> SchemaBuilder:
        return cls(Type.INT16)

    @classmethod
    def int32(cls) -> SchemaBuilder:
        return cls(Type.INT32)

    @classmethod
    def int64(cls) -> SchemaBuilder:
        return cls(Type.INT64)

    @classmethod
    def float32(cls) -> SchemaBuilder:
        return cls(Type.FLOAT32)

    @classmethod
    def float64(cls) -> SchemaBuilder:
        return cls(Type.FLOAT64)

    @classmethod
    def bool(cls) -> SchemaBuilder:
        return cls(Type.BOOLEAN)

    @classmethod
    def string(cls) -> SchemaBuilder:
        return cls(Type.STRING)

    @classmethod
    def bytes(cls) -> SchemaBuilder:
        return cls(Type.BYTES)

    @classmethod
    def struct(cls) -> SchemaBuilder:
        return cls(Type.STRUCT)

    @classmethod
    def array(cls, value_schema: Schema) -> SchemaBuilder:
        builder = cls(Type.ARRAY)
        builder._value_schema = value_schema
        return builder

    @classmethod
    def map(cls, key_schema: Schema, value_schema: Schema) -> SchemaBuilder:
        builder = cls(Type.MAP)
        builder._key_schema, builder._value_schema = key_schema, value_schema
        return builder

    def field(self, name: str, schema: Schema) -> SchemaBuilder:
        if self.type is not Type.STRUCT:
            raise DataException("Cannot create fields on type " + self.type.name)
        self._fields.append(Field(name, len(self._fields), schema))
        return self

    def optional(self) -> SchemaBuilder:
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        self._default_value = value
        return self

    def name(self, name: str) -> SchemaBuilder:
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        self._doc = doc
        return self

    def parameter(self, name: str, value: str) -> SchemaBuilder:
        self._parameters = {**(self._parameters or {}), name: value}
        return self

    def parameters(self, props: dict[str, str]) -> SchemaBuilder:
        """Add every parameter of ``props`` (Kafka's ``SchemaBuilder.parameters``)."""
        self._parameters = {**(self._parameters or {}), **props}
        return self

    def build(self) -> Schema:
        return Schema(self.type, self._optional, self._default_value, self._name, self._version,
                      self._doc, self._parameters, self._fields if self.type is Type.STRUCT else None,
                      self._key_schema, self._value_schema)  # fmt: skip


# The schemas of Kafka's ``Schema`` interface constants, required and optional.
INT8_SCHEMA = Schema(Type.INT8)
INT16_SCHEMA = Schema(Type.INT16)
INT32_SCHEMA = Schema(Type.INT32)
INT64_SCHEMA = Schema(Type.INT64)
FLOAT32_SCHEMA = Schema(Type.FLOAT32)
FLOAT64_SCHEMA = Schema(Type.FLOAT64)
BOOLEAN_SCHEMA = Schema(Type.BOOLEAN)
STRING_SCHEMA = Schema(Type.STRING)
BYTES_SCHEMA = Schema(Type.BYTES)
OPTIONAL_INT8_SCHEMA = Schema(Type.INT8, optional=True)
OPTIONAL_INT16_SCHEMA = Schema(Type.INT16, optional=True)
OPTIONAL_INT32_SCHEMA = Schema(Type.INT32, optional=True)
OPTIONAL_INT64_SCHEMA = Schema(Type.INT64, optional=True)
OPTIONAL_FLOAT32_SCHEMA = Schema(Type.FLOAT32, optional=True)
OPTIONAL_FLOAT64_SCHEMA = Schema(Type.FLOAT64, optional=True)
OPTIONAL_BOOLEAN_SCHEMA = Schema(Type.BOOLEAN, optional=True)
OPTIONAL_STRING_SCHEMA = Schema(Type.STRING, optional=True)
OPTIONAL_BYTES_SCHEMA = Schema(Type.BYTES, optional=True)
