"""The ``Timestamp`` logical type: an instant, stored as milliseconds since the Unix epoch.

Mirrors: org.apache.kafka.connect.data.Timestamp
         (connect/api/src/main/java/org/apache/kafka/connect/data/Timestamp.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations such as ``InsertField`` produce it)
Differs: the logical value is a ``datetime`` in UTC where Kafka's is a ``java.util.Date``.

A logical type is a schema name on a primitive schema: an ``INT64`` schema named
``org.apache.kafka.connect.data.Timestamp`` tells a converter and a sink that the number is an
instant, not a count. In a ``Struct`` the field holds the logical value (a ``datetime``); a
converter writes the encoded one (the ``int``) with ``from_logical`` and reads it back with
``to_logical``. Both check the schema's name, as Kafka's do, so that a plain ``INT64`` is never
taken for a time by mistake.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kafka_lite.connect.data.schema import Schema, SchemaBuilder
from kafka_lite.connect.errors import DataException

LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def builder() -> SchemaBuilder:
    """A builder for a Timestamp schema, to make it optional or give it a default or a doc."""
    return SchemaBuilder.int64().name(LOGICAL_NAME).version(1)


SCHEMA = builder().build()


def from_logical(schema: Schema, value: datetime) -> int:
    """The encoded value: milliseconds since the epoch (Kafka's ``Date.getTime()``)."""
    _check(schema)
    # Integer arithmetic on the timedelta, not ``value.timestamp() * 1000``: a float would round
    # some instants to the wrong millisecond.
    return (value - _EPOCH) // timedelta(milliseconds=1)


def to_logical(schema: Schema, value: int) -> datetime:
    """The logical value of ``value`` milliseconds since the epoch (Kafka's ``new Date(value)``)."""
    _check(schema)
    return _EPOCH + timedelta(milliseconds=value)


def _check(schema: Schema) -> None:
    if schema.name is None or schema.name != LOGICAL_NAME:
        raise DataException("Requested conversion of Timestamp object but the schema does not match.")
