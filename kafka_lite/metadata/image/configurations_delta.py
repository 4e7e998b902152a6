"""The configs a run of records sets and deletes on top of a ConfigurationsImage.

Mirrors: org.apache.kafka.image.ConfigurationsDelta
         (metadata/src/main/java/org/apache/kafka/image/ConfigurationsDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Besides ``ConfigRecord``s, a ``RemoveTopicRecord`` reaches here: a deleted topic's configs go with
it, named by the topic name that ``TopicsDelta`` returns (configs are kept by name, not id).
"""

from __future__ import annotations

from kafka_lite.common.metadata.records import ConfigRecord
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.metadata.image.configuration_delta import ConfigurationDelta
from kafka_lite.metadata.image.configuration_image import ConfigurationImage
from kafka_lite.metadata.image.configurations_image import ConfigurationsImage


class ConfigurationsDelta:
    def __init__(self, image: ConfigurationsImage) -> None:
        self.image = image
        self.changes: dict[ConfigResource, ConfigurationDelta] = {}

    def finish_snapshot(self) -> None:
        for resource in self.image.resource_data:
            self._delta_for(resource).finish_snapshot()

    def replay(self, record: ConfigRecord) -> None:
        resource = ConfigResource(ConfigResourceType(record.resource_type), record.resource_name)
        self._delta_for(resource).replay(record)

    def replay_remove_topic(self, topic_name: str) -> None:
        """Kafka's ``replay(RemoveTopicRecord, topicName)``: drop every config of the topic."""
        self._delta_for(ConfigResource(ConfigResourceType.TOPIC, topic_name)).delete_all()

    def _delta_for(self, resource: ConfigResource) -> ConfigurationDelta:
        delta = self.changes.get(resource)
        if delta is None:
            image = self.image.resource_data.get(resource, ConfigurationImage.EMPTY)
            delta = self.changes[resource] = ConfigurationDelta(image)
        return delta

    def apply(self) -> ConfigurationsImage:
        data = dict(self.image.resource_data)
        for resource, delta in self.changes.items():
            image = delta.apply()
            if image.is_empty():
                data.pop(resource, None)
            else:
                data[resource] = image
        return ConfigurationsImage(data)

    def __repr__(self) -> str:
        return f"ConfigurationsDelta(changes={self.changes})"
