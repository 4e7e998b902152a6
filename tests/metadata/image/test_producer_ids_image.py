"""ProducerIdsImage and ProducerIdsDelta: the next block's start, and the snapshot round trip
(Kafka 3.3's ProducerIdsImageTest)."""

from __future__ import annotations

import pytest

from kafka_lite.common.metadata import ApiMessageAndVersion, ProducerIdsRecord
from kafka_lite.metadata.image import ProducerIdsDelta, ProducerIdsImage
from tests.metadata.image.image_test_utils import replay_all, round_trip

pytestmark = pytest.mark.unit

IMAGE1 = ProducerIdsImage(123)
DELTA1_RECORDS = [
    ApiMessageAndVersion(ProducerIdsRecord(broker_id=2, broker_epoch=100, next_producer_id=456), 0),
    ApiMessageAndVersion(ProducerIdsRecord(broker_id=3, broker_epoch=100, next_producer_id=789), 0),
]
IMAGE2 = ProducerIdsImage(789)


def test_apply_delta1():
    delta = ProducerIdsDelta(IMAGE1)
    replay_all(delta, DELTA1_RECORDS)
    assert delta.apply() == IMAGE2


@pytest.mark.parametrize("image", [ProducerIdsImage.EMPTY, IMAGE1, IMAGE2], ids=["empty", "image1", "image2"])
def test_round_trip(image):
    assert round_trip(image, ProducerIdsDelta(ProducerIdsImage.EMPTY)) == image


def test_the_empty_image_writes_nothing_and_a_block_writes_one_record_with_no_broker():
    out = []
    ProducerIdsImage.EMPTY.write(out)
    assert out == [] and ProducerIdsImage.EMPTY.is_empty()
    IMAGE1.write(out)
    assert out == [
        ApiMessageAndVersion(ProducerIdsRecord(broker_id=-1, broker_epoch=-1, next_producer_id=123), 0)
    ]
