"""The JSON converter: Connect data to JSON bytes, byte for byte as Kafka's (Jackson) writes them.

Mirrors: org.apache.kafka.connect.json.JsonConverter and JsonSchema
         (connect/json/src/main/java/org/apache/kafka/connect/json/JsonConverter.java, Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: the logical types are 0.11.0's ``Date``, ``Time`` and ``Timestamp`` (which
         transformations produce), without ``Decimal``; no schema caches (``schemas.cache.size``
         is read and ignored); JSON is written by ``write_json`` below, in Jackson's spelling.

With ``schemas.enable=true`` (the default) every record carries its schema in an envelope::

    {"schema":{"type":"string","optional":false},"payload":"a line of text"}

and a null key with no schema is ``{"schema":null,"payload":null}``. With ``schemas.enable=false``
only the payload is written (``"a line of text"``), and reading infers a schema-less value: an
integral number is an ``int``, an object a ``dict``. The envelope makes every record
self-describing, at the cost of repeating the schema in each one; that cost is why schema
registries exist.

Kafka's Jackson and kafka_lite both write objects with their fields in insertion order and no spaces. Where Python's
``json`` and Jackson differ in spelling, ``write_json`` follows Jackson: control characters are
escaped as ``\\u001F`` (upper-case hex), doubles as Java's ``Double.toString`` (``1.0E20``), floats
of a ``FLOAT32`` schema as ``Float.toString`` (``0.1``, not ``0.10000000149011612``), and bytes as
base64 strings.
"""

from __future__ import annotations

import base64
import json
import math
import struct as _struct
from datetime import datetime
from decimal import Decimal
from typing import Any

from kafka_lite.connect.data import date as date_type
from kafka_lite.connect.data import time as time_type
from kafka_lite.connect.data import timestamp as timestamp_type
from kafka_lite.connect.data.schema import Schema, SchemaBuilder, Type, schema_type
from kafka_lite.connect.data.schema_and_value import NULL, SchemaAndValue
from kafka_lite.connect.data.struct import Struct
from kafka_lite.connect.errors import DataException
from kafka_lite.connect.storage.converter import Converter

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_ENABLE_DEFAULT = True
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"

# JsonSchema's field and type names.
ENVELOPE_SCHEMA_FIELD_NAME = "schema"
ENVELOPE_PAYLOAD_FIELD_NAME = "payload"
TYPE_NAMES = {
    Type.BOOLEAN: "boolean", Type.INT8: "int8", Type.INT16: "int16", Type.INT32: "int32",
    Type.INT64: "int64", Type.FLOAT32: "float", Type.FLOAT64: "double", Type.BYTES: "bytes",
    Type.STRING: "string", Type.ARRAY: "array", Type.MAP: "map", Type.STRUCT: "struct",
}  # fmt: skip
TYPES_BY_NAME = {name: type_ for type_, name in TYPE_NAMES.items()}


# A logical type is a schema name on a primitive schema: its value is converted to and from the
# primitive at the JSON boundary, by name, after the null checks (Kafka's LOGICAL_CONVERTERS).
# Each entry: the logical type's module, and the name of the primitive it is stored as.
LOGICAL_TYPES = {
    date_type.LOGICAL_NAME: (date_type, "int32"),
    time_type.LOGICAL_NAME: (time_type, "int32"),
    timestamp_type.LOGICAL_NAME: (timestamp_type, "int64"),
}


def _to_json_logical(schema: Schema, value: Any) -> int:
    logical, _ = LOGICAL_TYPES[schema.name]
    if not isinstance(value, datetime):
        raise DataException(
            f"Invalid type for {schema.name.rsplit('.', 1)[1]}, expected Date but was {type(value)}"
        )
    return logical.from_logical(schema, value)


def _to_connect_logical(schema: Schema, value: Any) -> datetime:
    logical, primitive = LOGICAL_TYPES[schema.name]
    if not isinstance(value, int) or isinstance(value, bool):
        raise DataException(
            f"Invalid type for {schema.name.rsplit('.', 1)[1]}, underlying representation should be "
            f"{primitive} but was {type(value)}"
        )
    return logical.to_logical(schema, value)


class Float32(float):
    """A float written as Java's ``Float.toString`` writes it (a ``FLOAT32`` value)."""


