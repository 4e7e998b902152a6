"""Cast: change the type of some fields, or of the whole key or value (``int64`` to ``int32``, a number to a string).

Mirrors: org.apache.kafka.connect.transforms.Cast, with its Key and Value
         (connect/transforms/src/main/java/.../transforms/Cast.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: Cast came in Kafka 0.11.0, among KIP-66's transformations)
Differs: ``Cast$Key``/``$Value`` are ``CastKey``/``CastValue``. Python has one ``int`` and one
         ``float``, so a cast to a narrower integer wraps it as Java's ``byteValue()`` ... do, a
         cast to ``float32`` rounds to the nearest float32, and a float becomes a string as Java
         writes a ``double`` (``1.0E10``). An unknown whole-value type is a ``ConfigException``
         (0.11.0's throws an IllegalArgumentException).

``spec=id:int32,price:float64`` casts two fields of a struct or a map; ``spec=int32`` (a type, no
field) casts the whole key or value. Only the primitive types with an obvious conversion are
supported: the integers, the floats, boolean and string, both as input and as output. A string
is parsed as Java parses it (``Integer.parseInt``: digits only; ``Boolean.parseBoolean``: "true"
in any case is true, anything else false). With a schema, every field of the struct must be of
a supported type, cast or not, and the new schema keeps each field's optionality and casts its
default value too.
"""

from __future__ import annotations

import math
import re
import struct as _struct
from decimal import Decimal
from typing import Any

from kafka_lite.common.config import NO_DEFAULT_VALUE, ConfigDef, Importance
from kafka_lite.common.config import Type as ConfigType
from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.data.schema import Schema, SchemaBuilder, Type, schema_type
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.transforms.transformation import R, Transformation
from kafka_lite.connect.transforms.util.lru_cache import LRUCache
from kafka_lite.connect.transforms.util.record_part import KeyPart, RecordPart, ValuePart
from kafka_lite.connect.transforms.util.requirements import require_map, require_struct
from kafka_lite.connect.transforms.util.schema_util import copy_schema_basics
from kafka_lite.connect.transforms.util.simple_config import SimpleConfig

SPEC_CONFIG = "spec"

PURPOSE = "cast types"

SUPPORTED_CAST_TYPES = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64, Type.BOOLEAN,
                        Type.STRING)  # fmt: skip

# Casting the whole value is kept in the same map as the field casts, under a key no field can
# have (Kafka's uses null).
WHOLE_VALUE_CAST = None


def valid_cast_type(type_: Type, for_output: bool) -> Type:
    """``type_`` if a cast may go from (``for_output`` false) or to it; a bad input is bad data, a
    bad output a bad config."""
    if type_ not in SUPPORTED_CAST_TYPES:
        supported = "[" + ", ".join(t.name for t in SUPPORTED_CAST_TYPES) + "]"
        message = f"Cast transformation does not support casting to/from {type_.name}; supported types are {supported}"
        raise ConfigException(message) if for_output else DataException(message)
    return type_


def _type_named(name: str) -> Type:
    try:
        return Type[name.strip().upper()]
    except KeyError:
        raise ConfigException("Invalid type found in casting spec: " + name.strip()) from None


def parse_field_types(mappings: list[str]) -> dict[str | None, Type]:
    m: dict[str | None, Type] = {}
    is_whole_value_cast = False
    for mapping in mappings:
        parts = mapping.split(":")
        while parts and parts[-1] == "":  # as Java's String.split, which drops trailing empty strings
            parts.pop()
        if len(parts) > 2:
            # Kafka's message, which names ReplaceField's setting: Cast borrowed its parsing.
            raise ConfigException("renames", mappings, "Invalid rename mapping: " + mapping)
        if len(parts) == 1:
            m[WHOLE_VALUE_CAST] = valid_cast_type(_type_named(parts[0]), for_output=True)
            is_whole_value_cast = True
        else:
            m[parts[0].strip()] = valid_cast_type(_type_named(parts[1]), for_output=True)
    if is_whole_value_cast and len(mappings) > 1:
        raise ConfigException(
            "Cast transformations that specify a type to cast the entire value to may ony specify a single cast in "
            "their spec"
        )
    return m


