"""The dynamic configs of one resource (a topic or a broker) at one offset of the metadata log.

Mirrors: org.apache.kafka.image.ConfigurationImage
         (metadata/src/main/java/org/apache/kafka/image/ConfigurationImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.records import ConfigRecord
from kafka_lite.metadata.config_resource import ConfigResource


@dataclass(frozen=True)
class ConfigurationImage:
    EMPTY: ClassVar[ConfigurationImage]

    data: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", MappingProxyType(dict(self.data)))

    def is_empty(self) -> bool:
        return not self.data

    def to_properties(self) -> dict[str, str]:
        """A copy of the configs, as Kafka's ``toProperties`` (a Properties object)."""
        return dict(self.data)

    def write(self, resource: ConfigResource, out: list[ApiMessageAndVersion]) -> None:
        for name, value in self.data.items():
            record = ConfigRecord(
                resource_type=int(resource.type), resource_name=resource.name, name=name, value=value
            )
            out.append(ApiMessageAndVersion(record, ConfigRecord.highest_supported_version()))

    def __repr__(self) -> str:
        return f"ConfigurationImage({dict(self.data)})"


ConfigurationImage.EMPTY = ConfigurationImage()