class JsonConverter(Converter):
    def __init__(self) -> None:
        self.enable_schemas = SCHEMAS_ENABLE_DEFAULT

    def configure(self, configs: dict[str, Any], is_key: bool) -> None:
        value = configs.get(SCHEMAS_ENABLE_CONFIG)
        if value is not None:
            self.enable_schemas = str(value).lower() == "true"  # Kafka: toString().equals("true")

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if self.enable_schemas:
            json_value = {ENVELOPE_SCHEMA_FIELD_NAME: as_json_schema(schema),
                          ENVELOPE_PAYLOAD_FIELD_NAME: convert_to_json(schema, value)}  # fmt: skip
        else:
            json_value = convert_to_json(schema, value)
        # Kafka's JsonSerializer returns null for a null node only; an envelope is never null.
        if json_value is None:
            return None
        return write_json(json_value).encode("utf-8")

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        try:
            json_value = None if value is None else json.loads(value)
        except ValueError as e:
            raise DataException(
                f"Converting byte[] to Kafka Connect data failed due to serialization error: {e}"
            ) from e
        if self.enable_schemas and not _is_envelope(json_value):
            raise DataException('JsonConverter with schemas.enable requires "schema" and "payload" fields '
                                "and may not contain additional fields. If you are trying to deserialize "
                                "plain JSON data, set schemas.enable=false in your converter configuration.")  # fmt: skip
        if not self.enable_schemas:
            # No envelope: wrap the value in one with a null schema, and infer its type below.
            if value is None:
                return NULL
            json_value = {ENVELOPE_SCHEMA_FIELD_NAME: None, ENVELOPE_PAYLOAD_FIELD_NAME: json_value}
        schema = as_connect_schema(json_value[ENVELOPE_SCHEMA_FIELD_NAME])
        return SchemaAndValue(schema, convert_to_connect(schema, json_value[ENVELOPE_PAYLOAD_FIELD_NAME]))


def _is_envelope(json_value: Any) -> bool:
    return isinstance(json_value, dict) and json_value.keys() == {
        ENVELOPE_SCHEMA_FIELD_NAME,
        ENVELOPE_PAYLOAD_FIELD_NAME,
    }


def as_json_schema(schema: Schema | None) -> dict | None:
    """A Connect schema as JsonSchema's JSON: type first, then its parts, then optional, name ..."""
    if schema is None:
        return None
    json_schema: dict[str, Any] = {"type": TYPE_NAMES[schema.type]}
    if schema.type is Type.ARRAY:
        json_schema["items"] = as_json_schema(schema.value_schema)
    elif schema.type is Type.MAP:
        json_schema["keys"] = as_json_schema(schema.key_schema)
        json_schema["values"] = as_json_schema(schema.value_schema)
    elif schema.type is Type.STRUCT:
        # Each field is its schema's JSON with the field's name appended, as Kafka builds it.
        json_schema["fields"] = [{**as_json_schema(f.schema), "field": f.name} for f in schema.fields()]
    json_schema["optional"] = schema.optional
    if schema.name is not None:
        json_schema["name"] = schema.name
    if schema.version is not None:
        json_schema["version"] = schema.version
    if schema.doc is not None:
        json_schema["doc"] = schema.doc
    if schema.parameters is not None:
        json_schema["parameters"] = dict(schema.parameters)
    if schema.default_value is not None:
        json_schema["default"] = convert_to_json(schema, schema.default_value)
    return json_schema


