"""The topics a run of records creates, changes and removes on top of a TopicsImage.

Mirrors: org.apache.kafka.image.TopicsDelta
         (metadata/src/main/java/org/apache/kafka/image/TopicsDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A ``TopicRecord`` starts a new ``TopicDelta`` from an empty topic; partition records go to the
topic's delta, made from the image's topic the first time it changes. A ``RemoveTopicRecord``
drops the topic's delta and, if the image had the topic, marks its id deleted; it returns the
topic's name, because the topic's configs (kept by name) go with it.
"""

from __future__ import annotations

import uuid

from kafka_lite.common.metadata.records import (
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.image.local_replica_changes import LocalReplicaChanges
from kafka_lite.metadata.image.topic_delta import TopicDelta
from kafka_lite.metadata.image.topic_image import TopicImage
from kafka_lite.metadata.image.topics_image import TopicsImage


class TopicsDelta:
    def __init__(self, image: TopicsImage) -> None:
        self.image = image
        self.changed_topics: dict[uuid.UUID, TopicDelta] = {}
        self.deleted_topic_ids: set[uuid.UUID] = set()

    def replay(
        self, record: TopicRecord | PartitionRecord | PartitionChangeRecord | RemoveTopicRecord
    ) -> str | None:
        if isinstance(record, TopicRecord):
            self.changed_topics[record.topic_id] = TopicDelta(TopicImage(record.name, record.topic_id))
        elif isinstance(record, PartitionRecord | PartitionChangeRecord):
            self._get_or_create_topic_delta(record.topic_id).replay(record)
        elif isinstance(record, RemoveTopicRecord):
            return self._replay_remove_topic(record)
        else:
            raise TypeError(f"TopicsDelta cannot replay {type(record).__name__}")
        return None

    def _get_or_create_topic_delta(self, topic_id: uuid.UUID) -> TopicDelta:
        delta = self.changed_topics.get(topic_id)
        if delta is None:
            topic = self.image.get_topic(topic_id)
            if topic is None:
                raise RuntimeError(f"Unable to find topic with id {topic_id}")
            delta = self.changed_topics[topic_id] = TopicDelta(topic)
        return delta

    def _replay_remove_topic(self, record: RemoveTopicRecord) -> str:
        delta = self.changed_topics.pop(record.topic_id, None)
        if delta is not None:
            if record.topic_id in self.image.topics_by_id:
                self.deleted_topic_ids.add(record.topic_id)
            return delta.name()
        topic = self.image.get_topic(record.topic_id)
        if topic is None:
            raise RuntimeError(f"Unable to delete topic with id {record.topic_id}: no such topic found.")
        self.deleted_topic_ids.add(record.topic_id)
        return topic.name

    def finish_snapshot(self) -> None:
        for topic_id in self.image.topics_by_id:
            if topic_id not in self.changed_topics:
                self.deleted_topic_ids.add(topic_id)

    def changed_topic(self, topic_id: uuid.UUID) -> TopicDelta | None:
        return self.changed_topics.get(topic_id)

    def topic_was_deleted(self, topic_name: str) -> bool:
        topic = self.image.get_topic(topic_name)
        return topic is not None and topic.id in self.deleted_topic_ids

    def apply(self) -> TopicsImage:
        topics = [
            topic
            for topic_id, topic in self.image.topics_by_id.items()
            if topic_id not in self.changed_topics and topic_id not in self.deleted_topic_ids
        ]
        topics.extend(delta.apply() for delta in self.changed_topics.values())
        return TopicsImage.of(topics)

    def local_changes(self, broker_id: int) -> LocalReplicaChanges:
        """The partitions ``broker_id`` must delete, lead and follow after this delta (what
        ReplicaManager.apply_delta reads): every changed topic's, and every partition of a deleted
        topic that the broker held a replica of."""
        changes = LocalReplicaChanges()
        for delta in self.changed_topics.values():
            topic_changes = delta.local_changes(broker_id)
            changes.deletes.update(topic_changes.deletes)
            changes.leaders.update(topic_changes.leaders)
            changes.followers.update(topic_changes.followers)
        for topic_id in self.deleted_topic_ids:
            topic = self.image.get_topic(topic_id)
            for partition_id, partition in topic.partitions.items():
                if broker_id in partition.replicas:
                    changes.deletes.add(TopicPartition(topic.name, partition_id))
        return changes

    def __repr__(self) -> str:
        return (
            f"TopicsDelta(changed_topics={self.changed_topics}, deleted_topic_ids={self.deleted_topic_ids})"
        )
