"""ReplicaManager.apply_delta (Kafka 3.3's applyDelta): a KRaft broker's replicas led, followed and
deleted as the metadata log says, on a real ReplicaManager and LogManager in a tmp dir (the fetchers
recorded, not started), with deltas replayed from records."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.errors import Errors, IllegalStateException
from kafka_lite.common.metadata import PartitionChangeRecord, RemoveTopicRecord
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata.image import MetadataImage
from kafka_lite.testing.in_process_replicas import in_process_replica_manager
from tests.server.metadata.records import change, delta_of, partition, register, topic

pytestmark = pytest.mark.unit

FOO = uuid.UUID(int=0xF00)
FOO_AGAIN = uuid.UUID(int=0xF01)
FOO0, FOO1 = TopicPartition("foo", 0), TopicPartition("foo", 1)


@pytest.fixture
def broker0(tmp_path):
    manager = in_process_replica_manager(tmp_path, 0, MockTime())
    yield manager
    manager.shutdown(checkpoint_hw=False)
    manager.log_manager.shutdown()


def apply(manager, image, *records) -> MetadataImage:
    delta = delta_of(image, *records)
    new_image = delta.apply()
    manager.apply_delta(delta.topics_delta, new_image)
    return new_image


def start(manager) -> MetadataImage:
    """Brokers 0-2 registered; foo-0 led by broker 0, foo-1 by broker 1."""
    return apply(
        manager,
        MetadataImage.EMPTY,
        register(0),
        register(1),
        register(2),
        topic("foo", FOO),
        partition(FOO, 0, [0, 1, 2], leader_epoch=2, partition_epoch=4),
        partition(FOO, 1, [1, 0, 2], leader_epoch=5, partition_epoch=7),
    )


def produce(manager, tp, *values: bytes) -> None:
    answers = []
    records = MemoryRecords.with_records([(1000, None, v) for v in values])
    manager.append_records(1000, 1, False, {tp: records}, answers.append)
    assert answers[0][tp].error is Errors.NONE


def test_a_new_topic_is_led_and_followed_as_its_registrations_say(broker0):
    start(broker0)
    leader = broker0.get_partition(FOO0)
    assert leader.is_leader() and leader.log is not None, "the log is created for the new partition"
    assert (leader.leader_epoch, leader.isr, leader.zk_version) == (2, [0, 1, 2], 4)
    assert leader.controller_epoch == -1 and leader.topic_id == FOO
    follower = broker0.get_partition(FOO1)
    assert not follower.is_leader() and follower.leader_replica_id == 1 and follower.leader_epoch == 5
    fetch = broker0.replica_fetcher_manager.added
    assert set(fetch) == {FOO1}, "only the followed partition is fetched"
    assert (fetch[FOO1].broker_id, fetch[FOO1].host, fetch[FOO1].port) == (1, "127.0.0.1", 9100)


def test_a_new_leader_epoch_turns_the_leader_into_a_follower(broker0):
    image = start(broker0)
    produce(broker0, FOO0, b"a", b"b")
    apply(broker0, image, change(FOO, 0, isr=[1, 2], leader=1))
    p = broker0.get_partition(FOO0)
    assert not p.is_leader() and p.leader_replica_id == 1 and p.leader_epoch == 3
    assert broker0.replica_fetcher_manager.added[FOO0].broker_id == 1
    assert p.log.log_end_offset == 2, "the fetcher truncates, not apply_delta"


def test_a_follower_is_restarted_only_on_a_new_leader_epoch(broker0):
    image = start(broker0)
    broker0.replica_fetcher_manager.added.clear()
    image = apply(broker0, image, change(FOO, 1, isr=[1, 0]))  # an ISR change: partition epoch only
    assert broker0.get_partition(FOO1).zk_version == 8
    assert broker0.replica_fetcher_manager.added == {}, "same leader epoch: the fetcher goes on"
    apply(broker0, image, change(FOO, 1, leader=2))
    assert broker0.replica_fetcher_manager.added[FOO1].port == 9110


def test_a_leader_takes_an_isr_change_from_the_log(broker0):
    image = start(broker0)
    apply(broker0, image, change(FOO, 0, isr=[0, 1]))
    p = broker0.get_partition(FOO0)
    assert p.is_leader() and p.isr == [0, 1] and (p.leader_epoch, p.zk_version) == (2, 5)


def test_a_follower_of_an_unregistered_leader_follows_without_fetching(broker0):
    apply(broker0, MetadataImage.EMPTY, register(0), topic("foo", FOO), partition(FOO, 0, [7, 0]))
    p = broker0.get_partition(FOO0)
    assert p.leader_replica_id == 7 and p.log is not None
    assert broker0.replica_fetcher_manager.added == {}


def test_a_deleted_topic_loses_its_replicas_and_logs(broker0):
    image = start(broker0)
    produce(broker0, FOO0, b"a")
    log_dir = broker0.get_partition(FOO0).log.dir
    apply(broker0, image, RemoveTopicRecord(topic_id=FOO))
    assert broker0.get_partition(FOO0) is None and broker0.get_partition(FOO1) is None
    assert not log_dir.exists() and broker0.log_manager.get_log(FOO0) is None
    assert broker0.replica_fetcher_manager.added == {}, "no more fetching foo-1"


def test_a_replica_moved_off_this_broker_is_deleted(broker0):
    image = start(broker0)
    moved = PartitionChangeRecord(partition_id=1, topic_id=FOO, isr=[1, 2], replicas=[1, 2])
    apply(broker0, image, moved)
    assert broker0.get_partition(FOO1) is None and broker0.log_manager.get_log(FOO1) is None
    assert broker0.get_partition(FOO0).is_leader(), "the other partition is untouched"


def test_deletes_come_before_a_topic_of_the_same_name(broker0):
    image = start(broker0)
    produce(broker0, FOO0, b"a", b"b", b"c")
    apply(
        broker0, image, RemoveTopicRecord(topic_id=FOO), topic("foo", FOO_AGAIN), partition(FOO_AGAIN, 0, [0])
    )
    p = broker0.get_partition(FOO0)
    assert p.is_leader() and p.topic_id == FOO_AGAIN
    assert p.log.log_end_offset == 0, "the new topic's log, not the old one's"


def test_a_partition_of_another_topic_id_is_refused(broker0):
    image = start(broker0)
    broker0.get_partition(FOO0).topic_id = FOO_AGAIN  # a history the log cannot have
    with pytest.raises(IllegalStateException, match="but its ID is"):
        apply(broker0, image, change(FOO, 0, isr=[0]))


def test_in_controlled_shutdown_a_follower_stops_what_it_cannot_help(broker0):
    image = start(broker0)
    broker0.begin_controlled_shutdown()
    assert FOO1 in broker0.replica_fetcher_manager.added
    # the controller takes the shutting-down broker out of foo-1's ISR
    image = apply(broker0, image, change(FOO, 1, isr=[1, 2]))
    assert FOO1 not in broker0.replica_fetcher_manager.added, "stopped, not restarted"
    p = broker0.get_partition(FOO1)
    assert p is not None and p.log is not None, "stopped, not deleted"
    # a partition left with no leader is stopped too
    apply(broker0, image, change(FOO, 0, isr=[1, 2], leader=-1))
    assert FOO0 not in broker0.replica_fetcher_manager.added and broker0.get_partition(FOO0).log is not None
