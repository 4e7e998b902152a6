"""Lab 4 graded tests: a broker Processor stepped by hand over a real loopback connection.

No threads run: each test calls the processor's steps itself (``selector.poll``, then
``process_completed_receives`` / ``process_new_responses`` / ``process_completed_sends``), exactly the
order of ``Processor.run``. On the untouched starter every test fails with the lab's
NotImplementedError.
"""

from __future__ import annotations

import logging
import socket
import struct
import time

import pytest

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, encode_response, parse_response
from kafka_lite.network.request_channel import RequestChannel, Response, ResponseAction
from kafka_lite.network.request_metrics import RequestMetrics
from kafka_lite.network.socket_server import ConnectionQuotas, Processor

pytestmark = [pytest.mark.lab(4)]
DEADLINE_S = 5


class Rig:
    """One processor, one client connection to it, and the request channel between them."""

    def __init__(self) -> None:
        self.channel = RequestChannel(num_processors=1, queue_size=10)
        self.quotas = ConnectionQuotas(default_max=100)
        self.metrics = RequestMetrics()
        self.processor = Processor(0, self.channel, self.quotas, self.metrics, 1024, -1)
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        self.client = socket.create_connection(listener.getsockname(), timeout=DEADLINE_S)
        server_side, (ip, _) = listener.accept()
        listener.close()
        self.quotas.inc(ip)  # what the acceptor does before handing a socket over
        self.ip = ip
        self.processor.accept(server_side)
        self.processor.configure_new_connections()
        (self.connection_id,) = self.processor.selector.channels

    def another_client(self) -> tuple[socket.socket, str]:
        """A second client connection to the same processor, and its connection id."""
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = socket.create_connection(listener.getsockname(), timeout=DEADLINE_S)
        server_side, (ip, _) = listener.accept()
        listener.close()
        self.quotas.inc(ip)
        before = set(self.processor.selector.channels)
        self.processor.accept(server_side)
        self.processor.configure_new_connections()
        (connection_id,) = set(self.processor.selector.channels) - before
        return client, connection_id

    def send(self, correlation_id: int, api=ApiKeys.API_VERSIONS, version=0, body=None) -> None:
        payload = encode_request(RequestHeader(api, version, correlation_id, "lab4"), body or {})
        self.client.sendall(struct.pack(">i", len(payload)) + payload)

    def poll_until(self, condition, what: str) -> None:
        """Poll the processor's selector (nothing else) until ``condition()``, or fail after a deadline."""
        deadline = time.monotonic() + DEADLINE_S
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}")
            self.processor.selector.poll(20)

    def receive_one(self) -> None:
        self.poll_until(lambda: self.processor.selector.completed_receives, "a completed receive")
        self.processor.process_completed_receives()

    def respond(self, request) -> None:
        """Play the handler: answer ``request`` through the channel, as KafkaApis would; the processor
        writes the response and then deals with the completed send."""
        self.write_response(request)
        self.processor.process_completed_sends()

    def write_response(self, request) -> None:
        """Answer ``request`` and poll until the processor has written the response, before it deals
        with the completed send."""
        payload = encode_response(
            ApiKeys.API_VERSIONS, 0, request.header.correlation_id, {"error_code": 0, "api_versions": []}
        )
        request.api_local_complete_ns = request.dequeue_ns
        self.channel.send_response(Response(0, request, ResponseAction.SEND, [payload]))
        self.processor.process_new_responses()
        self.poll_until(lambda: self.processor.selector.completed_sends, "the response to be written")

    def read_response(self) -> int:
        size = struct.unpack(">i", self._recv(4))[0]
        return parse_response(ApiKeys.API_VERSIONS, 0, self._recv(size))[0]

    def _recv(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.client.recv(n - len(data))
            if not chunk:
                raise EOFError("closed")
            data += chunk
        return data

    def close(self) -> None:
        self.client.close()
        self.processor.selector.close_all()


@pytest.fixture
def rig():
    r = Rig()
    yield r
    r.close()


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_a_complete_request_is_parsed_and_handed_over(rig):
    rig.send(41)
    rig.receive_one()
    request = rig.channel.receive_request(1000)
    assert request is not None, (
        "a whole ApiVersions request (correlation id 41) was read, and after process_completed_receives "
        "the request channel holds no request"
    )
    header = request.header
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        18,
        0,
        41,
        "lab4",
    ), f"the request sent was ApiVersions v0, correlation id 41, client lab4; the one handed over is {header}"
    assert request.processor == 0 and request.connection_id == rig.connection_id, (
        f"the request handed over names processor {request.processor} and connection "
        f"{request.connection_id}; it came to processor 0 on {rig.connection_id}"
    )
    assert request.body == {} and not request.unsupported_version
    assert request.start_ns > 0, "the request handed over has no arrival time (start_ns)"
    assert request.size == len(encode_request(RequestHeader(18, 0, 41, "lab4"), {}))


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_the_connection_is_muted_while_its_request_is_in_flight(rig):
    rig.send(1)
    rig.send(2)  # pipelined: already in the socket buffer
    rig.receive_one()
    for _ in range(5):
        rig.processor.selector.poll(20)
        assert not rig.processor.selector.completed_receives, (
            "two requests were pipelined on one connection; while the first is with the handlers, "
            "unanswered, the processor's selector read the second"
        )
    in_flight = rig.channel.request_queue.qsize()
    assert in_flight == 1, (
        f"two requests were pipelined on one connection, and {in_flight} are with the handlers at once"
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_a_frame_that_does_not_parse_closes_the_connection_with_one_warning(rig, caplog):
    other, other_id = rig.another_client()
    payload = struct.pack(">hhi", 1000, 0, 9) + b"\x00\x00"  # api key 1000 does not exist
    rig.client.sendall(struct.pack(">i", len(payload)) + payload)
    good = encode_request(RequestHeader(ApiKeys.API_VERSIONS, 0, 7, "lab4"), {})
    other.sendall(struct.pack(">i", len(good)) + good)
    receives = rig.processor.selector.completed_receives
    rig.poll_until(lambda: len(receives) == 2, "a completed receive on each connection")
    # The bad frame first, as in any poll where it came first: the good one after it must still go.
    receives.sort(key=lambda r: r.source != rig.connection_id)
    with caplog.at_level(logging.WARNING):
        rig.processor.process_completed_receives()
    other.close()
    assert rig.connection_id not in rig.processor.selector.channels, (
        "a frame with api key 1000 (no such API) arrived, and its connection is still open"
    )
    handed = rig.channel.receive_request(0)
    assert handed is not None and handed.connection_id == other_id, (
        "the bad frame closes its own connection only: the other connection's request, after it in the "
        "same poll, is handed over as usual"
    )
    assert rig.channel.request_queue.qsize() == 0, "a request was handed over for the bad frame"
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].exc_info is None, (
        f"the bad frame logged {len(warnings)} warning line(s)"
        + (" with a traceback" if any(r.exc_info for r in warnings) else "")
        + ": "
        + "; ".join(r.getMessage() for r in warnings)
    )
    assert rig.quotas.get(rig.ip) == 1, (
        f"after the bad frame's connection went, its address holds {rig.quotas.get(rig.ip)} connection "
        "slots; one connection (the other client's) is open"
    )
    assert rig.client.recv(1) == b""


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_api_versions_at_an_unknown_version_is_handed_over_marked(rig):
    payload = RequestHeader(ApiKeys.API_VERSIONS, 3, 5, "lab4").encode() + b"\x00\x00\x00"
    rig.client.sendall(struct.pack(">i", len(payload)) + payload)
    rig.receive_one()
    request = rig.channel.receive_request(1000)
    assert request is not None, (
        "an ApiVersions request at version 3 (one the broker does not speak) was not handed over"
        + ("; its connection was closed" if rig.connection_id not in rig.processor.selector.channels else "")
    )
    assert request.unsupported_version and request.body == {} and request.header.api_version == 3
    assert rig.processor.selector.channels[rig.connection_id].muted, (
        "the ApiVersions request is with the handlers, and its connection is not muted"
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_completed_response_unmutes_and_records_metrics(rig):
    rig.send(7)
    rig.receive_one()
    request = rig.channel.receive_request(1000)
    rig.respond(request)
    assert not rig.processor.selector.channels[rig.connection_id].muted, (
        "the response was written, and its connection is still muted: the client's next request will "
        "never be read"
    )
    assert rig.read_response() == 7
    rows = rig.metrics.snapshot()
    assert len(rows) == 1, f"one request was answered; the request metrics hold {len(rows)} rows: {rows}"
    (row,) = rows
    assert (row["api"], row["version"], row["requests"]) == ("ApiVersions", 0, 1), f"request metrics: {row}"
    assert row["bytes_out_per_sec"] > 0, f"a response was written, and the metrics show no bytes out: {row}"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_response_for_a_connection_gone_is_dropped(rig):
    rig.send(8)
    rig.receive_one()
    request = rig.channel.receive_request(1000)
    rig.write_response(request)
    rig.processor._close(rig.connection_id)  # the connection goes before its completed send is dealt with
    try:
        rig.processor.process_completed_sends()
    except Exception as e:
        pytest.fail(
            "a response was written and its connection then closed; process_completed_sends raised "
            f"{type(e).__name__}: {e}"
        )
    assert rig.metrics.snapshot() == [], (
        f"the response's connection had closed; the request metrics recorded {rig.metrics.snapshot()}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_pipelined_requests_are_answered_one_at_a_time_in_order(rig):
    for i in (1, 2, 3):
        rig.send(i)
    answered = []
    for _ in range(3):
        rig.receive_one()
        request = rig.channel.receive_request(1000)
        assert rig.channel.request_queue.qsize() == 0, (
            "three requests were pipelined on one connection, and two are with the handlers at once"
        )
        rig.respond(request)
        answered.append(rig.read_response())
    assert answered == [1, 2, 3], f"requests 1, 2, 3 were answered as {answered}"
