"""What ``offsets_for_times`` finds for a partition: an offset and its record's timestamp.

Mirrors: org.apache.kafka.clients.consumer.OffsetAndTimestamp
         (clients/src/main/java/org/apache/kafka/clients/consumer/OffsetAndTimestamp.java, Kafka 0.10.1)
Book:    chapter 4, 4.1.2 (ListOffsets: the offsets of a partition by time)

The offset is the earliest one whose record's timestamp is at least the timestamp searched for;
the broker answers it from the partition's time index (chapter 3).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OffsetAndTimestamp:
    """The earliest offset whose timestamp is at least the one searched for, and that timestamp."""

    offset: int
    timestamp: int
