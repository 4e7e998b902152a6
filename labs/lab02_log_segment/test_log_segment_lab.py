"""Lab 2 graded tests: a segment's append with its sparse index, the index search, and reads.

Every test first calls ``LogSegment.append``, ``LogSegment.read`` or ``AbstractIndex._index_slot_for``
(directly, or through ``OffsetIndex.lookup`` and ``Log``), so on the untouched starter each fails
with the lab's NotImplementedError. Failure messages print the segment's layout: its batches and
its index entries, side by side.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.log.log import Log, read_all
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_segment import LogSegment
from kafka_lite.log.offset_index import OffsetIndex

pytestmark = [pytest.mark.lab(2)]
TS = 1_500_000_000_000
INTERVAL = 1000


def _batch(base_offset: int, count: int = 4, size: int = 60, ts: int = TS) -> MemoryRecords:
    return MemoryRecords.with_records(
        [(ts + i, b"k", b"v" * size) for i in range(count)], base_offset=base_offset
    )


def _fill(segment: LogSegment, batches: int, count: int = 4) -> list[tuple[int, int, int]]:
    """Append ``batches`` batches; return each one's (base offset, position, size)."""
    layout, offset = [], segment.base_offset
    for b in range(batches):
        records = _batch(offset, count, ts=TS + b * 10)
        position = segment.size_in_bytes()
        segment.append(offset, TS + b * 10 + count - 1, offset + count - 1, records)
        layout.append((offset, position, records.size_in_bytes()))
        offset += count
    return layout


def _layout(segment: LogSegment, batches) -> str:
    """The segment's batches and index entries as a small table, for failure messages."""
    entries = [segment.index.entry(i) for i in range(segment.index.entries)]
    lines = ["batches (base offset @ position, size)       index entries (offset -> position)"]
    for i in range(max(len(batches), len(entries))):
        left = f"{batches[i][0]:>6} @ {batches[i][1]:>6}, {batches[i][2]:>4} B" if i < len(batches) else ""
        right = f"{entries[i].offset:>6} -> {entries[i].position}" if i < len(entries) else ""
        lines.append(f"{left:<45}{right}")
    return "\n".join(lines)


@pytest.fixture
def segment(tmp_path):
    s = LogSegment(tmp_path, 100, index_interval_bytes=INTERVAL, time=MockTime())
    yield s
    s.close()


@pytest.mark.points(3)
def test_index_slot_for_finds_the_floor_entry(tmp_path):
    index = OffsetIndex(tmp_path / "x.index", 100, max_index_size=800)
    assert index._index_slot_for(5) == -1, "an empty index has no slot"
    for relative, position in ((10, 1000), (20, 2000), (30, 3000)):
        index.append(100 + relative, position)
    cases = {5: -1, 10: 0, 15: 0, 20: 1, 29: 1, 30: 2, 10_000: 2}
    got = {target: index._index_slot_for(target) for target in cases}
    assert got == cases, "slot = the largest entry whose key is <= target, or -1 (keys are relative offsets)"
    assert index.lookup(125) == (120, 2000)
    assert index.lookup(105) == (100, 0), "below the first entry: start at the segment's beginning"


@pytest.mark.points(2)
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=0, max_size=40), st.integers(-10, 2500))
def test_index_slot_for_matches_a_simple_model(tmp_path_factory, gaps, target):
    index = OffsetIndex(tmp_path_factory.mktemp("idx") / "x.index", 0, max_index_size=8 * 64)
    keys, key = [], 0
    for gap in gaps:
        key += gap
        index.append(key, key * 10)
        keys.append(key)
    expected = max((i for i, k in enumerate(keys) if k <= target), default=-1)
    assert index._index_slot_for(target) == expected, f"keys {keys}, target {target}"


@pytest.mark.points(3)
def test_append_adds_sparse_entries_never_on_the_first_append(segment):
    first = _batch(100)
    segment.append(100, TS + 3, 103, first)
    assert segment.index.entries == 0, "the first append to a segment never adds an index entry"
    batches = [(100, 0, first.size_in_bytes())]
    offset = 104
    for b in range(30):
        records = _batch(offset, ts=TS + b * 10)
        batches.append((offset, segment.size_in_bytes(), records.size_in_bytes()))
        segment.append(offset, TS + b * 10 + 3, offset + 3, records)
        offset += 4
    entries = [segment.index.entry(i) for i in range(segment.index.entries)]
    assert entries, "no index entries after ~10 KiB with an interval of 1000 bytes\n" + _layout(
        segment, batches
    )
    gaps = [b.position - a.position for a, b in itertools.pairwise(entries)]
    assert entries[0].position > INTERVAL and all(g > INTERVAL for g in gaps), (
        "an entry is added only once MORE than index.interval.bytes were written since the last one\n"
        + _layout(segment, batches)
    )
    assert all(g <= INTERVAL + 2 * batches[0][2] for g in gaps), (
        "entries must not be sparser than needed\n" + _layout(segment, batches)
    )


