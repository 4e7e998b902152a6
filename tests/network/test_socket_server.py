"""The socket server on its own: acceptor, processors, request channel, with a stand-in handler pool.

Real sockets on loopback; each test waits on a socket read with a deadline, never on a sleep.
"""

from __future__ import annotations

import logging
import random
import socket
import struct
import threading

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, encode_response, parse_response
from kafka_lite.network.request_channel import Response, ResponseAction
from kafka_lite.network.socket_server import SocketServer
from tests.support.waiting import wait_until

DEADLINE_S = 10


class EchoHandlers:
    """Answers every request with an ApiVersions response naming its own correlation id; sleeps a
    random few ms first (on a condition that is never signalled), so that several handler threads
    finish out of order."""

    def __init__(self, server: SocketServer, threads: int = 4) -> None:
        self.server = server
        self.seen = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]
        for t in self._threads:
            t.start()

    def _run(self) -> None:
        channel = self.server.request_channel
        while not self._stop.is_set():
            request = channel.receive_request(100)
            if request is None:
                continue
            self.seen.append(request)
            self._stop.wait(random.uniform(0, 0.01))  # jitter: later requests may finish first
            if request.header.api_key == ApiKeys.PRODUCE and request.body["acks"] == 0:
                channel.no_operation(request)
                continue
            payload = encode_response(
                ApiKeys.API_VERSIONS, 0, request.header.correlation_id, {"error_code": 0, "api_versions": []}
            )
            request.api_local_complete_ns = request.dequeue_ns
            channel.send_response(Response(request.processor, request, ResponseAction.SEND, [payload]))

    def stop(self) -> None:
        self._stop.set()


@pytest.fixture
def handlers():
    s = SocketServer(port=0, num_network_threads=2, socket_request_max_bytes=4096, max_connections_per_ip=5)
    s.startup()
    h = EchoHandlers(s)
    yield h
    h.stop()
    s.shutdown()


@pytest.fixture
def server(handlers):
    return handlers.server


def connect(server: SocketServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE_S)
    return sock


def frame(correlation_id: int, api=ApiKeys.API_VERSIONS, version=0, body=None) -> bytes:
    payload = encode_request(RequestHeader(api, version, correlation_id, "test"), body or {})
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", recv_exactly(sock, 4))[0]
    return recv_exactly(sock, size)


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return data


def assert_closed_by_server(sock: socket.socket) -> None:
    try:
        assert sock.recv(1) == b"", "the server should have closed the connection"
    except ConnectionResetError:
        pass


def test_pipelined_requests_are_answered_in_order(server):
    """Twenty requests written at once, handled by four threads with random delays: the processor
    mutes the connection while one is in flight, so the responses come back in request order."""
    sock = connect(server)
    sock.sendall(b"".join(frame(i) for i in range(20)))
    order = [parse_response(ApiKeys.API_VERSIONS, 0, read_frame(sock))[0] for _ in range(20)]
    assert order == list(range(20))


def test_acks_zero_gets_no_response_and_the_connection_keeps_working(server):
    sock = connect(server)
    produce = {"acks": 0, "timeout": 1000, "topic_data": []}
    sock.sendall(frame(1, ApiKeys.PRODUCE, 2, produce) + frame(2))
    correlation_id, _ = parse_response(ApiKeys.API_VERSIONS, 0, read_frame(sock))
    assert correlation_id == 2  # the acks=0 request was unmuted past without a response


def test_oversized_size_prefix_closes_the_connection(server, caplog):
    sock = connect(server)
    with caplog.at_level(logging.WARNING, logger="kafka_lite.network"):
        sock.sendall(struct.pack(">i", 4097) + b"x" * 10)
        assert_closed_by_server(sock)
    assert any("larger than 4096" in r.getMessage() for r in caplog.records)
    # the server still serves others
    other = connect(server)
    other.sendall(frame(7))
    assert parse_response(ApiKeys.API_VERSIONS, 0, read_frame(other))[0] == 7


