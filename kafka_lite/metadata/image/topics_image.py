"""Every topic at one offset of the metadata log, by id and by name.

Mirrors: org.apache.kafka.image.TopicsImage
         (metadata/src/main/java/org/apache/kafka/image/TopicsImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Records name a topic by its id (KIP-516), so that a topic deleted and created again under the same
name is a different topic; clients still ask by name. The image keeps both maps, of the same
``TopicImage`` objects.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.image.topic_image import TopicImage
from kafka_lite.metadata.partition_registration import PartitionRegistration


@dataclass(frozen=True)
class TopicsImage:
    EMPTY: ClassVar[TopicsImage]

    topics_by_id: Mapping[uuid.UUID, TopicImage] = field(default_factory=dict)
    topics_by_name: Mapping[str, TopicImage] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "topics_by_id", MappingProxyType(dict(self.topics_by_id)))
        object.__setattr__(self, "topics_by_name", MappingProxyType(dict(self.topics_by_name)))

    @staticmethod
    def of(topics: list[TopicImage]) -> TopicsImage:
        """An image of ``topics``, both maps built from the one list."""
        return TopicsImage({t.id: t for t in topics}, {t.name: t for t in topics})

    def is_empty(self) -> bool:
        return not self.topics_by_id

    def get_partition(self, topic_id: uuid.UUID, partition_id: int) -> PartitionRegistration | None:
        topic = self.topics_by_id.get(topic_id)
        return None if topic is None else topic.partitions.get(partition_id)

    def get_topic(self, id_or_name: uuid.UUID | str) -> TopicImage | None:
        """The topic with this id (a UUID) or this name (a str), as Kafka's two ``getTopic``s."""
        if isinstance(id_or_name, str):
            return self.topics_by_name.get(id_or_name)
        return self.topics_by_id.get(id_or_name)

    def write(self, out: list[ApiMessageAndVersion]) -> None:
        for topic in self.topics_by_id.values():
            topic.write(out)

    def __repr__(self) -> str:
        return f"TopicsImage(topics={list(self.topics_by_id.values())})"


TopicsImage.EMPTY = TopicsImage()
