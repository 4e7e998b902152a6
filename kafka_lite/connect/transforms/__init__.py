"""Single message transformations (KIP-66): the ``Transformation`` interface and the ones Kafka ships.

Mirrors: org.apache.kafka.connect.transforms (connect/api's Transformation and connect/transforms/,
         Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2)
Differs: a transformation with a ``$Key`` and a ``$Value`` variant is three Python classes,
         ``InsertField`` (abstract), ``InsertFieldKey`` and ``InsertFieldValue``; the last two
         take what Kafka's nested classes repeat from the mixins ``KeyPart`` and ``ValuePart``.

A connector's config names a transformation by its Kafka class name
(``transforms.addTopic.type=org.apache.kafka.connect.transforms.InsertField$Value``);
``KAFKA_CLASS_NAMES`` maps each name to kafka_lite's class. kafka_lite loads no code by name, so the
classes a config can name are these.
"""

from __future__ import annotations

from kafka_lite.connect.transforms.cast import CastKey, CastValue
from kafka_lite.connect.transforms.extract_field import ExtractFieldKey, ExtractFieldValue
from kafka_lite.connect.transforms.flatten import FlattenKey, FlattenValue
from kafka_lite.connect.transforms.hoist_field import HoistFieldKey, HoistFieldValue
from kafka_lite.connect.transforms.insert_field import InsertFieldKey, InsertFieldValue
from kafka_lite.connect.transforms.mask_field import MaskFieldKey, MaskFieldValue
from kafka_lite.connect.transforms.regex_router import RegexRouter
from kafka_lite.connect.transforms.replace_field import ReplaceFieldKey, ReplaceFieldValue
from kafka_lite.connect.transforms.set_schema_metadata import SetSchemaMetadataKey, SetSchemaMetadataValue
from kafka_lite.connect.transforms.timestamp_converter import TimestampConverterKey, TimestampConverterValue
from kafka_lite.connect.transforms.timestamp_router import TimestampRouter
from kafka_lite.connect.transforms.transformation import Transformation
from kafka_lite.connect.transforms.value_to_key import ValueToKey

_PACKAGE = "org.apache.kafka.connect.transforms."

KAFKA_CLASS_NAMES: dict[str, type[Transformation]] = {
    _PACKAGE + "Cast$Key": CastKey,
    _PACKAGE + "Cast$Value": CastValue,
    _PACKAGE + "ExtractField$Key": ExtractFieldKey,
    _PACKAGE + "ExtractField$Value": ExtractFieldValue,
    _PACKAGE + "Flatten$Key": FlattenKey,
    _PACKAGE + "Flatten$Value": FlattenValue,
    _PACKAGE + "HoistField$Key": HoistFieldKey,
    _PACKAGE + "HoistField$Value": HoistFieldValue,
    _PACKAGE + "InsertField$Key": InsertFieldKey,
    _PACKAGE + "InsertField$Value": InsertFieldValue,
    _PACKAGE + "MaskField$Key": MaskFieldKey,
    _PACKAGE + "MaskField$Value": MaskFieldValue,
    _PACKAGE + "RegexRouter": RegexRouter,
    _PACKAGE + "ReplaceField$Key": ReplaceFieldKey,
    _PACKAGE + "ReplaceField$Value": ReplaceFieldValue,
    _PACKAGE + "SetSchemaMetadata$Key": SetSchemaMetadataKey,
    _PACKAGE + "SetSchemaMetadata$Value": SetSchemaMetadataValue,
    _PACKAGE + "TimestampConverter$Key": TimestampConverterKey,
    _PACKAGE + "TimestampConverter$Value": TimestampConverterValue,
    _PACKAGE + "TimestampRouter": TimestampRouter,
    _PACKAGE + "ValueToKey": ValueToKey,
}

__all__ = [
    "KAFKA_CLASS_NAMES",
    "CastKey",
    "CastValue",
    "ExtractFieldKey",
    "ExtractFieldValue",
    "FlattenKey",
    "FlattenValue",
    "HoistFieldKey",
    "HoistFieldValue",
    "InsertFieldKey",
    "InsertFieldValue",
    "MaskFieldKey",
    "MaskFieldValue",
    "RegexRouter",
    "ReplaceFieldKey",
    "ReplaceFieldValue",
    "SetSchemaMetadataKey",
    "SetSchemaMetadataValue",
    "TimestampConverterKey",
    "TimestampConverterValue",
    "TimestampRouter",
    "Transformation",
    "ValueToKey",
]
