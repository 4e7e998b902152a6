"""The leader's checks on a produce request's batches, and their conversion to the topic's format.

Mirrors: kafka.log.LogValidator (core/src/main/scala/kafka/log/LogValidator.scala, Kafka 0.11.0):
         ``validateTimestamp`` and the walk over a batch's records that calls it; ``validateBatch``;
         the in-place path for message sets (``assignOffsetsNonCompressed`` and the in-place case
         of ``validateMessagesAndAssignOffsetsCompressed``) and the conversion path
         (``convertAndAssignOffsetsNonCompressed``, ``buildRecordsAndAssignOffsets``). The v2
         in-place path is ``Log``'s ``validate_messages_and_assign_offsets``.
Book:    chapter 6, 6.1 (message formats); chapter 10, 10.2 (message timestamps)
Differs: a record's timestamp is decoded only when the topic's
         ``message.timestamp.difference.max.ms`` is below its default; Kafka decodes every record
         of every batch whatever the setting.

A topic says who stamps its records (``message.timestamp.type``). With ``CreateTime`` the log keeps
the producer's timestamps, and ``message.timestamp.difference.max.ms`` bounds how far from the
broker's clock they may be: a record outside ``[now - max, now + max]`` fails the whole partition's
append with INVALID_TIMESTAMP, and nothing of the request is written to that partition (Kafka
0.10.1's check, KIP-32). Without it a producer with a wrong clock would plant a timestamp years away,
and time-based retention would delete the segment at once or keep it for ever. With
``LogAppendTime`` the producer's timestamps do not matter: ``Log.append`` stamps every batch with
the broker's time, so there is nothing to check against the clock.

Either way a producer may not send a batch that already claims ``LogAppendTime``: consumers would
take the producer's time for the broker's. That bit is in the batch header, so checking it costs
nothing per record.

Why decode only for a non-default maximum: a v2 batch's header has its first timestamp and its max
timestamp, but not its least one, since a record's timestamp delta may be negative (a producer that
sets timestamps may send them out of order). So no header bounds every record from below, and the
only exact check reads each record. The default maximum, Java's ``Long.MAX_VALUE``, admits every
timestamp, so the check can never fail and the produce path stays free of a Python object per
record, as the rest of ``Log.append`` is (``log.py``'s header says why).

Which path an append takes (Kafka 0.11's ``validateMessagesAndAssignOffsets``): batches in the
topic's format keep their bytes and get their offsets patched in place (v2: ``Log``'s
``validate_messages_and_assign_offsets``; v0/v1: ``assign_offsets_legacy_in_place``, unless a
wrapper's inner offsets need rewriting); anything else is decoded and written again in the topic's
format by ``convert_and_assign_offsets``. Kafka also
converts when the codec must change (``compression.type`` not ``producer``), which kafka_lite does
not apply. Converting costs the broker a decode and an encode per record; worse, it is paid again on
the way out if a consumer cannot read what the log holds, and a down-converted fetch cannot be sent
from the file with ``sendfile``.
"""

from __future__ import annotations

from typing import NamedTuple

from kafka_lite.common.errors import InvalidTimestampException, UnsupportedForMessageFormatException
from kafka_lite.common.record import MemoryRecords, MemoryRecordsBuilder
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import (
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAGIC_VALUE_V2,
    NO_TIMESTAMP,
    TimestampType,
)
from kafka_lite.common.record.legacy_record import set_last_offset, set_max_timestamp
from kafka_lite.common.utils import LONG_MAX

# message.timestamp.difference.max.ms's default: any timestamp is within it
DEFAULT_TIMESTAMP_DIFF_MAX_MS = LONG_MAX


# --8<-- [start:validate_timestamps]
def validate_timestamps(
    records: MemoryRecords, now: int, log_append_time: bool, timestamp_diff_max_ms: int
) -> None:
    """Check every batch's timestamp type and, for a ``CreateTime`` topic whose maximum difference is
    set, every record's timestamp; raise ``InvalidTimestampException`` at the first bad one.

    Called before any offset is written, so a refused request leaves the log and the request's
    bytes as they were.
    """
    check_records = not log_append_time and timestamp_diff_max_ms < DEFAULT_TIMESTAMP_DIFF_MAX_MS
    for batch in records.batches():
        if batch.timestamp_type == TimestampType.LOG_APPEND_TIME:
            raise InvalidTimestampException(
                f"Invalid timestamp type in the record batch at byte {batch.position}: "
                "Producer should not set timestamp type to LogAppendTime."
            )
        if check_records:
            for delta, record in enumerate(batch):
                validate_timestamp(record.timestamp, now, timestamp_diff_max_ms, batch.position, delta)


# --8<-- [end:validate_timestamps]


