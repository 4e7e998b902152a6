"""metadata.version's levels: which records and fields the metadata log may hold.

Mirrors: org.apache.kafka.server.common.MetadataVersion (server-common/src/main/java/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: only the KRaft levels (1-7), not the inter-broker protocol versions before 3.0 that Kafka's
         enum also holds.

A *feature* (KIP-584) is a name with a level the whole cluster agrees on; ``metadata.version``
(KIP-778) is the one the metadata log needs. The controller, the image and the storage tool all read
it, so it lives here rather than with the controller's ``QuorumFeatures``.
"""

from __future__ import annotations

import enum

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
