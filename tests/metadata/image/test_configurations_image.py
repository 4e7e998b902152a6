"""ConfigurationsImage and ConfigurationsDelta: configs set, deleted (a null value) and removed
with their topic, empty resources dropped, and the snapshot round trip (Kafka 3.3's
ConfigurationsImageTest)."""

from __future__ import annotations

import pytest

from kafka_lite.common.metadata import ApiMessageAndVersion, ConfigRecord
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.metadata.image import ConfigurationImage, ConfigurationsDelta, ConfigurationsImage
from tests.metadata.image.image_test_utils import replay_all, round_trip

pytestmark = pytest.mark.unit

BROKER_0 = ConfigResource(ConfigResourceType.BROKER, "0")
BROKER_1 = ConfigResource(ConfigResourceType.BROKER, "1")
TOPIC_FOO = ConfigResource(ConfigResourceType.TOPIC, "foo")

IMAGE1 = ConfigurationsImage(
    {
        BROKER_0: ConfigurationImage({"foo": "bar", "baz": "quux"}),
        BROKER_1: ConfigurationImage({"foobar": "foobaz"}),
    }
)


def config(resource, name, value):
    record = ConfigRecord(
        resource_type=int(resource.type), resource_name=resource.name, name=name, value=value
    )
    return ApiMessageAndVersion(record, 0)


DELTA1_RECORDS = [
    config(BROKER_0, "foo", None),
    config(BROKER_0, "baz", None),  # broker 0 has nothing left: it leaves the image
    config(BROKER_1, "barfoo", "bazfoo"),
    config(TOPIC_FOO, "cleanup.policy", "compact"),
]
IMAGE2 = ConfigurationsImage(
    {
        BROKER_1: ConfigurationImage({"foobar": "foobaz", "barfoo": "bazfoo"}),
        TOPIC_FOO: ConfigurationImage({"cleanup.policy": "compact"}),
    }
)


def test_apply_delta1():
    delta = ConfigurationsDelta(IMAGE1)
    replay_all(delta, DELTA1_RECORDS)
    assert delta.apply() == IMAGE2


@pytest.mark.parametrize(
    "image", [ConfigurationsImage.EMPTY, IMAGE1, IMAGE2], ids=["empty", "image1", "image2"]
)
def test_round_trip(image):
    assert round_trip(image, ConfigurationsDelta(ConfigurationsImage.EMPTY)) == image


def test_config_properties_is_a_copy_and_empty_for_an_unknown_resource():
    properties = IMAGE2.config_properties(TOPIC_FOO)
    properties["retention.ms"] = "1"
    assert IMAGE2.config_properties(TOPIC_FOO) == {"cleanup.policy": "compact"}
    assert IMAGE2.config_properties(BROKER_0) == {}


def test_a_removed_topic_loses_its_configs():
    delta = ConfigurationsDelta(IMAGE2)
    replay_all(delta, [config(TOPIC_FOO, "retention.ms", "1000")])
    delta.replay_remove_topic("foo")
    assert TOPIC_FOO not in delta.apply().resource_data
