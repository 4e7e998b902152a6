"""A range of feature levels a broker supports, both ends included.

Mirrors: org.apache.kafka.metadata.VersionRange
         (metadata/src/main/java/org/apache/kafka/metadata/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

_SHORT_MAX = 2**15 - 1


@dataclass(frozen=True)
class VersionRange:
    min: int
    max: int

    ALL: ClassVar[VersionRange]

    @staticmethod
    def of(min: int, max: int) -> VersionRange:
        return VersionRange(min, max)

    def contains(self, version: int) -> bool:
        return self.min <= version <= self.max

    def intersects(self, other: VersionRange) -> bool:
        return other.min <= self.max and other.max >= self.min

    def __str__(self) -> str:
        if self.min == self.max:
            return str(self.min)
        if self.max == _SHORT_MAX:
            return f"{self.min}+"
        return f"{self.min}-{self.max}"


VersionRange.ALL = VersionRange(0, _SHORT_MAX)
