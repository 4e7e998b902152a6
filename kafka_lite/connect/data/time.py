"""The ``Time`` logical type: a time of day, stored as milliseconds since midnight.

Mirrors: org.apache.kafka.connect.data.Time
         (connect/api/src/main/java/org/apache/kafka/connect/data/Time.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: ``TimestampConverter`` produces it)
Differs: the logical value is a ``datetime`` on 1970-01-01 UTC where Kafka's is a
         ``java.util.Date`` (see ``date.py`` for why not a ``datetime.time``).

An ``INT32`` schema named ``org.apache.kafka.connect.data.Time``: the number is milliseconds
since midnight, and the logical value is that time on the epoch's day, in UTC. A value on any
other day is refused, as Kafka refuses it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kafka_lite.connect.data.schema import Schema, SchemaBuilder
from kafka_lite.connect.errors import DataException

LOGICAL_NAME = "org.apache.kafka.connect.data.Time"

MILLIS_PER_DAY = 24 * 60 * 60 * 1000

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def builder() -> SchemaBuilder:
    """A builder for a Time schema, to make it optional or give it a default or a doc."""
    return SchemaBuilder.int32().name(LOGICAL_NAME).version(1)


SCHEMA = builder().build()


def from_logical(schema: Schema, value: datetime) -> int:
    """The encoded value: milliseconds since midnight."""
    if schema.name is None or schema.name != LOGICAL_NAME:
        raise DataException("Requested conversion of Time object but the schema does not match.")
    millis = (value - _EPOCH) // timedelta(milliseconds=1)
    if millis < 0 or millis > MILLIS_PER_DAY:
        raise DataException("Kafka Connect Time type should not have any date fields set to non-zero values.")
    return millis


def to_logical(schema: Schema, value: int) -> datetime:
    """The logical value of ``value`` milliseconds since midnight: that time on 1970-01-01, UTC."""
    # Kafka's own message says "Date" here; it is kept, as Kafka's.
    if schema.name is None or schema.name != LOGICAL_NAME:
        raise DataException("Requested conversion of Date object but the schema does not match.")
    if value < 0 or value > MILLIS_PER_DAY:
        raise DataException(
            "Time values must use number of milliseconds greater than 0 and less than 86400000"
        )
    return _EPOCH + timedelta(milliseconds=value)
