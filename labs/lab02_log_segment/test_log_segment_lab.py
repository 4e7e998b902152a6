"""Lab 2 graded tests: a segment's append with its sparse index, the index search, and reads.

Each test's first call into lab code is ``AbstractIndex._index_slot_for``, ``LogSegment.append`` or
``LogSegment.read`` (directly, or through ``OffsetIndex.lookup`` and ``Log``), so on the untouched
starter every test fails with the lab's own NotImplementedError. The read tests lay their segment
out without your ``append`` (raw writes to the ``.log`` and ``.index``), so a read earns its points
even while ``append`` is unfinished.

Failure messages print the segment as it is on disk: its batches (offsets, byte position, size)
beside its index entries, each entry next to the batch it points at.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lite.common.record import FileRecords, MemoryRecords
from kafka_lite.common.record.memory_records import iter_batches
from kafka_lite.common.time import MockTime
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_segment import FetchDataInfo, LogSegment
from kafka_lite.log.offset_index import OffsetIndex
from kafka_lite.log.time_index import TimeIndex
from kafka_lite.testing.logs import crash_mid_write, read_all

pytestmark = [pytest.mark.lab(2)]
TS = 1_500_000_000_000
INTERVAL = 1000  # index.interval.bytes in these tests: small, so a few batches make an entry
BASE = 100  # the test segments' base offset: relative and absolute offsets differ


# -- building batches and segments ------------------------------------------------------------------------


def _batch(base_offset: int, count: int = 4, size: int | None = None, ts: int = TS) -> MemoryRecords:
    """``count`` records from ``base_offset``, all stamped ``ts``; exactly ``size`` bytes if given."""
    records = [(ts, b"k%d" % i, b"v" * 80) for i in range(count)]
    if size is not None:  # pad the last value (its length varint stays 2 bytes from 64 to 8191)
        pad = size - MemoryRecords.with_records(records, base_offset=base_offset).size_in_bytes()
        records[-1] = (ts, records[-1][1], b"v" * (80 + pad))
    built = MemoryRecords.with_records(records, base_offset=base_offset)
    assert size is None or built.size_in_bytes() == size
    return built


def _append(segment: LogSegment, records: MemoryRecords, count: int, ts: int) -> None:
    """Call your ``append`` as ``Log.append`` does (offsets assigned; largest timestamp and its offset)."""
    first = next(records.batches()).base_offset
    segment.append(first, ts, first + count - 1, records)


def _laid_out(segment: LogSegment, batches: int = 25, count: int = 4, every: int = 3) -> list:
    """Write ``batches`` batches straight to the ``.log`` (not through your ``append``) and an index
    entry at every ``every``-th batch start after the first, as a sparse index would have them.
    Returns each batch's (base offset, position, size)."""
    layout, offset = [], segment.base_offset
    for b in range(batches):
        records = _batch(offset, count, ts=TS + b * 10)
        position = segment.log.size_in_bytes()
        segment.log.append(records.buffer())
        if b and b % every == 0:
            segment.index.append(offset, position)
        layout.append((offset, position, records.size_in_bytes()))
        offset += count
    return layout


@pytest.fixture
def segment(tmp_path):
    s = LogSegment(tmp_path, BASE, index_interval_bytes=INTERVAL, time=MockTime())
    yield s
    s.close()


# -- what failure messages show ------------------------------------------------------------------------


def _layout(segment: LogSegment) -> str:
    """The segment on disk: each batch, with the index entry pointing at it beside it (read with the
    reference's header scan, so it shows what your code wrote even when your code is wrong)."""
    entries = [segment.index.entry(i) for i in range(segment.index.entries)]
    pointing = {}
    for e in entries:
        pointing.setdefault(e.position, []).append(e)
    lines = [
        f"segment base offset {segment.base_offset}, index.interval.bytes {segment.index_interval_bytes}",
        "   .log batch    position    size  |  .index entry (offset -> position)",
    ]
    for h in segment.log.batch_headers(0):
        marks = [
            f"{e.offset} -> {e.position}"
            + ("" if e.offset == h.base_offset else "  <- not this batch's offset")
            for e in pointing.pop(h.position, [])
        ]
        lines.append(
            f"  {h.base_offset:>5}-{h.last_offset:<6} {h.position:>8} {h.size:>6} B  |  {', '.join(marks)}"
        )
    for stray in itertools.chain.from_iterable(pointing.values()):
        lines.append(f"  {'':>30}  |  {stray.offset} -> {stray.position}  <- no batch starts at this byte")
    if not entries:
        lines.append(f"  {'':>30}  |  (no index entries)")
    return "\n".join(lines)


