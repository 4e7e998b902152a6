"""BrokersToIsrs: the partitions each broker is in the ISR of and leads, the leaderless ones under
NO_LEADER, the offline count, and a revert restoring the index (Kafka's BrokersToIsrsTest)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.metadata.controller.brokers_to_isrs import BrokersToIsrs, TopicIdPartition
from kafka_lite.metadata.leader_constants import NO_LEADER
from kafka_lite.metadata.timeline import SnapshotRegistry

pytestmark = pytest.mark.unit

T0 = uuid.UUID("1c8c2a38-6d3f-4bb0-8d0e-1a0f1d3b7a01")
T1 = uuid.UUID("9f1e0a4c-2b7d-4c55-9a6e-3c2d1b0a9f02")


def parts(iterator):
    return set(iterator)


def test_iterator_lists_the_isr_memberships():
    index = BrokersToIsrs(SnapshotRegistry())
    assert parts(index.iterator(1, False)) == set()
    index.update(T0, 0, None, [1, 2, 3], NO_LEADER, 1)
    index.update(T1, 1, None, [2, 3, 4], NO_LEADER, 4)
    assert parts(index.iterator(1, False)) == {TopicIdPartition(T0, 0)}
    assert parts(index.iterator(2, False)) == {TopicIdPartition(T0, 0), TopicIdPartition(T1, 1)}
    assert parts(index.iterator(4, False)) == {TopicIdPartition(T1, 1)}
    assert parts(index.iterator(5, False)) == set()
    index.update(T1, 2, None, [3, 2, 1], NO_LEADER, 3)
    assert parts(index.partitions_with_broker_in_isr(2)) == {
        TopicIdPartition(T0, 0),
        TopicIdPartition(T1, 1),
        TopicIdPartition(T1, 2),
    }


def test_leaders_only_follows_a_leader_change():
    index = BrokersToIsrs(SnapshotRegistry())
    index.update(T0, 0, None, [1, 2, 3], NO_LEADER, 1)
    index.update(T1, 1, None, [2, 3, 4], NO_LEADER, 4)
    assert parts(index.partitions_led_by_broker(1)) == {TopicIdPartition(T0, 0)}
    assert parts(index.partitions_led_by_broker(2)) == set()
    assert parts(index.partitions_led_by_broker(4)) == {TopicIdPartition(T1, 1)}
    index.update(T0, 0, [1, 2, 3], [1, 2, 3], 1, 2)
    assert parts(index.partitions_led_by_broker(1)) == set()
    assert parts(index.partitions_led_by_broker(2)) == {TopicIdPartition(T0, 0)}
    assert index.has_leaderships(2) and not index.has_leaderships(1)
    # Broker 1 is still in the ISR.
    assert parts(index.partitions_with_broker_in_isr(1)) == {TopicIdPartition(T0, 0)}


def test_a_partition_without_a_leader_is_listed_and_counted_offline():
    index = BrokersToIsrs(SnapshotRegistry())
    index.update(T0, 2, None, [1, 2, 3], NO_LEADER, 3)
    assert parts(index.partitions_led_by_broker(3)) == {TopicIdPartition(T0, 2)}
    assert parts(index.partitions_with_no_leader()) == set()
    assert index.offline_partition_count() == 0
    index.update(T0, 2, [1, 2, 3], [1, 2, 3], 3, NO_LEADER)
    assert parts(index.partitions_with_no_leader()) == {TopicIdPartition(T0, 2)}
    assert index.offline_partition_count() == 1
    index.update(T0, 2, [1, 2, 3], [2], NO_LEADER, 2)
    assert parts(index.partitions_with_no_leader()) == set()
    assert index.offline_partition_count() == 0
    assert parts(index.partitions_with_broker_in_isr(1)) == set()
    assert parts(index.partitions_led_by_broker(2)) == {TopicIdPartition(T0, 2)}


def test_removing_a_partition_and_a_topic_entry():
    index = BrokersToIsrs(SnapshotRegistry())
    index.update(T0, 0, None, [1, 2], NO_LEADER, 1)
    index.update(T0, 1, None, [2], NO_LEADER, 2)
    index.update(T0, 1, [2], [2], 2, NO_LEADER)
    assert index.offline_partition_count() == 1
    index.update(T0, 0, [1, 2], None, 1, NO_LEADER)
    assert parts(index.partitions_with_broker_in_isr(1)) == set()
    assert parts(index.partitions_with_broker_in_isr(2)) == {TopicIdPartition(T0, 1)}
    index.remove_topic_entry_for_broker(T0, 2)
    index.remove_topic_entry_for_broker(T0, NO_LEADER)
    assert parts(index.partitions_with_broker_in_isr(2)) == set()
    assert index.offline_partition_count() == 0


def test_a_reverted_snapshot_restores_the_index():
    registry = SnapshotRegistry()
    index = BrokersToIsrs(registry)
    index.update(T0, 0, None, [1, 2, 3], NO_LEADER, 1)
    registry.get_or_create_snapshot(10)
    index.update(T0, 0, [1, 2, 3], [2, 3], 1, NO_LEADER)
    index.update(T1, 0, None, [4], NO_LEADER, 4)
    assert parts(index.partitions_with_no_leader()) == {TopicIdPartition(T0, 0)}
    registry.revert_to_snapshot(10)
    assert parts(index.partitions_led_by_broker(1)) == {TopicIdPartition(T0, 0)}
    assert parts(index.partitions_with_broker_in_isr(4)) == set()
    assert parts(index.partitions_with_no_leader()) == set()
    assert index.offline_partition_count() == 0
