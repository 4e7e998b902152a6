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
        """Play the handler: answer ``request`` through the channel, as KafkaApis would."""
        payload = encode_response(
            ApiKeys.API_VERSIONS, 0, request.header.correlation_id, {"error_code": 0, "api_versions": []}
        )
        request.api_local_complete_ns = request.dequeue_ns
        self.channel.send_response(Response(0, request, ResponseAction.SEND, [payload]))
        self.processor.process_new_responses()
        self.poll_until(lambda: self.processor.selector.completed_sends, "the response to be written")
        self.processor.process_completed_sends()

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
    assert request is not None, "the request should be on the request channel"
    assert (request.header.api_key, request.header.api_version, request.header.correlation_id) == (18, 0, 41)
    assert request.header.client_id == "lab4"
    assert request.processor == 0 and request.connection_id == rig.connection_id
    assert request.body == {} and not request.unsupported_version
    assert request.start_ns > 0, "start_ns: when the processor received it (metrics start there)"
    assert request.size == len(encode_request(RequestHeader(18, 0, 41, "lab4"), {}))


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_the_connection_is_muted_while_its_request_is_in_flight(rig):
    rig.send(1)
    rig.send(2)  # pipelined: already in the socket buffer
    rig.receive_one()
    assert rig.processor.selector.channels[rig.connection_id].muted, "mute after handing the request over"
    for _ in range(5):
        rig.processor.selector.poll(20)
        assert not rig.processor.selector.completed_receives, "a muted connection must not be read"
    assert rig.channel.request_queue.qsize() == 1


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
    assert rig.connection_id not in rig.processor.selector.channels, "the connection should be closed"
    handed = rig.channel.receive_request(0)
    assert handed is not None and handed.connection_id == other_id, (
        "the bad frame closes its own connection only: the other connection's request, after it in the "
        "same poll, is handed over as usual"
    )
    assert rig.channel.request_queue.qsize() == 0, "nothing of the bad frame is handed over"
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].exc_info is None, "one warning line, no traceback"
    assert rig.quotas.get(rig.ip) == 1, (
        "closing gives the address's connection slot back (the other keeps its)"
    )
    assert rig.client.recv(1) == b""


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_api_versions_at_an_unknown_version_is_handed_over_marked(rig):
    payload = RequestHeader(ApiKeys.API_VERSIONS, 3, 5, "lab4").encode() + b"\x00\x00\x00"
    rig.client.sendall(struct.pack(">i", len(payload)) + payload)
    rig.receive_one()
    request = rig.channel.receive_request(1000)
    assert request is not None, "ApiVersions is answered at any version (KIP-35): hand it over"
    assert request.unsupported_version and request.body == {} and request.header.api_version == 3
    assert rig.processor.selector.channels[rig.connection_id].muted


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_completed_response_unmutes_and_records_metrics(rig):
    rig.send(7)
    rig.receive_one()
    request = rig.channel.receive_request(1000)
    rig.respond(request)
    assert not rig.processor.selector.channels[rig.connection_id].muted, "unmute once the response is written"
    assert rig.read_response() == 7
    (row,) = rig.metrics.snapshot()
    assert (row["api"], row["version"], row["requests"]) == ("ApiVersions", 0, 1)
    assert row["bytes_out_per_sec"] > 0, "the response's size is recorded"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_pipelined_requests_are_answered_one_at_a_time_in_order(rig):
    for i in (1, 2, 3):
        rig.send(i)
    answered = []
    for _ in range(3):
        rig.receive_one()
        request = rig.channel.receive_request(1000)
        assert rig.channel.request_queue.qsize() == 0, "never two requests of one connection in flight"
        rig.respond(request)
        answered.append(rig.read_response())
    assert answered == [1, 2, 3]
