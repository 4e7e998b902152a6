"""PartitionChangeBuilder: the election (preferred, online, unclean), the leader epoch bump on a
shrink, the ISR never emptied, and no record when nothing changes (Kafka's
PartitionChangeBuilderTest, case by case)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.metadata import PartitionChangeRecord
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.metadata.controller.partition_change_builder import (
    Election,
    PartitionChangeBuilder,
    change_record_is_no_op,
)
from kafka_lite.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_lite.metadata.leader_recovery_state import LeaderRecoveryState
from kafka_lite.metadata.partition_registration import PartitionRegistration

pytestmark = pytest.mark.unit

RECOVERED = LeaderRecoveryState.RECOVERED
RECOVERING = LeaderRecoveryState.RECOVERING


def registration(
    replicas, isr, leader, removing=(), adding=(), state=RECOVERED, leader_epoch=100, partition_epoch=200
):
    return PartitionRegistration(
        replicas=replicas,
        isr=isr,
        removing_replicas=removing,
        adding_replicas=adding,
        leader=leader,
        leader_recovery_state=state,
        leader_epoch=leader_epoch,
        partition_epoch=partition_epoch,
    )


FOO = registration((2, 1, 3), (2, 1, 3), leader=1)
FOO_ID = uuid.UUID("15bae675-c7e2-47e2-820d-8f244c85a6ae")
BAR = registration((1, 2, 3, 4), (1, 2, 3), leader=1, removing=(1,), adding=(4,))
BAR_ID = uuid.UUID("2ca7d4b0-209d-40a7-a4bc-bf4ad3963d9f")
BAZ = registration((2, 1, 3), (1, 3), leader=3)
BAZ_ID = uuid.UUID("c10cdee6-0824-4b0b-9435-d9765e0208ec")
OFFLINE = registration((2, 1, 3), (3,), leader=NO_LEADER)
OFFLINE_ID = uuid.UUID("2ca7d4b0-209d-40a7-a4bc-bf4ad3963d9f")


def foo_builder():
    # Broker 3 may not lead (fenced, say).
    return PartitionChangeBuilder(FOO, FOO_ID, 0, lambda r: r != 3)


def bar_builder():
    return PartitionChangeBuilder(BAR, BAR_ID, 0, lambda r: r != 3)


def baz_builder():
    return PartitionChangeBuilder(BAZ, BAZ_ID, 0, lambda r: True)


def offline_builder():
    return PartitionChangeBuilder(OFFLINE, OFFLINE_ID, 0, lambda r: r == 1)


def change(topic_id, **fields):
    return ApiMessageAndVersion(PartitionChangeRecord(topic_id=topic_id, partition_id=0, **fields), 0)


def test_a_record_of_defaults_is_no_change():
    assert change_record_is_no_op(PartitionChangeRecord())
    assert not change_record_is_no_op(PartitionChangeRecord(leader=1))
    assert not change_record_is_no_op(PartitionChangeRecord(isr=[1, 2, 3]))
    assert not change_record_is_no_op(PartitionChangeRecord(removing_replicas=[1]))
    assert not change_record_is_no_op(PartitionChangeRecord(adding_replicas=[4]))
    assert not change_record_is_no_op(PartitionChangeRecord(leader_recovery_state=int(RECOVERED)))


@pytest.mark.parametrize(
    ("builder", "expected"),
    [
        # The preferred replica 2 is in the ISR and acceptable.
        (lambda: foo_builder().set_election(Election.PREFERRED), (2, False)),
        # Online (and unclean) keep the current leader while it qualifies.
        (lambda: foo_builder(), (1, False)),
        (lambda: foo_builder().set_election(Election.UNCLEAN), (1, False)),
        (lambda: foo_builder().set_target_isr([1, 3]), (1, False)),
        (lambda: foo_builder().set_election(Election.UNCLEAN).set_target_isr([1, 3]), (1, False)),
        # Only 3 is left in the ISR and 3 may not lead: no leader, unless unclean, which takes the
        # first acceptable replica, 2, from outside the ISR.
        (lambda: foo_builder().set_target_isr([3]), (NO_LEADER, False)),
        (lambda: foo_builder().set_election(Election.UNCLEAN).set_target_isr([3]), (2, True)),
        # An ISR member that qualifies wins over unclean candidates earlier in replica order.
        (
            lambda: (
                foo_builder()
                .set_election(Election.UNCLEAN)
                .set_target_isr([4])
                .set_target_replicas([2, 1, 3, 4])
            ),
            (4, False),
        ),
        # BAZ's preferred replica 2 is not in the ISR: its current leader 3 stays.
        (lambda: baz_builder().set_election(Election.PREFERRED), (3, False)),
        (lambda: baz_builder(), (3, False)),
        (lambda: baz_builder().set_election(Election.UNCLEAN), (3, False)),
    ],
)
def test_elect_leader(builder, expected):
    result = builder().elect_leader()
    assert (result.node, result.unclean) == expected


@pytest.mark.parametrize(
    ("builder", "record", "expected_leader"),
    [
        (foo_builder, PartitionChangeRecord(), NO_LEADER_CHANGE),
        # A shrunk ISR bumps the leader epoch: the record names the current leader again.
        (lambda: foo_builder().set_target_isr([2, 1]), PartitionChangeRecord(), 1),
        # A grown ISR or replica set does not.
        (lambda: foo_builder().set_target_isr([2, 1, 3, 4]), PartitionChangeRecord(), NO_LEADER_CHANGE),
        (lambda: foo_builder().set_target_replicas([2, 1, 3, 4]), PartitionChangeRecord(), NO_LEADER_CHANGE),
        # A record that already names a leader keeps it.
        (lambda: foo_builder().set_target_replicas([2, 1, 3, 4]), PartitionChangeRecord(leader=2), 2),
    ],
)
def test_trigger_leader_epoch_bump_if_needed(builder, record, expected_leader):
    builder().trigger_leader_epoch_bump_if_needed(record)
    assert record.leader == expected_leader


def test_no_change_builds_no_record():
    assert foo_builder().build() is None
    assert foo_builder().set_election(Election.UNCLEAN).build() is None
    assert bar_builder().build() is None
    assert bar_builder().set_election(Election.UNCLEAN).build() is None
    assert baz_builder().set_election(Election.PREFERRED).build() is None


def test_isr_shrink_keeps_the_leader_and_bumps_its_epoch():
    assert foo_builder().set_target_isr([2, 1]).build() == change(FOO_ID, isr=[2, 1], leader=1)


def test_isr_without_the_leader_elects_from_the_isr_in_replica_order():
    assert foo_builder().set_target_isr([2, 3]).build() == change(FOO_ID, isr=[2, 3], leader=2)


def test_rearranged_replicas_change_only_the_replicas():
    assert foo_builder().set_target_replicas([3, 2, 1]).build() == change(FOO_ID, replicas=[3, 2, 1])


def test_isr_enlargement_completes_a_reassignment():
    assert bar_builder().set_target_isr([1, 2, 3, 4]).build() == change(
        BAR_ID, replicas=[2, 3, 4], isr=[2, 3, 4], leader=2, removing_replicas=[], adding_replicas=[]
    )


def test_unclean_election_makes_the_new_leader_the_whole_isr_and_recovering():
    expected = change(FOO_ID, isr=[2], leader=2, leader_recovery_state=int(RECOVERING))
    assert foo_builder().set_election(Election.UNCLEAN).set_target_isr([3]).build() == expected
    expected = change(OFFLINE_ID, isr=[1], leader=1, leader_recovery_state=int(RECOVERING))
    assert offline_builder().set_election(Election.UNCLEAN).build() == expected
    assert offline_builder().set_election(Election.UNCLEAN).set_target_isr([2]).build() == expected


def test_without_unclean_an_offline_partition_stays_offline():
    assert offline_builder().build() is None


@pytest.mark.parametrize("is_leader_recovery_supported", [True, False])
def test_the_last_isr_member_stays_in_the_isr_and_a_leader_change_keeps_recovering(
    is_leader_recovery_supported,
):
    leader_id = 1
    reg = registration((1, 2, 3), (1,), leader=leader_id, state=RECOVERING)
    # The leader goes: an empty target ISR is not written, the ISR keeps its last member.
    offline = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: False, is_leader_recovery_supported)
    record = offline.set_target_isr([]).build().message
    assert (record.leader, record.isr, record.leader_recovery_state) == (NO_LEADER, None, -1)
    reg = reg.merge(record)
    assert (reg.leader, reg.isr, reg.leader_recovery_state) == (NO_LEADER, (leader_id,), RECOVERING)
    # It comes back: elected from the ISR it never left, and still recovering.
    record = (
        PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: True, is_leader_recovery_supported).build().message
    )
    assert record.leader_recovery_state == -1
    reg = reg.merge(record)
    assert (reg.leader, reg.isr, reg.leader_recovery_state) == (leader_id, (leader_id,), RECOVERING)


@pytest.mark.parametrize("is_leader_recovery_supported", [True, False])
def test_unclean_sets_recovering_only_where_supported(is_leader_recovery_supported):
    leader_id = 1
    reg = registration((1, 2, 3), (2, 3), leader=NO_LEADER)
    builder = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: b == leader_id, is_leader_recovery_supported)
    record = builder.set_election(Election.UNCLEAN).build().message
    expected_state = RECOVERING if is_leader_recovery_supported else RECOVERED
    reg = reg.merge(record)
    assert (reg.leader, reg.isr, reg.leader_recovery_state) == (leader_id, (leader_id,), expected_state)


def test_merge_bumps_both_epochs_on_a_new_leader_and_only_the_partition_epoch_on_a_grown_isr():
    moved = FOO.merge(foo_builder().set_target_isr([2, 3]).build().message)
    assert (moved.leader, moved.leader_epoch, moved.partition_epoch) == (2, 101, 201)
    grown = BAZ.merge(baz_builder().set_target_isr([1, 3, 2]).build().message)
    assert (grown.leader, grown.leader_epoch, grown.partition_epoch) == (3, 100, 201)
