"""CRC-32C (Castagnoli) for record batch v2, and CRC-32 (IEEE) for message sets v0/v1.

Mirrors: org.apache.kafka.common.utils.Crc32C and Crc32 (clients/.../common/utils/, Kafka 0.11.0)
Book:    chapter 6, 6.1 (each message carries a CRC; recovery stops at the first bad one)
Differs: Kafka computes CRC-32C with Java 9's intrinsic or a table; we call google-crc32c's C
         extension (about 29 GiB/s here, hardware accelerated) and keep a table-driven pure-Python
         fallback for machines without the wheel, so the format never depends on a compiled library.

Why two CRCs: v0/v1 messages used zlib's CRC-32 over each message. Kafka 0.11 switched to CRC-32C
for batches because modern CPUs compute it in hardware (SSE 4.2 ``crc32``) and one checksum per
batch, not per record, is what made small records cheap.
"""

from __future__ import annotations

import zlib

try:  # google-crc32c falls back to its own pure-Python module; we want to know which one we got.
    import google_crc32c as _gcrc

    _HAVE_C = _gcrc.implementation == "c"
except ImportError:  # pragma: no cover - exercised only on machines without the wheel
    _gcrc = None
    _HAVE_C = False


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


def crc32c_pure(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32C in plain Python: slow (~13 MB/s) but dependable; the reference for tests."""
    crc ^= 0xFFFFFFFF
    table = _TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


if _HAVE_C:
    # CRC-32C of a ``bytes`` object, and nothing else: the C extension's own entry point, for the one
    # caller that counts its calls (the log's append path, which makes its ``bytes`` itself).
    crc32c_bytes = _gcrc.value

    def crc32c(data: bytes | bytearray | memoryview) -> int:
        """CRC-32C of ``data`` as an unsigned 32-bit int (``crc32c(b"123456789") == 0xE3069283``)."""
        # The C extension parses its argument as read-only ``bytes`` and rejects memoryviews, so a
        # view is copied first: a memcpy costs about as much as the CRC itself (both run at GB/s),
        # far less than anything per-record in Python. Pass a memoryview slice, not a slice of a
        # bytearray, or the bytes are copied twice.
        return _gcrc.value(data if type(data) is bytes else bytes(data))

else:  # pragma: no cover

    def crc32c(data: bytes | bytearray | memoryview) -> int:
        """CRC-32C of ``data`` (pure-Python fallback: google-crc32c's C extension is missing)."""
        return crc32c_pure(data)

    crc32c_bytes = crc32c


def crc32(data: bytes | bytearray | memoryview) -> int:
    """CRC-32 (IEEE, zlib's) as an unsigned 32-bit int: the checksum of v0/v1 messages."""
    return zlib.crc32(data) & 0xFFFFFFFF


HARDWARE_CRC32C = _HAVE_C
