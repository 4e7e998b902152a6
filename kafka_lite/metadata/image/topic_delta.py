"""The partitions a run of records creates or changes in one topic.

Mirrors: org.apache.kafka.image.TopicDelta
         (metadata/src/main/java/org/apache/kafka/image/TopicDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A ``PartitionRecord`` sets a partition's whole state; a ``PartitionChangeRecord`` is merged into the
state so far (this delta's, or else the image's), which bumps the partition epoch.
"""

from __future__ import annotations

import uuid

from kafka_lite.common.metadata.records import PartitionChangeRecord, PartitionRecord
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.image.local_replica_changes import LocalReplicaChanges, PartitionInfo
from kafka_lite.metadata.image.topic_image import TopicImage
from kafka_lite.metadata.partition_registration import PartitionRegistration


class TopicDelta:
    def __init__(self, image: TopicImage) -> None:
        self.image = image
        self.partition_changes: dict[int, PartitionRegistration] = {}

    def name(self) -> str:
        return self.image.name

    def id(self) -> uuid.UUID:
        return self.image.id

    def replay(self, record: PartitionRecord | PartitionChangeRecord) -> None:
        if isinstance(record, PartitionRecord):
            self.partition_changes[record.partition_id] = PartitionRegistration.from_record(record)
            return
        partition = self.partition_changes.get(record.partition_id)
        if partition is None:
            partition = self.image.partitions.get(record.partition_id)
            if partition is None:
                raise RuntimeError(f"Unable to find partition {record.topic_id}:{record.partition_id}")
        self.partition_changes[record.partition_id] = partition.merge(record)

    def apply(self) -> TopicImage:
        partitions = dict(self.image.partitions)
        partitions.update(self.partition_changes)
        return TopicImage(self.image.name, self.image.id, partitions)

    # --8<-- [start:local_changes]
    def local_changes(self, broker_id: int) -> LocalReplicaChanges:
        """This topic's changed partitions as ``broker_id`` sees them. A partition it no longer
        replicates (and did) is to delete; one it leads or follows is listed only if the
        partition is new or its partition epoch moved, since an unchanged partition needs nothing
        from the broker."""
        changes = LocalReplicaChanges()
        for partition_id, partition in self.partition_changes.items():
            previous = self.image.partitions.get(partition_id)
            tp = TopicPartition(self.name(), partition_id)
            if broker_id not in partition.replicas:
                if previous is not None and broker_id in previous.replicas:
                    changes.deletes.add(tp)
            elif previous is None or previous.partition_epoch != partition.partition_epoch:
                where = changes.leaders if partition.leader == broker_id else changes.followers
                where[tp] = PartitionInfo(self.id(), partition)
        return changes

    # --8<-- [end:local_changes]

    def __repr__(self) -> str:
        return f"TopicDelta(partition_changes={self.partition_changes})"
