"""KAFKA_CLASS_NAMES names every transformation Kafka 0.11.0 ships, each a concrete Transformation whose
config() is the ConfigDef its configure() parses."""

from __future__ import annotations

import inspect

import pytest

from kafka_lite.common.config import ConfigDef
from kafka_lite.connect.transforms import KAFKA_CLASS_NAMES
from kafka_lite.connect.transforms.transformation import Transformation

pytestmark = pytest.mark.unit

# connect/transforms/src/main/java/org/apache/kafka/connect/transforms/ at 0.11.0.0: the ones with a
# key and a value variant, and the ones that work on the whole record.
KEY_AND_VALUE = ["Cast", "ExtractField", "Flatten", "HoistField", "InsertField", "MaskField", "ReplaceField",
                 "SetSchemaMetadata", "TimestampConverter"]  # fmt: skip
WHOLE_RECORD = ["RegexRouter", "TimestampRouter", "ValueToKey"]


def test_every_kafka_transformation_is_named() -> None:
    expected = {
        f"org.apache.kafka.connect.transforms.{n}${v}" for n in KEY_AND_VALUE for v in ("Key", "Value")
    }
    expected |= {f"org.apache.kafka.connect.transforms.{n}" for n in WHOLE_RECORD}

    assert set(KAFKA_CLASS_NAMES) == expected


@pytest.mark.parametrize("kafka_name", sorted(KAFKA_CLASS_NAMES))
def test_each_is_a_concrete_transformation_of_its_name(kafka_name: str) -> None:
    cls = KAFKA_CLASS_NAMES[kafka_name]

    assert issubclass(cls, Transformation) and not inspect.isabstract(cls)
    assert cls.__name__ == kafka_name.rsplit(".", 1)[1].replace("$", "")
    assert isinstance(cls().config(), ConfigDef)
