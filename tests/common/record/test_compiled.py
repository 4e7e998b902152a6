"""The compiled decoder gives exactly kafka_lite's DefaultRecord answers: for any records, any codec,
LogAppendTime, gaps in offsets, and the old formats; a record damaged past its batch's CRC raises
kafka_lite's CorruptRecordException. The compiled builder writes exactly MemoryRecordsBuilder's bytes,
takes the same records into a batch of a given size, and sizes a record as DefaultRecord does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import CompressionType, TimestampType, default_record
from kafka_lite.common.record.compiled import (
    CompiledRecordsBuilder,
    compiled_records,
    record_size_upper_bound,
)
from kafka_lite.common.record.constants import MAGIC_VALUE_V1
from kafka_lite.common.record.default_record_batch import set_log_append_time
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from tests.common.record.strategies import (
    BASE_TS,
    codecs,
    keys,
    legacy_codecs,
    records_legacy,
    records_v2,
    values,
)
from tests.common.record.strategies import (
    headers as header_lists,
)


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


# -- the compiled builder ----------------------------------------------------------------------------


def _fill(builder, records) -> int:
    """Append records until one does not fit; how many did."""
    for n, (timestamp, key, value, record_headers) in enumerate(records):
        if not builder.try_append(timestamp, key, value, list(record_headers)):
            return n
    return len(records)


@settings(max_examples=60, deadline=None)
@given(
    records=records_v2,
    codec=codecs,
    write_limit=st.integers(min_value=0, max_value=4_000),
    producer_state=st.none()
    | st.tuples(st.integers(0, 2**40), st.integers(0, 2**15 - 1), st.integers(0, 2**31 - 1)),
)
def test_the_compiled_builder_writes_memory_records_builders_bytes(
    records, codec, write_limit, producer_state
):
    ours = MemoryRecordsBuilder(compression=codec, write_limit=write_limit)
    compiled = CompiledRecordsBuilder(compression=codec, write_limit=write_limit)
    # Each takes the same records: room is sized exactly, and the first record always fits.
    assert _fill(compiled, records) == _fill(ours, records) >= 1
    assert compiled.num_records == ours.num_records
    assert compiled.estimated_size_in_bytes() == ours.estimated_size_in_bytes()
    assert compiled.is_full() == ours.is_full()
    for builder in (ours, compiled):
        if producer_state is not None:
            builder.producer_id, builder.producer_epoch, builder.base_sequence = producer_state
    built_ours, built_compiled = ours.build().buffer(), compiled.build().buffer()
    if codec == CompressionType.NONE:
        assert bytes(built_compiled) == bytes(built_ours)
    else:  # codecs may differ in their bytes (levels, frame options), not in the records and header
        (batch_ours,) = MemoryRecords(built_ours).batches()
        (batch_compiled,) = MemoryRecords(built_compiled).batches()
        batch_compiled.ensure_valid()
        header = ("attributes", "last_offset_delta", "first_timestamp", "max_timestamp", "producer_id",
                  "producer_epoch", "base_sequence", "num_records", "partition_leader_epoch")  # fmt: skip
        assert [getattr(batch_compiled, f) for f in header] == [getattr(batch_ours, f) for f in header]
        assert _fields(batch_compiled) == _fields(batch_ours)
    assert compiled.build() is compiled.build(), "built once"


def test_a_record_that_fills_the_batch_exactly_fits_in_both_builders():
    """Kafka's ``hasRoomFor`` takes a record that ends the batch exactly at its write limit."""
    for builder_type in (MemoryRecordsBuilder, CompiledRecordsBuilder):
        probe = builder_type(compression=CompressionType.NONE, write_limit=10_000)
        for _ in range(2):
            assert probe.try_append(BASE_TS, None, b"v", [])
        exact = probe.estimated_size_in_bytes()  # the size two such records make
        builder = builder_type(compression=CompressionType.NONE, write_limit=exact)
        assert builder.try_append(BASE_TS, None, b"v", [])
        assert builder.try_append(BASE_TS, None, b"v", []), f"{builder_type.__name__} refused an exact fit"
        assert builder.estimated_size_in_bytes() == exact and builder.is_full()
        assert not builder.try_append(BASE_TS, None, b"v", [])


def test_the_compiled_builder_refuses_records_once_closed_for_appends():
    builder = CompiledRecordsBuilder(compression=CompressionType.NONE, write_limit=1_000)
    assert builder.try_append(BASE_TS, None, b"v", [])
    builder.close_for_record_appends()
    assert builder.is_full()
    assert not builder.try_append(BASE_TS, None, b"v", [])
    assert builder.num_records == 1


@settings(max_examples=100, deadline=None)
@given(key=keys, value=values, record_headers=header_lists)
def test_the_compiled_size_bound_is_default_records(key, value, record_headers):
    assert record_size_upper_bound(key, value, record_headers) == default_record.record_size_upper_bound(
        key, value, record_headers
    )
