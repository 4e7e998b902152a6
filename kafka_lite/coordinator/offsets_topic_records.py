"""The records of ``__consumer_offsets``: Kafka's key and value schemas, what each holds, and the
functions that write and read them.

Mirrors: object kafka.coordinator.GroupMetadataManager (its schemas, offsetCommitKey,
         offsetCommitValue, groupMetadataKey, groupMetadataValue, readMessageKey,
         readOffsetMessageValue, readGroupMessageValue) and the case classes beside it
         (BaseKey, OffsetKey, GroupMetadataKey, GroupTopicPartition;
         core/src/main/scala/kafka/coordinator/GroupMetadataManager.scala, Kafka 0.10.1). Kafka
         keeps them in the manager's companion object; here they have their own module, since the
         manager, the Spark source and the tests read them without the manager.
Book:    chapter 3, 3.5.2 (offsets committed to the internal topic); chapter 5, 5.2.2 (the consumer
         and group metadata the coordinator stores)
Differs: Kafka's readGroupMessageValue builds a ``GroupMetadata`` with its members; here
         ``read_group_message_value`` returns the record's fields as a ``StoredGroupMetadata`` (the
         manager makes the group), and ``group_metadata_value`` takes the group as plain data.
         Decoding is strict: bytes left over after a key or value are an error (Kafka's
         ``Schema.read`` ignores them), and every failure is one ``OffsetsTopicRecordException``
         naming the part, its version, the field and the byte.

The group coordinator keeps its state in a compacted topic, ``__consumer_offsets``, with two kinds
of record, told apart by the int16 version at the start of the key:

    key version 0 or 1   [group, topic, partition]   value: the committed offset (OffsetAndMetadata)
    key version 2        [group]                     value: the group's generation and members

A key is always ``version + struct``, and so is a value; Kafka writes key version 1 for offsets
(0 has the same schema) and 2 for groups. Log compaction keeps the latest value per key, so the
topic holds, for every group, its last committed offset per partition and its last generation: all
a new coordinator needs to take over the group. Deleting is writing a tombstone, a record with the
key and a null value: an expired offset, and a group that is dead, go that way, and the readers
here return ``None`` for one.

Which value versions are written, as Kafka 0.10.1 does:

- Offset value v1: v0 has one ``timestamp``; v1 has ``commit_timestamp`` and ``expire_timestamp``,
  so that each offset carries its own expiry (OffsetCommit v2's ``retention_time`` sets it). v0 is
  still read: its timestamp is the commit time, and its expiry is -1, unset.
- Group value v1: it adds each member's ``rebalance_timeout`` (KIP-62, JoinGroup v1). Kafka 0.10.1
  writes v1 unless ``inter.broker.protocol.version`` is older than 0.10.1, so that older brokers in
  the cluster can still read it. kafka_lite's brokers have no older version to wait for, and the
  members of a JoinGroup v1 or v2 carry a rebalance timeout that v0 would lose, so v1 is written.
  Reading v0, a member's rebalance timeout is its session timeout, as Kafka's reader has it (and
  as JoinGroup v0 has it).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.protocol.types import (
    BYTES,
    INT32,
    INT64,
    NULLABLE_STRING,
    STRING,
    ArrayOf,
    Field,
    Schema,
    SchemaException,
    decode,
)
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata


class OffsetsTopicRecordException(KafkaException):
    """A key or value of ``__consumer_offsets`` that does not match Kafka's schemas: an unknown
    version, too few bytes, bytes left over, or a value that cannot be written."""


# --- The schemas, as Kafka declares them ------------------------------------------------------------------

# --8<-- [start:schemas]
OFFSET_COMMIT_KEY_SCHEMA = Schema(
    Field("group", STRING),
    Field("topic", STRING),
    Field("partition", INT32),
    name="OFFSET_COMMIT_KEY_SCHEMA",
)
OFFSET_COMMIT_VALUE_SCHEMA_V0 = Schema(
    Field("offset", INT64),
    Field("metadata", STRING, "Associated metadata.", ""),
    Field("timestamp", INT64),
    name="OFFSET_COMMIT_VALUE_SCHEMA_V0",
)
OFFSET_COMMIT_VALUE_SCHEMA_V1 = Schema(
    Field("offset", INT64),
    Field("metadata", STRING, "Associated metadata.", ""),
    Field("commit_timestamp", INT64),
    Field("expire_timestamp", INT64),
    name="OFFSET_COMMIT_VALUE_SCHEMA_V1",
)
GROUP_METADATA_KEY_SCHEMA = Schema(Field("group", STRING), name="GROUP_METADATA_KEY_SCHEMA")

MEMBER_METADATA_V0 = Schema(
    Field("member_id", STRING),
    Field("client_id", STRING),
    Field("client_host", STRING),
    Field("session_timeout", INT32),
    Field("subscription", BYTES),
    Field("assignment", BYTES),
    name="MEMBER_METADATA_V0",
)
# v1 puts rebalance_timeout before session_timeout, so it is not v0 with a field appended.
MEMBER_METADATA_V1 = Schema(
    Field("member_id", STRING),
    Field("client_id", STRING),
    Field("client_host", STRING),
    Field("rebalance_timeout", INT32),
    Field("session_timeout", INT32),
    Field("subscription", BYTES),
    Field("assignment", BYTES),
    name="MEMBER_METADATA_V1",
)
# protocol and leader are null for a group with no generation in progress (an Empty group).
GROUP_METADATA_VALUE_SCHEMA_V0 = Schema(
    Field("protocol_type", STRING),
    Field("generation", INT32),
    Field("protocol", NULLABLE_STRING),
    Field("leader", NULLABLE_STRING),
    Field("members", ArrayOf(MEMBER_METADATA_V0)),
    name="GROUP_METADATA_VALUE_SCHEMA_V0",
)
GROUP_METADATA_VALUE_SCHEMA_V1 = Schema(
    Field("protocol_type", STRING),
    Field("generation", INT32),
    Field("protocol", NULLABLE_STRING),
    Field("leader", NULLABLE_STRING),
    Field("members", ArrayOf(MEMBER_METADATA_V1)),
    name="GROUP_METADATA_VALUE_SCHEMA_V1",
)

# --8<-- [end:schemas]

# The key's version says what the record is: Kafka's MESSAGE_TYPE_SCHEMAS.
MESSAGE_TYPE_SCHEMAS: dict[int, Schema] = {
    0: OFFSET_COMMIT_KEY_SCHEMA,
    1: OFFSET_COMMIT_KEY_SCHEMA,
    2: GROUP_METADATA_KEY_SCHEMA,
}
OFFSET_VALUE_SCHEMAS: dict[int, Schema] = {0: OFFSET_COMMIT_VALUE_SCHEMA_V0, 1: OFFSET_COMMIT_VALUE_SCHEMA_V1}
GROUP_VALUE_SCHEMAS: dict[int, Schema] = {
    0: GROUP_METADATA_VALUE_SCHEMA_V0,
    1: GROUP_METADATA_VALUE_SCHEMA_V1,
}

CURRENT_OFFSET_KEY_SCHEMA_VERSION = 1
CURRENT_GROUP_KEY_SCHEMA_VERSION = 2
CURRENT_OFFSET_VALUE_SCHEMA_VERSION = 1
CURRENT_GROUP_VALUE_SCHEMA_VERSION = 1

_VERSION = struct.Struct(">h")  # every key and value starts with its schema version, an int16


# --- What the records hold ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupTopicPartition:
    """A group's committed offset is keyed by the group and the partition (Kafka's case class)."""

    group: str
    topic_partition: TopicPartition

    def __str__(self) -> str:
        topic, partition = self.topic_partition
        return f"[{self.group},{topic},{partition}]"


@dataclass(frozen=True)
class OffsetKey:
    """The key of an offset commit record (key version 0 or 1)."""

    version: int
    key: GroupTopicPartition


@dataclass(frozen=True)
class GroupMetadataKey:
    """The key of a group metadata record (key version 2): the group id."""

    version: int
    key: str


BaseKey = OffsetKey | GroupMetadataKey  # Kafka's BaseKey trait: what read_message_key returns


class StoredMemberMetadata(NamedTuple):
    """One member as a group metadata value stores it: who it is, its timeouts (ms), its
    subscription in the group's chosen protocol, and the assignment the leader gave it. A plain
    tuple in this order is accepted wherever one is expected."""

    member_id: str
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass
class StoredGroupMetadata:
    """A group as its group metadata value stores it: the generation the coordinator last
    completed. Kafka's reader makes it a ``GroupMetadata`` in state Empty when it has no members,
    and Stable when it has."""

    group_id: str
    protocol_type: str  # "" when the group has none (Kafka writes ``protocolType.getOrElse("")``)
    generation: int
    protocol: str | None
    leader: str | None
    members: list[StoredMemberMetadata] = field(default_factory=list)


# --- Writing ----------------------------------------------------------------------------------------------


def _write(what: str, version: int, schema: Schema, value: Mapping[str, Any]) -> bytes:
    """``version`` as an int16, then ``value`` in ``schema``: every key and value of the topic."""
    out = bytearray(_VERSION.pack(version))
    try:
        schema.write(out, value)
    except SchemaException as e:
        raise OffsetsTopicRecordException(f"cannot write {what} v{version}: {e}") from e
    return bytes(out)


def offset_commit_key(group: str, tp: TopicPartition) -> bytes:
    """The key of ``group``'s committed offset for ``tp`` (Kafka's ``offsetCommitKey``)."""
    topic, partition = tp
    value = {"group": group, "topic": topic, "partition": partition}
    return _write("an offset commit key", CURRENT_OFFSET_KEY_SCHEMA_VERSION, OFFSET_COMMIT_KEY_SCHEMA, value)


def offset_commit_value(offset_and_metadata: OffsetAndMetadata) -> bytes:
    """An offset commit value, always in the current version, 1 (Kafka's ``offsetCommitValue``)."""
    value = {
        "offset": offset_and_metadata.offset,
        "metadata": offset_and_metadata.metadata,
        "commit_timestamp": offset_and_metadata.commit_timestamp,
        "expire_timestamp": offset_and_metadata.expire_timestamp,
    }
    return _write(
        "an offset commit value", CURRENT_OFFSET_VALUE_SCHEMA_VERSION, OFFSET_COMMIT_VALUE_SCHEMA_V1, value
    )


def group_metadata_key(group_id: str) -> bytes:
    """The key of ``group_id``'s metadata record (Kafka's ``groupMetadataKey``)."""
    return _write(
        "a group metadata key",
        CURRENT_GROUP_KEY_SCHEMA_VERSION,
        GROUP_METADATA_KEY_SCHEMA,
        {"group": group_id},
    )


def group_metadata_value(
    protocol_type: str | None,
    generation: int,
    protocol: str | None,
    leader: str | None,
    members: Iterable[StoredMemberMetadata | Sequence[Any]],
    version: int = CURRENT_GROUP_VALUE_SCHEMA_VERSION,
) -> bytes:
    """A group metadata value (Kafka's ``groupMetadataValue``): the group's generation and each
    member with its subscription and assignment. ``members`` are ``StoredMemberMetadata`` or tuples
    in its order; version 0 leaves out their rebalance timeouts."""
    if version not in GROUP_VALUE_SCHEMAS:
        raise OffsetsTopicRecordException(
            f"Unknown group metadata version {version}: a group metadata value is version "
            f"{' or '.join(map(str, GROUP_VALUE_SCHEMAS))}"
        )
    value = {
        "protocol_type": protocol_type if protocol_type is not None else "",
        "generation": generation,
        "protocol": protocol,
        "leader": leader,
        "members": [_member(i, m)._asdict() for i, m in enumerate(members)],
    }
    return _write("a group metadata value", version, GROUP_VALUE_SCHEMAS[version], value)


def _member(i: int, member: StoredMemberMetadata | Sequence[Any]) -> StoredMemberMetadata:
    try:
        return StoredMemberMetadata._make(member)
    except TypeError:
        raise OffsetsTopicRecordException(
            f"member [{i}] of a group metadata value is {member!r}, not a "
            f"({', '.join(StoredMemberMetadata._fields)})"
        ) from None


# --- Reading ----------------------------------------------------------------------------------------------


def _read_version(what: str, buf: bytes | bytearray | memoryview) -> int:
    if len(buf) < _VERSION.size:
        raise OffsetsTopicRecordException(f"{what} of {len(buf)} bytes is too short for its int16 version")
    return _VERSION.unpack_from(buf)[0]


def _read(what: str, version: int, schema: Schema, buf: bytes | bytearray | memoryview) -> dict[str, Any]:
    """The struct after the version; byte offsets in errors count from the start of ``buf``."""
    try:
        return decode(schema, buf, _VERSION.size)
    except SchemaException as e:
        raise OffsetsTopicRecordException(f"{what} v{version} does not match {schema.name}: {e}") from e


def read_message_key(buf: bytes | bytearray | memoryview | None) -> BaseKey:
    """Decode a key of ``__consumer_offsets`` (Kafka's ``readMessageKey``): an ``OffsetKey`` for key
    versions 0 and 1, a ``GroupMetadataKey`` for version 2."""
    if buf is None:
        raise OffsetsTopicRecordException(
            "a __consumer_offsets record has no key: every record of the topic is keyed by its "
            "version and group"
        )
    version = _read_version("a __consumer_offsets key", buf)
    schema = MESSAGE_TYPE_SCHEMAS.get(version)
    if schema is None:
        raise OffsetsTopicRecordException(
            f"Unknown offset schema version {version} in a __consumer_offsets key: "
            f"versions 0 and 1 are offset commit keys, 2 is a group metadata key"
        )
    key = _read("a __consumer_offsets key", version, schema, buf)
    if version <= CURRENT_OFFSET_KEY_SCHEMA_VERSION:
        return OffsetKey(version, GroupTopicPartition(key["group"], (key["topic"], key["partition"])))
    return GroupMetadataKey(version, key["group"])


def read_offset_message_value(buf: bytes | bytearray | memoryview | None) -> OffsetAndMetadata | None:
    """Decode an offset commit value (Kafka's ``readOffsetMessageValue``); ``None`` for a
    tombstone, the null value that deletes the offset."""
    if buf is None:
        return None
    version = _read_version("an offset commit value", buf)
    schema = OFFSET_VALUE_SCHEMAS.get(version)
    if schema is None:
        raise OffsetsTopicRecordException(
            f"Unknown offset schema version {version} in an offset commit value: it is version "
            f"{' or '.join(map(str, OFFSET_VALUE_SCHEMAS))}"
        )
    value = _read("an offset commit value", version, schema, buf)
    if version == 0:
        return OffsetAndMetadata(value["offset"], value["metadata"], value["timestamp"])
    return OffsetAndMetadata(
        value["offset"], value["metadata"], value["commit_timestamp"], value["expire_timestamp"]
    )


def read_group_message_value(
    group_id: str, buf: bytes | bytearray | memoryview | None
) -> StoredGroupMetadata | None:
    """Decode ``group_id``'s group metadata value (Kafka's ``readGroupMessageValue``); ``None`` for
    a tombstone, the null value written when the group is removed."""
    if buf is None:
        return None
    what = f"the group metadata value of group {group_id!r}"
    version = _read_version(what, buf)
    schema = GROUP_VALUE_SCHEMAS.get(version)
    if schema is None:
        raise OffsetsTopicRecordException(
            f"Unknown group metadata version {version} in {what}: it is version "
            f"{' or '.join(map(str, GROUP_VALUE_SCHEMAS))}"
        )
    value = _read(what, version, schema, buf)
    members = [
        StoredMemberMetadata(
            m["member_id"],
            m["client_id"],
            m["client_host"],
            # v0 has no rebalance timeout: Kafka's reader takes the session timeout for it.
            m["session_timeout"] if version == 0 else m["rebalance_timeout"],
            m["session_timeout"],
            m["subscription"],
            m["assignment"],
        )
        for m in value["members"]
    ]
    return StoredGroupMetadata(
        group_id, value["protocol_type"], value["generation"], value["protocol"], value["leader"], members
    )
