"""kafka_lite's record formats against an independent implementation: kafka-python's record classes.

For every codec, over generated records: what kafka_lite writes, kafka-python decodes to the same
records (and finds its CRC valid); what kafka-python writes, kafka_lite decodes to the same records.
kafka-python was written from Kafka's Java source by other people, so agreement here is evidence that
both follow Kafka's format, not just that kafka_lite agrees with itself.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch as KpBatch
from kafka.record.default_records import DefaultRecordBatchBuilder as KpBuilder
from kafka.record.legacy_records import LegacyRecordBatch as KpLegacyBatch
from kafka.record.legacy_records import LegacyRecordBatchBuilder as KpLegacyBuilder

from kafka_lite.common.record import CompressionType, MemoryRecords, TimestampType

from .strategies import codecs, legacy_codecs, records_legacy, records_v2

pytestmark = pytest.mark.unit


def _kp_records(batch) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, tuple((k, v) for k, v in r.headers)) for r in batch]


def _our_records(records: MemoryRecords) -> list[tuple]:
    return [
        (r.offset, r.timestamp, r.key, r.value, tuple(tuple(h) for h in r.headers)) for r in records.records()
    ]


@given(records=records_v2, codec=codecs, base_offset=st.integers(0, 2**40))
def test_kafka_python_decodes_what_we_write(records, codec, base_offset):
    ours = MemoryRecords.with_records(records, compression=codec, base_offset=base_offset)
    assert ours.validate() == 1
    theirs = KpBatch(bytes(ours.buffer()))
    assert theirs.validate_crc(), "kafka-python computes a different CRC-32C"
    assert theirs.compression_type == int(codec)
    assert theirs.base_offset == base_offset
    expected = [
        (base_offset + i, ts, k, v, tuple(tuple(h) for h in hs)) for i, (ts, k, v, hs) in enumerate(records)
    ]
    assert _kp_records(theirs) == expected


@given(
    records=records_v2,
    codec=codecs,
    producer=st.tuples(st.integers(0, 2**62), st.integers(0, 2**15 - 1), st.integers(0, 2**31 - 100)),
)
def test_we_decode_what_kafka_python_writes(records, codec, producer):
    producer_id, epoch, base_sequence = producer
    builder = KpBuilder(
        magic=2,
        compression_type=int(codec),
        is_transactional=0,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=base_sequence,
        batch_size=1 << 30,
    )
    for i, (ts, k, v, hs) in enumerate(records):
        builder.append(i, timestamp=ts, key=k, value=v, headers=list(hs))
    buf = bytes(builder.build())
    ours = MemoryRecords(buf)
    assert ours.validate() == 1
    (batch,) = ours.batches()
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == producer
    # kafka-python keeps a batch uncompressed when compression would not shrink it; agree with its header.
    assert batch.compression_type == KpBatch(buf).compression_type
    assert batch.compression_type in (codec, CompressionType.NONE)
    assert batch.num_records == len(records)
    assert batch.max_timestamp == max(ts for ts, *_ in records)
    assert _our_records(ours) == _kp_records(KpBatch(buf))
    assert [r.sequence for r in batch] == [base_sequence + i for i in range(len(records))]


@given(records=records_legacy, codec=legacy_codecs, magic=st.sampled_from([0, 1]))
def test_legacy_message_sets_agree_both_ways(records, codec, magic):
    assume(not (magic == 0 and codec == CompressionType.LZ4))  # KAFKA-3160: see the test below
    # Ours -> kafka-python. Compressed sets are one wrapper entry; uncompressed ones, one entry each.
    ours = MemoryRecords.with_records(records, magic=magic, compression=codec, base_offset=100)
    assert ours.validate() >= 1
    decoded = []
    for batch in ours.batches():
        theirs = KpLegacyBatch(bytes(batch.buffer()), magic)
        assert theirs.validate_crc()
        decoded += [(r.offset, r.timestamp, r.key, r.value) for r in theirs]
    expected_ts = [ts if magic == 1 else None for ts, _, _ in records]
    assert [(o, k, v) for o, _, k, v in decoded] == [(100 + i, k, v) for i, (_, k, v) in enumerate(records)]
    if magic == 1:
        assert [ts for _, ts, _, _ in decoded] == expected_ts

    # kafka-python -> ours. Its producer writes wrapper offset 0 (the broker assigns the real one),
    # so compare offsets relative to the first.
    builder = KpLegacyBuilder(magic=magic, compression_type=int(codec), batch_size=1 << 30)
    for i, (ts, k, v) in enumerate(records):
        builder.append(i, timestamp=ts, key=k, value=v)
    got = list(MemoryRecords(bytes(builder.build())).records())
    assert [(r.key, r.value) for r in got] == [(k, v) for _, k, v in records]
    assert [r.offset - got[0].offset for r in got] == list(range(len(records)))
    if magic == 1:
        assert [r.timestamp for r in got] == [ts for ts, _, _ in records]
        assert all(r.timestamp_type == TimestampType.CREATE_TIME for r in got)


def test_every_codec_is_exercised():
    # Guards the strategies above: a codec dropped from them would silently lose its interop test.
    assert set(codecs.elements) == set(CompressionType)


def test_magic_0_lz4_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="KAFKA-3160"):
        MemoryRecords.with_records([(0, b"k", b"v")], magic=0, compression=CompressionType.LZ4)
