"""Timeline data structures: collections that remember their state at each snapshot epoch, so the
active controller can apply records before they commit and revert them if they never do.

Mirrors: org.apache.kafka.timeline (metadata/src/main/java/org/apache/kafka/timeline/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

from kafka_lite.metadata.timeline.snapshot import Snapshot
from kafka_lite.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_lite.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_lite.metadata.timeline.timeline_hash_set import TimelineHashSet
from kafka_lite.metadata.timeline.timeline_integer import TimelineInteger
from kafka_lite.metadata.timeline.timeline_long import TimelineLong
from kafka_lite.metadata.timeline.timeline_object import TimelineObject

__all__ = [
    "LATEST_EPOCH",
    "Snapshot",
    "SnapshotRegistry",
    "TimelineHashMap",
    "TimelineHashSet",
    "TimelineInteger",
    "TimelineLong",
    "TimelineObject",
]
