"""Convert record batches v2 down to message sets v0/v1, for old clients' fetches.

Mirrors: org.apache.kafka.common.record.MemoryRecords/FileRecords ``downConvert`` (Kafka 0.11.0)
Book:    chapter 6, 6.1 (message formats); the conversion itself is Kafka 0.11's
Differs: none in substance: Kafka 0.11 also converts whole record sets eagerly (lazy down-conversion
         while sending came in Kafka 2.0, KIP-283).

Where it is used: a Fetch v0-3 response must carry v0/v1, so every batch of a newer magic is
converted down, keeping its offsets (what the topic's own format is, ``message.format.version``,
does not matter: one log may hold all three). What is lost going down: headers (v0/v1 have none),
producer ids and sequences, and for v0 the timestamps. Compression is kept: a compressed v2 batch
becomes one compressed wrapper. The conversion on append, to the topic's format with new offsets,
is the log's (``kafka_lite/log/log_validator.py``).
"""

from __future__ import annotations

from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import (
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    NO_TIMESTAMP,
    TimestampType,
)
from kafka_lite.common.record.legacy_record import build_legacy_entries
from kafka_lite.common.record.memory_records import MemoryRecords


def down_convert(records: MemoryRecords, to_magic: int) -> MemoryRecords:
    """Rewrite every batch with a magic above ``to_magic`` as a v0/v1 message set, same offsets."""
    if to_magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1):
        raise ValueError(f"down-conversion targets magic 0 or 1, not {to_magic}")
    out = bytearray()
    for batch in records.batches():
        if batch.magic <= to_magic:
            out += batch.buffer()  # already old enough: pass through untouched
            continue
        items = list(batch)
        if not items:
            continue
        ts_type = batch.timestamp_type if to_magic == MAGIC_VALUE_V1 else TimestampType.NO_TIMESTAMP_TYPE
        log_append_time = batch.max_timestamp if ts_type == TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP
        codec = batch.compression_type
        offsets = [r.offset for r in items]
        consecutive = offsets == list(range(offsets[0], offsets[0] + len(offsets)))
        no_old_codec = codec == CompressionType.ZSTD or (codec == CompressionType.LZ4 and to_magic == 0)
        if no_old_codec or not consecutive:
            # zstd has no v0/v1 form, v0's lz4 framing was broken (KAFKA-3160), and a wrapper cannot
            # express offset gaps (compacted batches): write those records uncompressed, one message
            # each, at their own offsets.
            for r in items:
                out += build_legacy_entries(
                    [(_ts(r, to_magic), r.key, r.value)],
                    to_magic,
                    r.offset,
                    CompressionType.NONE,
                    ts_type,
                    log_append_time,
                )
            continue
        triples = [(_ts(r, to_magic), r.key, r.value) for r in items]
        out += build_legacy_entries(triples, to_magic, offsets[0], codec, ts_type, log_append_time)
    return MemoryRecords(bytes(out))


def _ts(record, to_magic: int) -> int:
    return NO_TIMESTAMP if to_magic == MAGIC_VALUE_V0 else record.timestamp
