"""Batches in memory: a produce request's records, a fetch response's, a builder's output.

Mirrors: org.apache.kafka.common.record.MemoryRecords and ByteBufferLogInputStream
         (clients/.../common/record/, Kafka 0.11.0); Kafka 0.10's ByteBufferMessageSet
Book:    chapter 6, 6.1 (message sets)
Differs: one iterator serves all three magics, as in Kafka 0.11; the batch objects are views into
         the same buffer (``memoryview``), never copies.

Batches of every format start with ``offset int64, size int32`` and have the magic byte at offset
16, so :func:`iter_batches` can walk a buffer of mixed formats: read 12 bytes, check the size, look at
the magic, hand the slice to the right batch class.

A fetch response may end with a *partial* batch: the broker sends whole segments' bytes up to the
fetch size, cutting the last batch. Readers then stop at the cut (``allow_partial_tail=True``). On a
produce request or in a recovered segment the same cut is corruption, and is reported as such.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.constants import (
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAGIC_VALUE_V2,
    SIZE_OFFSET,
)
from kafka_lite.common.record.default_record_batch import RECORD_BATCH_OVERHEAD, DefaultRecordBatch
from kafka_lite.common.record.legacy_record import RECORD_OVERHEAD_V0, LegacyRecordBatch

if TYPE_CHECKING:
    from kafka_lite.common.record.compression import CompressionType
    from kafka_lite.common.record.constants import TimestampType
    from kafka_lite.common.record.default_record import Header

RecordBatch = DefaultRecordBatch | LegacyRecordBatch
_SIZE = struct.Struct(">i")


# --8<-- [start:iter_batches]
def iter_batches(
    buf: bytes | bytearray | memoryview,
    start: int = 0,
    end: int | None = None,
    allow_partial_tail: bool = False,
) -> Iterator[RecordBatch]:
    """Yield each batch in ``buf[start:end]`` without decoding its records.

    Every size is checked before it is used: a size below the smallest possible entry, or one that
    runs past ``end``, raises ``CorruptRecordException`` with the batch's byte offset (unless the
    overrun is the final batch and ``allow_partial_tail`` is set). An unknown magic is corrupt too.
    """
    end = len(buf) if end is None else end
    view = memoryview(buf)  # each batch is a slice of this one view, never a copy
    pos = start
    while pos < end:
        remaining = end - pos
        if remaining < LOG_OVERHEAD + 5:  # offset, size, and enough to reach the magic byte
            if allow_partial_tail:
                return
            raise CorruptRecordException(
                f"batch at byte {pos} is cut: {remaining} bytes cannot hold a batch header", position=pos
            )
        (size,) = _SIZE.unpack_from(buf, pos + SIZE_OFFSET)
        if size < RECORD_OVERHEAD_V0:
            raise CorruptRecordException(
                f"batch at byte {pos} has size {size}, less than the smallest entry ({RECORD_OVERHEAD_V0})",
                position=pos + SIZE_OFFSET,
            )
        if LOG_OVERHEAD + size > remaining:
            if allow_partial_tail:
                return
            raise CorruptRecordException(
                f"batch at byte {pos} is cut: its size field says {LOG_OVERHEAD + size} bytes, {remaining} remain",
                position=pos + SIZE_OFFSET,
            )
        magic = buf[pos + MAGIC_OFFSET]
        if magic == MAGIC_VALUE_V2:
            if LOG_OVERHEAD + size < RECORD_BATCH_OVERHEAD:
                raise CorruptRecordException(
                    f"batch at byte {pos} has size {size}, less than a v2 header needs "
                    f"({RECORD_BATCH_OVERHEAD - LOG_OVERHEAD})",
                    position=pos + SIZE_OFFSET,
                )
            batch: RecordBatch = DefaultRecordBatch(view[: pos + LOG_OVERHEAD + size], pos)
        elif magic in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
            batch = LegacyRecordBatch(view[: pos + LOG_OVERHEAD + size], pos)
        else:
            raise CorruptRecordException(
                f"batch at byte {pos} has unknown magic {magic}", position=pos + MAGIC_OFFSET
            )
        yield batch
        pos += LOG_OVERHEAD + size


# --8<-- [end:iter_batches]


class MemoryRecords:
    """A buffer of batches (any magic), with iteration, validation and convenience builders."""

    def __init__(self, buf: bytes | bytearray | memoryview) -> None:
        self._buf = buf

    @classmethod
    def with_records(
        cls,
        records: Iterable[tuple],
        *,
        magic: int = MAGIC_VALUE_V2,
        compression: CompressionType | None = None,
        base_offset: int = 0,
        timestamp_type: TimestampType | None = None,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        is_transactional: bool = False,
        is_control_batch: bool = False,
    ) -> MemoryRecords:
        """One batch holding ``records``: tuples ``(timestamp, key, value[, headers])``."""
        from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder

        builder = MemoryRecordsBuilder(
            magic=magic,
            compression=compression,
            base_offset=base_offset,
            timestamp_type=timestamp_type,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            is_transactional=is_transactional,
            is_control_batch=is_control_batch,
        )
        for record in records:
            timestamp, key, value, *rest = record
            headers: tuple[Header, ...] = tuple(rest[0]) if rest else ()
            builder.append(timestamp, key, value, headers)
        return builder.build()

    def buffer(self) -> bytes | bytearray | memoryview:
        return self._buf

    def size_in_bytes(self) -> int:
        return len(self._buf)

    def writable(self) -> MemoryRecords:
        """These records in a buffer the broker may patch in place: themselves, or one copy.

        A produce request's records are a view into the network receive's bytearray (writable), which
        the log patches where they lie, as Kafka's LogValidator patches the request's ByteBuffer.
        Records built in memory are ``bytes`` (read-only) and are copied.
        """
        buf = self._buf
        if isinstance(buf, bytearray) or (isinstance(buf, memoryview) and not buf.readonly):
            return self
        return MemoryRecords(bytearray(buf))

    def __len__(self) -> int:
        return len(self._buf)

    def batches(self, allow_partial_tail: bool = False) -> Iterator[RecordBatch]:
        return iter_batches(self._buf, allow_partial_tail=allow_partial_tail)

    def records(self, allow_partial_tail: bool = False) -> Iterator:
        """Every record of every batch, decompressed, with absolute offsets."""
        for batch in self.batches(allow_partial_tail):
            yield from batch

    def validate(self) -> int:
        """Check every batch's sizes and CRC; return the batch count, or raise with the bad batch's offset."""
        count = 0
        for batch in self.batches():
            batch.ensure_valid()
            count += 1
        return count

    def __repr__(self) -> str:
        return f"MemoryRecords({len(self._buf)} bytes)"
