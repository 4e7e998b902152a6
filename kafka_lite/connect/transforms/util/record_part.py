"""Which half of a record a transformation works on: the key (``$Key``) or the value (``$Value``).

No Kafka twin: each of Kafka 0.11.0's transformations that comes in two variants
         (``InsertField$Key`` and ``InsertField$Value``, ``Cast$Key`` and ``Cast$Value``, ...)
         writes the same three methods again in its nested ``Key`` and ``Value`` classes; here
         they are written once, as the mixins ``KeyPart`` and ``ValuePart`` that every ``...Key``
         and ``...Value`` class inherits.
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2, KIP-66)

The abstract transformation (``InsertField``) says what to do with "the data" and never names the
key or the value; it reads the data through ``operating_schema`` and ``operating_value`` and puts
the result back with ``new_record``. ``InsertFieldValue(ValuePart[R], InsertField[R])`` then
supplies those three for the value. The mixin comes first among the bases so that its methods are
the ones found, in place of ``RecordPart``'s abstract ones.

``new_record`` leaves the other half, the topic, the partition and the timestamp as they are, and
goes through the record's own ``new_record`` so that a source record keeps its source partition
and offset and a sink record its Kafka offset: a transformation never changes what the worker
commits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic

from kafka_lite.connect.data.schema import Schema
from kafka_lite.connect.transforms.transformation import R


class RecordPart(ABC, Generic[R]):
    """The three methods through which a transformation reads and replaces one half of a record."""

    @abstractmethod
    def operating_schema(self, record: R) -> Schema | None:
        """The schema of the half worked on; ``None`` when the record is schemaless."""

    @abstractmethod
    def operating_value(self, record: R) -> Any:
        """The data of the half worked on."""

    @abstractmethod
    def new_record(self, record: R, updated_schema: Schema | None, updated_value: Any) -> R:
        """``record`` with the half worked on replaced by ``updated_schema`` and ``updated_value``."""


class KeyPart(RecordPart[R]):
    """Kafka's nested ``$Key`` classes: the transformation works on the record's key."""

    def operating_schema(self, record: R) -> Schema | None:
        return record.key_schema

    def operating_value(self, record: R) -> Any:
        return record.key

    def new_record(self, record: R, updated_schema: Schema | None, updated_value: Any) -> R:
        return record.new_record(record.topic, record.kafka_partition, updated_schema, updated_value,
                                 record.value_schema, record.value, record.timestamp)  # fmt: skip


class ValuePart(RecordPart[R]):
    """Kafka's nested ``$Value`` classes: the transformation works on the record's value."""

    def operating_schema(self, record: R) -> Schema | None:
        return record.value_schema

    def operating_value(self, record: R) -> Any:
        return record.value

    def new_record(self, record: R, updated_schema: Schema | None, updated_value: Any) -> R:
        return record.new_record(record.topic, record.kafka_partition, record.key_schema, record.key,
                                 updated_schema, updated_value, record.timestamp)  # fmt: skip
