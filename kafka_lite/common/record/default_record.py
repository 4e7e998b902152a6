"""One record inside a v2 batch: length, attributes, deltas, key, value, headers, all varints.

Mirrors: org.apache.kafka.common.record.DefaultRecord (writeTo, readFrom, sizeInBytes) and
         org.apache.kafka.common.header.Header (clients/.../common/record/DefaultRecord.java,
         Kafka 0.11.0)
Book:    chapter 6, 6.1 (message format); v2 is Kafka 0.11's (KIP-98), after the book
Labs:    lab 1 (DefaultRecord.write_to, DefaultRecord.read_from)

The layout (every number is a zig-zag varint from ``varint.py`` unless marked)::

    length            varint   bytes that follow this field
    attributes        int8     unused in v2; always 0
    timestampDelta    varlong  timestamp - batch.firstTimestamp
    offsetDelta       varint   offset - batch.baseOffset
    keyLength         varint   -1 for a null key
    key               bytes
    valueLength       varint   -1 for a null value
    value             bytes
    headersCount      varint
    headers           headerKeyLength varint, headerKey utf-8,
                      headerValueLength varint (-1 = null), headerValue

Why deltas: the batch header holds the absolute base offset and first timestamp once; a record only
stores how far it is from them. The broker can then assign offsets to a whole batch by patching the
8-byte base offset in the header, without touching (or re-checksumming) a single record.
"""

from __future__ import annotations

from typing import NamedTuple

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record.varint import read_varint, read_varlong, size_of_varint, write_varint
from kafka_lite.common.utils import INT32_MAX

NULL_LENGTH = -1  # a null key, value or header value is written as length -1 and no bytes


class Header(NamedTuple):
    """A record header: a UTF-8 string key and a nullable bytes value (Kafka's ``Header``)."""

    key: str
    value: bytes | None


