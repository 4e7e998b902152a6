"""The consumer's embedded protocol: the bytes a consumer puts inside JoinGroup and SyncGroup.

Mirrors: org.apache.kafka.clients.consumer.internals.ConsumerProtocol, and the Subscription and
         Assignment classes of PartitionAssignor (clients/src/main/java/.../consumer/internals/,
         Kafka 0.10.1)
Book:    chapter 5, 5.1.1 (metadata and partition assignors), 5.1.3 (the leader consumer runs the
         assignment)
Differs: Subscription and Assignment are dataclasses holding ``bytes`` where Kafka holds
         ``ByteBuffer``s; an assignment's topics are written in the order they first appear in its
         partition list, where Kafka groups them in a ``HashMap`` (whose order no reader relies on);
         an unreadable version says "assignment version" for an assignment, where Kafka 0.10.1 says
         "subscription version" for both.

The group coordinator on the broker never looks inside a group's member metadata: JoinGroup carries
each member's ``protocol_metadata`` and SyncGroup each member's ``member_assignment`` as opaque
``BYTES``. Only the members read them, and members of one group must agree on the format, which is
what the protocol type names: every consumer joins with ``protocol_type = "consumer"``, and Kafka
Connect's workers with "connect". A Java consumer, kafka-python, librdkafka and kafka_lite can share
one group because they all write these two structures::

    Subscription => Version Topics UserData
      Version    => INT16
      Topics     => [STRING]
      UserData   => NULLABLE_BYTES

    Assignment => Version TopicPartitions UserData
      Version         => INT16
      TopicPartitions => [Topic Partitions]
        Topic         => STRING
        Partitions    => [INT32]
      UserData        => NULLABLE_BYTES

A member sends its Subscription (which topics it wants) as its JoinGroup metadata, once per assignor
it supports; the leader decodes every member's Subscription, runs the chosen assignor, and sends each
member's Assignment in SyncGroup, which the coordinator hands to that member.

Versions: Kafka writes version 0 and reads any version that is not negative by reading the version 0
fields, so a later version may add fields only after ``user_data`` (later Kafka does exactly that:
owned partitions, the generation, the rack), and the bytes after the version 0 fields are left unread.
kafka_lite does the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_lite.common.protocol.types import (
    INT16,
    INT32,
    NULLABLE_BYTES,
    STRING,
    ArrayOf,
    Field,
    Reader,
    Schema,
    SchemaException,
)
from kafka_lite.common.topic_partition import TopicPartition

PROTOCOL_TYPE = "consumer"

CONSUMER_PROTOCOL_V0 = 0

CONSUMER_PROTOCOL_HEADER_SCHEMA = Schema(
    Field("version", INT16, "The version of the structure that follows; Kafka writes 0."),
    name="ConsumerProtocolHeader",
)
SUBSCRIPTION_V0 = Schema(
    Field("topics", ArrayOf(STRING), "The topics the member subscribes to."),
    Field("user_data", NULLABLE_BYTES, "Anything the member's assignor wants the leader to see.", b""),
    name="Subscription",
)
TOPIC_ASSIGNMENT_V0 = Schema(
    Field("topic", STRING),
    Field("partitions", ArrayOf(INT32), "The partitions of the topic given to the member."),
    name="TopicAssignment",
)
ASSIGNMENT_V0 = Schema(
    Field("topic_partitions", ArrayOf(TOPIC_ASSIGNMENT_V0), "The member's partitions, by topic."),
    Field("user_data", NULLABLE_BYTES, "Anything the leader's assignor wants the member to see.", b""),
    name="Assignment",
)


@dataclass
class Subscription:
    """What one member asks for: its topics, and its assignor's user data (Kafka's
    ``PartitionAssignor.Subscription``; by default the user data is empty, not null, as Kafka's)."""

    topics: list[str]
    user_data: bytes | None = b""


