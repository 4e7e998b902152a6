"""The whole cluster's metadata at one offset of the metadata log: what a KRaft broker serves from,
and what a metadata snapshot holds.

Mirrors: org.apache.kafka.image.MetadataImage
         (metadata/src/main/java/org/apache/kafka/image/MetadataImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no client-quota image (kafka_lite's metadata log has no such records).

An image is immutable: a broker's request threads read one while the metadata thread builds the
next from it with a ``MetadataDelta``, and swap it in with one assignment. The parts a delta does
not touch are the same objects in the new image, so applying a small delta copies little.

``write`` emits the records that rebuild the image from nothing, in an order replay accepts:
features first (metadata.version says how to read the rest), then brokers, topics with their
partitions, configs, producer ids and ACLs. That list is what a metadata snapshot stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.image.acls_image import AclsImage
from kafka_lite.metadata.image.cluster_image import ClusterImage
from kafka_lite.metadata.image.configurations_image import ConfigurationsImage
from kafka_lite.metadata.image.features_image import FeaturesImage
from kafka_lite.metadata.image.producer_ids_image import ProducerIdsImage
from kafka_lite.metadata.image.topics_image import TopicsImage
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch


@dataclass(frozen=True)
class MetadataImage:
    EMPTY: ClassVar[MetadataImage]

    highest_offset_and_epoch: OffsetAndEpoch
    features: FeaturesImage
    cluster: ClusterImage
    topics: TopicsImage
    configs: ConfigurationsImage
    producer_ids: ProducerIdsImage
    acls: AclsImage = AclsImage.EMPTY

    def is_empty(self) -> bool:
        return (
            self.features.is_empty()
            and self.cluster.is_empty()
            and self.topics.is_empty()
            and self.configs.is_empty()
            and self.producer_ids.is_empty()
            and self.acls.is_empty()
        )

    def write(self, out: list[ApiMessageAndVersion]) -> None:
        self.features.write(out)
        self.cluster.write(out, self.features.metadata_version)
        self.topics.write(out)
        self.configs.write(out)
        self.producer_ids.write(out)
        self.acls.write(out)


MetadataImage.EMPTY = MetadataImage(
    OffsetAndEpoch(0, 0),
    FeaturesImage.EMPTY,
    ClusterImage.EMPTY,
    TopicsImage.EMPTY,
    ConfigurationsImage.EMPTY,
    ProducerIdsImage.EMPTY,
    AclsImage.EMPTY,
)