class DefaultRecord(NamedTuple):
    """A decoded v2 record, with its absolute offset and timestamp resolved from the batch."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    sequence: int = -1  # the producer sequence: batch.baseSequence + offsetDelta, or -1
    size_in_bytes: int = 0  # encoded size, length prefix included

    @staticmethod
    def write_to(
        out: bytearray,
        offset_delta: int,
        timestamp_delta: int,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...] | list[Header] = (),
    ) -> int:
        """Append one record to ``out``; return how many bytes it took (length prefix included).

        The body is written first into a scratch buffer because the length prefix is itself a
        varint whose size depends on the body's size (Kafka computes ``sizeInBytes`` up front
        instead; the bytes are the same).
        """
        # BEGIN SOLUTION
        body = bytearray()
        body.append(0)  # attributes: unused in v2
        write_varint(timestamp_delta, body)
        write_varint(offset_delta, body)
        _write_nullable_bytes(key, body)
        _write_nullable_bytes(value, body)
        write_varint(len(headers), body)
        for header_key, header_value in headers:
            if header_key is None:
                raise ValueError("a header key cannot be null")
            encoded_key = header_key.encode("utf-8")
            write_varint(len(encoded_key), body)
            body += encoded_key
            _write_nullable_bytes(header_value, body)
        start = len(out)
        write_varint(len(body), out)
        out += body
        return len(out) - start
        # END SOLUTION

    @staticmethod
    def read_from(
        buf: bytes | bytearray | memoryview,
        pos: int,
        base_offset: int,
        base_timestamp: int,
        base_sequence: int = -1,
        log_append_time: int | None = None,
    ) -> tuple[DefaultRecord, int]:
        """Decode the record at ``buf[pos]``; return it and the position after it.

        ``base_offset``, ``base_timestamp`` and ``base_sequence`` come from the batch header; with
        ``log_append_time`` (a LogAppendTime batch) every record takes the broker's timestamp.
        Anything malformed raises ``CorruptRecordException`` whose ``position`` is the byte offset
        in ``buf`` of the bad field: a length that overruns the record, a negative length other
        than -1, a header key that is not UTF-8, or a body longer or shorter than its length says.
        """
        # BEGIN SOLUTION
        start = pos
        length, pos = read_varint(buf, pos)
        end = pos + length
        if length < 0 or end > len(buf):
            raise CorruptRecordException(
                f"record at byte {start} claims {length} bytes but {len(buf) - pos} remain", position=start
            )
        body = memoryview(buf)[:end]  # reads below cannot run past this record into the next
        pos += 1  # attributes: unused in v2
        timestamp_delta, pos = read_varlong(body, pos)
        offset_delta, pos = read_varint(body, pos)
        key, pos = _read_nullable_bytes(body, pos, "key")
        value, pos = _read_nullable_bytes(body, pos, "value")
        count_at = pos
        header_count, pos = read_varint(body, pos)
        if header_count < 0:
            raise CorruptRecordException(
                f"negative header count {header_count} at byte {count_at}", position=count_at
            )
        headers = []
        for _ in range(header_count):
            key_at = pos
            raw_key, pos = _read_nullable_bytes(body, pos, "header key")
            if raw_key is None:
                raise CorruptRecordException(f"null header key at byte {key_at}", position=key_at)
            try:
                header_key = raw_key.decode("utf-8")
            except UnicodeDecodeError:
                raise CorruptRecordException(
                    f"header key at byte {key_at} is not UTF-8", position=key_at
                ) from None
            header_value, pos = _read_nullable_bytes(body, pos, "header value")
            headers.append(Header(header_key, header_value))
        if pos != end:
            raise CorruptRecordException(
                f"record at byte {start} says {length} bytes but its fields end at byte {pos}", position=start
            )
        if base_sequence < 0:
            sequence = -1
        else:  # sequences wrap around at int32 max, as Kafka's DefaultRecordBatch.incrementSequence
            sequence = (base_sequence + offset_delta) % (INT32_MAX + 1)
        timestamp = log_append_time if log_append_time is not None else base_timestamp + timestamp_delta
        record = DefaultRecord(
            base_offset + offset_delta, timestamp, key, value, tuple(headers), sequence, end - start
        )
        return record, end
        # END SOLUTION


# Kafka's DefaultRecord.MAX_RECORD_OVERHEAD: the widest length varint (5), attributes (1), timestamp
# delta varlong (10) and offset delta varint (5).
MAX_RECORD_OVERHEAD = 21
NULL_VARINT_SIZE_BYTES = 1  # a null key or value is the varint -1: one byte


def size_in_bytes(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[Header, ...] | list[Header] = (),
) -> int:
    """The bytes ``write_to`` takes for this record, its length prefix included (Kafka's
    ``DefaultRecord.sizeInBytes``): what ``MemoryRecordsBuilder.has_room_for`` asks before an append."""
    body_size = size_of_body_in_bytes(offset_delta, timestamp_delta, key, value, headers)
    return size_of_varint(body_size) + body_size


def size_of_body_in_bytes(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[Header, ...] | list[Header] = (),
) -> int:
    """The bytes after the length prefix (Kafka's ``DefaultRecord.sizeOfBodyInBytes``)."""
    size = 1  # attributes
    size += size_of_varint(offset_delta) + size_of_varint(timestamp_delta)
    return size + _size_of(key, value, headers)


def record_size_upper_bound(
    key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list[Header] = ()
) -> int:
    """The most bytes the record can take in any v2 batch, at the widest deltas (Kafka's
    ``DefaultRecord.recordSizeUpperBound``): what the producer checks against ``max.request.size``."""
    return MAX_RECORD_OVERHEAD + _size_of(key, value, headers)


def _size_of(key: bytes | None, value: bytes | None, headers: tuple[Header, ...] | list[Header]) -> int:
    """Key, value and headers: the part of a record's size that depends on nothing else (Kafka's ``sizeOf``)."""
    size = NULL_VARINT_SIZE_BYTES if key is None else size_of_varint(len(key)) + len(key)
    size += NULL_VARINT_SIZE_BYTES if value is None else size_of_varint(len(value)) + len(value)
    size += size_of_varint(len(headers))
    for header_key, header_value in headers:
        key_size = len(header_key.encode("utf-8"))
        size += size_of_varint(key_size) + key_size
        if header_value is None:
            size += NULL_VARINT_SIZE_BYTES
        else:
            size += size_of_varint(len(header_value)) + len(header_value)
    return size


def _write_nullable_bytes(data: bytes | None, out: bytearray) -> None:
    if data is None:
        write_varint(NULL_LENGTH, out)
    else:
        write_varint(len(data), out)
        out += data


def _read_nullable_bytes(buf: memoryview, pos: int, what: str) -> tuple[bytes | None, int]:
    at = pos
    length, pos = read_varint(buf, pos)
    if length == NULL_LENGTH:
        return None, pos
    if length < 0 or pos + length > len(buf):
        raise CorruptRecordException(
            f"{what} length {length} at byte {at} overruns the record ({len(buf) - pos} bytes remain)",
            position=at,
        )
    return bytes(buf[pos : pos + length]), pos + length
