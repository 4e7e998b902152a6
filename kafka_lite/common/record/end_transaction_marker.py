"""The end-of-transaction marker: the control record a transaction coordinator has written to each
partition of a transaction, saying COMMIT or ABORT.

Mirrors: org.apache.kafka.common.record.EndTransactionMarker, ControlRecordType and
         MemoryRecords.withEndTransactionMarker (clients/.../common/record/, Kafka 0.11.0)
Book:    beyond the book (Kafka 0.11's transactions, KIP-98); chapter 6.1's batch format carries it
Differs: nothing in the bytes; Kafka's ``UNKNOWN`` control type is kept for a key this version
         does not know, as a reader must skip it rather than fail.

A marker is a batch of its own: the batch header says ``isControlBatch`` and ``isTransactional``
and carries the producer id and epoch of the transaction it ends, with no sequence (-1). Its one
record has no offset or timestamp delta; its key and value are two tiny fixed structs::

    key    version int16 (0)   type int16 (0 ABORT, 1 COMMIT)
    value  version int16 (0)   coordinator_epoch int32

The key names the *kind* of control record (a future one need not be a transaction marker), the
value what the broker needs to check the marker: the epoch of the coordinator that wrote it, so
that a coordinator which lost its ``__transaction_state`` partition cannot end a transaction its
successor already ended (the broker refuses an older coordinator epoch).

A consumer reading ``read_committed`` skips control batches; it learns from the Fetch response's
``aborted_transactions`` which producers' batches to drop until their ABORT marker.
"""

from __future__ import annotations

import enum
import logging
import struct
from dataclasses import dataclass

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import NO_PARTITION_LEADER_EPOCH
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder

log = logging.getLogger(__name__)

CURRENT_CONTROL_RECORD_KEY_VERSION = 0
CURRENT_END_TXN_MARKER_VERSION = 0
_KEY = struct.Struct(">hh")  # version, type
_VALUE = struct.Struct(">hi")  # version, coordinator_epoch
CONTROL_RECORD_KEY_SIZE = _KEY.size  # 4
END_TXN_MARKER_VALUE_SIZE = _VALUE.size  # 6
NO_SEQUENCE = -1


class ControlRecordType(enum.IntEnum):
    """The ``type`` in a control record's key (Kafka's ``ControlRecordType``)."""

    ABORT = 0
    COMMIT = 1
    UNKNOWN = -1  # a type this version does not know: readers skip the record

    def record_key(self) -> bytes:
        if self is ControlRecordType.UNKNOWN:
            raise ValueError("Cannot serialize UNKNOWN control record type")
        return _KEY.pack(CURRENT_CONTROL_RECORD_KEY_VERSION, int(self))

    @staticmethod
    def parse_type_id(key: bytes | memoryview | None) -> int:
        if key is None or len(key) < CONTROL_RECORD_KEY_SIZE:
            found = 0 if key is None else len(key)
            raise CorruptRecordException(
                f"Invalid value size found for end control record key. Must have at least "
                f"{CONTROL_RECORD_KEY_SIZE} bytes, but found only {found}"
            )
        version, type_id = _KEY.unpack_from(key)
        if version < 0:
            raise CorruptRecordException(
                f"Invalid version found for control record: {version}. May indicate data corruption"
            )
        if version != CURRENT_CONTROL_RECORD_KEY_VERSION:
            log.debug("Received unknown control record key version %d; parsing as version 0", version)
        return type_id

    @classmethod
    def parse(cls, key: bytes | memoryview | None) -> ControlRecordType:
        """The type named by a control record's key; ``UNKNOWN`` for a type id this version lacks."""
        type_id = cls.parse_type_id(key)
        return cls(type_id) if type_id in (0, 1) else cls.UNKNOWN


@dataclass(frozen=True)
class EndTransactionMarker:
    """COMMIT or ABORT, with the epoch of the coordinator that decided it."""

    control_type: ControlRecordType
    coordinator_epoch: int

    def __post_init__(self) -> None:
        if self.control_type not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            raise ValueError(f"Invalid control record type for end transaction marker {self.control_type!r}")

    @property
    def is_commit(self) -> bool:
        return self.control_type is ControlRecordType.COMMIT

    def serialize_key(self) -> bytes:
        return self.control_type.record_key()

    def serialize_value(self) -> bytes:
        return _VALUE.pack(CURRENT_END_TXN_MARKER_VERSION, self.coordinator_epoch)

    @classmethod
    def from_record(cls, record) -> EndTransactionMarker:
        """Read the marker from a control batch's record (anything with ``.key`` and ``.value``),
        as Kafka's ``EndTransactionMarker.deserialize``; a malformed one is CORRUPT_MESSAGE."""
        return cls.deserialize_value(ControlRecordType.parse(record.key), record.value)

    @classmethod
    def deserialize_value(cls, control_type: ControlRecordType, value: bytes | None) -> EndTransactionMarker:
        if control_type not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            raise CorruptRecordException(
                f"Invalid control record type for end transaction marker {control_type!r}"
            )
        if value is None or len(value) < END_TXN_MARKER_VALUE_SIZE:
            found = 0 if value is None else len(value)
            raise CorruptRecordException(
                f"Invalid value size found for end transaction marker. Must have at least "
                f"{END_TXN_MARKER_VALUE_SIZE} bytes, but found only {found}"
            )
        version, coordinator_epoch = _VALUE.unpack_from(value)
        if version < 0:
            raise CorruptRecordException(
                f"Invalid version found for end transaction marker: {version}. May indicate data corruption"
            )
        return cls(control_type, coordinator_epoch)


# --8<-- [start:build_end_transaction_marker_batch]
def build_end_transaction_marker_batch(
    producer_id: int,
    producer_epoch: int,
    marker: EndTransactionMarker,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> MemoryRecords:
    """One control batch holding ``marker`` (Kafka's ``MemoryRecords.withEndTransactionMarker``):
    transactional, control, the transaction's producer id and epoch, no sequence, uncompressed."""
    builder = MemoryRecordsBuilder(
        compression=CompressionType.NONE,
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=NO_SEQUENCE,
        is_transactional=True,
        is_control_batch=True,
        partition_leader_epoch=partition_leader_epoch,
    )
    builder.append(timestamp, marker.serialize_key(), marker.serialize_value())
    return builder.build()


# --8<-- [end:build_end_transaction_marker_batch]
