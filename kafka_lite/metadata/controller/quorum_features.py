"""The feature levels this controller supports, and metadata.version's levels.

Mirrors: org.apache.kafka.controller.QuorumFeatures and org.apache.kafka.server.common.MetadataVersion
         (metadata/ and server-common/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: only the local controller's ranges are checked; Kafka also asks the other controllers'
         ApiVersions, which kafka_lite's controllers do not exchange. MetadataVersion keeps only the
         KRaft levels (1-7), not the inter-broker protocol versions before 3.0.

A *feature* (KIP-584) is a name with a level the whole cluster agrees on, so a new behaviour is
switched on only once every node can handle it. ``metadata.version`` (KIP-778) is the one that
matters here: it says which records and fields the metadata log may hold. The controller finalizes a
level by writing a ``FeatureLevelRecord``; a node refuses to replay a level it does not support.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from kafka_lite.metadata.version_range import VersionRange

METADATA_VERSION_FEATURE_NAME = "metadata.version"


class MetadataVersion(enum.Enum):
    """metadata.version's levels: (feature level, release, whether the log's metadata changed)."""

    IBP_3_0_IV1 = (1, "3.0-IV1", True)
    IBP_3_1_IV0 = (2, "3.1-IV0", False)
    IBP_3_2_IV0 = (3, "3.2-IV0", True)
    IBP_3_3_IV0 = (4, "3.3-IV0", False)  # the first with FeatureLevelRecord in the log
    IBP_3_3_IV1 = (5, "3.3-IV1", True)
    IBP_3_3_IV2 = (6, "3.3-IV2", True)
    IBP_3_3_IV3 = (7, "3.3-IV3", True)

    @property
    def feature_level(self) -> int:
        return self.value[0]

    @property
    def version(self) -> str:
        return self.value[1]

    @property
    def did_metadata_change(self) -> bool:
        return self.value[2]

    @staticmethod
    def from_feature_level(level: int) -> MetadataVersion:
        for version in MetadataVersion:
            if version.feature_level == level:
                return version
        raise ValueError(f"No MetadataVersion with metadata version {level}")

    @staticmethod
    def latest() -> MetadataVersion:
        return MetadataVersion.IBP_3_3_IV3

    def is_less_than(self, other: MetadataVersion) -> bool:
        return self.feature_level < other.feature_level

    def is_at_least(self, other: MetadataVersion) -> bool:
        return self.feature_level >= other.feature_level

    def __str__(self) -> str:
        return self.version


# Kafka 3.3's bounds: KRaft began at 3.0-IV1; a log can be bootstrapped from 3.3-IV0, the first level
# whose FeatureLevelRecord can itself be written to the log.
MINIMUM_KRAFT_VERSION = MetadataVersion.IBP_3_0_IV1
MINIMUM_BOOTSTRAP_VERSION = MetadataVersion.IBP_3_3_IV0
LATEST_METADATA_VERSION = MetadataVersion.latest()

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