def as_connect_schema(json_schema: Any) -> Schema | None:
    if json_schema is None:
        return None
    type_name = json_schema.get("type") if isinstance(json_schema, dict) else None
    if not isinstance(type_name, str):
        raise DataException("Schema must contain 'type' field")
    if type_name not in TYPES_BY_NAME:
        raise DataException("Unknown schema type: " + type_name)
    type_ = TYPES_BY_NAME[type_name]
    if type_ is Type.ARRAY:
        if "items" not in json_schema:
            raise DataException("Array schema did not specify the element type")
        builder = SchemaBuilder.array(as_connect_schema(json_schema["items"]))
    elif type_ is Type.MAP:
        if "keys" not in json_schema:
            raise DataException("Map schema did not specify the key type")
        if "values" not in json_schema:
            raise DataException("Map schema did not specify the value type")
        builder = SchemaBuilder.map(
            as_connect_schema(json_schema["keys"]), as_connect_schema(json_schema["values"])
        )
    elif type_ is Type.STRUCT:
        builder = SchemaBuilder.struct()
        fields = json_schema.get("fields")
        if not isinstance(fields, list):
            raise DataException('Struct schema\'s "fields" argument is not an array.')
        for field in fields:
            if not isinstance(field.get("field"), str):
                raise DataException("Struct schema's field name not specified properly")
            builder.field(field["field"], as_connect_schema(field))
    else:
        builder = SchemaBuilder(type_)
    if json_schema.get("optional") is True:
        builder.optional()
    if isinstance(json_schema.get("name"), str):
        builder.name(json_schema["name"])
    if isinstance(json_schema.get("version"), int) and not isinstance(json_schema["version"], bool):
        builder.version(json_schema["version"])
    if isinstance(json_schema.get("doc"), str):
        builder.doc(json_schema["doc"])
    for key, value in (json_schema.get("parameters") or {}).items():
        if not isinstance(value, str):
            raise DataException("Schema parameters must have string values.")
        builder.parameter(key, value)
    if json_schema.get("default") is not None:
        builder.default_value(convert_to_connect(builder.build(), json_schema["default"]))
    return builder.build()


def convert_to_json(schema: Schema | None, value: Any) -> Any:
    """Connect data as a JSON tree of Python values (dicts keep their order)."""
    if value is None:
        if schema is None:
            return None  # any schema is valid and there is no default: treat it as optional
        if schema.default_value is not None:
            return convert_to_json(schema, schema.default_value)
        if schema.optional:
            return None
        raise DataException(
            "Conversion error: null value for field that is required and has no default value"
        )
    if schema is not None and schema.name in LOGICAL_TYPES:
        return _to_json_logical(schema, value)
    type_ = schema.type if schema is not None else schema_type(value)
    if type_ is None:
        raise DataException(f"Python class {type(value)} does not have corresponding schema type.")
    if type_ in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        return _checked(value, int, type_)
    if type_ is Type.FLOAT32:
        return Float32(_checked(value, float | int, type_))
    if type_ is Type.FLOAT64:
        return float(_checked(value, float | int, type_))
    if type_ is Type.BOOLEAN:
        return _checked(value, bool, type_)
    if type_ is Type.STRING:
        return _checked(value, str, type_)
    if type_ is Type.BYTES:
        return base64.b64encode(_checked(value, bytes | bytearray, type_)).decode("ascii")
    if type_ is Type.ARRAY:
        value_schema = schema.value_schema if schema is not None else None
        return [convert_to_json(value_schema, elem) for elem in _checked(value, list | tuple, type_)]
    if type_ is Type.MAP:
        _checked(value, dict, type_)
        # String keys make a JSON object; any other key type a list of [key, value] pairs.
        if schema is None:
            object_mode = all(isinstance(k, str) for k in value)
        else:
            object_mode = schema.key_schema.type is Type.STRING
        key_schema = schema.key_schema if schema is not None else None
        value_schema = schema.value_schema if schema is not None else None
        if object_mode:
            return {
                convert_to_json(key_schema, k): convert_to_json(value_schema, v) for k, v in value.items()
            }
        return [[convert_to_json(key_schema, k), convert_to_json(value_schema, v)] for k, v in value.items()]
    # STRUCT
    if not isinstance(value, Struct) or (schema is not None and value.schema != schema):
        raise DataException("Mismatching schema.")
    return {f.name: convert_to_json(f.schema, value.get(f.name)) for f in value.schema.fields()}


def _checked(value: Any, types: Any, type_: Type) -> Any:
    if not isinstance(value, types) or (isinstance(value, bool) and type_ is not Type.BOOLEAN):
        raise DataException(f"Invalid type for {type_.name}: {type(value)}")
    return value


def convert_to_connect(schema: Schema | None, json_value: Any) -> Any:
    """A JSON tree as Connect data of ``schema``, or of the type the JSON implies when it is None."""
    value = _convert_to_connect(schema, json_value)
    # A null gave the schema's default, which is already a logical value, or None.
    if schema is not None and schema.name in LOGICAL_TYPES and json_value is not None:
        return _to_connect_logical(schema, value)
    return value


