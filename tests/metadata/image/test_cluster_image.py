"""ClusterImage and ClusterDelta: brokers registered, fenced, unfenced (by the older record pair and
by BrokerRegistrationChangeRecord) and unregistered; a change for the wrong broker epoch refused;
the snapshot round trip (Kafka 3.3's ClusterImageTest)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.metadata import (
    ApiMessageAndVersion,
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_lite.metadata.broker_registration import BrokerRegistration, Endpoint
from kafka_lite.metadata.image import ClusterDelta, ClusterImage
from kafka_lite.metadata.metadata_version import MetadataVersion
from kafka_lite.metadata.version_range import VersionRange
from tests.metadata.image.image_test_utils import replay_all, round_trip

pytestmark = pytest.mark.unit


def broker(broker_id, epoch, fenced, rack=None, in_controlled_shutdown=False):
    return BrokerRegistration(
        id=broker_id,
        epoch=epoch,
        incarnation_id=uuid.UUID(int=broker_id + 1),
        listeners={"PLAINTEXT": Endpoint("PLAINTEXT", "localhost", 9092 + broker_id, 0)},
        supported_features={"foo": VersionRange(1, 3)},
        rack=rack,
        fenced=fenced,
        in_controlled_shutdown=in_controlled_shutdown,
    )


IMAGE1 = ClusterImage({2: broker(2, 123, True), 3: broker(3, 456, False, "arack"), 4: broker(4, 789, False)})
DELTA1_RECORDS = [
    ApiMessageAndVersion(UnfenceBrokerRecord(id=2, epoch=123), 0),
    ApiMessageAndVersion(FenceBrokerRecord(id=3, epoch=456), 0),
    ApiMessageAndVersion(UnregisterBrokerRecord(broker_id=4, broker_epoch=789), 0),
    broker(5, 1000, True).to_record(),
]
IMAGE2 = ClusterImage({2: broker(2, 123, False), 3: broker(3, 456, True, "arack"), 5: broker(5, 1000, True)})


def test_apply_delta1():
    delta = ClusterDelta(IMAGE1)
    replay_all(delta, DELTA1_RECORDS)
    assert delta.apply() == IMAGE2
    assert IMAGE1.broker(4) is not None and IMAGE1.broker(2).fenced  # the image is untouched


@pytest.mark.parametrize("image", [ClusterImage.EMPTY, IMAGE1, IMAGE2], ids=["empty", "image1", "image2"])
def test_round_trip(image):
    def write(out):
        image.write(out, MetadataVersion.latest())

    assert round_trip(image, ClusterDelta(ClusterImage.EMPTY), write) == image


def test_controlled_shutdown_survives_only_from_3_3_iv3():
    image = ClusterImage({1: broker(1, 10, False, in_controlled_shutdown=True)})
    out = []
    image.write(out, MetadataVersion.IBP_3_3_IV2)
    assert out[0].version == 0
    assert (
        round_trip(
            image, ClusterDelta(ClusterImage.EMPTY), lambda o: image.write(o, MetadataVersion.latest())
        )
        == image
    )


def test_broker_registration_change_record():
    delta = ClusterDelta(IMAGE1)
    replay_all(
        delta,
        [
            ApiMessageAndVersion(BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=123, fenced=-1), 0),
            ApiMessageAndVersion(
                BrokerRegistrationChangeRecord(
                    broker_id=3, broker_epoch=456, fenced=1, in_controlled_shutdown=1
                ),
                1,
            ),
            ApiMessageAndVersion(BrokerRegistrationChangeRecord(broker_id=4, broker_epoch=789), 0),
        ],
    )
    assert delta.changed_brokers.keys() == {2, 3}  # no change, no entry
    image = delta.apply()
    assert not image.broker(2).fenced
    assert image.broker(3).fenced and image.broker(3).in_controlled_shutdown
    with pytest.raises(IllegalStateException, match="unknown value for fenced field: 7"):
        delta.replay(BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=123, fenced=7))


def test_a_fence_for_another_epoch_or_an_unknown_broker_is_refused():
    delta = ClusterDelta(IMAGE1)
    with pytest.raises(IllegalStateException) as error:
        delta.replay(FenceBrokerRecord(id=3, epoch=455))
    assert str(error.value) == (
        "Tried to fence broker 3, but the given epoch, 455, did not match the current broker epoch, 456"
    )
    with pytest.raises(
        IllegalStateException, match=r"Tried to unfence broker 9, but that broker was not registered\."
    ):
        delta.replay(UnfenceBrokerRecord(id=9, epoch=1))


def test_finish_snapshot_drops_the_brokers_the_snapshot_does_not_name():
    delta = ClusterDelta(IMAGE1)
    delta.replay(broker(3, 999, False).to_record().message)
    delta.finish_snapshot()
    assert delta.apply() == ClusterImage({3: broker(3, 999, False)})
