"""A connector's transformations, applied to each record in the order its config lists them.

Mirrors: org.apache.kafka.connect.runtime.TransformationChain
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/TransformationChain.java,
         Kafka 0.11.0)
Book:    chapter 8, 8.3 (beyond the book: transformations came in Kafka 0.10.2)
Differs: none.

Each task has a chain of its own, built by the worker from the connector's ``transforms`` setting
(``ConnectorConfig.transformations``): a transformation instance is used by one task's thread only,
so it may keep state without locks. A source task applies the chain to each polled record before
the converters; a sink task to each converted record before ``put``. A transformation that returns
``None`` drops the record, and the transformations after it never see it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from kafka_lite.connect.transforms.transformation import R, Transformation


class TransformationChain(Generic[R]):
    def __init__(self, transformations: Sequence[Transformation[R]]) -> None:
        self.transformations = list(transformations)

    # --8<-- [start:apply]
    def apply(self, record: R) -> R | None:
        """The record after every transformation, or ``None`` if one of them dropped it."""
        for transformation in self.transformations:
            record = transformation.apply(record)
            if record is None:
                break
        return record

    # --8<-- [end:apply]

    def close(self) -> None:
        for transformation in self.transformations:
            transformation.close()

    @classmethod
    def no_op(cls) -> TransformationChain[R]:
        """The chain of a connector with no ``transforms``: each record passes unchanged."""
        return cls([])

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.transformations == self.transformations

    __hash__ = None
