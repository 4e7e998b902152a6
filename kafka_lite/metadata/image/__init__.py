"""The metadata image: the cluster's state at one offset of the metadata log, and the delta that
takes it to the next.

Mirrors: org.apache.kafka.image (metadata/src/main/java/org/apache/kafka/image/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

from kafka_lite.metadata.image.cluster_delta import ClusterDelta
from kafka_lite.metadata.image.cluster_image import ClusterImage
from kafka_lite.metadata.image.configuration_delta import ConfigurationDelta
from kafka_lite.metadata.image.configuration_image import ConfigurationImage
from kafka_lite.metadata.image.configurations_delta import ConfigurationsDelta
from kafka_lite.metadata.image.configurations_image import ConfigurationsImage
from kafka_lite.metadata.image.features_delta import FeaturesDelta
from kafka_lite.metadata.image.features_image import FeaturesImage
from kafka_lite.metadata.image.local_replica_changes import LocalReplicaChanges, PartitionInfo
from kafka_lite.metadata.image.metadata_delta import MetadataDelta
from kafka_lite.metadata.image.metadata_image import MetadataImage
from kafka_lite.metadata.image.producer_ids_delta import ProducerIdsDelta
from kafka_lite.metadata.image.producer_ids_image import ProducerIdsImage
from kafka_lite.metadata.image.topic_delta import TopicDelta
from kafka_lite.metadata.image.topic_image import TopicImage
from kafka_lite.metadata.image.topics_delta import TopicsDelta
from kafka_lite.metadata.image.topics_image import TopicsImage

__all__ = [
    "ClusterDelta",
    "ClusterImage",
    "ConfigurationDelta",
    "ConfigurationImage",
    "ConfigurationsDelta",
    "ConfigurationsImage",
    "FeaturesDelta",
    "FeaturesImage",
    "LocalReplicaChanges",
    "MetadataDelta",
    "MetadataImage",
    "PartitionInfo",
    "ProducerIdsDelta",
    "ProducerIdsImage",
    "TopicDelta",
    "TopicImage",
    "TopicsDelta",
    "TopicsImage",
]