@pytest.mark.points(2)
def test_index_entries_point_at_batch_starts(segment):
    batches = _fill(segment, 30)
    starts = {position: offset for offset, position, _ in batches}
    for i in range(segment.index.entries):
        entry = segment.index.entry(i)
        assert starts.get(entry.position) == entry.offset, (
            f"entry {i} ({entry.offset} -> {entry.position}) must point at the batch starting with that offset\n"
            + _layout(segment, batches)
        )
    # The time index gets an entry with each offset index entry: the largest timestamp so far.
    assert segment.time_index.entries == segment.index.entries
    for i in range(segment.time_index.entries):
        ts_entry, offset_entry = segment.time_index.entry(i), segment.index.entry(i)
        assert ts_entry.timestamp == max(
            TS + b * 10 + 3 for b, (o, _, _) in enumerate(batches) if o <= offset_entry.offset
        )


@pytest.mark.points(3)
def test_read_returns_the_batch_holding_each_offset(segment):
    batches = _fill(segment, 25)
    for offset in range(100, 200):
        info = segment.read(offset, None, max_size=100_000)
        assert info is not None, f"offset {offset} is in the segment\n" + _layout(segment, batches)
        (first, *_) = MemoryRecords(info.records.read_bytes()).batches()
        assert first.base_offset <= offset <= first.last_offset, (
            f"read({offset}) must start at the batch holding it, not at {first.base_offset}\n"
            + _layout(segment, batches)
        )
        assert (
            info.fetch_offset_metadata.relative_position_in_segment
            == [p for o, p, _ in batches if o <= offset][-1]
        )
    assert segment.read(200, None, 1000) is None, "an offset past the segment's last reads as None"


@pytest.mark.points(2)
def test_read_respects_max_size_and_min_one_message(segment):
    batches = _fill(segment, 10)
    size = batches[0][2]
    info = segment.read(100, None, max_size=size * 3)
    assert info.records.size_in_bytes() == size * 3 and not info.first_entry_incomplete
    small = segment.read(100, None, max_size=10)
    assert small.records.size_in_bytes() == 10 and small.first_entry_incomplete, (
        "a cut first batch is flagged"
    )
    whole = segment.read(100, None, max_size=10, min_one_message=True)
    assert whole.records.size_in_bytes() == size, "min_one_message returns the first batch whole"
    empty = segment.read(100, None, max_size=0)
    assert empty.records.size_in_bytes() == 0


@pytest.mark.points(2)
def test_read_stops_at_max_offset(segment):
    batches = _fill(segment, 10)
    size = batches[0][2]
    info = segment.read(100, max_offset=112, max_size=100_000)
    assert info.records.size_in_bytes() == 3 * size, (
        "with max_offset (the high watermark) the read ends where the batch holding it begins\n"
        + _layout(segment, batches)
    )
    assert segment.read(120, max_offset=110, max_size=100_000).records.size_in_bytes() == 0


@pytest.mark.points(2)
def test_read_within_max_position(segment):
    batches = _fill(segment, 10)
    size = batches[0][2]
    info = segment.read(100, None, max_size=100_000, max_position=4 * size)
    assert info.records.size_in_bytes() == 4 * size, "max_position caps the read at a byte position"


@pytest.mark.points(3)
def test_a_log_on_your_segment_reads_back_everything_across_rolls_and_reopen(tmp_path):
    config = LogConfig(segment_bytes=3000, index_interval_bytes=500)
    log = Log(tmp_path / "t-0", config, time=MockTime())
    values = []
    for b in range(40):
        value = b"batch-%d" % b
        log.append(MemoryRecords.with_records([(TS + b, b"k", value)]))
        values.append(value)
    assert log.number_of_segments > 1
    log.close()
    reopened = Log(tmp_path / "t-0", config, recovery_point=0, time=MockTime())
    assert [r.value for r in read_all(reopened)] == values
    assert reopened.read(17, 10_000).fetch_offset_metadata.message_offset == 17
