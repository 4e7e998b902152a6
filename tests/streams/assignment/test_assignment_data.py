"""The user data a Streams member and its leader exchange, byte for byte as Kafka lays it out:
``SubscriptionInfo`` (version 1 and 2) and ``AssignmentInfo`` (version 1 and 2)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import TaskAssignmentException
from kafka_lite.streams.processor import TaskId
from kafka_lite.streams.processor.internals.assignment.assignment_info import AssignmentInfo
from kafka_lite.streams.processor.internals.assignment.subscription_info import SubscriptionInfo
from kafka_lite.streams.state.host_info import HostInfo

pytestmark = pytest.mark.unit

PROCESS = uuid.UUID("00000000-0000-0001-0000-000000000002")  # Java: most bits 1, least bits 2

SUBSCRIPTION_V2 = bytes.fromhex(
    "00000002"  # version
    "0000000000000001" "0000000000000002"  # process id: most, least significant bits
    "00000001" "00000000" "00000001"  # one previous task, 0_1
    "00000001" "00000001" "00000000"  # one standby task, 1_0
    "00000003" "683a39"  # end point "h:9"
)  # fmt: skip


def test_subscription_info_v2_golden_bytes_round_trip():
    info = SubscriptionInfo(PROCESS, frozenset({TaskId(0, 1)}), frozenset({TaskId(1, 0)}), "h:9")
    assert info.encode() == SUBSCRIPTION_V2
    assert SubscriptionInfo.decode(SUBSCRIPTION_V2) == info


def test_subscription_info_v1_has_no_end_point_and_v2_without_one_writes_length_zero():
    v1 = SubscriptionInfo(PROCESS, frozenset({TaskId(0, 1)}), frozenset({TaskId(1, 0)}), version=1)
    assert v1.encode() == bytes.fromhex("00000001") + SUBSCRIPTION_V2[4:-7]
    assert SubscriptionInfo.decode(v1.encode()) == v1
    no_end_point = SubscriptionInfo(PROCESS)
    assert no_end_point.encode()[-12:] == bytes.fromhex("000000000000000000000000")
    assert SubscriptionInfo.decode(no_end_point.encode()).user_end_point is None


def test_a_uuid_with_its_high_bit_set_is_written_as_javas_signed_longs():
    process = uuid.UUID("ffffffff-ffff-fffe-8000-000000000000")  # most = -2, least = Long.MIN_VALUE
    encoded = SubscriptionInfo(process).encode()
    assert encoded[4:20] == bytes.fromhex("fffffffffffffffe8000000000000000")
    assert SubscriptionInfo.decode(encoded).process_id == process


def test_an_unknown_subscription_version_is_refused_with_kafkas_message():
    with pytest.raises(TaskAssignmentException, match="unable to decode subscription data: version=3"):
        SubscriptionInfo.decode(bytes.fromhex("00000003") + SUBSCRIPTION_V2[4:])


ASSIGNMENT_V2 = bytes.fromhex(
    "00000002"  # version
    "00000002" "00000000" "00000000" "00000000" "00000001"  # active tasks 0_0, 0_1
    "00000001" "00000001" "00000000"  # one standby task, 1_0, restoring:
    "00000001" "0003" "742d31" "00000000"  # one partition, t-1 partition 0
    "00000001" "0001" "68" "00000009"  # one host, h:9, holding:
    "00000001" "0002" "7430" "00000001"  # one partition, t0 partition 1
)  # fmt: skip


def test_assignment_info_v2_golden_bytes_round_trip():
    info = AssignmentInfo(
        [TaskId(0, 0), TaskId(0, 1)],
        {TaskId(1, 0): frozenset({TopicPartition("t-1", 0)})},
        {HostInfo("h", 9): frozenset({TopicPartition("t0", 1)})},
    )
    assert info.encode() == ASSIGNMENT_V2
    assert AssignmentInfo.decode(ASSIGNMENT_V2) == info


def test_assignment_info_v1_stops_after_the_standby_tasks():
    info = AssignmentInfo(
        [TaskId(0, 0), TaskId(0, 1)], {TaskId(1, 0): frozenset({TopicPartition("t-1", 0)})}, version=1
    )
    assert info.encode() == bytes.fromhex("00000001") + ASSIGNMENT_V2[4:-23]
    assert AssignmentInfo.decode(info.encode()) == info


def test_an_unknown_assignment_version_is_refused_with_kafkas_message():
    with pytest.raises(TaskAssignmentException, match="Unknown assignment data version: 3"):
        AssignmentInfo.decode(bytes.fromhex("00000003") + ASSIGNMENT_V2[4:])
