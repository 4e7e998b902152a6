"""The record batch (magic 2): a 61-byte header, then the records, one CRC-32C over nearly all of it.

Mirrors: org.apache.kafka.common.record.DefaultRecordBatch
         (clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java, Kafka 0.11.0)
Book:    chapter 6, 6.1 (the book shows v0/v1 message sets; v2 is what Kafka 0.11 made of them)
Differs: Kafka's class wraps a ByteBuffer; ours wraps any bytes-like object plus a start position,
         so a batch inside a fetch response or a segment read is a view, never a copy.

The header, big-endian (``HEADER_FIELDS`` is this table as data; the docs draw it from there)::

    0   baseOffset            int64   set by the broker; NOT covered by the CRC
    8   batchLength           int32   bytes after this field (size - 12)
    12  partitionLeaderEpoch  int32   set by the broker; NOT covered by the CRC
    16  magic                 int8    2
    17  crc                   uint32  CRC-32C of bytes [21, end)
    21  attributes            int16   codec (bits 0-2), timestamp type (3), transactional (4), control (5)
    23  lastOffsetDelta       int32
    27  firstTimestamp        int64
    35  maxTimestamp          int64
    43  producerId            int64
    51  producerEpoch         int16
    53  baseSequence          int32
    57  recordsCount          int32
    61  records...            (compressed as one blob when the codec is not none)

Why the CRC skips the first 21 bytes: the broker must write ``baseOffset`` and
``partitionLeaderEpoch`` into every batch it appends. Leaving them outside the checksum means the
append path patches 12 bytes and never recomputes a CRC, which is what lets the broker treat a
produced batch as bytes: it checks the header and the CRC, patches the base offset, and appends,
without decoding a record.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.compression import CompressionType, decompress
from kafka_lite.common.record.constants import LOG_OVERHEAD, MAGIC_VALUE_V2, TimestampType
from kafka_lite.common.record.crc import crc32c
from kafka_lite.common.record.default_record import DefaultRecord, Header, record_size_upper_bound


class HeaderField(NamedTuple):
    name: str
    offset: int
    size: int
    fmt: str  # struct format of the field, big-endian
    doc: str


# --8<-- [start:header_fields]
HEADER_FIELDS: tuple[HeaderField, ...] = (
    HeaderField("baseOffset", 0, 8, ">q", "offset of the first record; written by the broker"),
    HeaderField("batchLength", 8, 4, ">i", "bytes that follow this field"),
    HeaderField("partitionLeaderEpoch", 12, 4, ">i", "leader epoch when appended; written by the broker"),
    HeaderField("magic", 16, 1, ">b", "format version: 2"),
    HeaderField("crc", 17, 4, ">I", "CRC-32C of everything from attributes to the end"),
    HeaderField("attributes", 21, 2, ">h", "codec, timestamp type, transactional and control bits"),
    HeaderField("lastOffsetDelta", 23, 4, ">i", "offset of the last record minus baseOffset"),
    HeaderField("firstTimestamp", 27, 8, ">q", "timestamp of the first record"),
    HeaderField("maxTimestamp", 35, 8, ">q", "largest timestamp in the batch"),
    HeaderField("producerId", 43, 8, ">q", "idempotent/transactional producer id, or -1"),
    HeaderField("producerEpoch", 51, 2, ">h", "producer epoch, or -1"),
    HeaderField("baseSequence", 53, 4, ">i", "producer sequence of the first record, or -1"),
    HeaderField("recordsCount", 57, 4, ">i", "number of records that follow"),
)
# --8<-- [end:header_fields]


HEADER_STRUCT = struct.Struct(">" + "".join(f.fmt[1:] for f in HEADER_FIELDS))  # ">qiibIhiqqqhii"
RECORD_BATCH_OVERHEAD = HEADER_STRUCT.size  # 61

BASE_OFFSET_OFFSET = 0
LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21  # the CRC covers [ATTRIBUTES_OFFSET, end)
MAX_TIMESTAMP_OFFSET = 35

# --8<-- [start:attributes]
# Attribute bits.
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20


def compute_attributes(
    compression: CompressionType, timestamp_type: TimestampType, is_transactional: bool, is_control: bool
) -> int:
    attributes = int(compression) & COMPRESSION_CODEC_MASK
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    return attributes


# --8<-- [end:attributes]


# --8<-- [start:write_header]
def write_header(
    buf: bytearray,
    pos: int,
    *,
    base_offset: int,
    size_in_bytes: int,
    partition_leader_epoch: int,
    attributes: int,
    last_offset_delta: int,
    first_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    num_records: int,
) -> None:
    """Write the 61-byte header at ``buf[pos]``, with the CRC of the records already in place after it."""
    HEADER_STRUCT.pack_into(
        buf, pos,
        base_offset, size_in_bytes - LOG_OVERHEAD, partition_leader_epoch, MAGIC_VALUE_V2,
        0,  # crc: computed below, once everything it covers is written
        attributes, last_offset_delta, first_timestamp, max_timestamp,
        producer_id, producer_epoch, base_sequence, num_records,
    )  # fmt: skip
    crc = crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : pos + size_in_bytes])
    struct.pack_into(">I", buf, pos + CRC_OFFSET, crc)


# --8<-- [end:write_header]


def estimate_size_in_bytes_upper_bound(
    key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list[Header] = ()
) -> int:
    """The most bytes a v2 batch holding just this record can take (Kafka's
    ``DefaultRecordBatch.estimateBatchSizeUpperBound``, which ``AbstractRecords.estimateSizeInBytesUpperBound``
    calls for magic 2): what the producer checks against ``max.request.size``, and the least a new
    batch is made for."""
    return RECORD_BATCH_OVERHEAD + record_size_upper_bound(key, value, headers)


class DefaultRecordBatch:
    """A read-only view of one v2 batch at ``buf[pos:pos + size_in_bytes]``.

    Reading the header is one ``unpack_from``; nothing else happens until you iterate the records.
    The broker's append path uses only the header and :meth:`ensure_valid`.
    """

    __slots__ = (
        "_buf",
        "_pos",
        "attributes",
        "base_offset",
        "base_sequence",
        "batch_length",
        "checksum",
        "first_timestamp",
        "last_offset_delta",
        "magic",
        "max_timestamp",
        "num_records",
        "partition_leader_epoch",
        "producer_epoch",
        "producer_id",
    )

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int = 0) -> None:
        if len(buf) - pos < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordException(
                f"record batch at byte {pos} is cut: {len(buf) - pos} bytes, the header alone needs "
                f"{RECORD_BATCH_OVERHEAD}",
                position=pos,
            )
        self._buf = buf
        self._pos = pos
        (
            self.base_offset, self.batch_length, self.partition_leader_epoch, self.magic, self.checksum,
            self.attributes, self.last_offset_delta, self.first_timestamp, self.max_timestamp,
            self.producer_id, self.producer_epoch, self.base_sequence, self.num_records,
        ) = HEADER_STRUCT.unpack_from(buf, pos)  # fmt: skip

    # -- derived header facts ------------------------------------------------------------------------

    @property
    def position(self) -> int:
        """Where this batch starts in the buffer it was read from."""
        return self._pos

    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression_type(self) -> CompressionType:
        return CompressionType.for_id(self.attributes & COMPRESSION_CODEC_MASK, self._pos + ATTRIBUTES_OFFSET)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control_batch(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def last_sequence(self) -> int:
        if self.base_sequence < 0:
            return -1
        return (self.base_sequence + self.last_offset_delta) % 2**31

    def buffer(self) -> memoryview:
        """The batch's bytes, as a view into the buffer it was read from."""
        return memoryview(self._buf)[self._pos : self._pos + self.size_in_bytes]

    # -- validation -------------------------------------------------------------------------------------

    def compute_checksum(self) -> int:
        start = self._pos + ATTRIBUTES_OFFSET
        return crc32c(memoryview(self._buf)[start : self._pos + self.size_in_bytes])

    # --8<-- [start:ensure_valid]
    def ensure_valid(self) -> None:
        """Check what a broker checks before appending: the size fields and the CRC.

        Raises ``CorruptRecordException`` naming the batch's byte offset and what is wrong.
        """
        pos, size = self._pos, self.size_in_bytes
        if self.magic != MAGIC_VALUE_V2:
            raise CorruptRecordException(
                f"record batch at byte {pos} has magic {self.magic}, expected 2", position=pos
            )
        if size < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordException(
                f"record batch at byte {pos} has batchLength {self.batch_length}, less than the "
                f"{RECORD_BATCH_OVERHEAD - LOG_OVERHEAD} bytes its header needs",
                position=pos + LENGTH_OFFSET,
            )
        if pos + size > len(self._buf):
            raise CorruptRecordException(
                f"record batch at byte {pos} is cut: batchLength says {size} bytes, "
                f"{len(self._buf) - pos} remain",
                position=pos + LENGTH_OFFSET,
            )
        if self.num_records < 0 or self.last_offset_delta < 0:
            raise CorruptRecordException(
                f"record batch at byte {pos} has recordsCount {self.num_records} and lastOffsetDelta "
                f"{self.last_offset_delta}",
                position=pos,
            )
        computed = self.compute_checksum()
        if computed != self.checksum:
            raise CorruptRecordException(
                f"record batch at byte {pos} is corrupt: stored crc 0x{self.checksum:08x}, "
                f"computed crc 0x{computed:08x}",
                position=pos + CRC_OFFSET,
            )

    # --8<-- [end:ensure_valid]

    # -- records ------------------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[DefaultRecord]:
        """Decode the records (decompressing first if needed). Checks sizes, not the CRC."""
        self._check_bounds()
        start = self._pos + RECORD_BATCH_OVERHEAD
        end = self._pos + self.size_in_bytes
        codec = self.compression_type
        if codec == CompressionType.NONE:
            data, offset_of_data = memoryview(self._buf)[:end], 0
            pos = start
        else:
            data = decompress(codec, memoryview(self._buf)[start:end], position=start)
            offset_of_data, pos = start, 0
        log_append_time = self.max_timestamp if self.timestamp_type == TimestampType.LOG_APPEND_TIME else None
        for i in range(self.num_records):
            try:
                record, pos = DefaultRecord.read_from(
                    data, pos, self.base_offset, self.first_timestamp, self.base_sequence, log_append_time
                )
            except CorruptRecordException as e:
                raise self._corrupt_record(e, i, offset_of_data, codec) from None
            yield record
        if pos != len(data):  # ``data`` ends where the batch does, compressed or not
            raise CorruptRecordException(
                f"record batch at byte {self._pos}: {self.num_records} records end before the batch does",
                position=self._pos,
            )

    def records(self) -> list[DefaultRecord]:
        return list(self)

    def _check_bounds(self) -> None:
        if self.batch_length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD or self._pos + self.size_in_bytes > len(
            self._buf
        ):
            raise CorruptRecordException(
                f"record batch at byte {self._pos} has an impossible batchLength {self.batch_length}",
                position=self._pos + LENGTH_OFFSET,
            )
        if self.num_records < 0:
            raise CorruptRecordException(
                f"record batch at byte {self._pos} has a negative recordsCount {self.num_records}",
                position=self._pos + 57,
            )

    def _corrupt_record(
        self, e: CorruptRecordException, index: int, offset_of_data: int, codec: CompressionType
    ) -> CorruptRecordException:
        # Inside a compressed batch, positions count from the start of the *decompressed* records;
        # say so, and point at the compressed blob's start in the outer buffer.
        if codec == CompressionType.NONE:
            return CorruptRecordException(
                f"record batch at byte {self._pos}, record {index}: {e}", position=e.position
            )
        return CorruptRecordException(
            f"record batch at byte {self._pos}, record {index} (byte {e.position} of the decompressed "
            f"{codec.config_name} records, which start at byte {offset_of_data}): {e}",
            position=offset_of_data,
        )

    def __repr__(self) -> str:
        return (
            f"DefaultRecordBatch(magic=2, offset={self.base_offset}..{self.last_offset}, "
            f"count={self.num_records}, size={self.size_in_bytes}, compression={self.compression_type.config_name}, "
            f"crc=0x{self.checksum:08x})"
        )


