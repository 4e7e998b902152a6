"""Every resource's dynamic configs at one offset of the metadata log.

Mirrors: org.apache.kafka.image.ConfigurationsImage
         (metadata/src/main/java/org/apache/kafka/image/ConfigurationsImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Chapter 7's ``/config/topics/<name>`` and ``/config/brokers/<id>`` znodes, as a map from
``ConfigResource`` to that resource's configs. A resource with no configs left is not kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.config_resource import ConfigResource
from kafka_lite.metadata.image.configuration_image import ConfigurationImage


@dataclass(frozen=True)
class ConfigurationsImage:
    EMPTY: ClassVar[ConfigurationsImage]

    resource_data: Mapping[ConfigResource, ConfigurationImage] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resource_data", MappingProxyType(dict(self.resource_data)))

    def is_empty(self) -> bool:
        return not self.resource_data

    def config_properties(self, resource: ConfigResource) -> dict[str, str]:
        """The configs of ``resource`` (a copy; empty if it has none)."""
        image = self.resource_data.get(resource)
        return {} if image is None else image.to_properties()

    def write(self, out: list[ApiMessageAndVersion]) -> None:
        for resource, image in self.resource_data.items():
            image.write(resource, out)

    def __repr__(self) -> str:
        return f"ConfigurationsImage({dict(self.resource_data)})"


ConfigurationsImage.EMPTY = ConfigurationsImage()
