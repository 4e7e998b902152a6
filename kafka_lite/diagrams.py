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


def socket_server_threads(
    num_network_threads: int | None = None, num_io_threads: int | None = None
) -> graphviz.Digraph:
    """The broker's threads and queues (book 2.3), from a real ``SocketServer`` built with the
    defaults of ``num.network.threads`` and ``num.io.threads`` (not started: no socket is opened)."""
    from kafka_lite.network.socket_server import SocketServer
    from kafka_lite.server.kafka_config import CONFIG_DEF
    from kafka_lite.server.kafka_request_handler import KafkaRequestHandler

    n = num_network_threads or CONFIG_DEF.keys["num.network.threads"].default
    m = num_io_threads or CONFIG_DEF.keys["num.io.threads"].default
    queued = CONFIG_DEF.keys["queued.max.requests"].default
    server = SocketServer(port=0, num_network_threads=n, queued_max_requests=queued)
    g = _graph("socket_server_threads")
    g.attr(nodesep="0.25", ranksep="0.6")
    g.node("clients", "clients\n(one socket each)", shape="box3d")
    g.node(
        "acceptor",
        "Acceptor\nkafka-socket-acceptor\n(accept, round-robin)",
        shape="box",
        style="rounded,filled",
        fillcolor="#fde68a",
    )
    g.node("requests", f"RequestChannel.request_queue\n(one, bounded: queued.max.requests = {queued})",
           shape="cylinder", style="filled", fillcolor="#dbeafe")  # fmt: skip
    g.edge("clients", "acceptor", label="connect")
    for p in server.processors:
        g.node(p.name, f"Processor {p.id}\n{p.name}\n(own Selector; mutes a connection\nwhile its request is in flight)",
               shape="box", style="rounded,filled", fillcolor="#dcfce7")  # fmt: skip
        g.node(
            f"responses-{p.id}",
            f"response_queues[{p.id}]",
            shape="cylinder",
            style="filled",
            fillcolor="#dbeafe",
        )
        g.edge("acceptor", p.name, label="new socket")
        g.edge("clients", p.name, label="requests / responses", dir="both", style="dashed")
        g.edge(p.name, "requests", label="Request")
        g.edge(f"responses-{p.id}", p.name, label="Response")
    handler_names = [KafkaRequestHandler(i, server.request_channel, None).name for i in range(m)]
    with g.subgraph(name="cluster_handlers") as h:
        h.attr(label=f"KafkaRequestHandlerPool: num.io.threads = {m}", style="rounded", fontname=FONT)
        for name in handler_names:
            h.node(
                name, f"{name}\nKafkaApis.handle", shape="box", style="rounded,filled", fillcolor="#f3e8ff"
            )
    for name in handler_names:
        g.edge("requests", name)
        for p in server.processors:
            g.edge(name, f"responses-{p.id}", style="invis" if name != handler_names[0] else "solid")
    return g


def state_machine(name: str, valid_previous: dict) -> graphviz.Digraph:
    """A state machine drawn from its ``validPreviousStates`` table: an edge for every legal transition."""
    g = _graph(name)
    for target, sources in valid_previous.items():
        g.node(target.value, target.value, shape="box", style="rounded")
        for source in sorted(sources, key=lambda s: s.value):
            g.edge(source.value, target.value)
    return g


def partition_state_machine() -> graphviz.Digraph:
    from kafka_lite.controller.state_machines import PARTITION_VALID_PREVIOUS_STATES

    return state_machine("partition_state_machine", PARTITION_VALID_PREVIOUS_STATES)


def replica_state_machine() -> graphviz.Digraph:
    from kafka_lite.controller.state_machines import REPLICA_VALID_PREVIOUS_STATES

    return state_machine("replica_state_machine", REPLICA_VALID_PREVIOUS_STATES)


DIAGRAMS: dict[str, Callable[[], graphviz.Digraph]] = {
    "partition_state_machine": partition_state_machine,
    "replica_state_machine": replica_state_machine,
    "record_batch_v2": record_batch_v2,
    "segment_with_index": segment_with_index,
    "socket_server_threads": lambda: socket_server_threads(3, 4),
}