def validate_timestamp(
    timestamp: int, now: int, timestamp_diff_max_ms: int, batch_position: int, record_index: int
) -> None:
    """Kafka's ``validateTimestamp`` for a ``CreateTime`` topic: ``timestamp`` within
    ``timestamp_diff_max_ms`` of ``now``. A record with no timestamp (-1) passes, as in Kafka 0.11."""
    if timestamp != NO_TIMESTAMP and abs(timestamp - now) > timestamp_diff_max_ms:
        raise InvalidTimestampException(
            f"Timestamp {timestamp} of record {record_index} in the record batch at byte {batch_position} "
            f"is out of range. The timestamp should be within [{now - timestamp_diff_max_ms}, "
            f"{now + timestamp_diff_max_ms}]: the broker's time {now}, give or take "
            f"message.timestamp.difference.max.ms ({timestamp_diff_max_ms})."
        )


class ValidationAndOffsetAssignResult(NamedTuple):
    """What the validator hands back to ``Log.append`` (Kafka's twin). Kafka's caller reads the last
    offset from the ``LongRef`` counter it passed in; here it is returned. ``message_size_maybe_changed``:
    the records were rebuilt, so ``Log.append`` checks their sizes again."""

    validated_records: MemoryRecords
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    last_offset: int
    message_size_maybe_changed: bool = False


def validate_batch(batch, is_from_client: bool, to_magic: int) -> None:
    """Kafka's ``validateBatch``, the part about the target format: a batch with a producer id
    (idempotent) or a transactional one cannot be written below magic 2, which has no place for the
    producer id, the epoch or the sequence. Deduplication and transaction markers would silently stop
    working, so the produce fails instead, with UNSUPPORTED_FOR_MESSAGE_FORMAT. (The control-batch
    check is ``Log._analyze_and_validate_records``'s, made for every append.)"""
    if batch.is_transactional and to_magic < MAGIC_VALUE_V2:
        raise UnsupportedForMessageFormatException(
            f"Transactional records cannot be used with magic version {to_magic}"
        )
    if batch.producer_id >= 0 and to_magic < MAGIC_VALUE_V2:
        raise UnsupportedForMessageFormatException(
            f"Idempotent records cannot be used with magic version {to_magic}"
        )


# --8<-- [start:assign_offsets_legacy_in_place]
def assign_offsets_legacy_in_place(
    records: MemoryRecords,
    first_offset: int,
    now: int,
    magic: int,
    log_append_time: bool,
    timestamp_diff_max_ms: int = DEFAULT_TIMESTAMP_DIFF_MAX_MS,
) -> ValidationAndOffsetAssignResult | None:
    """Assign offsets to a v0/v1 message set already in the topic's format ``magic``, where it lies;
    None if it cannot be done in place, and ``convert_and_assign_offsets`` must rebuild it.

    Kafka 0.11's ``assignOffsetsNonCompressed`` and the in-place case of
    ``validateMessagesAndAssignOffsetsCompressed``. Each plain message gets the next offset (outside
    the CRC); a v1 wrapper whose inner offsets are 0, 1, 2 ... (KIP-31) gets its last offset and
    nothing inside it changes. A v0 wrapper carries absolute inner offsets, which only a rebuild can
    set, and a v1 wrapper with other inner offsets is rebuilt too. With ``LogAppendTime`` each v1
    entry takes the broker's time, and its CRC is redone.
    """
    validate_timestamps(records, now, log_append_time, timestamp_diff_max_ms)
    batches = list(records.batches())
    counts = []
    for batch in batches:
        if batch.compression_type == CompressionType.NONE:
            counts.append(1)
            continue
        inner = batch.inner_offsets() if magic == MAGIC_VALUE_V1 else None
        if inner != list(range(len(inner or ()))) or not inner:
            return None  # v0, or inner offsets a v1 reader would misplace: rebuild
        counts.append(len(inner))
    records = records.writable()
    buf = records.buffer()
    offset = first_offset
    max_timestamp, offset_of_max_timestamp = NO_TIMESTAMP, -1
    for batch, count in zip(batches, counts, strict=True):
        last = offset + count - 1
        set_last_offset(buf, batch.position, last)
        if magic == MAGIC_VALUE_V1:
            if log_append_time:
                set_max_timestamp(buf, batch.position, TimestampType.LOG_APPEND_TIME, now)
            elif batch.outer.timestamp > max_timestamp:  # a wrapper's is its records' largest
                max_timestamp, offset_of_max_timestamp = batch.outer.timestamp, last
        offset = last + 1
    compressed = any(b.compression_type != CompressionType.NONE for b in batches)
    if magic == MAGIC_VALUE_V1 and (log_append_time or compressed):
        # Kafka's shallow offset of the max timestamp: a wrapper is named by the last offset; with
        # LogAppendTime, plain messages all share the time and the first is named
        max_timestamp = now if log_append_time else max_timestamp
        offset_of_max_timestamp = offset - 1 if compressed else first_offset
    return ValidationAndOffsetAssignResult(records, max_timestamp, offset_of_max_timestamp, offset - 1)


