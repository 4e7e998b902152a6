"""The finalized feature levels, metadata.version first.

Mirrors: org.apache.kafka.controller.FeatureControlManager and FinalizedControllerFeatures
         (metadata/src/main/java/org/apache/kafka/controller/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no UpdateFeatures upgrade types beyond UPGRADE and SAFE_DOWNGRADE; an unsafe downgrade is
         refused, as Kafka 3.3 refuses it.

Each ``FeatureLevelRecord`` finalizes one feature at a level; level 0 removes it. metadata.version is
kept apart from the others because the controller reads it on every write (which records it may
use), and because it cannot be removed, only moved: on an empty log the controller's first act as
leader is to write it (the bootstrap records).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import FeatureLevelRecord
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.controller.configuration_control_manager import ApiError
from kafka_lite.metadata.controller.controller_result import ControllerResult
from kafka_lite.metadata.controller.quorum_features import QuorumFeatures, check_if_metadata_changed
from kafka_lite.metadata.metadata_version import (
    LATEST_METADATA_VERSION,
    METADATA_VERSION_FEATURE_NAME,
    MINIMUM_BOOTSTRAP_VERSION,
    MetadataVersion,
)
from kafka_lite.metadata.timeline import LATEST_EPOCH, SnapshotRegistry, TimelineHashMap, TimelineObject
from kafka_lite.metadata.version_range import VersionRange

log = logging.getLogger(__name__)

UPGRADE = "upgrade"
SAFE_DOWNGRADE = "safe_downgrade"


@dataclass(frozen=True)
class FinalizedControllerFeatures:
    """The finalized levels as of one epoch: what a registering broker must support."""

    feature_map: dict[str, int] = field(default_factory=dict)
    epoch: int = LATEST_EPOCH

    def get(self, feature_name: str) -> int | None:
        return self.feature_map.get(feature_name)


class FeatureControlManager:
    def __init__(
        self,
        snapshot_registry: SnapshotRegistry,
        quorum_features: QuorumFeatures | None = None,
        metadata_version: MetadataVersion = LATEST_METADATA_VERSION,
        minimum_bootstrap_version: MetadataVersion = MINIMUM_BOOTSTRAP_VERSION,
    ) -> None:
        self._quorum_features = quorum_features if quorum_features is not None else QuorumFeatures(0)
        self._finalized_versions: TimelineHashMap = TimelineHashMap(snapshot_registry)
        self._metadata_version: TimelineObject = TimelineObject(snapshot_registry, metadata_version)
        self._minimum_bootstrap_version = minimum_bootstrap_version

    def metadata_version(self, epoch: int = LATEST_EPOCH) -> MetadataVersion:
        return self._metadata_version.get(epoch)

    def update_features(
        self,
        updates: Mapping[str, int],
        upgrade_types: Mapping[str, str],
        broker_features: Mapping[int, Mapping[str, VersionRange]],
        validate_only: bool,
    ) -> ControllerResult[dict[str, ApiError]]:
        """The records for UpdateFeatures: each feature checked against this controller's ranges and
        every registered broker's, then one FeatureLevelRecord for it."""
        results: dict[str, ApiError] = {}
        records: list[ApiMessageAndVersion] = []
        for name, level in sorted(updates.items()):
            results[name] = self._update_feature(
                name, level, upgrade_types.get(name, UPGRADE), broker_features, records
            )
        return ControllerResult.of([] if validate_only else records, results)

    def _update_feature(
        self,
        name: str,
        new_level: int,
        upgrade_type: str,
        brokers_and_features: Mapping[int, Mapping[str, VersionRange]],
        records: list[ApiMessageAndVersion],
    ) -> ApiError:
        if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE):
            return _invalid_update_version(
                name, new_level, "The controller does not support the given upgrade type."
            )
        if name == METADATA_VERSION_FEATURE_NAME:
            current_level = self._metadata_version.get().feature_level
        else:
            current_level = self._finalized_versions.get(name) or 0
        if new_level < 0:
            return _invalid_update_version(name, new_level, "A feature version cannot be less than 0.")
        reason = self._quorum_features.reason_not_supported(name, new_level)
        if reason is not None:
            return _invalid_update_version(name, new_level, reason)
        for broker_id, features in brokers_and_features.items():
            broker_range = features.get(name)
            if broker_range is None:
                return _invalid_update_version(
                    name, new_level, f"Broker {broker_id} does not support this feature."
                )
            if not broker_range.contains(new_level):
                return _invalid_update_version(
                    name, new_level,
                    f"Broker {broker_id} does not support the given version. "
                    f"It supports {broker_range.min} to {broker_range.max}.",
                )  # fmt: skip
        if new_level < current_level and upgrade_type == UPGRADE:
            return _invalid_update_version(
                name, new_level,
                "Can't downgrade the version of this feature without setting the upgrade type to "
                "either safe or unsafe downgrade.",
            )  # fmt: skip
        if new_level > current_level and upgrade_type != UPGRADE:
            return _invalid_update_version(name, new_level, "Can't downgrade to a newer version.")
        if name == METADATA_VERSION_FEATURE_NAME:
            return self._update_metadata_version(new_level, records)
        records.append(ApiMessageAndVersion(FeatureLevelRecord(name=name, feature_level=new_level), 0))
        return ApiError.NONE

    def _update_metadata_version(self, new_level: int, records: list[ApiMessageAndVersion]) -> ApiError:
        current = self._metadata_version.get()
        try:
            new_version = MetadataVersion.from_feature_level(new_level)
        except ValueError:
            return _invalid_metadata_version(new_level, "Unknown metadata.version.")
        if new_version.is_less_than(self._minimum_bootstrap_version):
            return _invalid_metadata_version(
                new_level, f"Unable to set a metadata.version less than {self._minimum_bootstrap_version}"
            )
        if new_version.is_less_than(current) and check_if_metadata_changed(current, new_version):
            # A level in between changed what the log holds: going below it could drop information
            # the older level cannot represent.
            return _invalid_metadata_version(
                new_level,
                "Refusing to perform the requested downgrade because it might delete metadata information.",
            )
        log.info("Moving metadata.version from %s to %s.", current, new_version)
        records.append(
            ApiMessageAndVersion(
                FeatureLevelRecord(name=METADATA_VERSION_FEATURE_NAME, feature_level=new_level), 0
            )
        )
        return ApiError.NONE

    def finalized_features(self, epoch: int = LATEST_EPOCH) -> FinalizedControllerFeatures:
        features = {METADATA_VERSION_FEATURE_NAME: self._metadata_version.get(epoch).feature_level}
        features.update(self._finalized_versions.items(epoch))
        return FinalizedControllerFeatures(features, epoch)

    # --8<-- [start:replay]
    def replay(self, record: FeatureLevelRecord) -> None:
        version_range = self._quorum_features.local_supported_feature(record.name)
        if not version_range.contains(record.feature_level):
            # A level this node cannot support would have it misread later records: stop here.
            raise RuntimeError(
                f"Tried to apply FeatureLevelRecord {record}, but this controller only supports versions "
                f"{version_range}"
            )
        if record.name == METADATA_VERSION_FEATURE_NAME:
            log.info("Setting metadata.version to %d", record.feature_level)
            self._metadata_version.set(MetadataVersion.from_feature_level(record.feature_level))
        elif record.feature_level == 0:
            log.info("Removing feature %s", record.name)
            self._finalized_versions.remove(record.name)
        else:
            log.info("Setting feature %s to %d", record.name, record.feature_level)
            self._finalized_versions.put(record.name, record.feature_level)

    # --8<-- [end:replay]


def _invalid_update_version(feature: str, level: int, message: str) -> ApiError:
    return ApiError(
        Errors.INVALID_UPDATE_VERSION, f"Invalid update version {level} for feature {feature}. {message}"
    )


def _invalid_metadata_version(level: int, message: str) -> ApiError:
    return ApiError(Errors.INVALID_UPDATE_VERSION, f"Invalid metadata.version {level}. {message}")
