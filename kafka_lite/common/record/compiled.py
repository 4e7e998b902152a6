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
``default_record.py`` say what a batch is and how it is written and read. Which codec runs is
chosen in one place, ``codec.py``; ``tests/common/record/test_codec.py`` holds the two equal.

What it replaces: whole methods, as CPython's accelerators replace a whole function rather than
the steps inside it (``_json.make_encoder`` is the encoder, ``_heapq.heappush`` is ``heappush``).
Each method a client calls once per record (``try_append``, ``append_with_offset``,
``has_room_for``, ``is_full``, the size bounds, the batch's ``__iter__``) is overridden whole; its
body is one call into compiled code plus the bookkeeping the reference's interface promises (the
last offset and the count). The compiled builder itself decides whether a record fits: it is given
the write limit, as Kafka's ``MemoryRecordsBuilder`` is given its final ``writeLimit``.

The compiled builder takes what a producer sends: a timestamp that is a non-negative int, offsets
that increase from the base offset, keys and values that are bytes-like or None, headers that are
``(str, bytes or None)`` pairs. Anything else (a ``NO_TIMESTAMP`` record, a header value in a
bytearray, and every mistake) is handed to the reference: ``_take_back`` moves the records written
so far into the reference's buffer, and from then on the batch is the reference's, which accepts
the record or raises its own exception, as if it had built the batch from the start. The compiled
builder checks all of a record before it writes a byte of it, so a record it refuses leaves nothing
behind. ``build`` hands the batch back the same way: the header, the compression and the CRC are
always the reference's code.

A compiled record has the fields a client reads: ``offset``, ``timestamp`` (the batch's for
LogAppendTime), ``key``, ``value`` and ``headers`` as ``(key, value)`` pairs. It has no
``sequence`` and ``size_in_bytes``, which only the broker reads, and the broker reads with the
reference. Two differences on input no client should give or bytes no Kafka writes: a key or value
that is a buffer of items wider than a byte (an ``array('i')``) is sized by its ``len`` in the
reference and by its bytes here; and on damaged batches, where a CRC check (``check.crcs``) would
have stopped both readers, aiokafka reads a record's attributes byte as a varint and takes any
negative key or value length for null, as Kafka does, where the reference takes only -1.
"""

from __future__ import annotations

import functools
import struct
import sys
from collections.abc import Iterator
from typing import Any

from aiokafka.errors import CorruptRecordException as CompiledCorruptRecord
from aiokafka.record.default_records import DefaultRecordBatch as CompiledRecordBatch
from aiokafka.record.default_records import DefaultRecordBatchBuilder as CompiledBatchBuilder

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import default_record, default_record_batch, memory_records_builder
from kafka_lite.common.record.compression import CompressionType, decompress
from kafka_lite.common.record.constants import LOG_OVERHEAD, MAGIC_VALUE_V2, TimestampType
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    LENGTH_OFFSET,
    RECORD_BATCH_OVERHEAD,
)
from kafka_lite.common.utils import INT32_MAX

_NO_HEADERS: list = []  # a record without headers, as the compiled builder takes it (it never changes it)


def record_size_upper_bound(
    key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list[Header] = ()
) -> int:
    """``default_record.record_size_upper_bound``, its key, value and headers sized by compiled code."""
    try:
        size = CompiledBatchBuilder.size_of(key, value, _compiled_headers(headers))
    except Exception:  # whatever the compiled code refuses, the reference sizes, or raises its own error
        return default_record.record_size_upper_bound(key, value, headers)
    return default_record.MAX_RECORD_OVERHEAD + size


# --8<-- [start:estimate]
def estimate_size_in_bytes_upper_bound(
    key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list[Header] = ()
) -> int:
    """``default_record_batch.estimate_size_in_bytes_upper_bound`` in one compiled call: aiokafka's
    estimate is Kafka's (the batch header, the widest record overhead, then key, value and headers)."""
    try:
        return CompiledBatchBuilder.estimate_size_in_bytes(key, value, _compiled_headers(headers))
    except Exception:
        return default_record_batch.estimate_size_in_bytes_upper_bound(key, value, headers)


