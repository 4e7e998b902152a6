"""The broker's threads and queues, drawn from a real ``SocketServer`` and its configs' defaults.

No Kafka twin: a picture of ``kafka.network.SocketServer`` (one ``Acceptor``, N ``Processor``s), the
``RequestChannel`` and the ``KafkaRequestHandlerPool``, built from the objects the broker builds.
Book:    chapter 2, 2.3 (the server side: Acceptor, Processor, RequestChannel, handler threads)
"""

from __future__ import annotations

import graphviz

from kafka_lite.diagrams.style import new_graph
from kafka_lite.network.socket_server import SocketServer
from kafka_lite.server.kafka_config import CONFIG_DEF
from kafka_lite.server.kafka_request_handler import KafkaRequestHandler


def socket_server_threads(
    num_network_threads: int | None = None, num_io_threads: int | None = None
) -> graphviz.Digraph:
    """The broker's threads and queues (book 2.3), from a real ``SocketServer`` built with the
    defaults of ``num.network.threads`` and ``num.io.threads`` (not started: no socket is opened)."""

    n = num_network_threads or CONFIG_DEF.keys["num.network.threads"].default
    m = num_io_threads or CONFIG_DEF.keys["num.io.threads"].default
    queued = CONFIG_DEF.keys["queued.max.requests"].default
    server = SocketServer(port=0, num_network_threads=n, queued_max_requests=queued)
    # Top to bottom (clients, acceptor, processors, the queues, the handler pool), with the handler
    # threads and the response queues each drawn as one table, so the picture fits the docs' column.
    g = new_graph("socket_server_threads", rankdir="TB", fontsize=10, nodesep="0.25", ranksep="0.5")
    g.node("clients", "clients (one socket each)", shape="box3d")
    g.node("acceptor", "Acceptor\nkafka-socket-acceptor\n(accept, round-robin)",
           shape="box", style="rounded,filled", fillcolor="#fde68a")  # fmt: skip
    g.edge("clients", "acceptor", label="connect")
    with g.subgraph(name="processors") as row:
        row.attr(rank="same")
        for p in server.processors:
            row.node(p.name, f"Processor {p.id}\n{p.name}\n(own Selector; mutes a\nconnection while its\nrequest is in flight)",
                     shape="box", style="rounded,filled", fillcolor="#dcfce7")  # fmt: skip
    cells = "".join(
        f'<td port="r{p.id}" bgcolor="#dbeafe">response_queues[{p.id}]</td>' for p in server.processors
    )
    with g.subgraph(name="queues") as row:
        row.attr(rank="same")
        row.node("requests", f"RequestChannel.request_queue\n(one, bounded:\nqueued.max.requests = {queued})",
                 shape="cylinder", style="filled", fillcolor="#dbeafe")  # fmt: skip
        row.node("responses", f'<<table border="0" cellborder="1" cellspacing="4"><tr>{cells}</tr></table>>',
                 shape="plain")  # fmt: skip
    for p in server.processors:
        g.edge("acceptor", p.name, label="new socket" if p.id == 0 else "")
        g.edge("clients", p.name, dir="both", style="dashed", color="#6b7280",
               label="requests /\nresponses" if p.id == len(server.processors) - 1 else "")  # fmt: skip
        g.edge(p.name, "requests", label="Request" if p.id == 0 else "")
        g.edge(f"responses:r{p.id}:n", p.name, label="Response" if p.id == len(server.processors) - 1 else "")
    handler_names = [KafkaRequestHandler(i, server.request_channel, None).name for i in range(m)]
    rows = "".join(f'<tr><td bgcolor="#f3e8ff">{name}: KafkaApis.handle</td></tr>' for name in handler_names)
    g.node("handlers", f'<<table border="0" cellborder="1" cellspacing="3"><tr><td border="0">'
                       f"<b>KafkaRequestHandlerPool</b><br/>num.io.threads = {m}</td></tr>{rows}</table>>",
           shape="box", style="rounded")  # fmt: skip
    g.edge("requests", "handlers", label="one request\nat a time each")
    g.edge("handlers", "responses", label="Response to its\nprocessor's queue")
    return g
