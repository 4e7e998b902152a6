"""PartitionRegistration: replaying PartitionRecord and PartitionChangeRecord (Kafka 3.3.0's
PartitionRegistrationTest, with the leader recovery state and the helpers the controller uses)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.metadata import MetadataRecordSerde, PartitionChangeRecord, PartitionRecord
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.metadata import replicas as replica_lists
from kafka_lite.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_lite.metadata.leader_recovery_state import LeaderRecoveryState
from kafka_lite.metadata.partition_registration import PartitionRegistration

pytestmark = pytest.mark.unit

RECOVERED, RECOVERING = LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING


def registration(
    replicas, isr, leader, leader_epoch=0, partition_epoch=0, removing=(), adding=(), state=RECOVERED
):
    return PartitionRegistration(
        replicas, isr, removing, adding, leader, state, leader_epoch, partition_epoch
    )


def test_election_was_clean() -> None:
    assert PartitionRegistration.election_was_clean(1, (1, 2))
    assert not PartitionRegistration.election_was_clean(1, (0, 2))
    assert not PartitionRegistration.election_was_clean(1, ())
    assert PartitionRegistration.election_was_clean(3, (1, 2, 3, 4, 5, 6))
    assert PartitionRegistration.election_was_clean(NO_LEADER, ())


def test_merge_and_diff() -> None:
    a = registration((1, 2, 3), (1, 2), leader=1)
    b = registration((1, 2, 3), (3,), leader=3, leader_epoch=1, partition_epoch=1)
    c = registration((1, 2, 3), (1,), leader=1, leader_epoch=0, partition_epoch=1)
    assert a.merge(PartitionChangeRecord(leader=3, isr=[3])) == b
    assert b.diff(a) == "isr: [1, 2] -> [3], leader: 1 -> 3, leader_epoch: 0 -> 1, partition_epoch: 0 -> 1"
    assert a.merge(PartitionChangeRecord(isr=[1])) == c
    assert c.diff(a) == "isr: [1, 2] -> [1], partition_epoch: 0 -> 1"


def test_merge_bumps_the_partition_epoch_even_when_nothing_changes() -> None:
    a = registration((1, 2), (1, 2), leader=1, leader_epoch=5, partition_epoch=7)
    merged = a.merge(PartitionChangeRecord())
    assert (merged.leader, merged.leader_epoch, merged.partition_epoch) == (1, 5, 8)
    assert merged.isr == (1, 2)


def test_losing_the_leader_bumps_the_leader_epoch() -> None:
    a = registration((1,), (1,), leader=1, leader_epoch=5, partition_epoch=7)
    merged = a.merge(PartitionChangeRecord(leader=NO_LEADER, isr=[]))
    assert (merged.leader, merged.leader_epoch, merged.partition_epoch) == (NO_LEADER, 6, 8)
    assert not merged.has_leader()
    assert PartitionChangeRecord().leader == NO_LEADER_CHANGE


def test_merge_with_reassignment_data() -> None:
    partition0 = registration((1, 2, 3), (1, 2, 3), leader=1, leader_epoch=100, partition_epoch=200)
    partition1 = partition0.merge(
        PartitionChangeRecord(removing_replicas=[3], adding_replicas=[4], replicas=[1, 2, 3, 4])
    )
    assert partition1 == registration((1, 2, 3, 4), (1, 2, 3), 1, 100, 201, removing=(3,), adding=(4,))
    assert partition1.is_reassigning()
    partition2 = partition1.merge(
        PartitionChangeRecord(isr=[1, 2, 4], removing_replicas=[], adding_replicas=[], replicas=[1, 2, 4])
    )
    assert partition2 == registration((1, 2, 4), (1, 2, 4), 1, 100, 202)
    assert not partition2.is_reassigning()


def test_merge_changes_the_leader_recovery_state_only_when_the_record_does() -> None:
    a = registration((1, 2), (1,), leader=1)
    recovering = a.merge(PartitionChangeRecord(leader=2, isr=[2], leader_recovery_state=1))
    assert recovering.leader_recovery_state is RECOVERING
    assert recovering.merge(PartitionChangeRecord(isr=[2])).leader_recovery_state is RECOVERING
    assert recovering.merge(PartitionChangeRecord(leader_recovery_state=0)).leader_recovery_state is RECOVERED
    with pytest.raises(ValueError, match="Value 5 is not a valid leader recovery state"):
        a.merge(PartitionChangeRecord(leader_recovery_state=5))


def test_record_round_trip_through_the_serde() -> None:
    a = registration(
        (1, 2, 3), (1, 2), leader=1, removing=(1,), state=RECOVERING, leader_epoch=3, partition_epoch=9
    )
    topic_id = uuid.uuid4()
    record = a.to_record(topic_id, 4)
    assert record.version == 0
    assert record.message == PartitionRecord(
        partition_id=4, topic_id=topic_id, replicas=[1, 2, 3], isr=[1, 2], removing_replicas=[1],
        adding_replicas=[], leader=1, leader_recovery_state=1, leader_epoch=3, partition_epoch=9,
    )  # fmt: skip
    serde = MetadataRecordSerde()
    assert PartitionRegistration.from_record(serde.deserialize(serde.serialize(record)).message) == a


def test_lists_and_ints_compare_equal_to_tuples_and_states() -> None:
    a = PartitionRegistration([1, 2], [1], [], [], 1, 0, 0, 0)
    assert a == registration((1, 2), (1,), leader=1)
    assert a.leader_recovery_state is RECOVERED
    assert hash(a) == hash(registration((1, 2), (1,), leader=1))


def test_preferred_replica_and_leader() -> None:
    a = registration((2, 1, 3), (1, 2, 3), leader=1)
    assert a.preferred_replica() == 2
    assert not a.has_preferred_leader()
    assert registration((2, 1, 3), (1, 2, 3), leader=2).has_preferred_leader()
    assert registration((), (), leader=NO_LEADER).preferred_replica() == NO_LEADER
    assert a.is_replica_in(3)
    assert not a.is_replica_in(4)


def test_to_leader_and_isr_partition_state() -> None:
    a = registration((1, 2, 3), (1, 2), leader=1, leader_epoch=123, partition_epoch=456)
    assert a.to_leader_and_isr_partition_state(TopicPartition("foo", 1)) == {
        "topic": "foo", "partition": 1, "controller_epoch": -1, "leader": 1, "leader_epoch": 123,
        "isr": [1, 2], "zk_version": 456, "replicas": [1, 2, 3],
    }  # fmt: skip


def test_leader_recovery_state_change_to() -> None:
    assert RECOVERED.change_to(LeaderRecoveryState.NO_CHANGE) is RECOVERED
    assert RECOVERED.change_to(1) is RECOVERING
    assert LeaderRecoveryState.optional_of(2) is None
    assert list(LeaderRecoveryState) == [RECOVERED, RECOVERING]


def test_replicas_helpers() -> None:
    assert replica_lists.validate((1, 2, 3))
    assert not replica_lists.validate((1, 1))
    assert not replica_lists.validate((-1, 2))
    assert replica_lists.validate_isr((1, 2, 3), (3, 1))
    assert not replica_lists.validate_isr((1, 2, 3), (4,))
    assert not replica_lists.validate_isr((1, 2, 3), (1, 1))
    assert replica_lists.contains_all([1, 2, 3], (3, 1))
    assert not replica_lists.contains_all([1, 2], (3,))
    assert replica_lists.copy_without((1, 2, 3, 2), 2) == (1, 3)
    assert replica_lists.copy_without((1, 2, 3), [1, 3]) == (2,)
    assert replica_lists.copy_with((1, 2), 3) == (1, 2, 3)
    assert replica_lists.to_list(None) is None
