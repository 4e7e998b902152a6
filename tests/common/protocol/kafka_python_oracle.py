"""Compare kafka_lite's protocol values with kafka-python's: both as positional tuples.

kafka_lite decodes a struct to a dict keyed by Kafka 0.11's field names; kafka-python to tuples (or
Struct objects) with its own names. On the wire only the order counts, so values are compared by
position. Used by the interop tests and by ``benchmarks/bench_protocol.py``.
"""

from __future__ import annotations

from kafka.protocol.old.types import Array as KpArray
from kafka.protocol.old.types import Schema as KpSchema

from kafka_lite.common.protocol import types as t


def as_tuple(schema: t.Type, value):
    """Our dict value as positional tuples (RECORDS as bytes). A struct nested directly in a struct
    (Fetch's ``partition_header``) is spliced into its parent: on the wire there is no nesting, and
    kafka-python's schemas write those fields flat."""
    if isinstance(schema, t.Schema):
        out = []
        for f in schema.fields:
            item = as_tuple(f.type, value[f.name])
            out.extend(item) if isinstance(f.type, t.Schema) else out.append(item)
        return tuple(out)
    if isinstance(schema, t.ArrayOf):
        return None if value is None else [as_tuple(schema.element, v) for v in value]
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def flat_width(schema: t.Schema) -> int:
    return sum(flat_width(f.type) if isinstance(f.type, t.Schema) else 1 for f in schema.fields)


def from_kafka_python(schema: t.Type, value):
    """kafka-python's decoded value (Struct-like or tuple) as the same positional tuples."""
    if isinstance(schema, t.Schema):
        items = (
            list(value)
            if isinstance(value, tuple | list)
            else [getattr(value, n) for n in value.SCHEMA.names]
        )
        out, i = [], 0
        for f in schema.fields:
            if isinstance(f.type, t.Schema):
                width = flat_width(f.type)
                out.extend(from_kafka_python(f.type, tuple(items[i : i + width])))
                i += width
            else:
                out.append(from_kafka_python(f.type, items[i]))
                i += 1
        assert i == len(items), f"kafka-python has {len(items)} fields where we have {i}"
        return tuple(out)
    if isinstance(schema, t.ArrayOf):
        return None if value is None else [from_kafka_python(schema.element, v) for v in value]
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return value


def flatten_kafka_python(kp_type, value):
    """kafka-python's decoded value with every struct nested in a struct spliced into its parent,
    as ``as_tuple`` splices ours: kafka-python nests some (CreatePartitions' ``new_partitions``) and
    writes others flat (Fetch's partition header), and the bytes are the same either way."""
    if isinstance(kp_type, KpSchema):
        items = list(value) if isinstance(value, tuple | list) else [getattr(value, n) for n in kp_type.names]
        out = []
        for field, item in zip(kp_type.fields, items, strict=True):
            flat = flatten_kafka_python(field, item)
            out.extend(flat) if isinstance(field, KpSchema) else out.append(flat)
        return tuple(out)
    if isinstance(kp_type, KpArray):
        return None if value is None else [flatten_kafka_python(kp_type.array_of, v) for v in value]
    return value


def nest_for_kafka_python(kp_type, value):
    """The reverse: a flat positional tuple in the shape kafka-python's schema encodes."""
    if isinstance(kp_type, KpSchema):
        items = iter(value)
        nested = _take(kp_type, items)
        assert next(items, items) is items, "more values than kafka-python's schema has fields"
        return nested
    if isinstance(kp_type, KpArray):
        return None if value is None else [nest_for_kafka_python(kp_type.array_of, v) for v in value]
    return value


def _take(kp_schema, items) -> tuple:
    return tuple(
        _take(field, items) if isinstance(field, KpSchema) else nest_for_kafka_python(field, next(items))
        for field in kp_schema.fields
    )
