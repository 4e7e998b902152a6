"""What a metadata delta means for one broker's own replicas: the partitions to delete, to lead
and to follow.

Mirrors: org.apache.kafka.image.LocalReplicaChanges
         (metadata/src/main/java/org/apache/kafka/image/LocalReplicaChanges.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A KRaft broker gets no LeaderAndIsr or StopReplica requests (chapter 7); it reads the same facts from
the metadata log. After each delta, ``TopicsDelta.local_changes(broker_id)`` sorts the partitions
that changed into these three sets, and the broker's ReplicaManager makes the leaders leaders and
the followers followers as a LeaderAndIsr request would have.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.partition_registration import PartitionRegistration


@dataclass(frozen=True)
class PartitionInfo:
    topic_id: uuid.UUID
    partition: PartitionRegistration


@dataclass(frozen=True)
class LocalReplicaChanges:
    deletes: set[TopicPartition] = field(default_factory=set)
    leaders: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    followers: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