# --8<-- [end:estimate]


class MemoryRecordsBuilder(memory_records_builder.MemoryRecordsBuilder):
    """The reference builder whose v2 records aiokafka's compiled builder writes, as long as they
    are records it takes; then (or at ``build``) the batch is handed back to the reference.

    While ``_compiled`` is set, the compiled builder holds the encoded records, behind a header it
    writes only when asked, and keeps the batch's first and max timestamps; this class keeps the
    reference's ``_last_offset`` and ``_count``. The compiled builder writes CreateTime batches that
    are not control batches, from offset delta 0; LogAppendTime and control batches, and message
    sets v0/v1, are the reference's from the start.
    """

    @functools.wraps(memory_records_builder.MemoryRecordsBuilder.__init__)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        accelerated = (
            self.magic == MAGIC_VALUE_V2
            and self.timestamp_type != TimestampType.LOG_APPEND_TIME
            and not self.is_control_batch
            and (self.write_limit is None or type(self.write_limit) is int)
        )
        # Uncompressed, and with no producer state: both are written by the reference's ``build``.
        self._compiled = (
            CompiledBatchBuilder(MAGIC_VALUE_V2, 0, 0, -1, -1, -1, _compiled_batch_size(self.write_limit))
            if accelerated
            else None
        )

    # --8<-- [start:try_append]
    def try_append(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list = ()
    ) -> bool:
        compiled = self._compiled
        if compiled is None:
            return super().try_append(timestamp, key, value, headers)
        if self._appends_closed:
            return False  # the reference's first check (``is_full``), before it looks at the record
        last_offset = self._last_offset
        offset_delta = 0 if last_offset is None else last_offset - self.base_offset + 1
        if type(timestamp) is int and timestamp >= 0 and offset_delta <= INT32_MAX:
            try:
                # One call: size the record, refuse it if it does not fit, else write it.
                written = compiled.append(offset_delta, timestamp, key, value, _compiled_headers(headers))
            except Exception:
                pass  # a record the compiled builder refuses, having written nothing of it
            else:
                if written is None:
                    return False
                self._last_offset = self.base_offset + offset_delta
                self._count += 1
                return True
        self._take_back()
        return super().try_append(timestamp, key, value, headers)

    # --8<-- [end:try_append]

    def append_with_offset(
        self, offset: int, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple | list = ()
    ) -> None:
        compiled = self._compiled
        if compiled is None:
            return super().append_with_offset(offset, timestamp, key, value, headers)
        last_offset = self._last_offset
        offset_delta = offset - self.base_offset if type(offset) is int else -1
        if (
            not self._appends_closed
            and type(timestamp) is int
            and timestamp >= 0
            and 0 <= offset_delta <= INT32_MAX
            and (last_offset is None or offset > last_offset)
        ):
            try:
                written = compiled.append(offset_delta, timestamp, key, value, _compiled_headers(headers))
            except Exception:
                written = None
            # ``None``: refused, or past the write limit, which ``append`` ignores and the compiled
            # builder does not; the reference takes the batch and the record.
            if written is not None:
                self._last_offset = offset
                self._count += 1
                return None
        self._take_back()
        return super().append_with_offset(offset, timestamp, key, value, headers)

    def has_room_for(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list = ()
    ) -> bool:
        compiled = self._compiled
        if compiled is None:
            return super().has_room_for(timestamp, key, value, headers)
        if self.is_full():
            return False
        if self._count == 0:
            return True
        # The compiled builder sizes the record at the deltas it would get, as DefaultRecord.size_in_bytes.
        offset_delta = self._last_offset - self.base_offset + 1
        if type(timestamp) is int and offset_delta <= INT32_MAX:
            try:
                size = compiled.size_in_bytes(offset_delta, timestamp, key, value, _compiled_headers(headers))
            except Exception:
                pass
            else:
                return self.write_limit is None or self.write_limit >= compiled.size() + size
        self._take_back()
        return super().has_room_for(timestamp, key, value, headers)

    def is_full(self) -> bool:
        compiled = self._compiled
        if compiled is None:
            return super().is_full()
        return self._appends_closed or (
            self.write_limit is not None and self._count > 0 and compiled.size() >= self.write_limit
        )

    def estimated_size_in_bytes(self) -> int:
        compiled = self._compiled
        if compiled is None:
            return super().estimated_size_in_bytes()
        return compiled.size()  # the header's bytes and the records written so far, as the reference's

    def _build_v2(self) -> bytearray:
        self._take_back()
        return super()._build_v2()  # the header, compression and CRC, by the reference's code

    # --8<-- [start:take_back]
    def _take_back(self) -> None:
        """Hand the batch to the reference: the records written so far, in a buffer laid out as the
        reference's (61 header bytes, which its ``build`` writes, then the records), and the first
        and max timestamps, read from the header the compiled builder writes when built."""
        compiled, self._compiled = self._compiled, None
        if compiled is None or self._count == 0:
            return
        self._buffer = compiled.build()
        written = default_record_batch.DefaultRecordBatch(self._buffer)
        self._first_timestamp = written.first_timestamp
        self._max_timestamp = written.max_timestamp

    # --8<-- [end:take_back]


