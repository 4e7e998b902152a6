"""Copying what describes a schema (name, version, doc, parameters) onto a new one.

Mirrors: org.apache.kafka.connect.transforms.util.SchemaUtil
         (connect/transforms/src/main/java/.../util/SchemaUtil.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book)
Differs: none.

A transformation that adds or removes fields builds a new struct schema, field by field; the new
schema keeps the old one's name, version and doc, so that a sink (or a schema registry) still
sees the record as the same kind of thing. Optionality and the default value are *not* copied:
Kafka leaves them to the caller, and the struct schemas transformations build are required.
"""

from __future__ import annotations

from kafka_lite.connect.data.schema import Schema, SchemaBuilder


def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """``builder`` (a new one of ``source``'s type when not given) with ``source``'s name, version,
    doc and parameters."""
    if builder is None:
        builder = SchemaBuilder(source.type)
    builder.name(source.name)
    builder.version(source.version)
    builder.doc(source.doc)
    if source.parameters is not None:
        builder.parameters(source.parameters)
    return builder
