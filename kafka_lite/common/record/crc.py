"""CRC-32C (Castagnoli) for record batch v2, and CRC-32 (IEEE) for message sets v0/v1.

Mirrors: org.apache.kafka.common.utils.Crc32C and Crc32 (clients/.../common/utils/, Kafka 0.11.0)
Book:    chapter 6, 6.1 (each message carries a CRC; recovery stops at the first bad one)
Differs: Kafka computes CRC-32C with Java 9's intrinsic or its own table (``PureJavaCrc32C``); we
         call google-crc32c, a C library that uses the CPU's CRC instruction. ``crc32c_pure`` is
         the table-driven algorithm written out in Python: the tests check the library against it.

Why two CRCs: v0/v1 messages used zlib's CRC-32 over each message. Kafka 0.11 switched to CRC-32C
for batches because modern CPUs compute it in hardware (SSE 4.2 ``crc32``) and one checksum per
batch, not per record, is what made small records cheap.
"""

from __future__ import annotations

import zlib

import google_crc32c


def _make_table() -> list[int]:
    # Reflected polynomial of CRC-32C (0x1EDC6F41 bit-reversed).
    poly = 0x82F63B78
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_table()


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C of ``data`` as an unsigned 32-bit int (``crc32c(b"123456789") == 0xE3069283``).

    Kafka's ``Crc32C.compute``: a batch's checksum over its bytes from ``attributes`` to the end.
    google-crc32c takes read-only ``bytes`` only, so a bytearray or a memoryview is copied once
    (``bytes`` of a ``bytes`` object is that object, no copy). Pass a memoryview slice rather than
    a slice of a bytearray, or the bytes are copied twice.
    """
    return google_crc32c.value(bytes(data))


def crc32c_pure(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32C one byte at a time through a 256-entry table, as ``PureJavaCrc32C`` does eight."""
    crc ^= 0xFFFFFFFF
    table = _TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32(data: bytes | bytearray | memoryview) -> int:
    """CRC-32 (IEEE, zlib's) as an unsigned 32-bit int: the checksum of v0/v1 messages."""
    return zlib.crc32(data) & 0xFFFFFFFF
