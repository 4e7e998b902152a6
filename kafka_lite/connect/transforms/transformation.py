"""A single message transformation: one record in, one record (or none) out.

Mirrors: org.apache.kafka.connect.transforms.Transformation
         (connect/api/src/main/java/org/apache/kafka/connect/transforms/Transformation.java,
         Kafka 0.11.0; KIP-66 added transformations in 0.10.2)
Book:    chapter 8, 8.3 (beyond the book: 0.10.1 has no transformations)
Differs: none.

A connector's config names a chain of them (``transforms=a,b`` with ``transforms.a.type=...``). The
worker applies the chain to each record: a source task's records before the converters turn them
into bytes, a sink task's after the converters turn the bytes back into Connect data. A
transformation returns a new record made with ``record.new_record(...)`` (or the record itself),
or ``None`` to drop it. One instance serves one task, on the task's thread.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

from kafka_lite.common.config import ConfigDef
from kafka_lite.connect.connector.connect_record import ConnectRecord

R = TypeVar("R", bound=ConnectRecord)


class Transformation(ABC, Generic[R]):
    @abstractmethod
    def configure(self, configs: dict[str, Any]) -> None:
        """The transformation's own settings: ``transforms.<alias>.*`` with the prefix taken off."""

    @abstractmethod
    def apply(self, record: R) -> R | None:
        """The record transformed (a new one, or ``record`` itself), or ``None`` to drop it."""

    @abstractmethod
    def config(self) -> ConfigDef:
        """The settings ``configure`` accepts, for the worker's config validation."""

    def close(self) -> None:
        """The instance will not be used again."""