def _convert_to_connect(schema: Schema | None, json_value: Any) -> Any:
    if schema is not None:
        type_ = schema.type
        if json_value is None:
            if schema.default_value is not None:
                return schema.default_value
            if schema.optional:
                return None
            raise DataException(f"Invalid null value for required {type_.name} field")
    elif json_value is None:
        return None
    elif isinstance(json_value, bool):
        type_ = Type.BOOLEAN
    elif isinstance(json_value, int):
        type_ = Type.INT64
    elif isinstance(json_value, float):
        type_ = Type.FLOAT64
    elif isinstance(json_value, list):
        type_ = Type.ARRAY
    elif isinstance(json_value, dict):
        type_ = Type.MAP
    else:
        type_ = Type.STRING
    if type_ in (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64):
        if not isinstance(json_value, int | float):
            raise DataException(f"Invalid {type_.name} value: {json_value!r} is not a number")
        return (
            int(json_value) if type_ in (Type.INT8, Type.INT16, Type.INT32, Type.INT64) else float(json_value)
        )
    if type_ in (Type.BOOLEAN, Type.STRING):
        return json_value
    if type_ is Type.BYTES:
        try:
            return base64.b64decode(json_value, validate=True)
        except (ValueError, TypeError) as e:
            raise DataException(f"Invalid bytes field: {e}") from e
    if type_ is Type.ARRAY:
        elem_schema = schema.value_schema if schema is not None else None
        return [convert_to_connect(elem_schema, elem) for elem in json_value]
    if type_ is Type.MAP:
        key_schema = schema.key_schema if schema is not None else None
        value_schema = schema.value_schema if schema is not None else None
        if schema is None or key_schema.type is Type.STRING:
            return {k: convert_to_connect(value_schema, v) for k, v in json_value.items()}
        if not isinstance(json_value, list):
            raise DataException(
                "Maps with non-string fields should be encoded as JSON array of tuples, but found "
                + type(json_value).__name__
            )
        return {convert_to_connect(key_schema, k): convert_to_connect(value_schema, v) for k, v in json_value}
    if not isinstance(json_value, dict):
        raise DataException(
            "Structs should be encoded as JSON objects, but found " + type(json_value).__name__
        )
    result = Struct(schema)
    for field in schema.fields():
        result.put(field.name, convert_to_connect(field.schema, json_value.get(field.name)))
    return result


# ---- JSON text in Jackson's spelling ------------------------------------------------------------

# Jackson escapes '"', '\\' and every control character; five of them by name, the rest as \\u00XX.
_ESCAPES = {c: f"\\u{c:04X}" for c in range(0x20)}
_ESCAPES.update(
    {ord('"'): '\\"', ord("\\"): "\\\\", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}
)


def write_json(node: Any) -> str:
    """A JSON tree as Jackson's ``ObjectMapper.writeValueAsBytes`` spells it: no spaces, fields in order."""
    if node is None:
        return "null"
    if node is True:
        return "true"
    if node is False:
        return "false"
    if isinstance(node, Float32):
        return _java_number(node, _float32_digits(node))
    if isinstance(node, float):
        return _java_number(node, repr(node))
    if isinstance(node, int):
        return str(node)
    if isinstance(node, str):
        return '"' + node.translate(_ESCAPES) + '"'
    if isinstance(node, list):
        return "[" + ",".join(write_json(item) for item in node) + "]"
    return "{" + ",".join(write_json(str(k)) + ":" + write_json(v) for k, v in node.items()) + "}"


def _float32_digits(value: float) -> str:
    """The shortest decimal that reads back as the same 32-bit float (what ``Float.toString`` finds)."""
    single = _struct.unpack("f", _struct.pack("f", value))[0]
    for precision in range(1, 10):
        text = f"{single:.{precision}g}"
        if _struct.unpack("f", _struct.pack("f", float(text)))[0] == single:
            return text
    return repr(single)


def _java_number(value: float, shortest: str) -> str:
    """Java's ``Double.toString`` layout for the digits in ``shortest``: plain notation from 10^-3
    to 10^7 (always with a fraction, ``1.0``), else ``d.dddE±n``. Jackson quotes NaN and infinities."""
    if math.isnan(value):
        return '"NaN"'
    if math.isinf(value):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(shortest.lstrip("-")).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    magnitude = len(digits) + exponent - 1  # the power of ten of the first digit
    if -3 <= magnitude < 7:
        if magnitude >= 0:
            whole = digits[: magnitude + 1].ljust(magnitude + 1, "0")
            fraction = digits[magnitude + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-magnitude - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{magnitude}"
