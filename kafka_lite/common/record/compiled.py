"""The v2 record codec in compiled code: an accelerator behind the reference codec's interface.

No Kafka twin: it mirrors the interface of kafka_lite's Python record codec, the reference
         (``MemoryRecordsBuilder``, ``DefaultRecordBatch``, ``record_size_upper_bound``,
         ``estimate_size_in_bytes_upper_bound``): the same names and signatures, the same bytes
         written, the same records read, the same exceptions. It is modelled on CPython's ``_json``
         and ``_heapq`` behind ``json`` and ``heapq``. The work inside is aiokafka's Cython
         ``DefaultRecordBatchBuilder`` and ``DefaultRecordBatch`` (aiokafka/record/_crecords/).
Book:    chapter 2, 2.1.2 (the producer's batches); chapter 6, 6.1 (message format); v2 is Kafka
         0.11's, after the book

Read the reference, not this: ``memory_records_builder.py``, ``default_record_batch.py`` and
``default_record.py`` say what a batch is and how it is written and read. This module only moves the
per-record loop (encoding or decoding each record's varints, key, value and headers) into C, because
in Python that loop costs more than everything else a client does with a record. Which codec runs is
chosen in one place, ``codec.py``; ``tests/common/record/test_codec.py`` holds the two equal.

Each class here is a subclass of its reference, so everything it does not accelerate is the
reference's own code: the header, the checks and their exceptions, the size bookkeeping,
compression (kafka_lite's codecs, so both write the same compressed bytes), and every batch the C
builder cannot write (message sets v0/v1, LogAppendTime and control batches).

A compiled record has the fields a client reads: ``offset``, ``timestamp`` (the batch's for
LogAppendTime), ``key``, ``value`` and ``headers`` as ``(key, value)`` pairs. It has no
``sequence`` and ``size_in_bytes``, which only the broker reads, and the broker reads with the
reference. On bytes no Kafka writes, the two readers differ where a CRC check (``check.crcs``)
would have stopped both: aiokafka reads a record's attributes byte as a varint, and takes any
negative key or value length for null, as Kafka does, where the reference takes only -1.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator
from typing import Any

from aiokafka.errors import CorruptRecordException as CompiledCorruptRecord
from aiokafka.record.default_records import DefaultRecordBatch as CompiledRecordBatch
from aiokafka.record.default_records import DefaultRecordBatchBuilder as CompiledBatchBuilder

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import default_record_batch, memory_records_builder
from kafka_lite.common.record.compression import CompressionType, compress, decompress
from kafka_lite.common.record.constants import LOG_OVERHEAD, MAGIC_VALUE_V2, TimestampType
from kafka_lite.common.record.crc import crc32c
from kafka_lite.common.record.default_record import MAX_RECORD_OVERHEAD, Header
from kafka_lite.common.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CRC_OFFSET,
    LENGTH_OFFSET,
    RECORD_BATCH_OVERHEAD,
    set_base_offset,
    set_partition_leader_epoch,
)
from kafka_lite.common.utils import INT32_MAX


def record_size_upper_bound(
    key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list[Header] = ()
) -> int:
    """``default_record.record_size_upper_bound``, its key, value and headers sized by compiled code."""
    return MAX_RECORD_OVERHEAD + CompiledBatchBuilder.size_of(key, value, _compiled_headers(headers))


def estimate_size_in_bytes_upper_bound(
    key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list[Header] = ()
) -> int:
    """``default_record_batch.estimate_size_in_bytes_upper_bound``, sized by compiled code."""
    return RECORD_BATCH_OVERHEAD + record_size_upper_bound(key, value, headers)


class MemoryRecordsBuilder(memory_records_builder.MemoryRecordsBuilder):
    """The reference builder, its v2 records encoded by aiokafka's compiled builder.

    The compiled builder keeps the encoded records in its own buffer, behind a header it writes at
    ``build``; it always writes base offset 0 and CreateTime, so the records get offset deltas, and
    the base offset and leader epoch (outside the CRC) are written into the built bytes after.
    """

    @functools.wraps(memory_records_builder.MemoryRecordsBuilder.__init__)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        accelerated = (
            self.magic == MAGIC_VALUE_V2
            and self.timestamp_type != TimestampType.LOG_APPEND_TIME
            and not self.is_control_batch
        )
        # Uncompressed: compression is the reference's, in ``_build_v2``. No size limit: room is
        # decided by ``has_room_for``, as in the reference, and ``append`` never refuses a record.
        self._compiled = (
            CompiledBatchBuilder(MAGIC_VALUE_V2, 0, int(self.is_transactional), -1, -1, -1, INT32_MAX)
            if accelerated
            else None
        )

    def _append_default_record(
        self, offset: int, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple | list
    ) -> None:
        if self._compiled is None:
            super()._append_default_record(offset, timestamp, key, value, headers)
            return
        self._ensure_open_for_record_append()
        self._compiled.append(offset - self.base_offset, timestamp, key, value, _compiled_headers(headers))
        self._record_written(offset, timestamp)

    def estimated_size_in_bytes(self) -> int:
        if self._compiled is None:
            return super().estimated_size_in_bytes()
        return self._compiled.size()

    def has_room_for(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list = ()
    ) -> bool:
        if self._compiled is None or self._count == 0 or self.write_limit is None or self.is_full():
            return super().has_room_for(timestamp, key, value, headers)
        # The compiled builder sizes the record at the deltas it would get, as DefaultRecord.size_in_bytes.
        record_size = self._compiled.size_in_bytes(
            self._last_offset - self.base_offset + 1, timestamp, key, value, _compiled_headers(headers)
        )
        return self.write_limit >= self._compiled.size() + record_size

    def try_append(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list = ()
    ) -> bool:
        # The producer's one call per record: ``has_room_for`` and ``append`` as the reference has
        # them, in one method, for a batch's second and later records (the first, and anything the
        # reference would refuse with an exception, go through the reference's own steps).
        compiled = self._compiled
        if (
            compiled is None
            or self._count == 0
            or self.write_limit is None
            or timestamp < 0
            or self._built is not None
        ):
            return super().try_append(timestamp, key, value, headers)
        size = compiled.size()
        if self._appends_closed or size >= self.write_limit:  # is_full
            return False
        offset_delta = self._last_offset - self.base_offset + 1
        compiled_headers = _compiled_headers(headers)
        if self.write_limit < size + compiled.size_in_bytes(
            offset_delta, timestamp, key, value, compiled_headers
        ):
            return False
        compiled.append(offset_delta, timestamp, key, value, compiled_headers)
        self._record_written(self._last_offset + 1, timestamp)
        return True

    def _build_v2(self) -> bytearray:
        if self._compiled is None or self._count == 0:
            return super()._build_v2()
        self._compiled.set_producer_state(self.producer_id, self.producer_epoch, self.base_sequence)
        buf = self._compiled.build()
        if self.compression != CompressionType.NONE:
            buf = _compressed(buf, self.compression)
        set_base_offset(buf, 0, self.base_offset)
        set_partition_leader_epoch(buf, 0, self.partition_leader_epoch)
        return buf


class DefaultRecordBatch(default_record_batch.DefaultRecordBatch):
    """The reference batch view, its records decoded by aiokafka's compiled batch reader."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        self._check_bounds()
        buf = self.buffer()
        codec = self.compression_type
        if codec != CompressionType.NONE:
            # Decompressed by the reference, so both read the same codecs and fail the same way;
            # the compiled reader then gets the batch as if it had been sent uncompressed.
            records = decompress(
                codec, buf[RECORD_BATCH_OVERHEAD:], position=self._pos + RECORD_BATCH_OVERHEAD
            )
            buf = _uncompressed(buf, records)
        try:
            yield from CompiledRecordBatch(buf)
        except (CompiledCorruptRecord, UnicodeDecodeError) as e:  # a header key that is not UTF-8 is corrupt
            raise CorruptRecordException(
                f"record batch at byte {self._pos}: {e}", position=self._pos
            ) from None


