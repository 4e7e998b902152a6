"""Single message transformations (KIP-66): the ``Transformation`` interface and the ones Kafka ships.

Mirrors: org.apache.kafka.connect.transforms (connect/api's Transformation and connect/transforms/,
         Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2)
Differs: a transformation with a ``$Key`` and a ``$Value`` variant is three Python classes,
         ``InsertField`` (abstract), ``InsertFieldKey`` and ``InsertFieldValue``.

A connector's config names a transformation by its Kafka class name
(``transforms.addTopic.type=org.apache.kafka.connect.transforms.InsertField$Value``);
``KAFKA_CLASS_NAMES`` maps each name to our class. kafka_lite loads no code by name, so the
classes a config can name are these.
"""

from __future__ import annotations

from kafka_lite.connect.transforms.hoist_field import HoistFieldKey, HoistFieldValue
from kafka_lite.connect.transforms.insert_field import InsertFieldKey, InsertFieldValue
from kafka_lite.connect.transforms.transformation import Transformation

_PACKAGE = "org.apache.kafka.connect.transforms."

KAFKA_CLASS_NAMES: dict[str, type[Transformation]] = {
    _PACKAGE + "HoistField$Key": HoistFieldKey,
    _PACKAGE + "HoistField$Value": HoistFieldValue,
    _PACKAGE + "InsertField$Key": InsertFieldKey,
    _PACKAGE + "InsertField$Value": InsertFieldValue,
}

__all__ = [
    "KAFKA_CLASS_NAMES",
    "HoistFieldKey",
    "HoistFieldValue",
    "InsertFieldKey",
    "InsertFieldValue",
    "Transformation",
]
