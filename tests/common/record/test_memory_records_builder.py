"""MemoryRecordsBuilder's side the producer uses: has_room_for (exact, as Kafka 0.11's), closing for
appends, and a v2 batch built where its records were written."""

from __future__ import annotations

import pytest

from kafka_lite.common.record import MemoryRecordsBuilder
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import MAGIC_VALUE_V1
from kafka_lite.common.record.default_record import (
    DefaultRecord,
    Header,
    record_size_upper_bound,
    size_in_bytes,
)
from kafka_lite.common.record.default_record_batch import RECORD_BATCH_OVERHEAD

from .strategies import BASE_TS

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "args",
    [
        (0, 0, None, None, ()),
        (3, 63, b"k", b"v" * 100, ()),
        (64, -64, b"", b"v" * 20_000, (Header("trace", b"abc"), Header("none", None))),
        (2**31 - 1, 2**40, None, b"x", (Header("\u00e9t\u00e9", b""),)),
    ],
)
def test_size_in_bytes_is_what_write_to_writes_and_never_above_the_upper_bound(args):
    out = bytearray()
    written = DefaultRecord.write_to(out, *args)
    assert size_in_bytes(*args) == written == len(out)
    assert written <= record_size_upper_bound(*args[2:])


def test_has_room_for_sizes_the_next_record_at_its_own_deltas():
    first = size_in_bytes(0, 0, None, b"v" * 20)
    second = size_in_bytes(1, 10, None, b"v" * 20)
    builder = MemoryRecordsBuilder(write_limit=RECORD_BATCH_OVERHEAD + first + second)
    assert builder.has_room_for(BASE_TS, None, b"v" * 10_000), "an empty batch takes any first record"
    builder.append(BASE_TS, None, b"v" * 20)
    assert builder.has_room_for(BASE_TS + 10, None, b"v" * 20), "fills the limit exactly"
    assert not builder.has_room_for(BASE_TS + 10, None, b"v" * 21)
    builder.append(BASE_TS + 10, None, b"v" * 20)
    assert builder.estimated_size_in_bytes() == RECORD_BATCH_OVERHEAD + first + second
    assert builder.is_full() and not builder.has_room_for(BASE_TS, None, None)


def test_without_a_write_limit_there_is_always_room():
    builder = MemoryRecordsBuilder()
    for i in range(3):
        assert builder.has_room_for(BASE_TS + i, b"k", b"v" * 1000)
        builder.append(BASE_TS + i, b"k", b"v" * 1000)
    assert not builder.is_full()


def test_has_room_for_a_message_set_entry():
    builder = MemoryRecordsBuilder(magic=MAGIC_VALUE_V1, write_limit=2 * (34 + 1 + 10))
    builder.append(BASE_TS, b"k", b"v" * 10)
    assert builder.has_room_for(BASE_TS, b"k", b"v" * 10)
    assert not builder.has_room_for(BASE_TS, b"k", b"v" * 11)


def test_closed_for_record_appends_the_builder_is_full_and_still_builds():
    builder = MemoryRecordsBuilder(write_limit=10_000)
    builder.append(BASE_TS, b"k", b"v")
    builder.close_for_record_appends()
    assert builder.is_full() and not builder.has_room_for(BASE_TS, None, None)
    with pytest.raises(RuntimeError, match="closed for record appends"):
        builder.append(BASE_TS, b"k", b"w")
    builder.producer_id, builder.producer_epoch, builder.base_sequence = 7, 1, 40
    (batch,) = builder.build().batches()
    batch.ensure_valid()
    assert (batch.producer_id, batch.base_sequence, [r.value for r in batch]) == (7, 40, [b"v"])


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4])
def test_a_built_batch_is_read_only_valid_and_built_once(codec):
    builder = MemoryRecordsBuilder(compression=codec)
    for i in range(50):
        builder.append(BASE_TS + i, b"k%d" % i, b"v" * i)
    records = builder.build()
    assert builder.build() is records
    buf = records.buffer()
    assert isinstance(buf, memoryview) and buf.readonly
    (batch,) = records.batches()
    batch.ensure_valid()
    assert batch.size_in_bytes == len(buf)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in batch] == [
        (i, BASE_TS + i, b"k%d" % i, b"v" * i) for i in range(50)
    ]