def _compiled_headers(headers: tuple[Header, ...] | list[Header]) -> list[tuple[str, bytes | None]]:
    """Headers as the compiled builder takes them: a list of plain ``(key, value)`` tuples."""
    if not headers:
        return []
    if any(key is None for key, _ in headers):
        raise ValueError("a header key cannot be null")  # the reference's DefaultRecord.write_to check
    return [(key, value) for key, value in headers]


def _compressed(buf: bytearray, compression: CompressionType) -> bytearray:
    """An uncompressed v2 batch with its records compressed by ``compression``: the header is kept,
    its length, compression bits and CRC written again (as ``set_log_append_time`` rewrites a CRC)."""
    out = bytearray(buf[:RECORD_BATCH_OVERHEAD])
    out += compress(compression, memoryview(buf)[RECORD_BATCH_OVERHEAD:])
    _rewrite_header(out, int(compression))
    return out


def _uncompressed(buf: memoryview, records: bytes | bytearray | memoryview) -> bytearray:
    """A compressed v2 batch's header over its decompressed ``records``, marked uncompressed."""
    out = bytearray(buf[:RECORD_BATCH_OVERHEAD])
    out += records
    _rewrite_header(out, int(CompressionType.NONE))
    return out


def _rewrite_header(out: bytearray, codec_id: int) -> None:
    struct.pack_into(">i", out, LENGTH_OFFSET, len(out) - LOG_OVERHEAD)
    (attributes,) = struct.unpack_from(">h", out, ATTRIBUTES_OFFSET)
    struct.pack_into(">h", out, ATTRIBUTES_OFFSET, (attributes & ~COMPRESSION_CODEC_MASK) | codec_id)
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
