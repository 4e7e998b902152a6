"""An offset in the replicated log, with what the log may add to find it again without a lookup.

Mirrors: org.apache.kafka.raft.LogOffsetMetadata and OffsetMetadata
         (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

The leader keeps one of these per voter (how far each has fetched) and one for the high watermark.
``metadata`` is the log's own business (kafka_lite's ``Log`` can put the segment's base offset and
the byte position there, as Kafka's ``LogOffsetMetadata`` in ``core`` does); the Raft layer compares
only ``offset``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LogOffsetMetadata:
    offset: int
    metadata: Any = None  # Kafka's Optional<OffsetMetadata>: None when the log gave none
