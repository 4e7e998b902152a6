"""The consumer's embedded protocol: Kafka's byte layout, its version rule, and kafka-python's codec as
the oracle (a member's Subscription and Assignment bytes must be what every other client writes)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KpAssignment
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KpSubscription
from kafka.protocol.consumer.metadata import ConsumerProtocolType as KP_PROTOCOL_TYPE
from kafka.protocol.old.consumer_protocol import (
    ConsumerProtocolMemberAssignment_v0,
    ConsumerProtocolMemberMetadata_v0,
)

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.protocol.types import SchemaException
from kafka_lite.consumer.internals.consumer_protocol import (
    PROTOCOL_TYPE,
    Assignment,
    Subscription,
    deserialize_assignment,
    deserialize_subscription,
    serialize_assignment,
    serialize_subscription,
)

pytestmark = pytest.mark.unit


def _str(s: str) -> bytes:
    data = s.encode("utf-8")
    return struct.pack(">h", len(data)) + data


def _array(items: list[bytes]) -> bytes:
    return struct.pack(">i", len(items)) + b"".join(items)


# -- the layout, written out by hand from ConsumerProtocol.java's schemas ---------------------------------


def test_protocol_type_is_consumer():
    assert PROTOCOL_TYPE == "consumer" == KP_PROTOCOL_TYPE


def test_subscription_bytes_are_version_topics_user_data():
    expected = struct.pack(">h", 0) + _array([_str("t0"), _str("t1")]) + struct.pack(">i", 3) + b"abc"
    assert serialize_subscription(Subscription(["t0", "t1"], b"abc")) == expected
    assert deserialize_subscription(expected) == Subscription(["t0", "t1"], b"abc")


def test_subscription_user_data_defaults_to_empty_and_may_be_null():
    # Kafka's Subscription(topics) wraps an empty buffer: length 0, not null (-1).
    assert serialize_subscription(Subscription(["t"])).endswith(b"\x00\x00\x00\x00")
    null = serialize_subscription(Subscription(["t"], None))
    assert null.endswith(b"\xff\xff\xff\xff")
    assert deserialize_subscription(null) == Subscription(["t"], None)


def test_assignment_bytes_group_partitions_by_topic():
    assignment = Assignment([("t0", 0), ("t0", 2), ("t1", 1)], b"")
    expected = (
        struct.pack(">h", 0)
        + _array(
            [
                _str("t0") + _array([struct.pack(">i", 0), struct.pack(">i", 2)]),
                _str("t1") + _array([struct.pack(">i", 1)]),
            ]
        )
        + struct.pack(">i", 0)
    )
    assert serialize_assignment(assignment) == expected
    assert deserialize_assignment(expected) == assignment


def test_assignment_groups_a_topic_that_appears_twice_under_one_entry():
    data = serialize_assignment(Assignment([("a", 1), ("b", 0), ("a", 0)]))
    # One entry for "a" (partitions 1, 0 in the order given), then "b": Kafka's asMap.
    assert deserialize_assignment(data).partitions == [("a", 1), ("a", 0), ("b", 0)]
    assert data[2:6] == struct.pack(">i", 2)


def test_empty_assignment():
    data = serialize_assignment(Assignment([]))
    assert data == b"\x00\x00" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
    assert deserialize_assignment(data) == Assignment([], b"")


# -- versions: Kafka reads any version >= 0 by its version 0 fields --------------------------------------


def test_a_later_version_is_read_by_its_version_0_fields():
    # A version 3 subscription (Kafka 2.x/3.x): v0's fields, then owned partitions, generation id and
    # rack id, which a 0.10.1 reader leaves unread.
    later = KpSubscription(
        3, ["t0", "t1"], b"ud", owned_partitions=[("t0", [1, 2])], generation_id=7, rack_id="r1"
    ).encode()
    assert later[:2] == struct.pack(">h", 3)
    assert deserialize_subscription(later) == Subscription(["t0", "t1"], b"ud")


def test_a_later_assignment_version_is_read_by_its_version_0_fields():
    later = struct.pack(">h", 1) + serialize_assignment(Assignment([("t", 4)], b"x"))[2:] + b"future"
    assert deserialize_assignment(later) == Assignment([("t", 4)], b"x")


@pytest.mark.parametrize("read", [deserialize_subscription, deserialize_assignment])
def test_a_negative_version_is_rejected(read):
    what = "subscription" if read is deserialize_subscription else "assignment"
    data = struct.pack(">h", -1) + serialize_subscription(Subscription([]))[2:]
    with pytest.raises(SchemaException, match=f"Unsupported {what} version: -1") as info:
        read(data)
    assert info.value.field == f"{what}.version"
    assert isinstance(info.value, KafkaException)


# -- bad bytes: every failure names the field ------------------------------------------------------------


@pytest.mark.parametrize("cut", range(0, 21))
def test_a_truncated_subscription_names_the_field_it_stops_in(cut):
    data = serialize_subscription(Subscription(["t0", "t1"], b"abc"))
    assert len(data) == 21  # version 2, count 4, "t0" 4, "t1" 4, user data 4 + 3
    with pytest.raises(SchemaException) as info:
        deserialize_subscription(data[:cut])
    field = info.value.field
    if cut < 2:
        assert field == "subscription.version"
    elif cut < 14:
        assert field.startswith("subscription.topics")
    else:
        assert field == "subscription.user_data"
    assert "remain" in str(info.value)


@pytest.mark.parametrize("cut", range(0, 29))
def test_a_truncated_assignment_names_the_field_it_stops_in(cut):
    data = serialize_assignment(Assignment([("t0", 0), ("t0", 1)], b"abc"))
    assert len(data) == 29  # version 2, count 4, "t0" 4, count 4, partitions 8, user data 4 + 3
    with pytest.raises(SchemaException) as info:
        deserialize_assignment(data[:cut])
    field = info.value.field
    if cut < 2:
        assert field == "assignment.version"
    elif cut < 22:
        assert field.startswith("assignment.topic_partitions")
    else:
        assert field == "assignment.user_data"


def test_a_truncated_partition_list_says_which_topic_entry():
    data = serialize_assignment(Assignment([("a", 0), ("b", 0), ("b", 1)]))
    with pytest.raises(SchemaException, match=r"topic_partitions\[1\]\.partitions") as info:
        deserialize_assignment(data[:-8])
    # topic b's partition array begins at byte 20 (version 2, topic count 4, "a" 3, a's array 8,
    # "b" 3) and claims two partitions, where only 4 bytes remain
    assert info.value.position == 20


def test_a_null_topics_array_is_rejected():
    data = struct.pack(">h", 0) + struct.pack(">i", -1) + struct.pack(">i", 0)
    with pytest.raises(SchemaException, match="array count -1 is negative") as info:
        deserialize_subscription(data)
    assert info.value.field == "subscription.topics"


def test_a_huge_claimed_topic_count_fails_before_allocating():
    data = struct.pack(">h", 0) + struct.pack(">i", 2**31 - 1)
    with pytest.raises(SchemaException, match="array claims 2147483647 elements"):
        deserialize_subscription(data)


def test_a_topic_that_is_not_utf8_is_rejected():
    data = struct.pack(">h", 0) + _array([struct.pack(">h", 2) + b"\xff\xfe"]) + struct.pack(">i", 0)
    with pytest.raises(SchemaException, match="not valid UTF-8") as info:
        deserialize_subscription(data)
    assert info.value.field == "subscription.topics[0]"


@pytest.mark.parametrize(
    ("subscription", "field"),
    [
        (Subscription(["ok", 7]), "subscription.topics[1]"),
        (Subscription(None), "subscription.topics"),
        (Subscription(["t"], "not bytes"), "subscription.user_data"),
    ],
)
def test_writing_a_bad_subscription_names_the_field(subscription, field):
    with pytest.raises(SchemaException) as info:
        serialize_subscription(subscription)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("assignment", "field"),
    [
        (Assignment([("t", 2**31)]), "assignment.topic_partitions[0].partitions[0]"),
        (Assignment([("t", 0), "t-1"]), "assignment.partitions[1]"),
        (Assignment([(None, 0)]), "assignment.topic_partitions[0].topic"),
    ],
)
def test_writing_a_bad_assignment_names_the_field(assignment, field):
    with pytest.raises(SchemaException) as info:
        serialize_assignment(assignment)
    assert info.value.field == field


# -- kafka-python's codec as the oracle ------------------------------------------------------------------

TOPICS = st.lists(st.text(min_size=1, max_size=12), max_size=6)
USER_DATA = st.one_of(st.none(), st.binary(max_size=20))
PARTITIONS = st.lists(st.integers(min_value=0, max_value=2**31 - 1), max_size=5)
# An assignment as kafka-python holds it: (topic, [partitions]) per topic, each topic once.
ASSIGNED = st.dictionaries(st.text(min_size=1, max_size=12), PARTITIONS, max_size=5).map(
    lambda d: list(d.items())
)


def _flatten(assigned: list[tuple[str, list[int]]]) -> list[tuple[str, int]]:
    return [(topic, p) for topic, partitions in assigned for p in partitions]


@settings(max_examples=200, deadline=None)
@given(TOPICS, USER_DATA)
def test_subscription_bytes_equal_kafka_pythons(topics, user_data):
    ours = serialize_subscription(Subscription(topics, user_data))
    assert ours == KpSubscription(0, topics, user_data).encode()
    assert ours == ConsumerProtocolMemberMetadata_v0(0, topics, user_data).encode()
    theirs = KpSubscription.decode(ours)
    assert (theirs.version, theirs.topics, theirs.user_data) == (0, topics, user_data)


@settings(max_examples=200, deadline=None)
@given(ASSIGNED, USER_DATA)
def test_assignment_bytes_equal_kafka_pythons(assigned, user_data):
    ours = serialize_assignment(Assignment(_flatten(assigned), user_data))
    # A topic with no partitions has no partition to carry it in Assignment's list of TopicPartitions,
    # so it is not written (Kafka's Assignment is a list of TopicPartitions, too).
    written = [(topic, partitions) for topic, partitions in assigned if partitions]
    assert ours == KpAssignment(0, written, user_data).encode()
    assert ours == ConsumerProtocolMemberAssignment_v0(0, written, user_data).encode()
    theirs = KpAssignment.decode(ours)
    assert (sorted(theirs.partitions()), theirs.user_data) == (sorted(_flatten(assigned)), user_data)


@settings(max_examples=200, deadline=None)
@given(ASSIGNED, USER_DATA)
def test_kafka_pythons_assignment_bytes_read_back(assigned, user_data):
    theirs = KpAssignment(0, assigned, user_data).encode()
    assert deserialize_assignment(theirs) == Assignment(_flatten(assigned), user_data)


@settings(max_examples=200, deadline=None)
@given(TOPICS, USER_DATA)
def test_kafka_pythons_subscription_bytes_read_back(topics, user_data):
    theirs = KpSubscription(0, topics, user_data).encode()
    assert deserialize_subscription(theirs) == Subscription(topics, user_data)