def _data(records) -> bytes:
    return records.read_bytes() if isinstance(records, FileRecords) else bytes(records.buffer())


def _returned(info: FetchDataInfo | None) -> str:
    """What a read returned: where its slice starts and which batches it holds."""
    if info is None:
        return "read returned None"
    records = info.records
    data = _data(records)
    where = ""
    if isinstance(records, FileRecords):  # a slice of the segment file: say which bytes
        where = f" (file bytes [{records.start}, {records.start + len(data)}))"
    batches = [f"{b.base_offset}-{b.last_offset}" for b in iter_batches(data, allow_partial_tail=True)]
    cut = len(data) - sum(b.size_in_bytes for b in iter_batches(data, allow_partial_tail=True))
    return (
        f"read returned {len(data)} bytes{where}: batches [{', '.join(batches)}]"
        + (f" + {cut} bytes of a cut batch" if cut else "")
        + f"; fetch_offset_metadata={tuple(info.fetch_offset_metadata)}"
        + f", first_entry_incomplete={info.first_entry_incomplete}"
    )


# -- _index_slot_for -------------------------------------------------------------------------------------


def _slots(index, targets) -> str:
    keys = [index.entry(i).offset - index.base_offset for i in range(index.entries)]
    rows = "\n".join(f"    slot {i}: key {k}" for i, k in enumerate(keys)) or "    (empty index)"
    return f"  keys of the index:\n{rows}\n  targets: {list(targets)}"


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_index_slot_for_finds_the_floor_entry(tmp_path):
    index = OffsetIndex(tmp_path / "x.index", BASE, max_index_size=800)
    assert index._index_slot_for(5) == -1, "an empty index has no slot: -1"
    for relative, position in ((10, 1000), (20, 2000), (30, 3000)):
        index.append(BASE + relative, position)
    cases = {5: -1, 9: -1, 10: 0, 15: 0, 19: 0, 20: 1, 29: 1, 30: 2, 31: 2, 10_000: 2}
    got = {target: index._index_slot_for(target) for target in cases}
    assert got == cases, (
        "slot = the largest slot whose key is <= target; -1 when every key is larger.\n"
        f"  expected {cases}\n  got      {got}\n" + _slots(index, cases)
    )
    assert index.lookup(BASE + 25) == (BASE + 20, 2000), "lookup = the floor entry, absolute offset"
    assert index.lookup(BASE + 5) == (BASE, 0), "below the first entry, lookup starts at the segment start"
    # The same search serves the time index, whose keys are timestamps.
    time_index = TimeIndex(tmp_path / "x.timeindex", BASE, max_index_size=120)
    for k in range(1, 4):
        time_index.maybe_append(TS + 1000 * k, BASE + 10 * k)
    assert time_index.lookup(TS + 2500) == (TS + 2000, BASE + 20)
    assert time_index.lookup(TS) == (-1, BASE), "before the first timestamp: (-1, base offset)"


