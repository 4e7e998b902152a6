"""A scripted broker for client tests: a small socket server on loopback that reads real Kafka
requests and answers each as its test says, so a client's network code runs against a real peer.

A subclass says what to answer (``answer``); this class owns the listener, a thread per connection,
the framing (a 4-byte size, then the request) and a clean close.
"""

from __future__ import annotations

import socket
import struct
import threading

from kafka_lite.common.protocol.requests import RequestHeader, parse_request

CLOSE_CONNECTION = "close connection"  # an answer: drop the connection instead of responding


class ScriptedServer:
    """Accepts connections and answers every request with ``answer(header, body)``: the response's
    bytes (without the size prefix), None for no response, or CLOSE_CONNECTION."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def answer(self, header: RequestHeader, body: dict) -> bytes | str | None:
        raise NotImplementedError

    def write_response(self, conn: socket.socket, frame: bytes) -> None:
        """Send one size-prefixed response; a subclass may send it in pieces."""
        conn.sendall(frame)

    def metadata_body(self, topic: str, partitions: int = 2) -> dict:
        """A Metadata v1 body: a one-broker cluster (this server, as node 0) leading every partition."""
        partition = {"partition_error_code": 0, "leader": 0, "replicas": [0], "isr": [0]}
        return {
            "brokers": [{"node_id": 0, "host": "127.0.0.1", "port": self.port, "rack": None}],
            "controller_id": 0,
            "topic_metadata": [{"topic_error_code": 0, "topic": topic, "is_internal": False,
                                "partition_metadata": [{**partition, "partition_id": p} for p in range(partitions)]}],
        }  # fmt: skip

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                while (size := read_exactly(conn, 4)) is not None:
                    request = read_exactly(conn, struct.unpack(">i", size)[0])
                    if request is None:
                        return
                    payload = self.answer(*parse_request(request))
                    if payload == CLOSE_CONNECTION:
                        return  # the client must fail the request it is waiting on
                    if payload is not None:
                        self.write_response(conn, struct.pack(">i", len(payload)) + payload)
            except OSError:
                pass  # the client closed its end (each test ends by closing its client)

    def close(self) -> None:
        # Closing alone leaves the accepting thread blocked in accept() on Linux; shutdown wakes it.
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self._thread.join(timeout=5)
        assert not self._thread.is_alive(), "the scripted server's accept loop did not stop"


def read_exactly(sock: socket.socket, n: int) -> bytes | None:
    """``n`` bytes from ``sock``; None at end of stream."""
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)
