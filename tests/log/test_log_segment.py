"""LogSegment and its indexes: sparse entries, lookups by offset and time, recovery of a damaged tail."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.log.log_segment import LogSegment
from kafka_lite.log.offset_index import InvalidOffsetException, OffsetIndex
from kafka_lite.log.time_index import TimeIndex

pytestmark = pytest.mark.unit
BASE_TS = 1_500_000_000_000


def _batch(base_offset: int, count: int, value_size: int = 100, ts: int = BASE_TS) -> MemoryRecords:
    return MemoryRecords.with_records(
        [(ts + i, b"k%d" % i, bytes([i % 256]) * value_size) for i in range(count)], base_offset=base_offset
    )


def _fill(
    segment: LogSegment, batches: int, per_batch: int = 10, value_size: int = 100
) -> list[MemoryRecords]:
    written, offset = [], segment.base_offset
    for b in range(batches):
        records = _batch(offset, per_batch, value_size, ts=BASE_TS + b * 1000)
        segment.append(offset, BASE_TS + b * 1000 + per_batch - 1, offset + per_batch - 1, records)
        written.append(records)
        offset += per_batch
    return written


def test_index_entries_appear_every_interval_and_not_on_the_first_append(tmp_path):
    segment = LogSegment(tmp_path, 0, index_interval_bytes=4096, time=MockTime())
    batches = _fill(segment, 40)  # ~1.2 KiB per batch
    size = batches[0].size_in_bytes()
    entries = [segment.index.entry(i) for i in range(segment.index.entries)]
    assert entries, "no index entries after 40 KiB"
    assert entries[0].position > 4096  # the first entry comes only after more than one interval
    gaps = [b.position - a.position for a, b in itertools.pairwise(entries)]
    assert all(4096 < gap <= 4096 + 2 * size for gap in gaps)
    for entry in entries:  # every entry points at the batch that starts with its offset
        (batch,) = MemoryRecords(segment.log.read_bytes(entry.position, size)).batches()
        assert batch.base_offset == entry.offset


@given(target=st.integers(0, 399))
@settings(max_examples=60)
def test_read_returns_the_batch_holding_any_offset(tmp_path_factory, target):
    segment = LogSegment(tmp_path_factory.mktemp("seg"), 0, index_interval_bytes=2048, time=MockTime())
    _fill(segment, 40)
    info = segment.read(target, None, max_size=1)  # too small for a batch: one byte, flagged incomplete ...
    assert info.records.size_in_bytes() == 1 and info.first_entry_incomplete
    info = segment.read(target, None, max_size=1, min_one_message=True)  # ... unless asked for one
    (batch,) = MemoryRecords(info.records.read_bytes()).batches()
    assert batch.base_offset <= target <= batch.last_offset
    assert segment.read(400, None, 10_000) is None
    assert segment.next_offset() == 400
    segment.close()


def test_lookup_by_timestamp(tmp_path):
    segment = LogSegment(tmp_path, 100, index_interval_bytes=1024, time=MockTime())
    _fill(segment, 20)
    assert segment.find_offset_by_timestamp(BASE_TS + 5000 + 3) == (BASE_TS + 5000 + 3, 100 + 50 + 3)
    assert segment.find_offset_by_timestamp(0) == (BASE_TS, 100)
    assert segment.find_offset_by_timestamp(BASE_TS + 10**9) is None


@pytest.mark.parametrize("cut_into_batch", [1, 12, 30, 61, 200])
def test_recover_truncates_a_cut_tail_and_rebuilds_indexes(tmp_path, cut_into_batch):
    segment = LogSegment(tmp_path, 0, index_interval_bytes=2048, time=MockTime())
    batches = _fill(segment, 20)
    entries_before = [segment.index.entry(i) for i in range(segment.index.entries)]
    good_size = sum(b.size_in_bytes() for b in batches[:15])
    segment.log.truncate_to(good_size + cut_into_batch)  # a crash in the middle of batch 15
    assert segment.recover() == cut_into_batch
    assert segment.size_in_bytes() == good_size
    assert segment.next_offset() == 150
    rebuilt = [segment.index.entry(i) for i in range(segment.index.entries)]
    assert rebuilt == [e for e in entries_before if e.position < good_size]


def test_recover_drops_everything_from_a_flipped_byte(tmp_path):
    segment = LogSegment(tmp_path, 0, time=MockTime())
    batches = _fill(segment, 10)
    damaged_batch_start = sum(b.size_in_bytes() for b in batches[:6])
    raw = bytearray(segment.log.read_bytes())
    raw[damaged_batch_start + 100] ^= 0x10
    segment.log.truncate_to(0)
    segment.log.append(raw)
    assert segment.recover() == len(raw) - damaged_batch_start
    assert segment.next_offset() == 60


def test_index_rules(tmp_path):
    index = OffsetIndex(tmp_path / "0.index", 50, max_index_size=80)
    assert index.max_entries == 10 and index.lookup(70) == (50, 0)
    index.append(60, 4000)
    index.append(70, 8000)
    assert index.lookup(65) == (60, 4000) and index.lookup(70) == (70, 8000) and index.lookup(59) == (50, 0)
    with pytest.raises(InvalidOffsetException, match="no larger than the last offset"):
        index.append(70, 9000)
    index.truncate_to(70)
    assert index.entries == 1 and index.last_offset == 60
    index.close()
    assert (tmp_path / "0.index").stat().st_size == 8  # trimmed from the pre-allocated 80 bytes
    time_index = TimeIndex(tmp_path / "0.timeindex", 50, max_index_size=36)
    time_index.maybe_append(BASE_TS, 55)
    time_index.maybe_append(BASE_TS, 56)  # not larger than the last timestamp: skipped
    assert time_index.entries == 1 and not time_index.is_full()
    time_index.maybe_append(BASE_TS + 2, 57)
    assert time_index.entries == 2 and time_index.is_full()  # the last of 3 slots is kept for the roll
    with pytest.raises(InvalidOffsetException, match="full time index"):
        time_index.maybe_append(BASE_TS + 3, 58)
    time_index.maybe_append(BASE_TS + 3, 58, skip_full_check=True)
    assert time_index.lookup(BASE_TS + 1) == (BASE_TS, 55) and time_index.lookup(0) == (-1, 50)


@settings(max_examples=80, deadline=None)
@given(
    gaps=st.lists(st.integers(1, 1000), max_size=60),
    targets=st.lists(st.integers(-10, 70_000), min_size=1, max_size=20),
    cut=st.integers(-10, 70_000),
)
def test_lookups_find_the_floor_entry_in_the_map_also_after_truncation_and_reopening(
    tmp_path_factory, gaps, targets, cut
):
    # The search reads the entries from the mapped file and nothing beside it, so a truncated index and
    # one reopened from its file answer as the model does.
    base, directory = 50, tmp_path_factory.mktemp("idx")
    offsets = [base + o for o in itertools.accumulate(gaps)]
    index = OffsetIndex(directory / "0.index", base, max_index_size=8 * 64)
    time_index = TimeIndex(directory / "0.timeindex", base, max_index_size=12 * 64)
    for offset in offsets:
        index.append(offset, offset * 3)
        time_index.maybe_append(BASE_TS + offset, offset)

    def check(live: list[int]) -> None:
        for target in targets:
            floor = max((o for o in live if o <= base + target), default=None)
            assert index.lookup(base + target) == ((base, 0) if floor is None else (floor, floor * 3))
            assert time_index.lookup(BASE_TS + base + target) == (
                (-1, base) if floor is None else (BASE_TS + floor, floor)
            )

    check(offsets)
    index.truncate_to(base + cut)  # removes every entry at or above the offset
    time_index.truncate_to(base + cut)
    live = [o for o in offsets if o < base + cut]
    assert index.entries == time_index.entries == len(live)
    check(live)
    index.close()  # trims both files to the entries in use
    time_index.close()
    index = OffsetIndex(directory / "0.index", base)
    time_index = TimeIndex(directory / "0.timeindex", base)
    assert index.entries == time_index.entries == len(live)
    check(live)
    index.close()
    time_index.close()


def test_lookup_past_the_four_byte_relative_range_finds_the_last_entry(tmp_path):
    # The keys are 4-byte relative offsets; a target beyond 2^31 past the base is compared, never stored.
    index = OffsetIndex(tmp_path / "0.index", 1000, max_index_size=80)
    index.append(1000 + 2**31 - 1, 4096)  # the largest relative offset an entry can hold
    assert index.lookup(1000 + 2**40) == (1000 + 2**31 - 1, 4096)
    assert index.lookup(999) == (1000, 0)
    with pytest.raises(InvalidOffsetException, match="does not fit"):
        index.append(1000 + 2**31, 8192)
