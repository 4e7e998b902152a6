"""Pictures of a real segment and a real log, drawn from their files with graphviz.

No Kafka twin: draws kafka_lite's own structures (Kafka has no such tool; the nearest is
         ``DumpLogSegments``, whose text output ``kafka_lite.tools.dump_log_segments`` mirrors).
Book:    chapter 6, 6.1.1-6.1.4 (a partition's segments; a segment's ``.log``, ``.index`` and
         ``.timeindex``; how a read goes from an offset to a byte position)

Nothing here is drawn by hand. ``segment_diagram`` reads the batch headers out of the ``.log``
(``FileRecords.batch_headers``, the same header-only scan a lookup does) and the entries out of
the two memory-mapped indexes (``OffsetIndex.entry``, ``TimeIndex.entry``), then draws an edge from
each index entry to the batch it names. If an index pointed at the wrong byte, the picture would
show it: the edge would land on no batch, and the entry is drawn red. ``log_diagram`` does the same
one level up, from ``Log.log_segments()``, the log end offset and the recovery point.

Both return a ``graphviz.Digraph``; in a notebook it renders itself (``dot`` makes the SVG), and
``.source`` is the DOT text, which the tests read.
"""

from __future__ import annotations

import html
import itertools
import tempfile
from typing import TYPE_CHECKING

import graphviz

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.diagrams.style import new_graph
from kafka_lite.log.log_segment import LogSegment

if TYPE_CHECKING:
    from kafka_lite.common.record.file_records import BatchHeader
    from kafka_lite.log.log import Log

INDEXED = "#dbeafe"  # a batch an offset index entry points at
TIMED = "#fde68a"  # a batch a time index entry names
ACTIVE = "#dcfce7"  # the active segment
BAD = "#fecaca"  # an index entry that points at no batch
TABLE = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">{}</table>>'


def _graph(name: str) -> graphviz.Digraph:
    g = new_graph(name, fontsize=10, nodesep="0.3", ranksep="0.3")
    g.attr("node", shape="plain")
    return g


def _row(*cells: str, port: str | None = None, bgcolor: str = "white") -> str:
    """One table row. ``port`` names its first cell (edges arrive from the left there) and, with an
    ``r`` added, its last cell (edges leave to the right), so an edge never crosses the row."""
    tds = []
    for i, cell in enumerate(cells):
        attrs = f' bgcolor="{bgcolor}"'
        if port and i == 0:
            attrs += f' port="{port}"'
        if port and i == len(cells) - 1:
            attrs += f' port="{port}r"' if len(cells) > 1 else ""
        tds.append(f"<td{attrs}>{cell}</td>")
    return "<tr>" + "".join(tds) + "</tr>"


def _title(text: str, span: int) -> str:
    return f'<tr><td colspan="{span}"><b>{html.escape(text)}</b></td></tr>'


def _gap(text: str, span: int = 3) -> str:
    """A row standing for batches not drawn."""
    return f'<tr><td colspan="{span}"><i>... {html.escape(text)} ...</i></td></tr>'


def _shown_batches(headers: list[BatchHeader], keep: set[int], max_batches: int) -> list[int]:
    """Which batch rows to draw when there are more than ``max_batches``.

    The batches an index entry lands on (``keep``, by position) and the last batch always get a row,
    since the point of the picture is where the entries land; the rest of the budget goes to the
    first batches.
    """
    if len(headers) <= max_batches:
        return list(range(len(headers)))
    chosen = {i for i, h in enumerate(headers) if h.position in keep}
    chosen.add(len(headers) - 1)
    budget = max(max_batches, len(chosen))
    for i in range(len(headers)):
        if len(chosen) >= budget:
            break
        chosen.add(i)
    return sorted(chosen)


