"""Helpers for the producer's tests: a Cluster built by hand, and a proxy that loses a response."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable

from kafka_lite.clients.metadata import Cluster, Node, PartitionInfo
from kafka_lite.common.protocol.api_keys import ApiKeys


def node(node_id: int, port: int = 0) -> Node:
    return Node(node_id, "127.0.0.1", port or 9000 + node_id)


def cluster_of(leaders: dict[tuple[str, int], int | None], nodes: dict[int, Node] | None = None) -> Cluster:
    """A cluster whose partitions ``(topic, partition)`` are led by the given node ids (None: no leader)."""
    nodes = nodes or {i: node(i) for i in {n for n in leaders.values() if n is not None}}
    partitions = {
        tp: PartitionInfo(tp[0], tp[1], None if leader is None else nodes[leader], (), ())
        for tp, leader in leaders.items()
    }
    return Cluster(nodes, partitions)


class ResponseDroppingProxy:
    """A TCP proxy in front of one broker that loses the response to the first ProduceRequest: it lets
    the request through, waits for the broker's answer, and closes the client's connection instead of
    forwarding it. The broker has written the records; the client only sees a disconnect."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.target_port: Callable[[], int] | None = None  # the broker's port, asked per connection
        self.dropped = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                broker = socket.create_connection(("127.0.0.1", self.target_port()))
            except OSError:
                client.close()
                continue
            produce_ids: set[int] = set()
            threading.Thread(target=self._requests, args=(client, broker, produce_ids), daemon=True).start()
            threading.Thread(target=self._responses, args=(broker, client, produce_ids), daemon=True).start()

    def _requests(self, client: socket.socket, broker: socket.socket, produce_ids: set[int]) -> None:
        try:
            while (frame := _read_frame(client)) is not None:
                api_key, _, correlation_id = struct.unpack_from(">hhi", frame, 4)
                if api_key == ApiKeys.PRODUCE:
                    produce_ids.add(correlation_id)
                broker.sendall(frame)
        except OSError:
            pass
        _close(client, broker)

    def _responses(self, broker: socket.socket, client: socket.socket, produce_ids: set[int]) -> None:
        try:
            while (frame := _read_frame(broker)) is not None:
                (correlation_id,) = struct.unpack_from(">i", frame, 4)
                if correlation_id in produce_ids and not self.dropped.is_set():
                    self.dropped.set()
                    break  # the response is lost: the client's connection drops instead
                client.sendall(frame)
        except OSError:
            pass
        _close(client, broker)

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()


def _read_frame(sock: socket.socket) -> bytes | None:
    """One size-prefixed frame, prefix included; None at end of stream."""
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    body = _read_exactly(sock, struct.unpack(">i", head)[0])
    return None if body is None else head + body


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _close(*socks: socket.socket) -> None:
    for sock in socks:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