# --8<-- [end:assign_offsets_legacy_in_place]


# --8<-- [start:convert_and_assign_offsets]
def convert_and_assign_offsets(
    records: MemoryRecords,
    first_offset: int,
    now: int,
    to_magic: int,
    log_append_time: bool,
    partition_leader_epoch: int,
    is_from_client: bool,
    timestamp_diff_max_ms: int = DEFAULT_TIMESTAMP_DIFF_MAX_MS,
) -> ValidationAndOffsetAssignResult:
    """Rewrite ``records`` in the topic's format ``to_magic``, assigning offsets from ``first_offset``.

    The path of Kafka 0.11's ``validateMessagesAndAssignOffsets`` taken when a batch's magic is not
    the topic's (``convertAndAssignOffsetsNonCompressed`` and ``buildRecordsAndAssignOffsets``): every
    record is decoded and written again by one ``MemoryRecordsBuilder``, as Kafka writes them with
    one builder. What the target has no field for is lost: headers below v2, timestamps in v0. The
    producer's codec is kept (Kafka's ``compression.type=producer``): uncompressed records become one
    message each; compressed ones one batch, or for v0/v1 one wrapper, whose offset is its last
    inner offset and, in v1, whose inner offsets are relative (0, 1, 2 ...). A codec the target has
    no form for (zstd below v2, lz4 in v0) is written uncompressed.
    """
    validate_timestamps(records, now, log_append_time, timestamp_diff_max_ms)
    codec = CompressionType.NONE
    items = []
    for batch in records.batches():
        validate_batch(batch, is_from_client, to_magic)
        if batch.compression_type != CompressionType.NONE:
            codec = batch.compression_type  # Kafka's sourceCodec: the last compressed batch's
        items.extend(batch)
    if codec == CompressionType.ZSTD and to_magic < MAGIC_VALUE_V2:
        codec = CompressionType.NONE
    if codec == CompressionType.LZ4 and to_magic == MAGIC_VALUE_V0:
        codec = CompressionType.NONE
    if to_magic == MAGIC_VALUE_V0:
        timestamp_type = TimestampType.NO_TIMESTAMP_TYPE
    else:
        timestamp_type = TimestampType.LOG_APPEND_TIME if log_append_time else TimestampType.CREATE_TIME
    builder = MemoryRecordsBuilder(
        magic=to_magic,
        compression=codec,
        timestamp_type=timestamp_type,
        base_offset=first_offset,
        log_append_time=now if log_append_time else NO_TIMESTAMP,
        partition_leader_epoch=partition_leader_epoch if to_magic == MAGIC_VALUE_V2 else -1,
    )
    offset = first_offset
    max_timestamp, offset_of_max = NO_TIMESTAMP, first_offset
    for record in items:
        timestamp = NO_TIMESTAMP if to_magic == MAGIC_VALUE_V0 else record.timestamp
        headers = record.headers if to_magic == MAGIC_VALUE_V2 else ()
        builder.append_with_offset(offset, timestamp, record.key, record.value, headers)
        if not log_append_time and timestamp > max_timestamp:
            max_timestamp, offset_of_max = timestamp, offset
        offset += 1
    if log_append_time and to_magic > MAGIC_VALUE_V0:
        max_timestamp = now
    max_timestamp, offset_of_max = _max_timestamp_info(
        to_magic, codec, offset - 1, max_timestamp, offset_of_max
    )
    return ValidationAndOffsetAssignResult(builder.build(), max_timestamp, offset_of_max, offset - 1, True)


# --8<-- [end:convert_and_assign_offsets]


def _max_timestamp_info(
    magic: int, codec: CompressionType, last_offset: int, max_timestamp: int, offset_of_max: int
) -> tuple[int, int]:
    """Kafka's ``MemoryRecordsBuilder.info``: the largest timestamp and the offset of the *shallow*
    entry holding it, which is what the time index stores. A v2 batch or a v0/v1 wrapper is one
    shallow entry, named by its last offset; an uncompressed v0/v1 message set has one entry per
    record (with ``LogAppendTime`` all share the time, and the first is named)."""
    one_entry = codec != CompressionType.NONE or magic >= MAGIC_VALUE_V2
    if max_timestamp == NO_TIMESTAMP:  # v0, or records without timestamps
        return NO_TIMESTAMP, last_offset
    if one_entry:
        return max_timestamp, last_offset
    return max_timestamp, offset_of_max
