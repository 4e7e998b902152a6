"""The record batch v2 header, drawn from the codec's own field table.

No Kafka twin: a picture of ``DefaultRecordBatch``'s header layout (Kafka documents it in the
class's javadoc as a text table; here the table is ``HEADER_FIELDS``, which the codec reads too).
Book:    chapter 6, 6.1.2 (the message format on disk)
"""

from __future__ import annotations

import html

import graphviz

from kafka_lite.common.record.default_record_batch import ATTRIBUTES_OFFSET, HEADER_FIELDS
from kafka_lite.diagrams.style import new_graph

CRC_COVERED = "#dbeafe"
BROKER_WRITTEN = "#fde68a"


def record_batch_v2() -> graphviz.Digraph:
    """The 61-byte v2 batch header, one row per field of ``HEADER_FIELDS``, CRC coverage shaded."""
    g = new_graph("record_batch_v2", rankdir="TB", ranksep="0.2")
    rows = ["<tr><td><b>offset</b></td><td><b>field</b></td><td><b>bytes</b></td><td><b>what</b></td></tr>"]
    for f in HEADER_FIELDS:
        colour = (
            CRC_COVERED
            if f.offset >= ATTRIBUTES_OFFSET
            else BROKER_WRITTEN
            if f.name in ("baseOffset", "partitionLeaderEpoch")
            else "white"
        )
        rows.append(
            f'<tr><td bgcolor="{colour}">{f.offset}</td><td bgcolor="{colour}" align="left">{f.name}</td>'
            f'<td bgcolor="{colour}">{f.size}</td><td bgcolor="{colour}" align="left">{html.escape(f.doc)}</td></tr>'
        )
    rows.append(f'<tr><td bgcolor="{CRC_COVERED}">61</td><td bgcolor="{CRC_COVERED}" align="left">records...</td>'
                f'<td bgcolor="{CRC_COVERED}">n</td><td bgcolor="{CRC_COVERED}" align="left">varint-encoded records (one compressed blob with a codec)</td></tr>')  # fmt: skip
    table = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">' + "".join(rows) + "</table>>"
    g.node("batch", table, shape="plain")
    legend = (
        '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">'
        f'<tr><td bgcolor="{CRC_COVERED}">covered by the CRC-32C</td>'
        f'<td bgcolor="{BROKER_WRITTEN}">written by the broker on append (outside the CRC)</td></tr></table>>'
    )
    g.node("legend", legend, shape="plain")
    g.edge("batch", "legend", style="invis")
    return g