class DefaultRecordBatch(default_record_batch.DefaultRecordBatch):
    """The reference batch view, its records decoded by aiokafka's compiled batch reader."""

    __slots__ = ()

    # --8<-- [start:iter]
    def __iter__(self) -> Iterator[Any]:
        # A generator over the compiled reader: each record is one call into compiled code, and a
        # failure is raised where the reference raises it, after the records before it.
        buf = self._records_uncompressed()
        try:
            yield from CompiledRecordBatch(buf)
        except (CompiledCorruptRecord, UnicodeDecodeError) as e:  # a header key that is not UTF-8 is corrupt
            raise CorruptRecordException(
                f"record batch at byte {self._pos}: {e}", position=self._pos
            ) from None

    # --8<-- [end:iter]

    def _records_uncompressed(self) -> memoryview | bytearray:
        """The batch as the compiled reader takes it: checked by the reference, and decompressed by
        the reference (so both read the same codecs and fail the same way), then marked uncompressed."""
        self._check_bounds()
        buf = self.buffer()
        codec = self.compression_type
        if codec == CompressionType.NONE:
            return buf
        records = decompress(codec, buf[RECORD_BATCH_OVERHEAD:], position=self._pos + RECORD_BATCH_OVERHEAD)
        out = bytearray(buf[:RECORD_BATCH_OVERHEAD])
        out += records
        # The compiled reader reads no CRC; the length and the codec bits are made true of ``out``.
        struct.pack_into(">i", out, LENGTH_OFFSET, len(out) - LOG_OVERHEAD)
        (attributes,) = struct.unpack_from(">h", out, ATTRIBUTES_OFFSET)
        struct.pack_into(">h", out, ATTRIBUTES_OFFSET, attributes & ~COMPRESSION_CODEC_MASK)
        return out


def _compiled_batch_size(write_limit: int | None) -> int:
    """The compiled builder's limit: it refuses a record (but the first) when the batch would reach
    its ``batch_size``; the reference refuses when it would pass ``write_limit``."""
    if write_limit is None or write_limit >= sys.maxsize:
        return sys.maxsize
    return max(write_limit + 1, -sys.maxsize)


def _compiled_headers(headers: tuple[Header, ...] | list[Header]) -> list[tuple]:
    """Headers as the compiled builder takes them: a list of plain tuples (it refuses ``Header``, a
    tuple subclass). ``len`` first, so that what has no length fails here, as in the reference."""
    return _NO_HEADERS if len(headers) == 0 else list(map(tuple, headers))
