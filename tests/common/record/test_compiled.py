"""The compiled decoder gives exactly kafka_lite's DefaultRecord answers: for any records, any codec,
LogAppendTime, gaps in offsets, and the old formats; a record damaged past its batch's CRC raises
kafka_lite's CorruptRecordException."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import CompressionType, TimestampType
from kafka_lite.common.record.compiled import compiled_records
from kafka_lite.common.record.constants import MAGIC_VALUE_V1
from kafka_lite.common.record.default_record_batch import set_log_append_time
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from tests.common.record.strategies import BASE_TS, codecs, legacy_codecs, records_legacy, records_v2


def _fields(records) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in records]


def _both(buf) -> tuple[list, list]:
    batches = list(MemoryRecords(buf).batches())
    ours = [_fields(batch) for batch in batches]
    compiled = [_fields(compiled_records(batch)) for batch in batches]
    return ours, compiled


@settings(max_examples=60, deadline=None)
@given(records=records_v2, codec=codecs, gap=st.integers(min_value=1, max_value=5), append_time=st.booleans())
def test_v2_batches_decode_to_the_same_records(records, codec, gap, append_time):
    builder = MemoryRecordsBuilder(base_offset=40, compression=codec)
    for i, (timestamp, key, value, headers) in enumerate(records):
        builder.append_with_offset(40 + i * gap, timestamp, key, value, headers)  # gaps, as compaction leaves
    buf = bytearray(builder.build().buffer())
    if append_time:
        set_log_append_time(buf, 0, BASE_TS + 123)
        assert next(MemoryRecords(buf).batches()).timestamp_type == TimestampType.LOG_APPEND_TIME
    ours, compiled = _both(buf)
    assert compiled == ours and ours[0]


@settings(max_examples=20, deadline=None)
@given(records=records_legacy, codec=legacy_codecs)
def test_old_formats_go_through_kafka_lites_decoder(records, codec):
    buf = MemoryRecords.with_records(records, magic=MAGIC_VALUE_V1, compression=codec).buffer()
    ours, compiled = _both(buf)
    assert compiled == ours and ours[0]


def test_a_record_damaged_inside_its_batch_raises_kafka_lites_error():
    records = [(BASE_TS + i, b"k", b"value-%d" % i, ()) for i in range(5)]
    buf = bytearray(MemoryRecords.with_records(records, compression=CompressionType.NONE).buffer())
    batch = next(MemoryRecords(buf).batches())
    first_record = 61  # the v2 batch header is 61 bytes; the first record's length varint follows
    buf[first_record] = 0x7E  # a length of 63 bytes: the record runs into the next ones
    with pytest.raises(CorruptRecordException, match="record batch at offset 0"):
        list(compiled_records(batch))