class _SpecValidator:
    def __call__(self, name: str, value: Any) -> None:
        if not value:
            raise ConfigException("Must specify at least one field to cast.")
        parse_field_types(value)

    def __str__(self) -> str:
        return "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"


class Cast(Transformation[R], RecordPart[R]):
    OVERVIEW_DOC = (
        "Cast fields or the entire key or value to a specific type, e.g. to force an integer field to a smaller "
        "width. Only simple primitive types are supported -- integers, floats, boolean, and string. "
        "<p/>Use the concrete transformation type designed for the record key "
        "(<code>org.apache.kafka.connect.transforms.Cast$Key</code>) or value "
        "(<code>org.apache.kafka.connect.transforms.Cast$Value</code>)."
    )

    CONFIG_DEF = ConfigDef().define(
        SPEC_CONFIG, ConfigType.LIST, NO_DEFAULT_VALUE, _SpecValidator(), Importance.HIGH,
        "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of "
        "Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, "
        "int64, float32, float64, boolean, and string.",
    )  # fmt: skip

    def configure(self, props: dict[str, Any]) -> None:
        config = SimpleConfig(self.CONFIG_DEF, props)
        self._casts = parse_field_types(config.get_list(SPEC_CONFIG))
        self._whole_value_cast_type = self._casts.get(WHOLE_VALUE_CAST)
        self._schema_update_cache: LRUCache[Schema, Schema] | None = LRUCache(16)

    def apply(self, record: R) -> R:
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def close(self) -> None:
        pass

    def _apply_schemaless(self, record: R) -> R:
        if self._whole_value_cast_type is not None:
            return self.new_record(record, None, cast_value_to_type(self.operating_value(record),
                                                                    self._whole_value_cast_type))  # fmt: skip
        value = require_map(self.operating_value(record), PURPOSE)
        updated_value = dict(value)
        for field, target_type in self._casts.items():
            updated_value[field] = cast_value_to_type(value.get(field), target_type)
        return self.new_record(record, None, updated_value)

    def _apply_with_schema(self, record: R) -> R:
        value_schema = self.operating_schema(record)
        updated_schema = self._get_or_build_schema(value_schema)

        if self._whole_value_cast_type is not None:
            return self.new_record(record, updated_schema, cast_value_to_type(self.operating_value(record),
                                                                              self._whole_value_cast_type))  # fmt: skip

        value = require_struct(self.operating_value(record), PURPOSE)
        updated_value = Struct(updated_schema)
        for field in value.schema.fields():
            orig_field_value = value.get(field.name)
            target_type = self._casts.get(field.name)
            new_field_value = (
                cast_value_to_type(orig_field_value, target_type) if target_type else orig_field_value
            )
            updated_value.put(field.name, new_field_value)
        return self.new_record(record, updated_schema, updated_value)

    def _get_or_build_schema(self, value_schema: Schema) -> Schema:
        updated_schema = self._schema_update_cache.get(value_schema)
        if updated_schema is not None:
            return updated_schema

        if self._whole_value_cast_type is not None:
            builder = copy_schema_basics(value_schema, convert_field_type(self._whole_value_cast_type))
        else:
            builder = copy_schema_basics(value_schema, SchemaBuilder.struct())
            for field in value_schema.fields():
                field_builder = convert_field_type(self._casts.get(field.name, field.schema.type))
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default_value is not None:
                    field_builder.default_value(
                        cast_value_to_type(field.schema.default_value, field_builder.type)
                    )
                builder.field(field.name, field_builder.build())

        if value_schema.optional:
            builder.optional()
        if value_schema.default_value is not None:
            builder.default_value(cast_value_to_type(value_schema.default_value, builder.type))

        updated_schema = builder.build()
        self._schema_update_cache.put(value_schema, updated_schema)
        return updated_schema


def convert_field_type(type_: Type) -> SchemaBuilder:
    if type_ not in SUPPORTED_CAST_TYPES:
        raise DataException(f"Unexpected type in Cast transformation: {type_.name}")
    return SchemaBuilder.type(type_)


