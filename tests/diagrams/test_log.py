"""The segment and log pictures are drawn from the real files: every entry, batch and edge is in the DOT."""

from __future__ import annotations

import re

import pytest

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.diagrams.log import log_diagram, segment_diagram
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_segment import LogSegment

pytestmark = pytest.mark.unit
TS = 1_500_000_000_000
EDGE = re.compile(r"^\s*(\S+) -> (\S+)", re.MULTILINE)


def _fill(segment: LogSegment, batches: int, count: int = 5) -> None:
    offset = segment.base_offset
    for b in range(batches):
        records = MemoryRecords.with_records(
            [(TS + b * 100 + i, b"k", b"v" * 120) for i in range(count)], base_offset=offset
        )
        segment.append(offset, TS + b * 100 + count - 1, offset + count - 1, records)
        offset += count


@pytest.fixture
def segment(tmp_path):
    s = LogSegment(tmp_path, 1000, index_interval_bytes=1500, time=MockTime())
    _fill(s, 30)
    yield s
    s.close()


def _edges(source: str) -> list[tuple[str, str]]:
    return EDGE.findall(source)


def test_every_index_entry_is_drawn_with_an_edge_to_its_batch(segment):
    source = segment_diagram(segment).source
    entries = [segment.index.entry(i) for i in range(segment.index.entries)]
    assert len(entries) >= 5
    edges = _edges(source)
    for n, e in enumerate(entries):
        # The row shows the stored relative offset, the position and the absolute offset ...
        row = re.search(rf'port="e{n}">(\d+)</td><td[^>]*>(\d+)</td><td[^>]*port="e{n}r">(\d+)<', source)
        assert row is not None, f"entry {n} has no row"
        assert tuple(map(int, row.groups())) == (e.offset - 1000, e.position, e.offset)
        # ... and an edge to the .log row of the batch at that position, which starts with that offset.
        assert (f"index:e{n}r:e", f"log:b{e.position}:w") in edges
        assert re.search(rf'port="b{e.position}">{e.offset}-\d+</td>', source)
    headers = list(segment.log.batch_headers(0))
    for h in headers:  # 30 batches, under the default max_batches: one row each
        assert f'port="b{h.position}">{h.base_offset}-{h.last_offset}</td>' in source
    assert "00000000000000001000.log" in source and "00000000000000001000.index" in source


def test_time_index_entries_point_at_the_batch_holding_their_offset(segment):
    segment.on_become_inactive_segment()  # the roll's final entry
    source = segment_diagram(segment).source
    headers = list(segment.log.batch_headers(0))
    edges = _edges(source)
    assert segment.time_index.entries >= 2
    for n in range(segment.time_index.entries):
        entry = segment.time_index.entry(n)
        assert f'port="t{n}">{entry.timestamp}</td>' in source
        (holder,) = [h for h in headers if h.base_offset <= entry.offset <= h.last_offset]
        assert (f"log:b{holder.position}r:e", f"timeindex:t{n}:w") in edges
    assert "timeindex" not in segment_diagram(segment, show_time_index=False).source


def test_a_long_segment_is_folded_but_keeps_every_indexed_batch(segment):
    g = segment_diagram(segment, max_batches=8)
    source = g.source
    shown = re.findall(r'port="b(\d+)">', source)
    entries = [segment.index.entry(i) for i in range(segment.index.entries)]
    assert {str(e.position) for e in entries} <= set(shown)
    assert len(shown) < 30 and "batches, offsets" in source
    g.pipe(format="svg")  # every edge's port exists, or dot would fail to lay it out


def test_an_entry_pointing_between_batches_is_drawn_red(tmp_path):
    segment = LogSegment(tmp_path, 0, index_interval_bytes=10**9, time=MockTime())
    _fill(segment, 4)
    segment.index.append(7, 13)  # no batch starts at byte 13
    source = segment_diagram(segment).source
    assert "color=red" in source and "no batch at 13" in source and "#fecaca" in source
    segment.close()


def test_fonts_are_helvetica_everywhere(segment, tmp_path):
    log = Log(tmp_path / "t-0", LogConfig(), time=MockTime())
    for g in (segment_diagram(segment), log_diagram(log)):
        lines = g.source.splitlines()
        assert any(line.strip().startswith("fontname=Helvetica") for line in lines)
        assert any(line.strip().startswith("node [fontname=Helvetica") for line in lines)
        assert any(line.strip().startswith("edge [fontname=Helvetica") for line in lines)
    log.close()


def test_log_diagram_shows_segments_active_marker_leo_and_recovery_point(tmp_path):
    time = MockTime(start_ms=TS)
    log = Log(tmp_path / "clicks-0", LogConfig(segment_bytes=2000), time=time)
    for _ in range(12):
        log.append(MemoryRecords.with_records([(time.milliseconds(), b"k", b"v" * 300)]))
    segments = log.log_segments()
    assert len(segments) >= 3
    source = log_diagram(log).source
    for s in segments:
        assert f"{s.base_offset:020d}.log" in source and f"{s.size_in_bytes()} B" in source
    assert source.count("(active)") == 1
    assert f"{log.active_segment.base_offset:020d}.log (active)" in source
    assert f"log end offset (LEO) = {log.log_end_offset}" in source
    assert f"recovery point = {log.recovery_point}" in source
    edges = _edges(source)
    assert ("leo", f"s{log.active_segment.base_offset}") in edges
    recovery_segment = [s for s in segments if s.base_offset <= log.recovery_point][-1]
    assert ("recovery", f"s{recovery_segment.base_offset}") in edges
    assert ("start", f"s{segments[0].base_offset}") in edges
    log_diagram(log).pipe(format="svg")
    log.close()


def test_an_empty_segment_renders(tmp_path):
    segment = LogSegment(tmp_path, 0, time=MockTime())
    assert "(no entries)" in segment_diagram(segment).source
    segment_diagram(segment).pipe(format="svg")
    segment.close()