@pytest.mark.parametrize(
    "payload, reason",
    [
        (struct.pack(">hhi", 99, 0, 1) + b"\x00\x00", "unknown api key"),
        (struct.pack(">hhi", 0, 9, 1) + b"\x00\x00", "not supported"),
        (b"\x00\x03", "need"),
        (struct.pack(">hhi", 3, 1, 1) + b"\x00\x00" + struct.pack(">i", 2**30), "array"),
    ],
    ids=["unknown-key", "unsupported-version", "truncated-header", "huge-array-length"],
)
def test_a_malformed_request_closes_its_connection_with_one_warning(server, caplog, payload, reason):
    sock = connect(server)
    with caplog.at_level(logging.WARNING):
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        assert_closed_by_server(sock)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert warnings[0].exc_info is None  # a line, not a traceback
    assert "invalid request" in warnings[0].getMessage()


def test_api_versions_at_an_unsupported_version_is_passed_on_marked(handlers):
    """KIP-35: ApiVersions v3 is not ours, but it must be answered (with the versions we do speak),
    so the processor hands it over with an empty body and a mark instead of closing."""
    sock = connect(handlers.server)
    f = frame(5, ApiKeys.API_VERSIONS, 0)
    sock.sendall(f[:6] + struct.pack(">h", 3) + f[8:])
    read_frame(sock)
    (marked,) = [r for r in handlers.seen if r.header.correlation_id == 5]
    assert marked.unsupported_version and marked.body == {} and marked.header.api_version == 3


def test_max_connections_per_ip(server):
    kept = [connect(server) for _ in range(5)]
    for s in kept:  # all five are served
        s.sendall(frame(1))
        read_frame(s)
    extra = connect(server)
    assert_closed_by_server(extra)
    kept[0].close()
    # the count drops once the processor sees the close; a new connection is then accepted
    for _ in range(50):
        again = connect(server)
        again.sendall(frame(2))
        try:
            read_frame(again)
            break
        except (EOFError, ConnectionResetError):
            continue
    else:
        pytest.fail("a connection slot was not freed after a client closed")


def test_request_metrics_per_api_and_version(server):
    sock = connect(server)
    for i in range(3):
        sock.sendall(frame(i, ApiKeys.API_VERSIONS, 1))
        read_frame(sock)

    # the processor records a request once its response is written: possibly after we read it
    def row():
        rows = {(r["api"], r["version"]): r for r in server.metrics.snapshot()}
        r = rows.get(("ApiVersions", 1))
        return r if r and r["requests"] == 3 else None

    row = wait_until(row, what="three ApiVersions v1 requests in the metrics")
    assert row["total_time_ms_max"] >= row["request_queue_time_ms_max"] >= 0
    assert row["bytes_in_per_sec"] > 0 and row["bytes_out_per_sec"] > 0


def test_idle_connections_are_closed_after_connections_max_idle_ms():
    s = SocketServer(port=0, num_network_threads=1, connections_max_idle_ms=200)
    s.startup()
    handlers = EchoHandlers(s)
    try:
        idle = connect(s)
        busy = connect(s)
        idle.sendall(frame(1))
        read_frame(idle)

        def idle_closed():
            busy.sendall(frame(2))  # keeps the other connection active meanwhile
            read_frame(busy)
            return s.connection_count() == 1

        wait_until(idle_closed, what="the idle connection to be closed")
        assert_closed_by_server(idle)
    finally:
        handlers.stop()
        s.shutdown()


def test_a_full_request_queue_stops_the_processors_reading(handlers):
    """queued.max.requests is back-pressure: with no handler taking requests, a processor blocks
    handing over the next one, so the rest stay unread in the sockets."""
    handlers.stop()  # nobody takes requests any more
    server = SocketServer(port=0, num_network_threads=1, queued_max_requests=2)
    server.startup()
    try:
        clients = [connect(server) for _ in range(5)]
        for i, c in enumerate(clients):
            c.sendall(frame(i))
        channel = server.request_channel
        wait_until(lambda: channel.request_queue_size() == 2, what="the request queue to fill")
        taken = []
        for _ in range(5):  # each request taken lets one more in, never two
            assert channel.request_queue_size() <= 2, "a request queued past queued.max.requests"
            taken.append(channel.receive_request(1000))
        assert sorted(r.header.correlation_id for r in taken) == [0, 1, 2, 3, 4], (
            "all read once there was room"
        )
    finally:
        server.shutdown()
