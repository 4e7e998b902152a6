"""Record containers and conversions: builders, v0/v1 <-> v2, file-backed records, broker patches."""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import given

from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import (
    CompressionType,
    FileRecords,
    Header,
    MemoryRecords,
    MemoryRecordsBuilder,
    TimestampType,
)
from kafka_lite.common.record.convert import down_convert
from kafka_lite.common.record.crc import crc32c, crc32c_pure
from kafka_lite.common.record.default_record_batch import (
    HEADER_FIELDS,
    HEADER_STRUCT,
    set_base_offset,
    set_log_append_time,
)
from kafka_lite.common.record.inspect import caret_dump, describe_batch
from kafka_lite.log.log_validator import convert_and_assign_offsets

from .strategies import BASE_TS, legacy_codecs, records_v2

pytestmark = pytest.mark.unit


def test_crc32c_check_value_and_the_table_algorithm_agree():
    assert crc32c(b"123456789") == 0xE3069283
    data = os.urandom(1000)
    assert crc32c(data) == crc32c_pure(data) == crc32c(memoryview(bytearray(data))) == crc32c(bytearray(data))


def test_builder_fields_producer_and_control_bits():
    builder = MemoryRecordsBuilder(
        base_offset=42,
        producer_id=7,
        producer_epoch=3,
        base_sequence=10,
        is_transactional=True,
        compression=CompressionType.LZ4,
    )
    assert builder.append(BASE_TS, b"a", b"1") == 42
    assert builder.append(BASE_TS + 3, None, None, [Header("h", None)]) == 43
    (batch,) = builder.build().batches()
    batch.ensure_valid()
    assert (batch.base_offset, batch.last_offset, batch.num_records) == (42, 43, 2)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_sequence) == (
        7,
        3,
        10,
        11,
    )
    assert batch.is_transactional and not batch.is_control_batch
    assert batch.first_timestamp == BASE_TS and batch.max_timestamp == BASE_TS + 3
    assert [r.headers for r in batch] == [(), (Header("h", None),)]
    with pytest.raises(RuntimeError, match="closed"):
        builder.append(BASE_TS, b"late", b"x")


def test_builder_rejects_what_a_format_cannot_hold():
    with pytest.raises(ValueError, match="headers"):
        MemoryRecordsBuilder(magic=1).append(BASE_TS, b"k", b"v", [Header("h", b"x")])
    with pytest.raises(ValueError, match="zstd needs magic 2"):
        MemoryRecordsBuilder(magic=1, compression=CompressionType.ZSTD)
    with pytest.raises(ValueError, match="not larger"):
        b = MemoryRecordsBuilder()
        b.append_with_offset(5, BASE_TS, None, b"x")
        b.append_with_offset(5, BASE_TS, None, b"y")


def test_broker_patches_base_offset_without_touching_the_crc():
    buf = bytearray(MemoryRecords.with_records([(BASE_TS, b"k", b"v")] * 3).buffer())
    (before,) = MemoryRecords(bytes(buf)).batches()
    set_base_offset(buf, 0, 1000)
    (after,) = MemoryRecords(buf).batches()
    after.ensure_valid()  # still valid: baseOffset is outside the CRC
    assert after.checksum == before.checksum
    assert [r.offset for r in after] == [1000, 1001, 1002]


def test_the_header_struct_is_the_table_of_fields():
    buf = MemoryRecords.with_records(
        [(BASE_TS, b"k", b"v"), (BASE_TS + 7, b"k", b"w")],
        producer_id=4321,
        producer_epoch=3,
        base_sequence=9,
    ).buffer()
    every = dict(zip([f.name for f in HEADER_FIELDS], HEADER_STRUCT.unpack_from(buf), strict=True))
    for field in HEADER_FIELDS:  # each field unpacks alone at the offset the table gives it
        assert struct.unpack_from(field.fmt, buf, field.offset) == (every[field.name],), field.name
    assert HEADER_STRUCT.size == sum(f.size for f in HEADER_FIELDS) == 61
    assert every["producerId"] == 4321 and every["maxTimestamp"] == BASE_TS + 7
    assert (every["producerEpoch"], every["baseSequence"], every["recordsCount"]) == (3, 9, 2)


