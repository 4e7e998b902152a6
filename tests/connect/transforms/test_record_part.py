"""KeyPart and ValuePart: every ``$Key`` class works on the key and every ``$Value`` class on the value,
and the record it builds keeps all the rest (the other half, topic, partition, timestamp, and what
only a source or sink record carries)."""

from __future__ import annotations

import pytest

from kafka_lite.connect.data.schema import INT32_SCHEMA, STRING_SCHEMA
from kafka_lite.connect.sink.sink_record import SinkRecord
from kafka_lite.connect.source.source_record import SourceRecord
from kafka_lite.connect.transforms import KAFKA_CLASS_NAMES
from kafka_lite.connect.transforms.util.record_part import KeyPart, ValuePart

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("kafka_name", sorted(n for n in KAFKA_CLASS_NAMES if "$" in n))
def test_each_variant_inherits_the_part_its_name_says(kafka_name: str) -> None:
    cls = KAFKA_CLASS_NAMES[kafka_name]
    expected, other = (KeyPart, ValuePart) if kafka_name.endswith("$Key") else (ValuePart, KeyPart)

    assert issubclass(cls, expected) and not issubclass(cls, other)
    # The mixin's methods are the ones found, ahead of the transformation's abstract declarations.
    assert cls.operating_schema is expected.operating_schema
    assert cls.new_record is expected.new_record


def source_record() -> SourceRecord:
    return SourceRecord({"file": "a.txt"}, {"position": 7}, "lines", 2, INT32_SCHEMA, 42, STRING_SCHEMA,
                        "hello", 1_500_000_000_000)  # fmt: skip


def test_the_key_part_replaces_the_key_only() -> None:
    record = source_record()

    updated = KeyPart().new_record(record, STRING_SCHEMA, "42")

    assert (KeyPart().operating_schema(record), KeyPart().operating_value(record)) == (INT32_SCHEMA, 42)
    assert updated == SourceRecord({"file": "a.txt"}, {"position": 7}, "lines", 2, STRING_SCHEMA, "42",
                                   STRING_SCHEMA, "hello", 1_500_000_000_000)  # fmt: skip


def test_the_value_part_replaces_the_value_only() -> None:
    record = SinkRecord("lines", 2, INT32_SCHEMA, 42, STRING_SCHEMA, "hello", 99, 1_500_000_000_000)

    updated = ValuePart().new_record(record, None, {"line": "hello"})

    assert (ValuePart().operating_schema(record), ValuePart().operating_value(record)) == (
        STRING_SCHEMA,
        "hello",
    )
    assert type(updated) is SinkRecord and updated.kafka_offset == 99
    assert (updated.key_schema, updated.key, updated.value_schema, updated.value) == (
        INT32_SCHEMA, 42, None, {"line": "hello"})  # fmt: skip
    assert (updated.topic, updated.kafka_partition, updated.timestamp) == ("lines", 2, 1_500_000_000_000)