@pytest.mark.stage(1)
@pytest.mark.points(2)
@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=0, max_size=40), st.integers(-10, 2500))
def test_index_slot_for_matches_a_simple_model(tmp_path_factory, gaps, target):
    index = OffsetIndex(tmp_path_factory.mktemp("idx") / "x.index", 0, max_index_size=8 * 64)
    keys = list(itertools.accumulate(gaps))
    for key in keys:
        index.append(key, key * 10)
    # The model: scan every slot. Yours should be a binary search, but must give the same answer.
    expected = max((i for i, k in enumerate(keys) if k <= target), default=-1)
    got = index._index_slot_for(target)
    assert got == expected, f"target {target}: expected slot {expected}, got {got}\n" + _slots(
        index, [target]
    )


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_index_slot_for_reads_a_logarithmic_number_of_keys(tmp_path):
    entries = 1000
    index = OffsetIndex(tmp_path / "x.index", 0, max_index_size=8 * entries)
    for slot in range(entries):
        index.append(3 * slot + 1, 10 * slot)
    read, parse_key = [], index._parse_key

    def counting_parse_key(n: int) -> int:
        read.append(n)
        return parse_key(n)

    index._parse_key = counting_parse_key  # every key the search reads comes through here
    bound = 2 * entries.bit_length() + 2  # a binary search reads about log2(1000) = 10 keys
    for target in (0, 1, 2, 700, 1500, 2996, 2997, 2998, 5000):
        read.clear()
        slot = index._index_slot_for(target)
        expected = max((n for n in range(entries) if 3 * n + 1 <= target), default=-1)
        assert slot == expected, f"target {target}: slot {slot}, expected {expected} (key of slot n: 3n + 1)"
        assert len(read) <= bound, (
            f"finding target {target} among {entries} entries read {len(read)} keys "
            f"(slots {read[:12]}{' ...' if len(read) > 12 else ''}); a binary search reads about "
            f"{entries.bit_length()}, and this test allows {bound}"
        )


