"""The Raft quorum's control records: LEADER_CHANGE, and the snapshot's header and footer.

Mirrors: org.apache.kafka.common.record.ControlRecordUtils, the Raft types of ControlRecordType and
         MemoryRecords.withLeaderChangeMessage, withSnapshotHeaderRecord, withSnapshotFooterRecord
         (clients/src/main/java/.../common/record/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the three Raft control types are constants here, not members of ``ControlRecordType``,
         whose Kafka 0.11 members (ABORT, COMMIT; any other type UNKNOWN, skipped) the transaction
         path reads.

A new Raft leader's first write in its epoch is a control batch holding one LEADER_CHANGE record, as
``end_transaction_marker.py`` writes a COMMIT or ABORT marker: the batch's attributes have the control
bit set, with no producer id, epoch or sequence; the record's key is the control record key (version
int16 0, type int16 2); its value is a ``LeaderChangeMessage`` v0 (``raft_messages.py``), written as
its flexible schema says::

    key    version int16 (0)   type int16 (2 LEADER_CHANGE)
    value  version int16 (0)   leader_id int32   voters [voter_id]   granting_voters [voter_id]   tags

Why a leader writes it: Raft's leader may only count replicas for records of its own epoch when it
advances the high watermark (the paper's Figure 8), so a leader with nothing to write could never
commit the records its predecessors left. Appending a record of its own epoch at once (the paper's
no-op entry) lets it commit them as soon as a majority has that record. Kafka's no-op also says who
the voters are and who voted, for anyone reading the log later.

A snapshot starts and ends with control records, too (SNAPSHOT_HEADER, SNAPSHOT_FOOTER), each in a
control batch of its own, built the same way. The builders take the leader epoch for the batch header
(``partition_leader_epoch``), as Kafka's ``withLeaderChangeMessage`` and its snapshot twins do.
"""

from __future__ import annotations

from typing import Any

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.protocol.raft_messages import (
    LEADER_CHANGE_MESSAGE_V0,
    SNAPSHOT_FOOTER_RECORD_V0,
    SNAPSHOT_HEADER_RECORD_V0,
)
from kafka_lite.common.protocol.types import SchemaException, Type, decode, encode
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import TimestampType
from kafka_lite.common.record.default_record_batch import set_partition_leader_epoch
from kafka_lite.common.record.end_transaction_marker import (
    CURRENT_CONTROL_RECORD_KEY_VERSION,
    ControlRecordType,
)
from kafka_lite.common.record.memory_records import MemoryRecords

# Kafka's ControlRecordType ids for the Raft records (3.3): 0 and 1 are ABORT and COMMIT.
LEADER_CHANGE = 2
SNAPSHOT_HEADER = 3
SNAPSHOT_FOOTER = 4
_TYPE_NAMES = {0: "ABORT", 1: "COMMIT", LEADER_CHANGE: "LEADER_CHANGE", SNAPSHOT_HEADER: "SNAPSHOT_HEADER",
               SNAPSHOT_FOOTER: "SNAPSHOT_FOOTER"}  # fmt: skip

LEADER_CHANGE_CURRENT_VERSION = 0
SNAPSHOT_HEADER_CURRENT_VERSION = 0
SNAPSHOT_FOOTER_CURRENT_VERSION = 0


def control_record_key(type_id: int) -> bytes:
    """A control record's key: version 0, then the type (Kafka's ``ControlRecordType.recordKey``)."""
    return CURRENT_CONTROL_RECORD_KEY_VERSION.to_bytes(2, "big") + type_id.to_bytes(2, "big")


def serialize_leader_change_message(message: dict[str, Any]) -> bytes:
    """The bytes of a ``LeaderChangeMessage`` v0 (``{"version", "leader_id", "voters", "granting_voters"}``)."""
    return encode(LEADER_CHANGE_MESSAGE_V0, message)


def _deserialize(record, expected: int, schema: Type) -> dict[str, Any]:
    """A control record's value, after checking its key names ``expected`` (Kafka's wording); a value
    that does not match its schema is a CorruptRecordException naming the field."""
    type_id = ControlRecordType.parse_type_id(record.key)
    if type_id != expected:
        found = _TYPE_NAMES.get(type_id, "UNKNOWN")
        raise ValueError(
            f"Expected {_TYPE_NAMES[expected]} control record type({expected}), but found {found}"
        )
    try:
        return decode(schema, record.value if record.value is not None else b"")
    except SchemaException as e:
        raise CorruptRecordException(f"{_TYPE_NAMES[expected]} control record value: {e}") from None


def deserialize_leader_change_message(record) -> dict[str, Any]:
    """The ``LeaderChangeMessage`` of a LEADER_CHANGE control record (anything with ``.key`` and
    ``.value``)."""
    return _deserialize(record, LEADER_CHANGE, LEADER_CHANGE_MESSAGE_V0)


def deserialize_snapshot_header_record(record) -> dict[str, Any]:
    return _deserialize(record, SNAPSHOT_HEADER, SNAPSHOT_HEADER_RECORD_V0)


def deserialize_snapshot_footer_record(record) -> dict[str, Any]:
    return _deserialize(record, SNAPSHOT_FOOTER, SNAPSHOT_FOOTER_RECORD_V0)


def _control_batch(
    initial_offset: int, timestamp: int, leader_epoch: int, type_id: int, value: bytes
) -> MemoryRecords:
    """One control batch of one record (Kafka's ``MemoryRecordsBuilder`` as ``withLeaderChangeMessage``
    and the snapshot records' builders set it up): control, not transactional, no producer id, epoch
    or sequence, uncompressed, create time; the batch header carries the leader's epoch."""
    records = MemoryRecords.with_records(
        [(timestamp, control_record_key(type_id), value)],
        compression=CompressionType.NONE, base_offset=initial_offset,
        timestamp_type=TimestampType.CREATE_TIME, is_control_batch=True,
    )  # fmt: skip
    buf = bytearray(records.buffer())
    set_partition_leader_epoch(buf, 0, leader_epoch)
    return MemoryRecords(bytes(buf))


# --8<-- [start:with_leader_change_message]
def with_leader_change_message(
    initial_offset: int, timestamp: int, leader_epoch: int, message: dict[str, Any]
) -> MemoryRecords:
    """The control batch a new leader appends first in its epoch (Kafka's
    ``MemoryRecords.withLeaderChangeMessage``)."""
    return _control_batch(
        initial_offset, timestamp, leader_epoch, LEADER_CHANGE, serialize_leader_change_message(message)
    )


# --8<-- [end:with_leader_change_message]


def with_snapshot_header_record(
    initial_offset: int, timestamp: int, leader_epoch: int, record: dict[str, Any]
) -> MemoryRecords:
    """The control batch a snapshot starts with (Kafka's ``MemoryRecords.withSnapshotHeaderRecord``):
    ``{"version", "last_contained_log_timestamp"}``."""
    return _control_batch(
        initial_offset, timestamp, leader_epoch, SNAPSHOT_HEADER, encode(SNAPSHOT_HEADER_RECORD_V0, record)
    )


def with_snapshot_footer_record(
    initial_offset: int, timestamp: int, leader_epoch: int, record: dict[str, Any]
) -> MemoryRecords:
    """The control batch a snapshot ends with (Kafka's ``MemoryRecords.withSnapshotFooterRecord``):
    ``{"version"}``; a snapshot without it was not finished."""
    return _control_batch(
        initial_offset, timestamp, leader_epoch, SNAPSHOT_FOOTER, encode(SNAPSHOT_FOOTER_RECORD_V0, record)
    )
