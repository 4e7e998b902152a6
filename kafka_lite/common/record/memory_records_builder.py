"""Write records into a batch: offsets and timestamps as deltas, compression, then header and CRC.

Mirrors: org.apache.kafka.common.record.MemoryRecordsBuilder (clients/.../common/record/, Kafka 0.11.0)
Book:    chapter 2, 2.1.2 (the producer's RecordBatch fills a MemoryRecords); chapter 6, 6.1
Differs: Kafka streams records through a compressor as they are appended (so a batch's compressed
         size is known early); we collect the encoded records and compress once in ``build``,
         using an estimate (the uncompressed size) for ``is_full``, so a compressed batch closes
         when its records, uncompressed, reach the batch size.

A v2 batch is built in one bytearray, as Kafka's builder does in its ByteBuffer: the header's 61
bytes are left blank at the front, each record is encoded once straight after the ones before it,
and ``build`` writes the header into the blank space and checksums the bytes where they lie. An
uncompressed batch is never copied; a compressed one is copied once, into the compressed buffer.

Usage::

    builder = MemoryRecordsBuilder(compression=CompressionType.GZIP, base_offset=0)
    builder.append(timestamp=1500000000000, key=b"k", value=b"v")
    records = builder.build()  # MemoryRecords holding one v2 batch
"""

from __future__ import annotations

from kafka_lite.common.record import default_record
from kafka_lite.common.record.compression import CompressionType, compress
from kafka_lite.common.record.constants import (
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    TimestampType,
)
from kafka_lite.common.record.default_record import DefaultRecord, Header
from kafka_lite.common.record.default_record_batch import (
    RECORD_BATCH_OVERHEAD,
    compute_attributes,
    write_header,
)
from kafka_lite.common.record.legacy_record import build_legacy_entries
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.utils import INT32_MAX