@dataclass
class Assignment:
    """What one member is given: its partitions, and the assignor's user data (Kafka's
    ``PartitionAssignor.Assignment``)."""

    partitions: list[TopicPartition] = field(default_factory=list)
    user_data: bytes | None = b""


def serialize_subscription(subscription: Subscription) -> bytes:
    """The version 0 bytes of ``subscription``: a member's JoinGroup ``protocol_metadata``."""
    out = bytearray()
    _write(out, CONSUMER_PROTOCOL_HEADER_SCHEMA, {"version": CONSUMER_PROTOCOL_V0}, "subscription")
    body = {"topics": subscription.topics, "user_data": subscription.user_data}
    _write(out, SUBSCRIPTION_V0, body, "subscription")
    return bytes(out)


def deserialize_subscription(buffer: bytes | bytearray | memoryview) -> Subscription:
    """Read a Subscription of any version from its version 0 fields (Kafka's
    ``deserializeSubscription``); a ``SchemaException`` names the field that is short or wrong."""
    r = Reader(buffer)
    _read_version(r, "subscription")
    struct = _read(r, SUBSCRIPTION_V0, "subscription")
    return Subscription(list(struct["topics"]), struct["user_data"])


def serialize_assignment(assignment: Assignment) -> bytes:
    """The version 0 bytes of ``assignment``: what the leader sends for a member in SyncGroup."""
    out = bytearray()
    _write(out, CONSUMER_PROTOCOL_HEADER_SCHEMA, {"version": CONSUMER_PROTOCOL_V0}, "assignment")
    topic_partitions = [
        {"topic": topic, "partitions": partitions}
        for topic, partitions in _as_map(assignment.partitions).items()
    ]
    body = {"topic_partitions": topic_partitions, "user_data": assignment.user_data}
    _write(out, ASSIGNMENT_V0, body, "assignment")
    return bytes(out)


def deserialize_assignment(buffer: bytes | bytearray | memoryview) -> Assignment:
    """Read an Assignment of any version from its version 0 fields (Kafka's ``deserializeAssignment``);
    the partitions come out topic by topic, in the order the bytes list them."""
    r = Reader(buffer)
    _read_version(r, "assignment")
    struct = _read(r, ASSIGNMENT_V0, "assignment")
    partitions = [
        TopicPartition(topic_assignment["topic"], partition)
        for topic_assignment in struct["topic_partitions"]
        for partition in topic_assignment["partitions"]
    ]
    return Assignment(partitions, struct["user_data"])


def _read_version(r: Reader, what: str) -> int:
    """Read the header and check the version (Kafka's ``checkVersionCompatibility``): a negative one is
    an error; any other is read as version 0."""
    version = _read(r, CONSUMER_PROTOCOL_HEADER_SCHEMA, what)["version"]
    if version < CONSUMER_PROTOCOL_V0:
        raise SchemaException(f"Unsupported {what} version: {version}", field=f"{what}.version", position=0)
    return version


def _read(r: Reader, schema: Schema, what: str) -> dict:
    try:
        return schema.read(r)
    except SchemaException as e:
        raise e.under(what) from None


def _write(out: bytearray, schema: Schema, value: dict, what: str) -> None:
    try:
        schema.write(out, value)
    except SchemaException as e:
        raise e.under(what) from None


def _as_map(partitions: list[TopicPartition]) -> dict[str, list[int]]:
    """Group partitions by topic (Kafka's ``asMap``), topics in the order they first appear."""
    by_topic: dict[str, list[int]] = {}
    for i, topic_partition in enumerate(partitions):
        if not (isinstance(topic_partition, tuple) and len(topic_partition) == 2):
            raise SchemaException(
                f"{topic_partition!r} is not a (topic, partition) pair", field=f"assignment.partitions[{i}]"
            )
        topic, partition = topic_partition
        by_topic.setdefault(topic, []).append(partition)
    return by_topic
