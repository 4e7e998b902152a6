"""An integer with a history, for counters such as the number of fenced brokers or offline
partitions.

Mirrors: org.apache.kafka.timeline.TimelineInteger
         (metadata/src/main/java/org/apache/kafka/timeline/TimelineInteger.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a ``TimelineObject`` starting at 0, with ``increment``/``decrement``; Kafka writes it out
         again with a primitive ``int`` container to avoid boxing, which Python has no use for.
"""

from __future__ import annotations

from kafka_lite.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_lite.metadata.timeline.timeline_object import TimelineObject

INIT = 0


class TimelineInteger(TimelineObject[int]):
    def __init__(self, snapshot_registry: SnapshotRegistry) -> None:
        super().__init__(snapshot_registry, INIT)

    def increment(self) -> None:
        self.set(self.get() + 1)

    def decrement(self) -> None:
        self.set(self.get() - 1)
