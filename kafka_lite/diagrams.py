"""Diagrams of kafka_lite's structures, drawn from the code's own data with graphviz.

No Kafka twin: the pictures of the chapter guides and notebooks. Each function returns a
``graphviz.Digraph`` built from live data (a header field table, a real segment written for the
picture), so the docs' pictures change when the code does. ``DIAGRAMS`` lists what the docs build
renders to ``site/diagrams/<name>.svg``.
"""

from __future__ import annotations

import html
import tempfile
from collections.abc import Callable

import graphviz

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.default_record_batch import ATTRIBUTES_OFFSET, HEADER_FIELDS

FONT = "Helvetica"


def _graph(name: str, rankdir: str = "LR") -> graphviz.Digraph:
    g = graphviz.Digraph(name)
    g.attr(rankdir=rankdir, fontname=FONT)
    g.attr("node", fontname=FONT, fontsize="11")
    g.attr("edge", fontname=FONT, fontsize="10")
    return g


def record_batch_v2() -> graphviz.Digraph:
    """The 61-byte v2 batch header, one row per field of ``HEADER_FIELDS``, CRC coverage shaded."""
    g = _graph("record_batch_v2")
    rows = ["<tr><td><b>offset</b></td><td><b>field</b></td><td><b>bytes</b></td><td><b>what</b></td></tr>"]
    for f in HEADER_FIELDS:
        colour = (
            "#dbeafe"
            if f.offset >= ATTRIBUTES_OFFSET
            else "#fde68a"
            if f.name in ("baseOffset", "partitionLeaderEpoch")
            else "white"
        )
        rows.append(
            f'<tr><td bgcolor="{colour}">{f.offset}</td><td bgcolor="{colour}" align="left">{f.name}</td>'
            f'<td bgcolor="{colour}">{f.size}</td><td bgcolor="{colour}" align="left">{html.escape(f.doc)}</td></tr>'
        )
    rows.append('<tr><td bgcolor="#dbeafe">61</td><td bgcolor="#dbeafe" align="left">records...</td>'
                '<td bgcolor="#dbeafe">n</td><td bgcolor="#dbeafe" align="left">varint-encoded records (one compressed blob with a codec)</td></tr>')  # fmt: skip
    table = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">' + "".join(rows) + "</table>>"
    g.node("batch", table, shape="plain")
    legend = (
        '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">'
        '<tr><td bgcolor="#dbeafe">covered by the CRC-32C</td></tr>'
        '<tr><td bgcolor="#fde68a">written by the broker on append (outside the CRC)</td></tr></table>>'
    )
    g.node("legend", legend, shape="plain")
    return g


def _sample_segment(directory: str):
    """A small real segment: 24 batches of ~600 bytes, index entries every 2 KiB."""
    from kafka_lite.common.time import MockTime
    from kafka_lite.log.log_segment import LogSegment

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
    """A real segment's ``.index`` beside its ``.log`` (the storage layer's own picture of it)."""
    from kafka_lite.log.diagrams import segment_diagram

    with tempfile.TemporaryDirectory() as d:
        segment = _sample_segment(d)
        try:
            return segment_diagram(segment)
        finally:
            segment.close()


DIAGRAMS: dict[str, Callable[[], graphviz.Digraph]] = {
    "record_batch_v2": record_batch_v2,
    "segment_with_index": segment_with_index,
}
