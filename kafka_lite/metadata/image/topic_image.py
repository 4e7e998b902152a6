"""One topic at one offset of the metadata log: its name, its id, and each partition's state.

Mirrors: org.apache.kafka.image.TopicImage
         (metadata/src/main/java/org/apache/kafka/image/TopicImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

``write`` emits what created the topic: its ``TopicRecord``, then one ``PartitionRecord`` per
partition holding that partition's whole present state, so a reader of a snapshot never needs the
``PartitionChangeRecord``s that led to it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.records import TopicRecord
from kafka_lite.metadata.partition_registration import PartitionRegistration


@dataclass(frozen=True)
class TopicImage:
    name: str
    id: uuid.UUID
    partitions: Mapping[int, PartitionRegistration] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", MappingProxyType(dict(self.partitions)))

    def write(self, out: list[ApiMessageAndVersion]) -> None:
        record = TopicRecord(name=self.name, topic_id=self.id)
        out.append(ApiMessageAndVersion(record, TopicRecord.highest_supported_version()))
        for partition_id, partition in self.partitions.items():
            out.append(partition.to_record(self.id, partition_id))

    def __repr__(self) -> str:
        return f"TopicImage(name={self.name!r}, id={self.id}, partitions={dict(self.partitions)})"
