"""The finalized feature levels at one offset of the metadata log, metadata.version apart.

Mirrors: org.apache.kafka.image.FeaturesImage
         (metadata/src/main/java/org/apache/kafka/image/FeaturesImage.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: equality compares metadata.version too (Kafka's compares the finalized levels only, so two
         images that a snapshot round trip tells apart would compare equal).

metadata.version (KIP-778) says how every later record is to be read, so it is kept apart from the
other features and written first: a snapshot opens with it. An image of a log older than 3.3-IV0
(the first level whose ``FeatureLevelRecord`` may appear in the log) writes no record for it, as
Kafka's does; such a log's level comes from the configuration, not from the log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.records import FeatureLevelRecord
from kafka_lite.metadata.metadata_version import (
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_BOOTSTRAP_VERSION,
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
)


@dataclass(frozen=True)
class FeaturesImage:
    EMPTY: ClassVar[FeaturesImage]

    finalized_versions: Mapping[str, int] = field(default_factory=dict)
    metadata_version: MetadataVersion = MINIMUM_KRAFT_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "finalized_versions", MappingProxyType(dict(self.finalized_versions)))

    def is_empty(self) -> bool:
        return not self.finalized_versions

    def write(self, out: list[ApiMessageAndVersion]) -> None:
        if not self.metadata_version.is_less_than(MINIMUM_BOOTSTRAP_VERSION):
            record = FeatureLevelRecord(
                name=METADATA_VERSION_FEATURE_NAME, feature_level=self.metadata_version.feature_level
            )
            out.append(ApiMessageAndVersion(record, FeatureLevelRecord.lowest_supported_version()))
        for name, level in self.finalized_versions.items():
            if name == METADATA_VERSION_FEATURE_NAME:
                continue
            record = FeatureLevelRecord(name=name, feature_level=level)
            out.append(ApiMessageAndVersion(record, FeatureLevelRecord.highest_supported_version()))

    def __repr__(self) -> str:
        return f"FeaturesImage(finalized_versions={dict(self.finalized_versions)}, metadata_version={self.metadata_version})"


FeaturesImage.EMPTY = FeaturesImage()