# -- append ------------------------------------------------------------------------------------------------


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_first_append_adds_no_entry_and_entries_need_more_than_the_interval(segment):
    # Batches of exactly 250 bytes: after four of them the counter is exactly 1000, which is NOT more
    # than index.interval.bytes (1000), so the fifth append adds no entry; the sixth does.
    size, offset, expected = 250, BASE, []
    count = 2
    since_last = 0
    for b in range(22):
        if since_last > INTERVAL:  # the model of the rule, checked before this append counts
            expected.append((offset, b * size))
            since_last = 0
        _append(segment, _batch(offset, count, size, ts=TS + b), count, TS + b)
        since_last += size
        if b == 0:
            assert segment.index.entries == 0, (
                "the first append to a segment never adds an index entry\n" + _layout(segment)
            )
            assert segment.rolling_based_timestamp == TS, (
                "the first append remembers its largest timestamp (rolling_based_timestamp): "
                "rolls by segment.ms measure from it"
            )
        offset += count
    entries = [tuple(segment.index.entry(i)) for i in range(segment.index.entries)]

    def gaps(found):  # the bytes of log before each entry's batch since the last entry (or position 0)
        positions = [position for _, position in found]
        return [b - a for a, b in zip([0, *positions], positions, strict=False)]

    assert entries == expected, (
        f"{size}-byte batches, index.interval.bytes {INTERVAL}: expected entries (offset, position) "
        f"{expected}, each after {gaps(expected)} bytes since the last entry;\n"
        f"  got {entries}, after {gaps(entries)} bytes\n" + _layout(segment)
    )
    assert segment.rolling_based_timestamp == TS, (
        f"rolling_based_timestamp was {TS} after the first append, and is {segment.rolling_based_timestamp} "
        "after 22: it moved with later appends"
    )
    assert segment.bytes_since_last_index_entry == since_last, (
        f"bytes_since_last_index_entry is {segment.bytes_since_last_index_entry}, but {since_last} bytes "
        "were appended since the last entry"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_entries_point_at_batch_starts_and_the_time_index_keeps_the_largest_timestamp(segment):
    offset, largest, layout, expected_time_entries = BASE, (-1, -1), [], []
    for b in range(30):
        count = 1 + b % 5
        ts = TS + b * 10 if b % 4 != 3 else TS + 5  # every 4th batch late: producers may send old timestamps
        records = _batch(offset, count, ts=ts)
        position, entries_before = segment.size_in_bytes(), segment.index.entries
        _append(segment, records, count, ts)
        if ts > largest[0]:
            largest = (ts, offset + count - 1)
        if segment.index.entries > entries_before and (
            not expected_time_entries or largest[0] > expected_time_entries[-1][0]
        ):  # the model: a time index entry when it would grow, beside each offset index entry
            expected_time_entries.append(largest)
        layout.append((offset, position, records.size_in_bytes()))
        offset += count
    assert segment.size_in_bytes() == sum(size for _, _, size in layout), (
        "every byte of every batch goes to the .log, in order"
    )
    starts = {position: base for base, position, _ in layout}
    assert segment.index.entries >= 3, "~6 KiB appended with a 1000-byte interval\n" + _layout(segment)
    for i in range(segment.index.entries):
        entry = segment.index.entry(i)
        assert starts.get(entry.position) == entry.offset, (
            f"index entry {i} ({entry.offset} -> {entry.position}) must point at the start of the batch "
            "whose base offset it names\n" + _layout(segment)
        )
    assert (segment.max_timestamp_so_far, segment.offset_of_max_timestamp) == largest, (
        f"max_timestamp_so_far / offset_of_max_timestamp should be {largest}: the largest timestamp "
        "appended and its offset (a late, smaller timestamp must not lower it)"
    )
    time_entries = [tuple(segment.time_index.entry(i)) for i in range(segment.time_index.entries)]
    assert time_entries == expected_time_entries, (
        "the time index should hold, as each offset index entry was added, the largest timestamp "
        "appended so far and its offset, whenever that had grown since its last entry\n"
        f"  expected {expected_time_entries}\n  got      {time_entries}"
    )


# -- read ---------------------------------------------------------------------------------------------------


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_read_starts_at_the_batch_holding_each_offset_and_none_past_the_end(segment):
    layout = _laid_out(segment)
    for offset in range(BASE, BASE + 100):
        info = segment.read(offset, None, max_size=100_000)
        base, position, _ = [b for b in layout if b[0] <= offset][-1]
        assert info is not None, f"offset {offset} is in this segment\n" + _layout(segment)
        first = next(iter_batches(_data(info.records), allow_partial_tail=True), None)
        assert first is not None and first.base_offset == base, (
            f"read({offset}) must start at the batch holding it ({base}-{base + 3} at byte {position})\n"
            f"  {_returned(info)}\n" + _layout(segment)
        )
        assert tuple(info.fetch_offset_metadata) == (offset, BASE, position), (
            f"read({offset}): fetch_offset_metadata should be {(offset, BASE, position)} (the offset asked "
            f"for, the segment's base offset, where its batch starts)\n  {_returned(info)}"
        )
        assert info.records.size_in_bytes() == segment.size_in_bytes() - position, (
            "with room to spare, the read runs to the end of the file\n  " + _returned(info)
        )
    past = segment.read(BASE + 100, None, max_size=100_000)
    assert past is None, "an offset past the segment's last batch reads as None\n  " + _returned(past)


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_read_respects_max_size_and_min_one_message(segment):
    layout = _laid_out(segment, batches=10)
    size = layout[0][2]
    info = segment.read(BASE, None, max_size=size * 3)
    assert info.records.size_in_bytes() == size * 3 and not info.first_entry_incomplete, (
        f"max_size {size * 3} holds exactly three {size}-byte batches\n  " + _returned(info)
    )
    small = segment.read(BASE + 9, None, max_size=10)
    assert small.records.size_in_bytes() == 10 and small.first_entry_incomplete, (
        "max_size cuts the slice even inside the first batch, and the read says so "
        "(first_entry_incomplete)\n  " + _returned(small)
    )
    whole = segment.read(BASE + 9, None, max_size=10, min_one_message=True)
    assert whole.records.size_in_bytes() == size and not whole.first_entry_incomplete, (
        "min_one_message returns the first batch whole even when it is larger than max_size\n  "
        + _returned(whole)
    )
    empty = segment.read(BASE, None, max_size=0)
    assert empty is not None and empty.records.size_in_bytes() == 0, "max_size 0: an empty read, not None"
    for min_one_message in (False, True):
        try:
            got = segment.read(BASE, None, max_size=-1, min_one_message=min_one_message)
        except ValueError:
            continue
        pytest.fail(
            f"read with max_size -1 (min_one_message={min_one_message}) should raise ValueError\n  "
            + _returned(got)
        )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_read_stops_at_max_offset(segment):
    layout = _laid_out(segment, batches=10)
    size = layout[0][2]
    info = segment.read(BASE, max_offset=BASE + 13, max_size=100_000)
    assert info.records.size_in_bytes() == 3 * size, (
        f"with max_offset {BASE + 13} (the high watermark) the read ends where the batch holding it "
        f"({BASE + 12}-{BASE + 15}) begins\n  " + _returned(info) + "\n" + _layout(segment)
    )
    below = segment.read(BASE + 20, max_offset=BASE + 10, max_size=100_000)
    assert below is not None and below.records.size_in_bytes() == 0, (
        "max_offset below the start offset: an empty read\n  " + _returned(below)
    )
    beyond = segment.read(BASE + 4, max_offset=BASE + 500, max_size=100_000)
    assert beyond.records.size_in_bytes() == 9 * size, (
        "max_offset past the segment: nothing holds it, so the read may run to the end\n  "
        + _returned(beyond)
    )
    capped = segment.read(BASE, max_offset=BASE + 30, max_size=2 * size)
    assert capped.records.size_in_bytes() == 2 * size, "max_size still applies\n  " + _returned(capped)


@pytest.mark.stage(3)
@pytest.mark.points(1)
def test_read_within_max_position(segment):
    layout = _laid_out(segment, batches=10)
    size = layout[0][2]
    info = segment.read(BASE + 4, None, max_size=100_000, max_position=4 * size)
    assert info.records.size_in_bytes() == 3 * size, (
        f"max_position {4 * size} caps the slice at that byte (the active segment's end when the fetch "
        "began)\n  " + _returned(info)
    )


# -- a Log on your segment -----------------------------------------------------------------------------------


def _values(n: int) -> list[bytes]:
    return [b"batch-%d-" % b + b"x" * (b % 7 * 40) for b in range(n)]


def _filled_log(tmp_path, batches: int):
    """A Log (3000-byte segments, an index entry every 500 bytes) with ``batches`` one-record
    batches appended through your segment code; returns (config, log, values)."""
    config = LogConfig(segment_bytes=3000, index_interval_bytes=500)
    log = Log(tmp_path / "t-0", config, time=MockTime())
    values = _values(batches)
    for b, value in enumerate(values):
        log.append(MemoryRecords.with_records([(TS + b, b"k", value)]))
    return config, log, values


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_log_on_your_segment_reads_back_everything_across_rolls_and_reopen(tmp_path):
    config, log, values = _filled_log(tmp_path, 40)
    assert log.number_of_segments > 2
    assert [r.value for r in read_all(log)] == values
    log.close()
    reopened = Log(tmp_path / "t-0", config, recovery_point=0, time=MockTime())
    assert [r.value for r in read_all(reopened)] == values, "after a reopen, every record reads back"
    assert reopened.read(17, 10_000).fetch_offset_metadata.message_offset == 17
    reopened.close()


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_log_on_your_segment_recovers_from_a_torn_write(tmp_path):
    config, log, values = _filled_log(tmp_path, 30)
    recovery_point = log.recovery_point
    crash_mid_write(log, 5)  # a crash in the middle of writing the last batch
    recovered = Log(tmp_path / "t-0", config, recovery_point=recovery_point, time=MockTime())
    assert recovered.log_end_offset == 29, "recovery drops the torn last batch"
    assert [r.value for r in read_all(recovered)] == values[:29]
    recovered.append(MemoryRecords.with_records([(TS, b"k", b"after the crash")]))
    assert [r.value for r in read_all(recovered, 25)] == [*values[25:29], b"after the crash"]
    recovered.close()
