"""FeatureControlManager and QuorumFeatures, as Kafka 3.3's FeatureControlManagerTest."""

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import FeatureLevelRecord
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.controller.configuration_control_manager import ApiError
from kafka_lite.metadata.controller.feature_control_manager import SAFE_DOWNGRADE, FeatureControlManager
from kafka_lite.metadata.controller.quorum_features import QuorumFeatures, check_if_metadata_changed
from kafka_lite.metadata.metadata_version import MetadataVersion
from kafka_lite.metadata.timeline import SnapshotRegistry
from kafka_lite.metadata.version_range import VersionRange

pytestmark = pytest.mark.unit


def _manager(registry=None, **features):
    supported = {"metadata.version": VersionRange(1, 7), **features}
    return FeatureControlManager(registry or SnapshotRegistry(), QuorumFeatures(0, supported))


def test_update_features_checks_this_controller_and_every_broker():
    manager = _manager(foo=VersionRange(1, 2))
    result = manager.update_features({"foo": 3}, {}, {}, False)
    assert result.records == []
    assert result.response == {
        "foo": ApiError(
            Errors.INVALID_UPDATE_VERSION,
            "Invalid update version 3 for feature foo. Local controller 0 only supports versions 1-2",
        )
    }
    result = manager.update_features({"foo": 2}, {}, {5: {"foo": VersionRange(1, 1)}}, False)
    assert result.response["foo"].message.endswith(
        "Broker 5 does not support the given version. It supports 1 to 1."
    )
    result = manager.update_features({"foo": 2}, {}, {5: {"foo": VersionRange(1, 2)}}, False)
    assert result.response == {"foo": ApiError.NONE}
    assert result.records == [ApiMessageAndVersion(FeatureLevelRecord(name="foo", feature_level=2), 0)]
    assert manager.update_features({"foo": 2}, {}, {}, True).records == []  # validate only


def test_replay_finalizes_and_level_zero_removes():
    registry = SnapshotRegistry()
    manager = _manager(registry, foo=VersionRange(0, 2))
    manager.replay(FeatureLevelRecord(name="foo", feature_level=2))
    registry.get_or_create_snapshot(3)
    manager.replay(FeatureLevelRecord(name="metadata.version", feature_level=4))
    manager.replay(FeatureLevelRecord(name="foo", feature_level=0))
    assert manager.finalized_features().feature_map == {"metadata.version": 4}
    assert manager.metadata_version() is MetadataVersion.IBP_3_3_IV0
    assert manager.finalized_features(3).feature_map == {"metadata.version": 7, "foo": 2}
    registry.revert_to_snapshot(3)
    assert manager.finalized_features().feature_map == {"metadata.version": 7, "foo": 2}


def test_replay_of_an_unsupported_level_is_refused():
    manager = _manager()
    with pytest.raises(RuntimeError, match="only supports versions 1-7"):
        manager.replay(FeatureLevelRecord(name="metadata.version", feature_level=8))


def test_metadata_version_cannot_go_below_the_bootstrap_minimum_or_lose_metadata():
    manager = _manager()
    manager.replay(FeatureLevelRecord(name="metadata.version", feature_level=7))
    assert (
        manager.update_features({"metadata.version": 3}, {"metadata.version": SAFE_DOWNGRADE}, {}, False)
        .response["metadata.version"]
        .message
        == "Invalid metadata.version 3. Unable to set a metadata.version less than 3.3-IV0"
    )
    downgrade = manager.update_features(
        {"metadata.version": 6}, {"metadata.version": SAFE_DOWNGRADE}, {}, False
    )
    assert "might delete metadata information" in downgrade.response["metadata.version"].message
    assert manager.update_features({"metadata.version": 6}, {}, {}, False).response[
        "metadata.version"
    ].error is (Errors.INVALID_UPDATE_VERSION)
    assert check_if_metadata_changed(MetadataVersion.IBP_3_3_IV0, MetadataVersion.IBP_3_3_IV1)
    assert not check_if_metadata_changed(MetadataVersion.IBP_3_2_IV0, MetadataVersion.IBP_3_3_IV0)
