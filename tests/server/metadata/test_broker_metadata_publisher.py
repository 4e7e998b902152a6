"""BrokerMetadataPublisher: one publish reaches the metadata cache, the replica manager (a real one,
with its LogManager in a tmp dir), a real group coordinator (its groups loaded and unloaded as
__consumer_offsets partitions come and go, and a deleted topic's committed offsets removed), the
transaction coordinator's elections, and the topic config handler (the logs' settings); on the
first publish, stray logs are deleted."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import ConfigRecord, RemoveTopicRecord
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.coordinator.group_coordinator import GroupConfig
from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata
from kafka_lite.metadata.image import MetadataImage
from kafka_lite.server import quota_factory
from kafka_lite.server.config_handler import TopicConfigHandler
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata.broker_metadata_publisher import (
    BrokerMetadataPublisher,
    find_stray_partitions,
)
from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from kafka_lite.testing.group_coordinator import CoordinatorHarness
from kafka_lite.testing.in_process_replicas import in_process_replica_manager
from tests.server.metadata.records import change, delta_of, image_of, partition, register, topic

pytestmark = pytest.mark.unit

FOO = uuid.UUID(int=0xF00)
OFFSETS = uuid.UUID(int=0x0FF)
TXNS = uuid.UUID(int=0x7C5)
GROUP = "checkout"


class RecordingTxnCoordinator:
    def __init__(self) -> None:
        self.calls = []

    def handle_txn_immigration(self, partition_id: int, coordinator_epoch: int) -> None:
        self.calls.append(("immigration", partition_id, coordinator_epoch))

    def handle_txn_emigration(self, partition_id: int, coordinator_epoch: int) -> None:
        self.calls.append(("emigration", partition_id, coordinator_epoch))


@pytest.fixture
def broker(tmp_path):
    time = MockTime()
    replica_manager = in_process_replica_manager(tmp_path, 0, time)
    groups = CoordinatorHarness(GroupConfig(), GROUP, offsets_partitions=2, time=time)
    groups.resign(groups.partition)  # the harness starts leading it; here the metadata log decides
    quotas = quota_factory.instantiate(
        KafkaConfig({"zookeeper.connect": "unused:2181", "broker.id": 0}), time
    )
    txns = RecordingTxnCoordinator()
    cache = KRaftMetadataCache(0)
    publisher = BrokerMetadataPublisher(
        0, cache, replica_manager.log_manager, replica_manager, groups.coordinator, txns,
        {"topics": TopicConfigHandler(replica_manager.log_manager, {}, 0, quotas)},
    )  # fmt: skip
    yield publisher, replica_manager, groups, txns
    quotas.shutdown()
    replica_manager.shutdown(checkpoint_hw=False)
    replica_manager.log_manager.shutdown()


def publish(publisher, image, *records) -> MetadataImage:
    delta = delta_of(image, *records)
    new_image = delta.apply()
    publisher.publish(delta, new_image)
    return new_image


def start(publisher) -> MetadataImage:
    return publish(
        publisher,
        MetadataImage.EMPTY,
        register(0),
        register(1),
        topic("foo", FOO),
        partition(FOO, 0, [0, 1]),
        topic("__consumer_offsets", OFFSETS),
        partition(OFFSETS, 0, [0, 1], leader_epoch=3),
        partition(OFFSETS, 1, [0, 1], leader_epoch=3),
        topic("__transaction_state", TXNS),
        partition(TXNS, 0, [1, 0], leader_epoch=4),
    )


def test_the_first_publish_starts_nothing(broker, monkeypatch):
    """The broker starts its log manager, replica manager and coordinators before the first publish
    (Kafka 3.3's publisher starts them on its first publish): publishing only hands them the image."""
    publisher, replica_manager, groups, _ = broker
    started: list[str] = []
    for name, part in (
        ("log manager", replica_manager.log_manager),
        ("replica manager", replica_manager),
        ("group coordinator", groups.coordinator),
    ):
        monkeypatch.setattr(part, "startup", lambda *a, _name=name, **k: started.append(_name))
    start(publisher)
    assert started == []


def test_the_cache_and_the_replica_manager_take_the_image(broker):
    publisher, replica_manager, _, _ = broker
    image = start(publisher)
    assert publisher.metadata_cache.current_image() is image
    assert publisher.metadata_cache.partition_state("foo", 0).leader == 0
    assert replica_manager.get_partition(TopicPartition("foo", 0)).is_leader()
    assert not replica_manager.get_partition(TopicPartition("__transaction_state", 0)).is_leader()
    assert publisher.published_offset == image.highest_offset_and_epoch.offset


def test_the_group_coordinator_loads_and_unloads_as_leadership_moves(broker):
    publisher, _, groups, _ = broker
    image = start(publisher)
    groups.scheduler.tick()
    assert groups.group_manager.is_group_local(GROUP), (
        "elected for every __consumer_offsets partition led here"
    )
    publish(publisher, image, change(OFFSETS, groups.partition, leader=1))
    groups.scheduler.tick()
    assert not groups.group_manager.is_group_local(GROUP), "resigned once another broker leads it"


def test_a_deleted_topics_committed_offsets_go_with_it(broker):
    publisher, _, groups, _ = broker
    image = start(publisher)
    groups.scheduler.tick()
    foo_0 = TopicPartition("foo", 0)
    committed = []
    groups.coordinator.handle_commit_offsets(GROUP, "", -1, {foo_0: OffsetAndMetadata(5)}, committed.append)
    assert committed == [{foo_0: Errors.NONE}]

    publish(publisher, image, RemoveTopicRecord(topic_id=FOO))
    fetched = []
    groups.coordinator.handle_fetch_offsets(
        GROUP, [foo_0], lambda error, offsets: fetched.append((error, offsets))
    )
    # what Kafka answers for a partition the group has no offset for (OffsetFetch v1+)
    assert fetched == [(Errors.NONE, {foo_0: (-1, "", Errors.NONE)})]


def test_the_transaction_coordinator_follows_its_partitions_with_the_leader_epoch(broker):
    publisher, _, _, txns = broker
    image = start(publisher)
    assert txns.calls == [("emigration", 0, 4)], "a follower's partition: resign (it may have led it)"
    image = publish(publisher, image, change(TXNS, 0, leader=0))
    assert txns.calls[-1] == ("immigration", 0, 5)
    calls = len(txns.calls)
    image = publish(publisher, image, change(TXNS, 0, isr=[0]))
    assert txns.calls[calls:] == [], "an ISR change is no election (Kafka 3.8's rule; 3.3 elected again)"
    image = publish(publisher, image, change(TXNS, 0, leader=0))
    assert txns.calls[calls:] == [("immigration", 0, 6)], "the same leader named again: the next epoch"
    publish(publisher, image, RemoveTopicRecord(topic_id=TXNS))
    assert txns.calls[-1] == ("emigration", 0, 6), "a deleted topic's partitions led here: resign"


def test_topic_configs_reach_the_logs(broker):
    publisher, replica_manager, _, _ = broker
    image = start(publisher)
    log = replica_manager.get_partition(TopicPartition("foo", 0)).log
    default = log.config.retention_ms
    set_retention = ConfigRecord(resource_type=2, resource_name="foo", name="retention.ms", value="60000")
    image = publish(publisher, image, set_retention)
    assert log.config.retention_ms == 60000 != default
    publish(
        publisher, image, ConfigRecord(resource_type=2, resource_name="foo", name="retention.ms", value=None)
    )
    assert log.config.retention_ms == default, "a deleted key falls back to the broker's default"


def test_the_first_publish_deletes_stray_logs(broker):
    publisher, replica_manager, _, _ = broker
    stray = replica_manager.log_manager.create_log(TopicPartition("gone", 0))
    moved = replica_manager.log_manager.create_log(TopicPartition("foo", 1))
    start_image = image_of(register(0), topic("foo", FOO), partition(FOO, 0, [0]), partition(FOO, 1, [1]))
    publisher.publish(delta_of(MetadataImage.EMPTY, register(0)), start_image)
    assert not stray.dir.exists() and not moved.dir.exists()
    assert replica_manager.log_manager.get_log(TopicPartition("gone", 0)) is None


def test_find_stray_partitions_by_name():
    image = image_of(topic("foo", FOO), partition(FOO, 0, [0, 1]), partition(FOO, 1, [1, 2]))
    tps = [
        TopicPartition("foo", 0),
        TopicPartition("foo", 1),
        TopicPartition("foo", 2),
        TopicPartition("bar", 0),
    ]
    assert find_stray_partitions(0, image.topics, tps) == tps[1:]
