"""MetadataImage and MetadataDelta: each record type reaches its part, the parts a delta leaves
alone are shared with the old image, a removed topic takes its configs along, and an image written
to records (what a metadata snapshot holds) replays into an empty delta as an equal image (Kafka
3.3's MetadataImageTest, over the parts' IMAGE1, DELTA1 and IMAGE2)."""

from __future__ import annotations

import pytest

from kafka_lite.common.metadata import (
    ApiMessageAndVersion,
    ConfigRecord,
    FeatureLevelRecord,
    NoOpRecord,
    RemoveTopicRecord,
)
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.metadata.image import MetadataDelta, MetadataImage
from kafka_lite.metadata.metadata_version import MetadataVersion
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from tests.metadata.image import (
    test_cluster_image,
    test_configurations_image,
    test_features_image,
    test_producer_ids_image,
    test_topics_image,
)
from tests.metadata.image.image_test_utils import through_the_wire

pytestmark = pytest.mark.unit

_PART_FIELDS = ("features", "cluster", "topics", "configs", "producer_ids")
PARTS = (
    test_features_image,
    test_cluster_image,
    test_topics_image,
    test_configurations_image,
    test_producer_ids_image,
)


def image_of(offset_and_epoch, name):
    features, cluster, topics, configs, producer_ids = (getattr(part, name) for part in PARTS)
    return MetadataImage(offset_and_epoch, features, cluster, topics, configs, producer_ids)


IMAGE1 = image_of(OffsetAndEpoch(100, 4), "IMAGE1")
DELTA1_RECORDS = [record for part in PARTS for record in part.DELTA1_RECORDS]
IMAGE2 = image_of(OffsetAndEpoch(100 + len(DELTA1_RECORDS), 5), "IMAGE2")


def replay_at_offsets(delta, first_offset, epoch, records):
    for offset, record in enumerate(records, start=first_offset):
        delta.replay(offset, epoch, record.message)


def test_apply_delta1():
    delta = MetadataDelta(IMAGE1)
    replay_at_offsets(delta, 101, 5, DELTA1_RECORDS)
    assert delta.metadata_version_changed() == MetadataVersion.IBP_3_3_IV2
    assert delta.apply() == IMAGE2


@pytest.mark.parametrize("image", [MetadataImage.EMPTY, IMAGE1, IMAGE2], ids=["empty", "image1", "image2"])
def test_round_trip(image):
    out = []
    image.write(out)
    delta = MetadataDelta(MetadataImage.EMPTY)
    offset_and_epoch = image.highest_offset_and_epoch
    delta.read(offset_and_epoch.offset, offset_and_epoch.epoch, [through_the_wire(out)])
    assert delta.apply() == image


def test_write_emits_the_parts_in_the_order_replay_needs():
    out = []
    IMAGE1.write(out)
    names = [type(record.message).__name__ for record in out]
    order = ["FeatureLevelRecord", "RegisterBrokerRecord", "TopicRecord", "ConfigRecord", "ProducerIdsRecord"]
    firsts = [names.index(name) for name in order]
    assert firsts == sorted(firsts) and names[0] == "FeatureLevelRecord"
    assert out[0].message == FeatureLevelRecord(name="metadata.version", feature_level=7)
    # Each topic's partitions follow its TopicRecord, before the next topic's.
    topics = [i for i, name in enumerate(names) if name == "TopicRecord"]
    assert names[topics[0] + 1 : topics[1]] == ["PartitionRecord"] * (topics[1] - topics[0] - 1)


def test_a_delta_shares_the_parts_it_does_not_touch():
    delta = MetadataDelta(IMAGE1)
    delta.replay(101, 4, test_producer_ids_image.DELTA1_RECORDS[0].message)
    image = delta.apply()
    assert image.producer_ids.next_producer_id == 456
    assert image.topics is IMAGE1.topics and image.cluster is IMAGE1.cluster
    assert image.configs is IMAGE1.configs and image.features is IMAGE1.features
    assert delta.topics_delta is None


def test_a_no_op_record_moves_only_the_offset():
    delta = MetadataDelta(IMAGE1)
    delta.replay(150, 6, NoOpRecord())
    image = delta.apply()
    assert image.highest_offset_and_epoch == OffsetAndEpoch(150, 6)
    assert image == MetadataImage(OffsetAndEpoch(150, 6), *(getattr(IMAGE1, f) for f in _PART_FIELDS))


def test_removing_a_topic_removes_its_configs():
    delta = MetadataDelta(IMAGE2)
    delta.replay(
        201,
        5,
        ConfigRecord(resource_type=2, resource_name="baz", name="retention.ms", value="1000"),
    )
    middle = delta.apply()
    assert middle.configs.config_properties(test_configurations_image.TOPIC_FOO) == {
        "cleanup.policy": "compact"
    }
    baz = ConfigResource(ConfigResourceType.TOPIC, "baz")
    assert middle.configs.config_properties(baz) == {"retention.ms": "1000"}
    delta = MetadataDelta(middle)
    delta.replay(202, 5, RemoveTopicRecord(topic_id=test_topics_image.BAZ_UUID))
    after = delta.apply()
    assert after.topics.get_topic("baz") is None and after.configs.config_properties(baz) == {}


def test_loading_a_snapshot_over_an_image_forgets_what_the_snapshot_does_not_hold():
    out = []
    IMAGE2.write(out)
    delta = MetadataDelta(IMAGE1)
    delta.read(300, 6, [out])
    delta.finish_snapshot()
    assert delta.apply() == MetadataImage(OffsetAndEpoch(300, 6), *(getattr(IMAGE2, f) for f in _PART_FIELDS))


def test_is_empty():
    assert MetadataImage.EMPTY.is_empty() and not IMAGE1.is_empty()
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay(1, 1, ApiMessageAndVersion(NoOpRecord(), 0).message)
    assert delta.apply().is_empty()
