"""Zig-zag variable-length integers: how record batch v2 writes every per-record number.

Mirrors: org.apache.kafka.common.utils.ByteUtils (writeVarint, readVarint, writeVarlong,
         readVarlong, sizeOfVarint; clients/.../common/utils/ByteUtils.java, Kafka 0.11.0)
Book:    chapter 6, 6.1 (message format); v2 is Kafka 0.11's, after the book
Labs:    lab 1 (write_varint, read_varint)

Why varints: in v0/v1 every message spent 4 bytes on a key length and 4 on a value length, and 8
on an absolute offset, even for a 10-byte value. v2 stores *deltas* from the batch's base offset and
timestamp, which are small, and writes each number in as few 7-bit groups as it needs: a delta of 3
costs one byte. Zig-zag first maps signed to unsigned (0, -1, 1, -2, 2 ... → 0, 1, 2, 3, 4 ...) so
that -1, Kafka's "null" length, also costs one byte. This is protobuf's ``sint32``/``sint64``.

Encoding, least significant group first: each byte carries 7 bits of the value, and its top bit
says "more bytes follow". So 300 = 0b1_0010_1100 zig-zags to 600 = 0b100_1011000 and is written
``0xD8 0x04``.
"""

from __future__ import annotations

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.utils import INT32_MAX

# A 32-bit varint needs at most 5 groups of 7 bits, a 64-bit varlong at most 10. Kafka rejects
# longer encodings, and so do we: an endless run of continuation bits is garbage, not a number.
MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10
INT32_MIN = -(INT32_MAX + 1)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def zigzag_encode(value: int) -> int:
    """Map a signed int to an unsigned one: 0→0, -1→1, 1→2, -2→3 ... (width-independent in Python)."""
    return (value << 1) ^ (value >> 63) if value < 0 else value << 1


def zigzag_decode(n: int) -> int:
    """The inverse of :func:`zigzag_encode`."""
    return (n >> 1) ^ -(n & 1)


def write_varint(value: int, out: bytearray) -> None:
    """Append ``value`` (a signed 32- or 64-bit int) to ``out`` as a zig-zag varint.

    Kafka has separate ``writeVarint`` (int32) and ``writeVarlong`` (int64); the bytes are the same
    for any value that fits in 32 bits, so one Python function serves both. Callers check ranges.
    """
    # BEGIN SOLUTION
    n = (value << 1) ^ (value >> 63)  # zig-zag, in the first line as Kafka's writeVarint has it
    # Most numbers in a record (deltas, lengths under 64) take one byte: the loop is then never
    # entered.
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)  # low 7 bits, with the "more follows" bit
        n >>= 7
    out.append(n)
    # END SOLUTION


def read_varint(
    buf: bytes | bytearray | memoryview, pos: int, max_bytes: int = MAX_VARINT_BYTES
) -> tuple[int, int]:
    """Read a zig-zag varint at ``buf[pos]``; return ``(value, position after it)``.

    Raises ``CorruptRecordException`` (with the byte offset) if the buffer ends mid-number or the
    number runs past ``max_bytes`` bytes (``MAX_VARLONG_BYTES`` for a varlong).
    """
    # BEGIN SOLUTION
    start = pos
    try:
        b = buf[pos]
        if b < 0x80:  # one byte: most deltas and lengths in a record
            return (b >> 1) ^ -(b & 1), pos + 1
        n = b & 0x7F
        shift = 7
        pos += 1
        while True:
            if pos - start >= max_bytes:
                raise CorruptRecordException(
                    f"varint at byte {start} is longer than {max_bytes} bytes", position=start
                )
            b = buf[pos]  # an IndexError here is a number cut by the end of the buffer
            pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return (n >> 1) ^ -(n & 1), pos  # zig-zag decoded, as zigzag_decode
            shift += 7
    except IndexError:
        raise CorruptRecordException(
            f"varint at byte {start} runs past the end of the buffer", position=start
        ) from None
    # END SOLUTION


def read_varlong(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Read a zig-zag varlong (up to 10 bytes); see :func:`read_varint`."""
    return read_varint(buf, pos, MAX_VARLONG_BYTES)


def size_of_varint(value: int) -> int:
    """How many bytes :func:`write_varint` uses for ``value`` (Kafka's ``sizeOfVarint``).

    One 7-bit group per started 7 bits of the zig-zagged number, and at least one byte for 0: the
    arithmetic Kafka's later ``ByteUtils.sizeOfVarint`` does with ``numberOfLeadingZeros``, where
    0.11's loops a group at a time.
    """
    return (((value << 1) ^ (value >> 63)).bit_length() + 6) // 7 or 1  # zig-zagged, as Kafka's
