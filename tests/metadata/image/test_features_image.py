"""FeaturesImage and FeaturesDelta: finalized levels set and removed (level 0), metadata.version
kept apart and written first, and the snapshot round trip (Kafka 3.3's FeaturesImageTest)."""

from __future__ import annotations

import pytest

from kafka_lite.common.metadata import ApiMessageAndVersion, FeatureLevelRecord
from kafka_lite.metadata.image import FeaturesDelta, FeaturesImage
from kafka_lite.metadata.metadata_version import MetadataVersion
from tests.metadata.image.image_test_utils import replay_all, round_trip

pytestmark = pytest.mark.unit

IMAGE1 = FeaturesImage({"foo": 1, "bar": 2, "baz": 8}, MetadataVersion.IBP_3_3_IV3)
DELTA1_RECORDS = [
    ApiMessageAndVersion(FeatureLevelRecord(name="foo", feature_level=2), 0),
    ApiMessageAndVersion(FeatureLevelRecord(name="bar", feature_level=0), 0),
    ApiMessageAndVersion(FeatureLevelRecord(name="baz", feature_level=0), 0),
    ApiMessageAndVersion(FeatureLevelRecord(name="qux", feature_level=3), 0),
    ApiMessageAndVersion(FeatureLevelRecord(name="metadata.version", feature_level=6), 0),
]
IMAGE2 = FeaturesImage({"foo": 2, "qux": 3}, MetadataVersion.IBP_3_3_IV2)


def test_apply_delta1():
    delta = FeaturesDelta(IMAGE1)
    replay_all(delta, DELTA1_RECORDS)
    assert delta.metadata_version_change() == MetadataVersion.IBP_3_3_IV2
    assert delta.apply() == IMAGE2
    assert IMAGE1.finalized_versions == {"foo": 1, "bar": 2, "baz": 8}  # the image is untouched


@pytest.mark.parametrize("image", [FeaturesImage.EMPTY, IMAGE1, IMAGE2], ids=["empty", "image1", "image2"])
def test_round_trip(image):
    assert round_trip(image, FeaturesDelta(FeaturesImage.EMPTY)) == image


def test_metadata_version_is_written_first_and_only_from_3_3_iv0():
    out = []
    IMAGE1.write(out)
    assert [(r.message.name, r.message.feature_level) for r in out] == [
        ("metadata.version", 7),
        ("foo", 1),
        ("bar", 2),
        ("baz", 8),
    ]
    older = []
    FeaturesImage({"foo": 1}, MetadataVersion.IBP_3_2_IV0).write(older)
    assert [r.message.name for r in older] == ["foo"]


def test_finish_snapshot_removes_what_the_snapshot_does_not_name():
    delta = FeaturesDelta(IMAGE1)
    replay_all(delta, [ApiMessageAndVersion(FeatureLevelRecord(name="bar", feature_level=5), 0)])
    delta.finish_snapshot()
    assert delta.apply().finalized_versions == {"bar": 5}


def test_images_are_immutable():
    with pytest.raises(TypeError):
        IMAGE1.finalized_versions["foo"] = 9