class MemoryRecordsBuilder:
    """Accumulates records for one batch (v2) or one message set (v0/v1), then builds its bytes."""

    def __init__(
        self,
        *,
        magic: int = MAGIC_VALUE_V2,
        compression: CompressionType | None = None,
        timestamp_type: TimestampType | None = None,
        base_offset: int = 0,
        log_append_time: int = NO_TIMESTAMP,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        is_transactional: bool = False,
        is_control_batch: bool = False,
        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
        write_limit: int | None = None,
    ) -> None:
        if magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1, MAGIC_VALUE_V2):
            raise ValueError(f"unknown magic {magic}; kafka_lite writes 0, 1 or 2")
        compression = CompressionType.NONE if compression is None else CompressionType(compression)
        if timestamp_type is None:
            timestamp_type = (
                TimestampType.NO_TIMESTAMP_TYPE if magic == MAGIC_VALUE_V0 else TimestampType.CREATE_TIME
            )
        if magic < MAGIC_VALUE_V2:
            if producer_id != -1 or is_transactional or is_control_batch:
                raise ValueError(
                    f"magic {magic} has no producer id, transactions or control batches (needs magic 2)"
                )
            if compression == CompressionType.ZSTD:
                raise ValueError("zstd needs magic 2")
        if timestamp_type == TimestampType.LOG_APPEND_TIME and log_append_time == NO_TIMESTAMP:
            raise ValueError("a LogAppendTime batch needs log_append_time")
        self.magic = magic
        self.compression = compression
        self.timestamp_type = TimestampType(timestamp_type)
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional
        self.is_control_batch = is_control_batch
        self.partition_leader_epoch = partition_leader_epoch
        self.write_limit = write_limit
        # v2: the header's bytes (written by build), then the encoded records, uncompressed.
        self._buffer = bytearray(RECORD_BATCH_OVERHEAD) if magic == MAGIC_VALUE_V2 else bytearray()
        self._legacy: list[tuple[int, bytes | None, bytes | None]] = []  # v0/v1: (ts, key, value)
        self._first_timestamp: int | None = None
        self._max_timestamp = NO_TIMESTAMP
        self._last_offset: int | None = None
        self._count = 0
        self._appends_closed = False  # Kafka's appendStream == CLOSED_STREAM
        self._built: MemoryRecords | None = None

    # -- appending ------------------------------------------------------------------------------------------

    def append(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list = ()
    ) -> int:
        """Append a record at the next offset; return that offset."""
        offset = self.base_offset if self._last_offset is None else self._last_offset + 1
        self.append_with_offset(offset, timestamp, key, value, headers)
        return offset

    def append_with_offset(
        self, offset: int, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple | list = ()
    ) -> None:
        """Append a record at an explicit offset (increasing; gaps allowed, as after compaction)."""
        if self._last_offset is not None and offset <= self._last_offset:
            raise ValueError(
                f"offset {offset} is not larger than the last appended offset {self._last_offset}"
            )
        if offset - self.base_offset > INT32_MAX:
            raise ValueError(f"offset {offset} is too far from base offset {self.base_offset} for one batch")
        if timestamp < 0 and timestamp != NO_TIMESTAMP:
            raise ValueError(f"invalid negative timestamp {timestamp}")
        if self.magic < MAGIC_VALUE_V2 and headers:
            raise ValueError(f"magic {self.magic} cannot carry headers (needs magic 2)")
        if self._first_timestamp is None:
            self._first_timestamp = timestamp
        if self.magic == MAGIC_VALUE_V2:
            self._append_default_record(offset, timestamp, key, value, headers)
        else:
            self._append_legacy_record(offset, timestamp, key, value)

    def _append_default_record(
        self, offset: int, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple | list
    ) -> None:
        """Encode a v2 record straight after the ones before it (Kafka's ``appendDefaultRecord``)."""
        self._ensure_open_for_record_append()
        DefaultRecord.write_to(
            self._buffer,
            offset - self.base_offset,
            timestamp - self._first_timestamp,
            key,
            value,
            headers,
        )
        self._record_written(offset, timestamp)

    def _append_legacy_record(
        self, offset: int, timestamp: int, key: bytes | None, value: bytes | None
    ) -> None:
        """Keep a v0/v1 record for ``build``, which writes the message set in one go."""
        self._ensure_open_for_record_append()
        if offset != self.base_offset + self._count:
            raise ValueError("message sets v0/v1 are written with consecutive offsets")
        self._legacy.append((timestamp, key, value))
        self._record_written(offset, timestamp)

    def _ensure_open_for_record_append(self) -> None:
        if self._built is not None:
            raise RuntimeError("this builder is closed: build() was already called")
        if self._appends_closed:
            raise RuntimeError(
                "Tried to append a record, but MemoryRecordsBuilder is closed for record appends"
            )

    def _record_written(self, offset: int, timestamp: int) -> None:
        self._max_timestamp = max(self._max_timestamp, timestamp)
        self._last_offset = offset
        self._count += 1

    # -- size bookkeeping (the producer's accumulator asks these) --------------------------------------------

    @property
    def num_records(self) -> int:
        return self._count

    def estimated_size_in_bytes(self) -> int:
        """Upper-bound estimate of the built size, ignoring compression's savings."""
        if self.magic == MAGIC_VALUE_V2:
            return len(self._buffer)  # the header's bytes and the records written so far
        return sum(_legacy_entry_size(k, v) for _, k, v in self._legacy)

    def has_room_for(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list = ()
    ) -> bool:
        """Whether the next record fits within ``write_limit`` (Kafka's ``hasRoomFor``).

        A v2 record is sized exactly, at the offset and timestamp deltas it would get. The first
        record always fits: a batch is never empty, even when one record is bigger than the limit
        (that is how ``batch.size=0`` disables batching).
        """
        if self.is_full():
            return False
        if self._count == 0:
            return True
        if self.magic == MAGIC_VALUE_V2:
            next_offset_delta = self._last_offset - self.base_offset + 1
            record_size = default_record.size_in_bytes(
                next_offset_delta, timestamp - self._first_timestamp, key, value, headers
            )
        else:
            record_size = _legacy_entry_size(key, value)
        # Conservative: a record's share of the compression is not counted.
        return self.write_limit is None or self.write_limit >= self.estimated_size_in_bytes() + record_size

    def try_append(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list = ()
    ) -> bool:
        """``has_room_for``, then ``append`` when there is room: the producer's one call per record."""
        if not self.has_room_for(timestamp, key, value, headers):
            return False
        self.append(timestamp, key, value, headers)
        return True

    def is_full(self) -> bool:
        """Closed for appends, or at ``write_limit``; a batch takes its first record whatever its size."""
        return self._appends_closed or (
            self.write_limit is not None
            and self._count > 0
            and self.estimated_size_in_bytes() >= self.write_limit
        )

    def close_for_record_appends(self) -> None:
        """No more records (Kafka's ``closeForRecordAppends``): ``is_full`` from now on; the batch
        can still be built, and its producer state set."""
        self._appends_closed = True

    # -- building ---------------------------------------------------------------------------------------------

    def build(self) -> MemoryRecords:
        """The finished batch. Calling it again returns the same bytes.

        A v2 batch's records are a read-only view of the builder's buffer: not copied, and not
        patchable by whoever receives them (``MemoryRecords.writable`` copies them once if asked).
        """
        if self._built is None:
            if self.magic == MAGIC_VALUE_V2:
                self._built = MemoryRecords(memoryview(self._build_v2()).toreadonly())
            else:
                self._built = MemoryRecords(self._build_legacy())
        return self._built

    def _build_v2(self) -> bytearray:
        if self.compression == CompressionType.NONE:
            buf = self._buffer  # the header is written into the space left for it
        else:
            buf = bytearray(RECORD_BATCH_OVERHEAD)
            buf += compress(self.compression, memoryview(self._buffer)[RECORD_BATCH_OVERHEAD:])
        size = len(buf)
        first_ts = NO_TIMESTAMP if self._first_timestamp is None else self._first_timestamp
        if self.timestamp_type == TimestampType.LOG_APPEND_TIME:
            max_ts = self.log_append_time
        else:
            max_ts = self._max_timestamp
        write_header(
            buf, 0,
            base_offset=self.base_offset,
            size_in_bytes=size,
            partition_leader_epoch=self.partition_leader_epoch,
            attributes=compute_attributes(
                self.compression, self.timestamp_type, self.is_transactional, self.is_control_batch
            ),
            last_offset_delta=0 if self._last_offset is None else self._last_offset - self.base_offset,
            first_timestamp=first_ts,
            max_timestamp=max_ts,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
            num_records=self._count,
        )  # fmt: skip
        return buf

    def _build_legacy(self) -> bytes:
        if not self._legacy:
            return b""
        return build_legacy_entries(
            self._legacy,
            self.magic,
            self.base_offset,
            self.compression,
            self.timestamp_type,
            self.log_append_time,
        )


def _legacy_entry_size(key: bytes | None, value: bytes | None) -> int:
    """A v1 message set entry's size, at most: offset and size (12), the v1 record's fixed fields (22)."""
    return 34 + len(key or b"") + len(value or b"")