def test_writable_patches_in_place_only_what_the_caller_handed_over_writable():
    data = MemoryRecords.with_records([(BASE_TS, b"k", b"v")]).buffer()
    assert isinstance(data, memoryview) and data.readonly  # the builder's buffer, read-only, not a copy
    for writable in (bytearray(data), memoryview(bytearray(data))):
        records = MemoryRecords(writable)
        assert records.writable() is records
    for read_only in (data, memoryview(data)):
        copy = MemoryRecords(read_only).writable()
        assert copy.buffer() is not read_only and bytes(copy.buffer()) == data
        set_base_offset(copy.buffer(), 0, 99)  # patchable, and the original is untouched
        assert bytes(read_only) == data


def test_log_append_time_rewrites_timestamps_and_crc():
    buf = bytearray(MemoryRecords.with_records([(BASE_TS, b"k", b"v"), (BASE_TS + 9, b"k", b"w")]).buffer())
    set_log_append_time(buf, 0, BASE_TS + 5000)
    (batch,) = MemoryRecords(buf).batches()
    batch.ensure_valid()
    assert batch.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in batch] == [BASE_TS + 5000] * 2


@given(records=records_v2, codec=legacy_codecs)
def test_down_and_up_conversion_keep_offsets_keys_values(records, codec):
    v2 = MemoryRecords.with_records(records, compression=codec, base_offset=77)
    for magic in (0, 1):
        old = down_convert(v2, magic)
        assert all(b.magic == magic for b in old.batches())
        assert old.validate() >= 1
        got = [(r.offset, r.key, r.value) for r in old.records()]
        assert got == [(77 + i, k, v) for i, (_, k, v, _) in enumerate(records)]
        if magic == 1:
            assert [r.timestamp for r in old.records()] == [ts for ts, *_ in records]
        # and up again, as a v2 topic's log converts an old producer's message set
        back = convert_and_assign_offsets(old, 77, BASE_TS, 2, False, -1, True).validated_records
        assert all(b.magic == 2 for b in back.batches())
        assert [(r.offset, r.key, r.value) for r in back.records()] == got


def test_file_records_append_read_slice_truncate(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    file = FileRecords.open(path)
    batches = [MemoryRecords.with_records([(BASE_TS + i, b"k", b"v%d" % i)], base_offset=i) for i in range(5)]
    sizes = [file.append(b.buffer()) for b in batches]
    assert file.size_in_bytes() == sum(sizes) == path.stat().st_size
    positions = [pos for pos, _ in file.batches()]
    assert positions == [sum(sizes[:i]) for i in range(5)]
    view = file.read(positions[2], sizes[2] + sizes[3])
    assert [b.base_offset for _, b in view.batches()] == [2, 3]
    assert MemoryRecords(view.read_bytes()).validate() == 2
    file.truncate_to(positions[3] + 10)  # a cut batch at the tail, as after a crash mid-write
    assert [b.base_offset for _, b in file.batches()] == [0, 1, 2]
    with pytest.raises(CorruptRecordException, match=f"batch at byte {positions[3]} is cut"):
        list(file.batches(allow_partial_tail=False))
    file.close()


def test_field_tree_locates_every_header_field_and_record():
    buf = MemoryRecords.with_records([(BASE_TS, b"key", b"value", [Header("h", b"x")])]).buffer()
    tree = describe_batch(buf)
    assert tree.find("crc").offset == 17 and tree.find("crc").size == 4
    assert tree.find("recordsCount").value == 1
    key = tree.find("key")
    assert bytes(buf[key.offset : key.offset + key.size]) == b"key"
    assert "^^ byte 17" in caret_dump(buf, 17)