def segment_diagram(
    segment: LogSegment, max_batches: int = 40, show_time_index: bool = True
) -> graphviz.Digraph:
    """A segment's ``.index`` | ``.log`` | ``.timeindex`` side by side, with an edge per index entry.

    The ``.log`` column has one row per batch: its offsets (base-last), byte position and size.
    Rows that an offset index entry points at are blue; rows a time index entry names are yellow.
    With more than ``max_batches`` batches, unindexed ones are folded into "... n batches ..." rows
    (every batch an entry lands on keeps its row, so every entry keeps its edge).
    """
    base = segment.base_offset
    headers = list(segment.log.batch_headers(0))
    entries = [segment.index.entry(i) for i in range(segment.index.entries)]
    time_entries = (
        [segment.time_index.entry(i) for i in range(segment.time_index.entries)] if show_time_index else []
    )
    by_position = {h.position: h for h in headers}
    indexed = {e.position for e in entries}

    def holding(offset: int) -> BatchHeader | None:
        return next((h for h in headers if h.base_offset <= offset <= h.last_offset), None)

    timed = {h.position for e in time_entries if (h := holding(e.offset)) is not None}

    g = _graph(f"segment_{base}")
    # -- the .log column -----------------------------------------------------------------------------------
    rows = [
        _title(f"{base:020d}.log", 3),
        _row("<i>offsets</i>", "<i>position</i>", "<i>size</i>", bgcolor="#f3f4f6"),  # column heads
    ]
    shown = _shown_batches(headers, indexed | timed, max_batches)
    previous = -1
    for i in shown:
        if i > previous + 1:
            skipped = headers[previous + 1 : i]
            rows.append(
                _gap(f"{len(skipped)} batches, offsets {skipped[0].base_offset}-{skipped[-1].last_offset}")
            )
        h = headers[i]
        colour = INDEXED if h.position in indexed else TIMED if h.position in timed else "white"
        rows.append(
            _row(
                f"{h.base_offset}-{h.last_offset}",
                str(h.position),
                f"{h.size} B",
                port=f"b{h.position}",
                bgcolor=colour,
            )
        )
        previous = i
    rows.append(
        f'<tr><td colspan="3" port="end" bgcolor="#f3f4f6">end of file: {segment.size_in_bytes()} B</td></tr>'
    )
    g.node("log", TABLE.format("".join(rows)))

    # -- the .index column: relative offset and position, as stored; the absolute offset beside -----------
    idx_rows = [
        _title(f"{base:020d}.index", 3),
        _row("<i>relative</i>", "<i>position</i>", "<i>= offset</i>", bgcolor="#f3f4f6"),
    ]
    if not entries:
        idx_rows.append(_row("(no entries)", "", ""))
    for n, e in enumerate(entries):
        ok = e.position in by_position and by_position[e.position].base_offset == e.offset
        idx_rows.append(
            _row(
                str(e.offset - base),
                str(e.position),
                str(e.offset),
                port=f"e{n}",
                bgcolor=INDEXED if ok else BAD,
            )
        )
    g.node("index", TABLE.format("".join(idx_rows)))
    for n, e in enumerate(entries):
        if e.position in by_position:
            g.edge(f"index:e{n}r:e", f"log:b{e.position}:w")
        else:  # an entry pointing between batches: draw it to the file's end, in red
            g.edge(f"index:e{n}r:e", "log:end:w", color="red", label=f"no batch at {e.position}")

    # -- the .timeindex column: timestamp and the offset it names ------------------------------------------
    if show_time_index:
        ts_rows = [
            _title(f"{base:020d}.timeindex", 2),
            _row("<i>timestamp</i>", "<i>offset</i>", bgcolor="#f3f4f6"),
        ]
        if not time_entries:
            ts_rows.append(_row("(no entries)", ""))
        for n, e in enumerate(time_entries):
            ts_rows.append(_row(str(e.timestamp), str(e.offset), port=f"t{n}", bgcolor=TIMED))
        g.node("timeindex", TABLE.format("".join(ts_rows)))
        for n, e in enumerate(time_entries):
            h = holding(e.offset)
            if h is not None:
                g.edge(f"log:b{h.position}r:e", f"timeindex:t{n}:w", dir="back", style="dashed")
    g.attr(
        label=(
            f"index.interval.bytes = {segment.index_interval_bytes}: {len(entries)} offset index "
            f"entr{'y' if len(entries) == 1 else 'ies'} for {len(headers)} batch{'' if len(headers) == 1 else 'es'}"
        ),
        labelloc="b",
        fontsize="11",
    )
    return g


def log_diagram(log: Log) -> graphviz.Digraph:
    """A log's segments in offset order (base offset, offsets, size, index entries), the active one
    green, with the log start offset, recovery point and log end offset (LEO) pointing at the
    segment each falls in."""
    g = _graph(f"log_{log.name}")
    g.attr(rankdir="TB", ranksep="0.4")
    segments = log.log_segments()
    active = log.active_segment
    with g.subgraph(name="segments") as row:
        row.attr(rank="same")
        for s in segments:
            is_active = s is active
            # The first batch's base offset, not the file name's: after compaction they differ.
            first = next(s.log.batch_headers(0), None)
            last = (log.log_end_offset if is_active else s.next_offset()) - 1
            span = "(empty)" if first is None else f"{first.base_offset}-{last}"
            rows = [
                _title(f"{s.base_offset:020d}.log" + (" (active)" if is_active else ""), 2),
                _row("offsets", span),
                _row("size", f"{s.size_in_bytes()} B"),
                _row("index entries", str(s.index.entries)),
                _row("time index entries", str(s.time_index.entries)),
                _row("largest timestamp", str(s.max_timestamp_so_far)),
            ]
            table = TABLE.format("".join(rows))
            if is_active:
                table = table.replace("<table ", f'<table bgcolor="{ACTIVE}" ', 1)
            row.node(f"s{s.base_offset}", table)
        for a, b in itertools.pairwise(segments):
            row.edge(f"s{a.base_offset}", f"s{b.base_offset}", arrowhead="none", style="dotted")

    def floor_segment(offset: int) -> LogSegment:
        # The segment an offset falls in; the LEO is one past the last batch, so it lands in the active one.
        return next((s for s in reversed(segments) if s.base_offset <= offset), segments[0])

    markers = (
        ("start", f"log start offset = {log.log_start_offset}", log.log_start_offset),
        ("recovery", f"recovery point = {log.recovery_point}", log.recovery_point),
        ("leo", f"log end offset (LEO) = {log.log_end_offset}", log.log_end_offset),
    )
    for name, label, offset in markers:
        g.node(name, label, shape="box", style="rounded")
        g.edge(name, f"s{floor_segment(offset).base_offset}")
    g.attr(label=f"{log.name}: {len(segments)} segments, {log.size_in_bytes()} B", labelloc="b")
    return g


def _sample_segment(directory: str) -> LogSegment:
    """A small real segment: 24 batches of ~600 bytes, index entries every 2 KiB."""
    segment = LogSegment(directory, 0, index_interval_bytes=2048, time=MockTime())
    offset = 0
    for b in range(24):
        records = MemoryRecords.with_records(
            [(1_500_000_000_000 + b * 100 + i, b"key", b"x" * 100) for i in range(5)], base_offset=offset
        )
        segment.append(offset, 1_500_000_000_000 + b * 100 + 4, offset + 4, records)
        offset += 5
    return segment


def segment_with_index() -> graphviz.Digraph:
    """A real segment's ``.index`` beside its ``.log``, written to a temporary directory for the picture."""
    with tempfile.TemporaryDirectory() as d:
        segment = _sample_segment(d)
        try:
            return segment_diagram(segment)
        finally:
            segment.close()
