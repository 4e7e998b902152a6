"""The ``Date`` logical type: a day, stored as the number of days since the Unix epoch.

Mirrors: org.apache.kafka.connect.data.Date
         (connect/api/src/main/java/org/apache/kafka/connect/data/Date.java, Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: ``TimestampConverter`` produces it)
Differs: the logical value is a ``datetime`` at midnight UTC where Kafka's is a ``java.util.Date``
         (kept an instant, not a ``datetime.date``, so that Date, Time and Timestamp values share
         one Python type, as they share ``java.util.Date`` in Kafka).

An ``INT32`` schema named ``org.apache.kafka.connect.data.Date``: the number is days since
1970-01-01, and the logical value is that day's midnight in UTC. A value with a time of day is
refused rather than silently truncated, as Kafka refuses it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kafka_lite.connect.data.schema import Schema, SchemaBuilder
from kafka_lite.connect.errors import DataException

LOGICAL_NAME = "org.apache.kafka.connect.data.Date"

MILLIS_PER_DAY = 24 * 60 * 60 * 1000

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def builder() -> SchemaBuilder:
    """A builder for a Date schema, to make it optional or give it a default or a doc."""
    return SchemaBuilder.int32().name(LOGICAL_NAME).version(1)


SCHEMA = builder().build()


def from_logical(schema: Schema, value: datetime) -> int:
    """The encoded value: days since the epoch."""
    _check(schema)
    millis = (value - _EPOCH) // timedelta(milliseconds=1)
    if millis % MILLIS_PER_DAY != 0:
        raise DataException("Kafka Connect Date type should not have any time fields set to non-zero values.")
    return millis // MILLIS_PER_DAY


def to_logical(schema: Schema, value: int) -> datetime:
    """The logical value of ``value`` days since the epoch: that day's midnight, UTC."""
    _check(schema)
    return _EPOCH + timedelta(days=value)


def _check(schema: Schema) -> None:
    if schema.name is None or schema.name != LOGICAL_NAME:
        raise DataException("Requested conversion of Date object but the schema does not match.")