def cast_value_to_type(value: Any, target_type: Type) -> Any:
    if value is None:
        return None
    inferred_type = schema_type(value)
    if inferred_type is None:
        raise DataException(
            f"Cast transformation was passed a value of type {type(value).__name__} "
            "which is not supported by Connect's data API"
        )
    valid_cast_type(inferred_type, for_output=False)  # the type cast from must be supported too
    try:
        return _CASTS[target_type](value)
    except (ValueError, OverflowError):  # Java's NumberFormatException
        raise DataException(f"Value ({_to_string(value)}) was out of range for requested data type") from None


# -- the conversions, as Java's Number.byteValue() ... and parseByte() ... make them ----------------


def _wrap(number: int, bits: int) -> int:
    """``number`` narrowed to a signed integer of ``bits`` bits, as a Java cast narrows it: the high
    bits are dropped (300 as a byte is 44)."""
    number &= (1 << bits) - 1
    return number - (1 << bits) if number >= 1 << (bits - 1) else number


def _float_to_long(value: float, bits: int) -> int:
    """Java's ``(int)`` or ``(long)`` of a double: toward zero, NaN to 0, saturating at the ends."""
    if math.isnan(value):
        return 0
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return hi if value >= hi else lo if value <= lo else int(value)


_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")


def _cast_to_integer(bits: int):
    def cast(value: Any) -> int:
        if isinstance(value, bool):
            return 1 if value else 0
        if isinstance(value, int):
            return _wrap(value, bits)
        if isinstance(value, float):
            # byteValue() and shortValue() of a double go through (int), then narrow.
            return _wrap(_float_to_long(value, 64 if bits == 64 else 32), bits)
        if isinstance(value, str):
            if not _JAVA_INTEGER.fullmatch(value) or int(value) != _wrap(int(value), bits):
                raise ValueError(value)
            return int(value)
        raise DataException(f"Unexpected type in Cast transformation: {type(value).__name__}")

    return cast


def _to_float32(value: float) -> float:
    try:
        return _struct.unpack("f", _struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)  # as Java's (float) of a double beyond float's range


def _cast_to_float(single: bool):
    def cast(value: Any) -> float:
        if isinstance(value, bool):
            number = 1.0 if value else 0.0
        elif isinstance(value, int | float):
            number = float(value)
        elif isinstance(value, str):
            number = float(value.strip().rstrip("fFdD"))  # Float.parseFloat takes "1.5f"
        else:
            raise DataException(f"Unexpected type in Cast transformation: {type(value).__name__}")
        return _to_float32(number) if single else number

    return cast


def _cast_to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, float):
        return _float_to_long(value, 64) != 0  # Kafka's longValue() != 0: 0.5 is false
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataException(f"Unexpected type in Cast transformation: {type(value).__name__}")


def _to_string(value: Any) -> str:
    """``value.toString()`` as Java writes it: ``true``, ``42``, ``1.5``, ``1.0E10``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double_to_string(value)
    return str(value)


def _java_double_to_string(d: float) -> str:
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0 or 1e-3 <= abs(d) < 1e7:
        text = repr(d)
        return text if "e" not in text else format(Decimal(text), "f")
    # Outside [10^-3, 10^7) Java writes one digit before the point and an exponent: 1.0E10, 1.5E-4.
    sign, digits, exponent = Decimal(repr(d)).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    power = len(digits) - 1 + exponent
    return ("-" if sign else "") + mantissa[0] + "." + (mantissa[1:] or "0") + "E" + str(power)


_CASTS = {
    Type.INT8: _cast_to_integer(8),
    Type.INT16: _cast_to_integer(16),
    Type.INT32: _cast_to_integer(32),
    Type.INT64: _cast_to_integer(64),
    Type.FLOAT32: _cast_to_float(single=True),
    Type.FLOAT64: _cast_to_float(single=False),
    Type.BOOLEAN: _cast_to_boolean,
    Type.STRING: _to_string,
}


class CastKey(KeyPart[R], Cast[R]):
    """``Cast$Key``: casts the record's key, or fields of it."""


class CastValue(ValuePart[R], Cast[R]):
    """``Cast$Value``: casts the record's value, or fields of it."""
