"""What a placement is asked for: partitions ``start_partition`` onward, ``num_partitions`` of
them, ``num_replicas`` replicas each.

Mirrors: org.apache.kafka.metadata.placement.PlacementSpec
         (metadata/src/main/java/org/apache/kafka/metadata/placement/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlacementSpec:
    start_partition: int
    num_partitions: int
    num_replicas: int
