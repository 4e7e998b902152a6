"""Records encoded and decoded by compiled code: the clients' fast path through the v2 format.

No Kafka twin: Kafka's producer and consumer write and read with MemoryRecordsBuilder, DefaultRecordBatch
         and DefaultRecord themselves, compiled by the JVM; this hands the same work to aiokafka's
         Cython ``DefaultRecordBatchBuilder`` and ``DefaultRecordBatch``
         (aiokafka/record/_crecords/default_records.pyx).
Book:    chapter 2, 2.1.2 (the producer's batches); chapter 6, 6.1 (message format); v2 is Kafka
         0.11's, after the book

Why: encoding or decoding a record in Python (``default_record.py``: a length, attributes, two
deltas, a key and a value, each behind a varint) costs more than everything else a producer or a
consumer does with the record. Where records are written in bulk (the producer's batches) or read in
bulk (the consumer's fetcher, the Spark data source's Arrow path), each v2 batch's records are
encoded or decoded in C instead. The format, the fields and the results are those of kafka_lite's
``DefaultRecord`` and ``MemoryRecordsBuilder`` (the code to read, and the code the broker uses);
``tests/common/record/test_compiled.py`` holds the two to the same bytes and answers. Older message
formats (magic 0 and 1), which only old clients write, go through kafka_lite's decoder.

A compiled record has ``offset``, ``timestamp`` (the batch's for LogAppendTime), ``key``, ``value``
and ``headers`` as ``(key, value)`` pairs, as kafka_lite's does.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from aiokafka.errors import CorruptRecordException as CompiledCorruptRecord
from aiokafka.record.default_records import DefaultRecordBatch as CompiledRecordBatch
from aiokafka.record.default_records import DefaultRecordBatchBuilder as CompiledBatchBuilder

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.compression import CompressionType, compress
from kafka_lite.common.record.constants import LOG_OVERHEAD, MAGIC_VALUE_V2, NO_SEQUENCE
from kafka_lite.common.record.crc import crc32c
from kafka_lite.common.record.default_record import MAX_RECORD_OVERHEAD, Header
from kafka_lite.common.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CRC_OFFSET,
    LENGTH_OFFSET,
    RECORD_BATCH_OVERHEAD,
)
from kafka_lite.common.record.memory_records import MemoryRecords


def compiled_records(batch: Any) -> Iterator[Any]:
    """The records of ``batch`` (one of ``MemoryRecords.batches()``), decoded by compiled code when
    it is a v2 batch. A malformed record raises kafka_lite's ``CorruptRecordException``."""
    if batch.magic < MAGIC_VALUE_V2:
        yield from batch
        return
    try:
        yield from CompiledRecordBatch(batch.buffer())
    except CompiledCorruptRecord as e:
        raise CorruptRecordException(
            f"record batch at offset {batch.base_offset}: {e}", position=batch.position
        ) from None


def record_size_upper_bound(
    key: bytes | None, value: bytes | None, headers: list[Header] | tuple = ()
) -> int:
    """``default_record.record_size_upper_bound``, its key, value and headers sized by compiled code."""
    return MAX_RECORD_OVERHEAD + CompiledBatchBuilder.size_of(
        key, value, _compiled_headers(headers) if headers else []
    )


def estimate_size_in_bytes_upper_bound(key: bytes | None, value: bytes | None, headers: list[Header]) -> int:
    """A v2 batch holding just this record, at most (Kafka's ``AbstractRecords.estimateSizeInBytesUpperBound``)."""
    return RECORD_BATCH_OVERHEAD + record_size_upper_bound(key, value, headers)


class CompiledRecordsBuilder:
    """A producer batch's builder (``MemoryRecordsBuilder``'s part the producer uses: magic 2,
    offsets from 0, CreateTime) whose records are encoded by compiled code.

    Each ``try_append`` encodes the record once, straight after the ones before it in the compiled
    builder's buffer, or refuses it when it would take the batch past ``write_limit`` (Kafka's
    ``hasRoomFor``, in the same call). ``build`` has the compiled builder write the header and CRC; a
    compressed batch then has its records compressed by kafka_lite's codecs, and its length,
    attributes and CRC written again.
    """

    def __init__(self, *, compression: CompressionType, write_limit: int) -> None:
        self.compression = CompressionType(compression)
        self.write_limit = write_limit
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = NO_SEQUENCE
        # Uncompressed and not transactional (kafka_lite's producer has no transactions); compression
        # is kafka_lite's, in ``build``.
        # aiokafka's builder refuses a record that would end the batch exactly at its size, where
        # Kafka's hasRoomFor takes it (``writeLimit >= written + recordSize``): one byte more gives
        # it Kafka's rule, so both builders close a batch at the same record.
        self._builder = CompiledBatchBuilder(MAGIC_VALUE_V2, 0, 0, -1, -1, -1, write_limit + 1)
        self._count = 0
        self._appends_closed = False
        self._built: MemoryRecords | None = None

    def try_append(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: list[Header] | tuple = ()
    ) -> bool:
        """Append the record at the next offset, or return False when the batch has no room for it
        (the first record always fits, whatever its size)."""
        if self._appends_closed:
            return False
        headers = _compiled_headers(headers) if headers else []
        if self._builder.append(self._count, timestamp, key, value, headers) is None:
            return False
        self._count += 1
        return True

    @property
    def num_records(self) -> int:
        return self._count

    def estimated_size_in_bytes(self) -> int:
        """The header's bytes and the records written so far, uncompressed."""
        return self._builder.size()

    def is_full(self) -> bool:
        return self._appends_closed or (self._count > 0 and self._builder.size() >= self.write_limit)

    def close_for_record_appends(self) -> None:
        self._appends_closed = True

    def build(self) -> MemoryRecords:
        """The finished batch (read-only, as ``MemoryRecordsBuilder.build``'s); the same bytes each call."""
        if self._built is None:
            self._builder.set_producer_state(self.producer_id, self.producer_epoch, self.base_sequence)
            buf = self._builder.build()
            if self.compression != CompressionType.NONE:
                buf = _compressed(buf, self.compression)
            self._built = MemoryRecords(memoryview(buf).toreadonly())
        return self._built


def _compiled_headers(headers: list[Header] | tuple) -> list[tuple[str, bytes | None]]:
    """Headers as the compiled builder takes them: a list of plain ``(key, value)`` tuples."""
    return [(key, value) for key, value in headers]


def _compressed(buf: bytearray, compression: CompressionType) -> bytearray:
    """An uncompressed v2 batch with its records compressed by ``compression``: the header is kept,
    its length, compression bits and CRC written again (as ``set_log_append_time`` rewrites a CRC)."""
    out = bytearray(buf[:RECORD_BATCH_OVERHEAD])
    out += compress(compression, memoryview(buf)[RECORD_BATCH_OVERHEAD:])
    struct.pack_into(">i", out, LENGTH_OFFSET, len(out) - LOG_OVERHEAD)
    (attributes,) = struct.unpack_from(">h", out, ATTRIBUTES_OFFSET)
    struct.pack_into(">h", out, ATTRIBUTES_OFFSET, (attributes & ~COMPRESSION_CODEC_MASK) | int(compression))
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return out
