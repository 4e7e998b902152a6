"""TopicsImage, TopicsDelta and TopicDelta: topics created, changed and removed, by id and by name;
the partitions a broker must delete, lead and follow after a delta; the snapshot round trip (Kafka
3.3's TopicsImageTest, with its images, records and local-change cases)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.metadata import (
    ApiMessageAndVersion,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.image import TopicImage, TopicsDelta, TopicsImage
from kafka_lite.metadata.leader_recovery_state import LeaderRecoveryState
from kafka_lite.metadata.partition_registration import PartitionRegistration
from tests.metadata.image.image_test_utils import replay_all, round_trip

pytestmark = pytest.mark.unit

RECOVERED = LeaderRecoveryState.RECOVERED
FOO_UUID = uuid.UUID("4e121a37-046d-4b4d-8db7-d331d6fd1bd0")
BAR_UUID = uuid.UUID("7fad9ea7-2113-4ee7-9ef0-b52f659e448b")
BAZ_UUID = uuid.UUID("b601c19d-1b92-4f95-bf46-5034d09b91be")
LOCAL_ID = 3


def partition(replicas, isr, removing, adding, leader, leader_epoch, partition_epoch):
    return PartitionRegistration(
        replicas, isr, removing, adding, leader, RECOVERED, leader_epoch, partition_epoch
    )


def new_partition(replicas):
    return partition(replicas, replicas, (), (), replicas[0], 1, 1)


def topic(name, topic_id, *partitions):
    return TopicImage(name, topic_id, dict(enumerate(partitions)))


IMAGE1 = TopicsImage.of(
    [
        topic(
            "foo",
            FOO_UUID,
            partition((2, 3, 4), (2, 3), (), (), 2, 1, 345),
            partition((3, 4, 5), (3, 4, 5), (), (), 3, 4, 684),
            partition((2, 4, 5), (2, 4, 5), (), (), 2, 10, 84),
        ),
        topic("bar", BAR_UUID, partition((0, 1, 2, 3, 4), (0, 1, 2, 3), (1,), (3, 4), 0, 1, 345)),
    ]
)
DELTA1_RECORDS = [
    ApiMessageAndVersion(RemoveTopicRecord(topic_id=FOO_UUID), 0),
    ApiMessageAndVersion(PartitionChangeRecord(topic_id=BAR_UUID, partition_id=0, leader=1), 0),
    ApiMessageAndVersion(TopicRecord(name="baz", topic_id=BAZ_UUID), 0),
    ApiMessageAndVersion(
        PartitionRecord(
            partition_id=0,
            topic_id=BAZ_UUID,
            replicas=[1, 2, 3, 4],
            isr=[3, 4],
            removing_replicas=[2],
            adding_replicas=[1],
            leader=3,
            leader_epoch=2,
            partition_epoch=1,
        ),
        0,
    ),
]
IMAGE2 = TopicsImage.of(
    [
        topic("bar", BAR_UUID, partition((0, 1, 2, 3, 4), (0, 1, 2, 3), (1,), (3, 4), 1, 2, 346)),
        topic("baz", BAZ_UUID, partition((1, 2, 3, 4), (3, 4), (2,), (1,), 3, 2, 1)),
    ]
)


def delta_of(image, records):
    delta = TopicsDelta(image)
    replay_all(delta, records)
    return delta


def partition_record(topic_id, partition_id, replicas):
    record = PartitionRecord(
        partition_id=partition_id,
        topic_id=topic_id,
        replicas=replicas,
        isr=replicas,
        leader=replicas[0],
        leader_epoch=1,
        partition_epoch=1,
    )
    return ApiMessageAndVersion(record, 0)


def change(topic_id, partition_id, **fields):
    return ApiMessageAndVersion(
        PartitionChangeRecord(topic_id=topic_id, partition_id=partition_id, **fields), 0
    )


def test_apply_delta1():
    assert delta_of(IMAGE1, DELTA1_RECORDS).apply() == IMAGE2


@pytest.mark.parametrize("image", [TopicsImage.EMPTY, IMAGE1, IMAGE2], ids=["empty", "image1", "image2"])
def test_round_trip(image):
    assert round_trip(image, TopicsDelta(TopicsImage.EMPTY)) == image


def test_lookups_by_id_and_by_name():
    assert IMAGE1.get_topic("foo") is IMAGE1.get_topic(FOO_UUID)
    assert IMAGE1.get_partition(FOO_UUID, 1).leader_epoch == 4
    assert IMAGE1.get_partition(FOO_UUID, 9) is None and IMAGE1.get_partition(BAZ_UUID, 0) is None
    delta = delta_of(IMAGE1, DELTA1_RECORDS)
    assert delta.topic_was_deleted("foo") and not delta.topic_was_deleted("bar")
    assert delta.changed_topic(BAR_UUID).partition_changes[0].leader == 1


def test_removing_a_topic_returns_its_name_and_an_unknown_one_is_refused():
    delta = TopicsDelta(IMAGE1)
    assert delta.replay(RemoveTopicRecord(topic_id=BAR_UUID)) == "bar"
    with pytest.raises(RuntimeError, match="no such topic found"):
        delta.replay(RemoveTopicRecord(topic_id=BAZ_UUID))


def test_a_topic_created_and_removed_in_one_delta_leaves_no_trace():
    delta = delta_of(
        IMAGE1, [*DELTA1_RECORDS[2:], ApiMessageAndVersion(RemoveTopicRecord(topic_id=BAZ_UUID), 0)]
    )
    assert delta.apply() == IMAGE1 and BAZ_UUID not in delta.deleted_topic_ids


def test_basic_local_changes():
    # foo's id is deleted and foo created again with a new id; bar-0 stays a follower with a new
    # partition epoch; baz-0 is new with this broker leading; baz-1 is new with it following.
    new_foo_id = uuid.UUID("6f5ca86e-c216-4a8c-a2cd-b34d1dd1fb3c")
    records = [
        *DELTA1_RECORDS,
        ApiMessageAndVersion(TopicRecord(name="foo", topic_id=new_foo_id), 0),
        partition_record(new_foo_id, 0, [0, 1, 2]),
        partition_record(new_foo_id, 1, [0, 1, LOCAL_ID]),
        partition_record(BAZ_UUID, 1, [4, 2, LOCAL_ID]),
    ]
    changes = delta_of(IMAGE1, records).local_changes(LOCAL_ID)
    assert changes.deletes == {TopicPartition("foo", 0), TopicPartition("foo", 1)}
    assert changes.leaders.keys() == {TopicPartition("baz", 0)}
    assert changes.followers.keys() == {
        TopicPartition("baz", 1),
        TopicPartition("bar", 0),
        TopicPartition("foo", 1),
    }
    assert changes.followers[TopicPartition("foo", 1)].topic_id == new_foo_id


def test_delete_after_changes():
    zoo_id = uuid.UUID("d2113fe4-e5bf-4ba7-a4b6-2dcb2abc43e5")
    image = TopicsImage.of([topic("zoo", zoo_id, new_partition((LOCAL_ID, 1, 2)))])
    records = [change(zoo_id, 0, leader=1), ApiMessageAndVersion(RemoveTopicRecord(topic_id=zoo_id), 0)]
    changes = delta_of(image, records).local_changes(LOCAL_ID)
    assert changes.deletes == {TopicPartition("zoo", 0)}
    assert changes.leaders == {} and changes.followers == {}


def test_local_reassignment_changes():
    zoo_id = uuid.UUID("d2113fe4-e5bf-4ba7-a4b6-2dcb2abc43e5")
    image = TopicsImage.of(
        [
            topic(
                "zoo",
                zoo_id,
                new_partition((0, 1, LOCAL_ID)),
                new_partition((LOCAL_ID, 1, 2)),
                new_partition((0, 1, LOCAL_ID)),
                new_partition((LOCAL_ID, 1, 2)),
                new_partition((0, 1, 2)),
                new_partition((0, 1, 2)),
            )
        ]
    )
    records = [
        change(zoo_id, 0, leader=LOCAL_ID),  # follower to leader
        change(zoo_id, 1, leader=1),  # leader to follower
        change(zoo_id, 2, isr=[0, 1, 2], replicas=[0, 1, 2]),  # follower to removed
        change(zoo_id, 3, leader=0, isr=[0, 1, 2], replicas=[0, 1, 2]),  # leader to removed
        change(zoo_id, 4, leader=LOCAL_ID, isr=[LOCAL_ID, 1, 2], replicas=[LOCAL_ID, 1, 2]),  # to leader
        change(zoo_id, 5, isr=[0, 1, LOCAL_ID], replicas=[0, 1, LOCAL_ID]),  # to follower
    ]
    changes = delta_of(image, records).local_changes(LOCAL_ID)
    assert changes.deletes == {TopicPartition("zoo", 2), TopicPartition("zoo", 3)}
    assert changes.leaders.keys() == {TopicPartition("zoo", 0), TopicPartition("zoo", 4)}
    assert changes.followers.keys() == {TopicPartition("zoo", 1), TopicPartition("zoo", 5)}


def test_finish_snapshot_removes_the_topics_the_snapshot_does_not_name():
    delta = TopicsDelta(IMAGE1)
    replay_all(delta, DELTA1_RECORDS[2:])  # the snapshot holds baz only
    delta.finish_snapshot()
    assert delta.apply() == TopicsImage.of([IMAGE2.get_topic("baz")])


def test_changes_to_partitions_the_broker_does_not_replicate_are_not_local():
    # bar-0 changes leader among brokers that do not include 7; baz is new, without broker 7.
    changes = delta_of(IMAGE1, DELTA1_RECORDS).local_changes(7)
    assert changes.deletes == set() and changes.leaders == {} and changes.followers == {}


def test_a_partition_replayed_again_at_the_same_partition_epoch_is_not_a_local_change():
    # A snapshot loaded over the image re-delivers every partition as a PartitionRecord; one whose
    # partition epoch did not move needs nothing from the broker, which already leads or follows it.
    zoo_id = uuid.UUID("d2113fe4-e5bf-4ba7-a4b6-2dcb2abc43e5")
    image = TopicsImage.of(
        [topic("zoo", zoo_id, new_partition((LOCAL_ID, 1, 2)), new_partition((0, LOCAL_ID)))]
    )
    records = [partition_record(zoo_id, 0, [LOCAL_ID, 1, 2]), partition_record(zoo_id, 1, [0, LOCAL_ID])]
    changes = delta_of(image, records).local_changes(LOCAL_ID)
    assert changes.leaders == {} and changes.followers == {} and changes.deletes == set()
