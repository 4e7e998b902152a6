"""Message sets v0 and v1: the format the book describes, one CRC-32 per message.

Mirrors: org.apache.kafka.common.record.LegacyRecord and AbstractLegacyRecordBatch
         (clients/.../common/record/, Kafka 0.11.0), which replaced Kafka 0.10's
         kafka.message.Message and ByteBufferMessageSet (core/.../message/, the book's classes)
Book:    chapter 6, 6.1 (messages, message sets, compressed wrapper messages)
Differs: none in the format. A topic whose ``message.format.version`` is below 0.11.0 stores these;
         ``convert.py`` moves records between the families.

One log entry (offset and size are the "log overhead", then the message itself)::

    offset      int64
    size        int32    bytes of the message that follows
    crc         uint32   CRC-32 (zlib) of magic..end
    magic       int8     0 or 1
    attributes  int8     codec (bits 0-2), timestamp type (bit 3, v1 only)
    timestamp   int64    v1 only (KIP-32, Kafka 0.10)
    key         int32 length (-1 = null) + bytes
    value       int32 length (-1 = null) + bytes

Compression wraps a whole message set inside one message's value. The wrapper's offset is the
offset of its *last* inner message; in v1 the inner offsets are relative (0, 1, 2 ...), so the
broker assigns offsets by rewriting only the wrapper (KIP-31). In v0 they are absolute and the
broker had to decompress and recompress to assign them, one of the costs v1 and v2 removed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.compression import CompressionType, compress, decompress
from kafka_lite.common.record.constants import (
    LOG_OVERHEAD,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    NO_TIMESTAMP,
    TimestampType,
)
from kafka_lite.common.record.crc import crc32

CRC_LENGTH = 4
HEADER_V0 = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
RECORD_OVERHEAD_V0 = 4 + 1 + 1 + 4 + 4  # crc, magic, attributes, key length, value length = 14
RECORD_OVERHEAD_V1 = RECORD_OVERHEAD_V0 + 8  # + timestamp = 22
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08


def record_overhead(magic: int) -> int:
    return RECORD_OVERHEAD_V0 if magic == MAGIC_VALUE_V0 else RECORD_OVERHEAD_V1


@dataclass(frozen=True, slots=True)
class LegacyRecord:
    """One decoded v0/v1 message with its absolute offset (Kafka 0.10's ``MessageAndOffset``)."""

    offset: int
    magic: int
    attributes: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    checksum: int
    size_in_bytes: int  # log overhead included

    headers = ()  # v0/v1 have no headers; the attribute keeps records of all formats alike
    sequence = -1

    @property
    def compression_type(self) -> CompressionType:
        return CompressionType.for_id(self.attributes & COMPRESSION_CODEC_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == MAGIC_VALUE_V0:
            return TimestampType.NO_TIMESTAMP_TYPE
        return (
            TimestampType.LOG_APPEND_TIME
            if self.attributes & TIMESTAMP_TYPE_MASK
            else TimestampType.CREATE_TIME
        )

    @staticmethod
    def write_to(
        out: bytearray,
        offset: int,
        magic: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        compression: CompressionType = CompressionType.NONE,
        timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    ) -> int:
        """Append one log entry (offset, size, message) to ``out``; return the bytes written."""
        if magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
            raise ValueError(f"legacy records have magic 0 or 1, not {magic}")
        if compression == CompressionType.ZSTD:
            raise ValueError("zstd needs magic 2; message sets v0/v1 cannot carry it")
        if compression == CompressionType.LZ4 and magic == MAGIC_VALUE_V0:
            # Kafka 0.8/0.9 wrote LZ4 frames with a wrong header checksum (KAFKA-3160); Kafka 0.10
            # fixed it from magic 1 on. kafka_lite neither writes nor repairs the broken variant.
            raise ValueError("lz4 needs magic 1 or 2 (magic 0 lz4 used a broken frame checksum, KAFKA-3160)")
        attributes = int(compression)
        if magic == MAGIC_VALUE_V1 and timestamp_type == TimestampType.LOG_APPEND_TIME:
            attributes |= TIMESTAMP_TYPE_MASK
        body = bytearray(struct.pack(">bb", magic, attributes))
        if magic == MAGIC_VALUE_V1:
            body += struct.pack(">q", timestamp)
        for data in (key, value):
            if data is None:
                body += struct.pack(">i", -1)
            else:
                body += struct.pack(">i", len(data))
                body += data
        start = len(out)
        out += struct.pack(">qiI", offset, CRC_LENGTH + len(body), crc32(body))
        out += body
        return len(out) - start


class LegacyRecordBatch:
    """One *shallow* entry of a v0/v1 message set: a plain message, or a compressed wrapper.

    Kafka 0.11 calls this ``AbstractLegacyRecordBatch``: it gives old entries the same interface as
    v2 batches (base/last offset, iteration), so readers treat all three formats alike. Iterating a
    wrapper yields its inner messages with absolute offsets ("deep iteration").
    """

    # What a v2 batch header carries and a message set has not (Kafka's ``AbstractLegacyRecordBatch``
    # answers the same "none" values), so that a log holding both families reads alike.
    producer_id = -1
    producer_epoch = -1
    base_sequence = -1
    last_sequence = -1
    partition_leader_epoch = -1
    is_transactional = False
    is_control_batch = False

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int = 0) -> None:
        self._buf = buf
        self._pos = pos
        self.outer = _read_message(buf, pos)
        self.magic = self.outer.magic

    @property
    def num_records(self) -> int:
        """One for a plain message; a wrapper's inner count, which costs a decompression."""
        if self.compression_type == CompressionType.NONE:
            return 1
        return sum(1 for _ in self)

    @property
    def position(self) -> int:
        return self._pos

    @property
    def size_in_bytes(self) -> int:
        return self.outer.size_in_bytes

    @property
    def compression_type(self) -> CompressionType:
        attributes_at = self._pos + LOG_OVERHEAD + CRC_LENGTH + 1
        return CompressionType.for_id(self.outer.attributes & COMPRESSION_CODEC_MASK, attributes_at)

    @property
    def timestamp_type(self) -> TimestampType:
        return self.outer.timestamp_type

    @property
    def checksum(self) -> int:
        return self.outer.checksum

    @property
    def last_offset(self) -> int:
        return self.outer.offset  # a wrapper carries its last inner offset

    @property
    def base_offset(self) -> int:
        if self.compression_type == CompressionType.NONE:
            return self.outer.offset
        return next(iter(self)).offset

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def max_timestamp(self) -> int:
        if self.magic == MAGIC_VALUE_V0:
            return NO_TIMESTAMP
        return max(r.timestamp for r in self)

    def buffer(self) -> memoryview:
        return memoryview(self._buf)[self._pos : self._pos + self.size_in_bytes]

    def compute_checksum(self) -> int:
        return crc32(
            memoryview(self._buf)[self._pos + LOG_OVERHEAD + CRC_LENGTH : self._pos + self.size_in_bytes]
        )

    def ensure_valid(self) -> None:
        computed = self.compute_checksum()
        if computed != self.checksum:
            raise CorruptRecordException(
                f"message at byte {self._pos} is corrupt: stored crc 0x{self.checksum:08x}, computed crc 0x{computed:08x}",
                position=self._pos + LOG_OVERHEAD,
            )

    def __iter__(self) -> Iterator[LegacyRecord]:
        outer = self.outer
        if self.compression_type == CompressionType.NONE:
            yield outer
            return
        inner = self._inner_messages()
        if not inner:
            return
        # v1: inner offsets are relative; the wrapper holds the absolute offset of the last one.
        # v0: inner offsets are already absolute.
        delta = outer.offset - inner[-1].offset if self.magic == MAGIC_VALUE_V1 else 0
        log_append = self.magic == MAGIC_VALUE_V1 and outer.timestamp_type == TimestampType.LOG_APPEND_TIME
        for m in inner:
            yield LegacyRecord(
                m.offset + delta,
                m.magic,
                m.attributes,
                outer.timestamp if log_append else m.timestamp,
                m.key,
                m.value,
                m.checksum,
                m.size_in_bytes,
            )

    def inner_offsets(self) -> list[int]:
        """The offsets a wrapper's inner messages carry, as written (relative in v1): the broker
        keeps a v1 wrapper as it is only if they are 0, 1, 2 ... (Kafka's ``expectedInnerOffset``)."""
        return [m.offset for m in self._inner_messages()]

    def _inner_messages(self) -> list[LegacyRecord]:
        """A wrapper's inner messages, decompressed and checked, with the offsets they carry."""
        outer = self.outer
        codec = self.compression_type
        if outer.value is None:
            raise CorruptRecordException(
                f"compressed wrapper at byte {self._pos} has a null value", position=self._pos
            )
        value_at = self._pos + self.size_in_bytes - len(outer.value)
        inner_bytes = decompress(codec, outer.value, position=value_at)
        inner = []
        pos = 0
        while pos < len(inner_bytes):
            try:
                message = _read_message(inner_bytes, pos)
            except CorruptRecordException as e:
                raise CorruptRecordException(
                    f"compressed wrapper at byte {self._pos}: inner message at byte {e.position} of the "
                    f"decompressed value: {e}",
                    position=value_at,
                ) from None
            if message.attributes & COMPRESSION_CODEC_MASK:
                raise CorruptRecordException(
                    f"compressed wrapper at byte {self._pos} nests another compressed message",
                    position=value_at,
                )
            inner.append(message)
            pos += message.size_in_bytes
        return inner

    def __repr__(self) -> str:
        return (
            f"LegacyRecordBatch(magic={self.magic}, last_offset={self.last_offset}, size={self.size_in_bytes}, "
            f"compression={self.compression_type.config_name}, crc=0x{self.checksum:08x})"
        )


def _read_message(buf: bytes | bytearray | memoryview, pos: int) -> LegacyRecord:
    """Parse the log entry at ``buf[pos]``; every length is checked against the bytes that remain."""
    remaining = len(buf) - pos
    if remaining < LOG_OVERHEAD + RECORD_OVERHEAD_V0:
        raise CorruptRecordException(f"message at byte {pos} is cut: only {remaining} bytes", position=pos)
    offset, size, crc, magic, attributes = HEADER_V0.unpack_from(buf, pos)
    if magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
        raise CorruptRecordException(f"message at byte {pos} has unknown magic {magic}", position=pos + 16)
    if size < record_overhead(magic):
        raise CorruptRecordException(
            f"message at byte {pos} has size {size}, less than the minimum {record_overhead(magic)}",
            position=pos + 8,
        )
    end = pos + LOG_OVERHEAD + size
    if end > len(buf):
        raise CorruptRecordException(
            f"message at byte {pos} is cut: size says {size} bytes, {remaining - LOG_OVERHEAD} remain",
            position=pos + 8,
        )
    cursor = pos + LOG_OVERHEAD + CRC_LENGTH + 2
    timestamp = NO_TIMESTAMP
    if magic == MAGIC_VALUE_V1:
        (timestamp,) = struct.unpack_from(">q", buf, cursor)
        cursor += 8
    key, cursor = _read_bytes(buf, cursor, end, pos, "key")
    value, cursor = _read_bytes(buf, cursor, end, pos, "value")
    if cursor != end:
        raise CorruptRecordException(
            f"message at byte {pos} says {size} bytes but its fields end {end - cursor} bytes early",
            position=pos + 8,
        )
    return LegacyRecord(offset, magic, attributes, timestamp, key, value, crc, LOG_OVERHEAD + size)


def _read_bytes(buf, cursor: int, end: int, message_pos: int, what: str) -> tuple[bytes | None, int]:
    if cursor + 4 > end:
        raise CorruptRecordException(
            f"message at byte {message_pos}: {what} length runs past the message", position=cursor
        )
    (length,) = struct.unpack_from(">i", buf, cursor)
    cursor += 4
    if length == -1:
        return None, cursor
    if length < 0 or cursor + length > end:
        raise CorruptRecordException(
            f"message at byte {message_pos}: {what} length {length} at byte {cursor - 4} overruns the message",
            position=cursor - 4,
        )
    return bytes(buf[cursor : cursor + length]), cursor + length


def set_last_offset(buf: bytearray | memoryview, pos: int, offset: int) -> None:
    """Write an entry's offset (a wrapper's: its last inner one), Kafka's ``AbstractLegacyRecordBatch.
    setLastOffset``. The log overhead is outside the CRC: nothing else changes."""
    struct.pack_into(">q", buf, pos, offset)


def set_max_timestamp(
    buf: bytearray | memoryview, pos: int, timestamp_type: TimestampType, timestamp: int
) -> None:
    """Write a v1 entry's timestamp and timestamp-type bit and redo its CRC, both being inside it
    (Kafka's ``AbstractLegacyRecordBatch.setMaxTimestamp``, a no-op when nothing changes)."""
    attributes_at = pos + LOG_OVERHEAD + CRC_LENGTH + 1
    (attributes, current) = struct.unpack_from(">bq", buf, attributes_at)
    bit = TIMESTAMP_TYPE_MASK if timestamp_type == TimestampType.LOG_APPEND_TIME else 0
    if current == timestamp and attributes & TIMESTAMP_TYPE_MASK == bit:
        return
    struct.pack_into(">bq", buf, attributes_at, (attributes & ~TIMESTAMP_TYPE_MASK) | bit, timestamp)
    (size,) = struct.unpack_from(">i", buf, pos + 8)
    crc = crc32(memoryview(buf)[pos + LOG_OVERHEAD + CRC_LENGTH : pos + LOG_OVERHEAD + size])
    struct.pack_into(">I", buf, pos + LOG_OVERHEAD, crc)


# --8<-- [start:build_legacy_entries]
def build_legacy_entries(
    records: list[tuple[int, bytes | None, bytes | None]],
    magic: int,
    base_offset: int,
    compression: CompressionType,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int = NO_TIMESTAMP,
) -> bytes:
    """Write ``(timestamp, key, value)`` records as a v0/v1 message set starting at ``base_offset``.

    Uncompressed: one entry per record. Compressed: one wrapper whose value is the compressed inner
    set (inner offsets relative for v1, absolute for v0) and whose offset is the last inner offset.
    """
    out = bytearray()
    if compression == CompressionType.NONE:
        for i, (ts, key, value) in enumerate(records):
            if timestamp_type == TimestampType.LOG_APPEND_TIME:
                ts = log_append_time
            LegacyRecord.write_to(out, base_offset + i, magic, ts, key, value, timestamp_type=timestamp_type)
        return bytes(out)
    inner = bytearray()
    for i, (ts, key, value) in enumerate(records):
        inner_offset = i if magic == MAGIC_VALUE_V1 else base_offset + i
        LegacyRecord.write_to(inner, inner_offset, magic, ts, key, value)
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        wrapper_ts = log_append_time
    else:
        wrapper_ts = max((ts for ts, _, _ in records), default=NO_TIMESTAMP)
    LegacyRecord.write_to(
        out, base_offset + len(records) - 1, magic, wrapper_ts, None, compress(compression, inner),
        compression, timestamp_type,
    )  # fmt: skip
    return bytes(out)


# --8<-- [end:build_legacy_entries]