# -- in-place updates the broker makes (outside the CRC, except the LogAppendTime one) ----------------------


# --8<-- [start:set_base_offset]
def set_base_offset(buf: bytearray | memoryview, pos: int, base_offset: int) -> None:
    """Assign offsets to the batch at ``buf[pos]``: write its first offset into ``baseOffset``.

    Kafka's ``DefaultRecordBatch.setLastOffset``, which the log's validator calls on every batch it
    appends (it writes ``lastOffset - lastOffsetDelta`` to the same field). The records keep their
    offset deltas, so this one int64 gives every record its offset; it lies outside the CRC, so
    the checksum stays valid.
    """
    struct.pack_into(">q", buf, pos + BASE_OFFSET_OFFSET, base_offset)


# --8<-- [end:set_base_offset]


def set_partition_leader_epoch(buf: bytearray | memoryview, pos: int, epoch: int) -> None:
    """Stamp the batch at ``buf[pos]`` with the epoch of the leader that appends it.

    Kafka's ``DefaultRecordBatch.setPartitionLeaderEpoch`` (KIP-101), which the leader's validator
    calls on every batch; a follower keeps the epoch its leader wrote. Outside the CRC, like
    ``baseOffset``: no checksum to redo.
    """
    struct.pack_into(">i", buf, pos + PARTITION_LEADER_EPOCH_OFFSET, epoch)


def set_log_append_time(buf: bytearray | memoryview, pos: int, timestamp: int) -> None:
    """Stamp a batch with the broker's time (``message.timestamp.type=LogAppendTime``).

    Kafka's ``DefaultRecordBatch.setMaxTimestamp(LOG_APPEND_TIME, now)``: the timestamp type bit and
    ``maxTimestamp`` are inside the CRC, so the checksum is recomputed, which is why Kafka only does
    it when the topic asks for LogAppendTime.
    """
    (size,) = struct.unpack_from(">i", buf, pos + LENGTH_OFFSET)
    (attributes,) = struct.unpack_from(">h", buf, pos + ATTRIBUTES_OFFSET)
    struct.pack_into(">h", buf, pos + ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_MASK)
    struct.pack_into(">q", buf, pos + MAX_TIMESTAMP_OFFSET, timestamp)
    crc = crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : pos + LOG_OVERHEAD + size])
    struct.pack_into(">I", buf, pos + CRC_OFFSET, crc)
