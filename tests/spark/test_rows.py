"""Record batches to rows, without Spark: the Arrow path (aiokafka's compiled decoder, whole batches
sliced to the range) gives exactly the rows of the tuple path (kafka_lite's decoder, record by record)
for ranges that begin and end inside batches, compressed batches, control batches, LogAppendTime,
headers, null keys and values, and the old message format."""

from __future__ import annotations

import datetime

import pytest

from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import MAGIC_VALUE_V1, TimestampType
from kafka_lite.common.record.default_record import Header
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_lite.spark.offsets import OffsetRange
from kafka_lite.spark.rows import to_arrow, to_tuples

T0 = 1_700_000_000_000


def _batch(base_offset: int, count: int, **builder) -> bytes:
    records = MemoryRecordsBuilder(base_offset=base_offset, **builder)
    for i in range(count):
        offset = base_offset + i
        key = None if offset % 4 == 0 else b"k%d" % offset
        value = None if offset % 9 == 0 else b"v%d" % offset
        headers = (Header("h", b"%d" % offset), Header("null", None)) if offset % 3 == 0 else ()
        if builder.get("magic") == MAGIC_VALUE_V1:
            headers = ()
        records.append_with_offset(offset, T0 + offset, key, value, headers)
    return bytes(records.build().buffer())


def _log() -> list:
    """Offsets 0-9 plain, 10-19 gzip, a transaction marker at 20, 21-30 LogAppendTime (lz4), then
    31-35 in the v1 format and 36-45 zstd."""
    buf = b"".join(
        [
            _batch(0, 10),
            _batch(10, 10, compression=CompressionType.GZIP),
            _batch(20, 1, is_control_batch=True, is_transactional=True, producer_id=7, producer_epoch=0),
            _batch(21, 10, compression=CompressionType.LZ4, timestamp_type=TimestampType.LOG_APPEND_TIME,
                   log_append_time=T0 + 999),
            _batch(31, 5, magic=MAGIC_VALUE_V1),
            _batch(36, 10, compression=CompressionType.ZSTD),
        ]
    )  # fmt: skip
    return list(MemoryRecords(buf).batches())


def _arrow_rows(batches, range_, max_rows) -> list[tuple]:
    out = []
    for batch in to_arrow(batches, range_, include_headers=True, max_rows=max_rows):
        for row in batch.to_pylist():
            headers = [(h["key"], h["value"]) for h in row["headers"]]
            out.append((*list(row.values())[:7], headers))
    return out


@pytest.mark.parametrize("max_rows", [4, 65_536])
@pytest.mark.parametrize(("start", "end"), [(0, 46), (3, 17), (12, 25), (20, 21), (26, 40), (45, 46), (5, 5)])
def test_arrow_rows_equal_tuple_rows(start, end, max_rows):
    range_ = OffsetRange("t", 3, start, end)
    expected = list(to_tuples(_log(), range_, include_headers=True))
    assert [r[4] for r in expected] == [o for o in range(start, end) if o != 20]  # the marker is no record
    assert _arrow_rows(_log(), range_, max_rows) == expected


def test_the_rows_carry_the_batches_timestamps_and_types():
    rows = list(to_tuples(_log(), OffsetRange("t", 3, 0, 46), include_headers=True))
    by_offset = {r[4]: r for r in rows}
    utc = datetime.UTC
    assert by_offset[3][5] == datetime.datetime.fromtimestamp((T0 + 3) / 1000, utc)
    assert by_offset[25][5] == datetime.datetime.fromtimestamp((T0 + 999) / 1000, utc)
    assert (by_offset[3][6], by_offset[25][6]) == (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)
    assert by_offset[3][7] == [("h", b"3"), ("null", None)] and by_offset[4][0] is None
