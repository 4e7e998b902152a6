"""The feature levels a run of FeatureLevelRecords finalizes on top of a FeaturesImage.

Mirrors: org.apache.kafka.image.FeaturesDelta
         (metadata/src/main/java/org/apache/kafka/image/FeaturesDelta.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A level of 0 removes the feature (it is no longer finalized), kept as a change to None.
"""

from __future__ import annotations

from kafka_lite.common.metadata.records import FeatureLevelRecord
from kafka_lite.metadata.image.features_image import FeaturesImage
from kafka_lite.metadata.metadata_version import METADATA_VERSION_FEATURE_NAME, MetadataVersion


class FeaturesDelta:
    def __init__(self, image: FeaturesImage) -> None:
        self.image = image
        self.changes: dict[str, int | None] = {}  # None: the feature is removed
        self._metadata_version_change: MetadataVersion | None = None

    def metadata_version_change(self) -> MetadataVersion | None:
        return self._metadata_version_change

    def finish_snapshot(self) -> None:
        """A snapshot holds the whole state: a feature of the image it does not name is gone."""
        for name in self.image.finalized_versions:
            self.changes.setdefault(name, None)

    def replay(self, record: FeatureLevelRecord) -> None:
        if record.name == METADATA_VERSION_FEATURE_NAME:
            self._metadata_version_change = MetadataVersion.from_feature_level(record.feature_level)
        else:
            self.changes[record.name] = record.feature_level if record.feature_level != 0 else None

    def apply(self) -> FeaturesImage:
        versions = dict(self.image.finalized_versions)
        for name, level in self.changes.items():
            if level is None:
                versions.pop(name, None)
            else:
                versions[name] = level
        metadata_version = self._metadata_version_change or self.image.metadata_version
        return FeaturesImage(versions, metadata_version)

    def __repr__(self) -> str:
        return (
            f"FeaturesDelta(changes={self.changes}, metadata_version_change={self._metadata_version_change})"
        )
