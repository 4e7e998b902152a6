"""Compression codecs for record batches: none, gzip, snappy, lz4 and zstd.

Mirrors: org.apache.kafka.common.record.CompressionType, KafkaLZ4BlockOutputStream and
         KafkaLZ4BlockInputStream (clients/.../common/record/, Kafka 0.11.0; zstd from Kafka 2.1)
Book:    chapter 6, 6.1 (compressed message sets: a wrapper message around the inner ones)
Differs: Kafka streams into and out of codec streams; we compress whole byte strings, since a
         batch is at most a few MiB and whole-buffer calls are what the C libraries do fastest.

How compression sits in each format: in v0/v1 a compressed message set is one *wrapper* message
whose value is the compressed inner messages. In v2 the 61-byte batch header stays plain (so the
broker can read offsets, counts and the CRC without inflating anything) and everything after it,
the records, is one compressed blob. The codec id sits in the low three bits of the attributes.

Codec choices (all well-kept PyPI libraries with C cores):

* gzip: the standard library (``zlib`` with a gzip header, as Java's ``GZIPOutputStream`` writes).
* snappy: ``cramjam``'s raw snappy, wrapped by us in the *xerial* framing that Java clients write
  (``\\x82SNAPPY\\x00`` + version + blocks of 32 KiB). Readers accept framed and raw snappy,
  because librdkafka has written both over the years.
* lz4: ``lz4.frame``, the LZ4 frame format Kafka uses from magic 1 on. (Magic 0 LZ4 had a wrong
  header checksum, KAFKA-3160; Kafka 0.10 and 0.11 still write it that way for magic 0 and read it
  ignoring the checksum; kafka_lite neither writes nor reads it.)
* zstd: ``zstandard`` frames. Kafka clients use zstd only from Produce v7, and kafka_lite's
  Produce versions end at 3, so zstd appears in batches we build and in stored logs, never on the
  wire from a real client.
"""

from __future__ import annotations

import enum
import struct
import zlib

import cramjam
import lz4.frame
import zstandard

from kafka_lite.common.errors import CorruptRecordException


class CompressionType(enum.IntEnum):
    """The codec id stored in a batch's attributes (bits 0-2)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def config_name(self) -> str:
        """The name used by ``compression.type`` (``"gzip"``, ``"none"`` ...)."""
        return self.name.lower()

    @classmethod
    def for_name(cls, name: str) -> CompressionType:
        """Parse a ``compression.type`` value; a bad name says which are allowed."""
        try:
            return cls[name.upper()]
        except KeyError:
            allowed = ", ".join(c.config_name for c in cls)
            raise ValueError(f"unknown compression type {name!r}; expected one of {allowed}") from None

    @classmethod
    def for_id(cls, codec_id: int, position: int | None = None) -> CompressionType:
        """The codec for an attributes value; an unknown id is corruption at ``position``."""
        try:
            return cls(codec_id)
        except ValueError:
            where = "" if position is None else f" at byte {position}"
            raise CorruptRecordException(
                f"unknown compression codec id {codec_id}{where}", position=position
            ) from None


# --- snappy, xerial framing ----------------------------------------------------------------------------
# The xerial snappy-java stream format: a 16-byte header, then blocks of (int32 length, raw snappy).
XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default block size, which Java producers use


def _snappy_compress(data: bytes) -> bytes:
    out = bytearray(XERIAL_HEADER)
    for start in range(0, len(data), XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + XERIAL_BLOCK_SIZE]))
        out += struct.pack(">i", len(block))
        out += block
    return bytes(out)


def _snappy_decompress(data: bytes) -> bytes:
    if not data.startswith(XERIAL_HEADER[:8]):
        return bytes(cramjam.snappy.decompress_raw(data))  # raw (unframed) snappy
    out = bytearray()
    pos = len(XERIAL_HEADER)
    while pos < len(data):
        if pos + 4 > len(data):
            raise ValueError(f"xerial block length cut off at byte {pos}")
        (length,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if length < 0 or pos + length > len(data):
            raise ValueError(f"xerial block of {length} bytes at byte {pos - 4} overruns the data")
        out += cramjam.snappy.decompress_raw(data[pos : pos + length])
        pos += length
    return bytes(out)


# --- the codec table -------------------------------------------------------------------------------------


def _gzip_compress(data: bytes) -> bytes:
    # mtime=0 keeps output deterministic (tests compare bytes); level 6 is GZIPOutputStream's default.
    co = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31 = gzip header and trailer
    return co.compress(data) + co.flush()


def _gzip_decompress(data: bytes) -> bytes:
    d = zlib.decompressobj(47)  # 32 + 15: accept gzip or zlib headers
    out = d.decompress(data) + d.flush()
    if not d.eof:
        raise ValueError("gzip stream is cut short")
    return out


def _lz4_compress(data: bytes) -> bytes:
    # 64 KiB blocks and no checksums per block: what KafkaLZ4BlockOutputStream writes by default.
    return lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, content_checksum=False)


def _zstd_decompress(data: bytes) -> bytes:
    # A streaming decompressor copes with frames that do not record their content size (zstd-jni's).
    d = zstandard.ZstdDecompressor().decompressobj()
    out = d.decompress(data)
    if not d.eof:
        raise ValueError("zstd frame is cut short")
    return out


_COMPRESS = {
    CompressionType.NONE: bytes,
    CompressionType.GZIP: _gzip_compress,
    CompressionType.SNAPPY: _snappy_compress,
    CompressionType.LZ4: _lz4_compress,
    CompressionType.ZSTD: lambda data: zstandard.ZstdCompressor().compress(data),
}
_DECOMPRESS = {
    CompressionType.NONE: bytes,
    CompressionType.GZIP: _gzip_decompress,
    CompressionType.SNAPPY: _snappy_decompress,
    CompressionType.LZ4: lz4.frame.decompress,
    CompressionType.ZSTD: _zstd_decompress,
}


def compress(codec: CompressionType, data: bytes | bytearray | memoryview) -> bytes:
    """Compress ``data`` with ``codec``."""
    return _COMPRESS[codec](bytes(data))


def decompress(codec: CompressionType, data: bytes | bytearray | memoryview, position: int = 0) -> bytes:
    """Decompress ``data``; garbage raises ``CorruptRecordException`` naming the codec and ``position``.

    Each library raises its own exception type (zlib.error, RuntimeError, cramjam's errors,
    zstandard.ZstdError); callers should see one typed error that says where the bad bytes are.
    """
    try:
        return _DECOMPRESS[codec](bytes(data))
    except Exception as e:  # every codec failure, whatever its library calls it, becomes one typed error
        raise CorruptRecordException(
            f"{codec.config_name} data at byte {position} does not decompress: {e}", position=position
        ) from e
