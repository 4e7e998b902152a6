"""The feature levels this controller supports.

Mirrors: org.apache.kafka.controller.QuorumFeatures (metadata/src/main/java/org/apache/kafka/controller/,
         Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: only the local controller's ranges are checked; Kafka also asks the other controllers'
         ApiVersions, which kafka_lite's controllers do not exchange.

A *feature* (KIP-584) is a name with a level the whole cluster agrees on, so a new behaviour is
switched on only once every node can handle it. ``metadata.version`` (KIP-778) is the one that
matters here: it says which records and fields the metadata log may hold. The controller finalizes a
level by writing a ``FeatureLevelRecord``; a node refuses to replay a level it does not support.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_lite.metadata.metadata_version import (
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
)
from kafka_lite.metadata.version_range import VersionRange

# Kafka's VersionRange.of(0, 0): a feature this node does not know.
DISABLED = VersionRange(0, 0)


def check_if_metadata_changed(source: MetadataVersion, target: MetadataVersion) -> bool:
    """Whether moving between two levels crosses one that changed the log's metadata (so a
    downgrade could lose information)."""
    low, high = sorted((source, target), key=lambda v: v.feature_level)
    return any(
        low.feature_level < v.feature_level <= high.feature_level and v.did_metadata_change
        for v in MetadataVersion
    )


def default_feature_map() -> dict[str, VersionRange]:
    return {
        METADATA_VERSION_FEATURE_NAME: VersionRange(
            MINIMUM_KRAFT_VERSION.feature_level, MetadataVersion.latest().feature_level
        )
    }


class QuorumFeatures:
    def __init__(
        self, node_id: int, local_supported_features: Mapping[str, VersionRange] | None = None
    ) -> None:
        self._node_id = node_id
        self._local_supported_features = dict(
            default_feature_map() if local_supported_features is None else local_supported_features
        )

    def reason_not_supported(self, feature_name: str, level: int) -> str | None:
        """Why this controller cannot finalize ``level`` of the feature, or None if it can."""
        local_range = self.local_supported_feature(feature_name)
        if not _contains(local_range, level):
            if local_range == DISABLED:
                return f"Local controller {self._node_id} does not support this feature."
            return f"Local controller {self._node_id} only supports versions {local_range}"
        return None

    def local_supported_feature(self, feature_name: str) -> VersionRange:
        return self._local_supported_features.get(feature_name, DISABLED)

    def local_supported_features(self) -> dict[str, VersionRange]:
        return dict(self._local_supported_features)


def _contains(version_range: VersionRange, level: int) -> bool:
    return version_range.contains(level)
