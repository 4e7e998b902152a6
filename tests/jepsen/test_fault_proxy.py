"""The fault proxy's holds: requests delayed in the network, in front of a listener that answers
each request frame (a stand-in for a broker: the proxy reads only the frames' headers)."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from kafka_lite.jepsen.fault_proxy import CLIENTS, FRAME_HEADER, FaultProxy
from kafka_lite.utils.ports import free_ports
from tests.support.wire import WireClient

pytestmark = pytest.mark.unit

PRODUCE, METADATA = 0, 3
WAIT_S = 10.0


def request(api_key: int, correlation_id: int, client_id: str = "a-client") -> bytes:
    name = client_id.encode()
    frame = FRAME_HEADER.pack(api_key, 3, correlation_id, len(name)) + name
    return struct.pack(">i", len(frame)) + frame


def read_frame(sock: socket.socket) -> bytes:
    return WireClient.over(sock).read_frame()


class Listener:
    """Reads request frames on every connection, records their correlation ids in arrival order,
    and answers each with a frame holding its correlation id; records each connection's end."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.received: list[int] = []
        self.answered: list[int] = []  # the requests whose answer went out before the connection ended
        self.ended = 0
        self.changed = threading.Condition()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while True:
                try:
                    frame = read_frame(conn)
                except (EOFError, OSError):
                    break
                correlation_id = FRAME_HEADER.unpack_from(frame)[2]
                with self.changed:
                    self.received.append(correlation_id)
                    self.changed.notify_all()
                try:
                    conn.sendall(struct.pack(">ii", 4, correlation_id))
                except OSError:
                    break
                with self.changed:
                    self.answered.append(correlation_id)
        with self.changed:
            self.ended += 1
            self.changed.notify_all()

    def wait_for(self, condition, what: str) -> None:
        with self.changed:
            assert self.changed.wait_for(condition, WAIT_S), f"timed out waiting for {what}: {self.received}"


@pytest.fixture
def proxied():
    listener, proxy = Listener(), FaultProxy()
    port = free_ports(1)
    proxy.listen(port, listener.port, 0)
    try:
        yield listener, proxy, port
    finally:
        proxy.close()
        listener.server.close()


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)


def test_a_held_request_and_those_behind_it_wait_for_the_release(proxied):
    listener, proxy, port = proxied
    seen = []
    hold = proxy.hold(
        lambda source, target, api_key, frame: seen.append((source, target)) or api_key == PRODUCE
    )
    assert not hold.held.is_set()
    held, other = connect(port), connect(port)
    held.sendall(request(METADATA, 1) + request(PRODUCE, 2) + request(METADATA, 3))
    assert hold.held.wait(WAIT_S)
    listener.wait_for(lambda: 1 in listener.received, "the request before the held one")
    other.sendall(request(METADATA, 10))  # another connection is not held
    listener.wait_for(lambda: 10 in listener.received, "the other connection's request")
    assert listener.received == [1, 10], "the Produce, and the request behind it, went up while held"
    assert (CLIENTS, 0) in seen
    hold.release()
    listener.wait_for(lambda: len(listener.received) == 4, "the held requests")
    assert listener.received == [1, 10, 2, 3]
    assert [struct.unpack(">i", read_frame(held))[0] for _ in range(3)] == [1, 2, 3], "answered in order"
    held.sendall(request(PRODUCE, 4))  # released: the hold holds nothing more
    listener.wait_for(lambda: 4 in listener.received, "a Produce after the release")
    held.close()
    other.close()


def test_a_held_request_reaches_the_listener_after_its_sender_has_gone(proxied):
    listener, proxy, port = proxied
    hold = proxy.hold(lambda source, target, api_key, frame: api_key == PRODUCE)
    sender = connect(port)
    sender.sendall(request(PRODUCE, 7))
    assert hold.held.wait(WAIT_S)
    sender.close()  # as a producer does when its request times out
    hold.release()
    listener.wait_for(lambda: listener.received == [7], "the held Produce")
    listener.wait_for(lambda: listener.ended == 1, "the connection's end")
    assert listener.answered == [7], "the connection ended before the held Produce was answered"


def test_a_tap_records_the_requests_it_picks_and_their_answers_with_when_a_hold_let_them_go(proxied):
    listener, proxy, port = proxied
    tap = proxy.tap(lambda source, target, api_key, frame: api_key == PRODUCE)
    hold = proxy.hold(lambda source, target, api_key, frame: FRAME_HEADER.unpack_from(frame)[2] == 2)
    sender = connect(port)
    sender.sendall(request(METADATA, 1) + request(PRODUCE, 2) + request(PRODUCE, 3))
    assert hold.held.wait(WAIT_S)
    released_ns = time.monotonic_ns()
    hold.release()
    listener.wait_for(lambda: listener.received == [1, 2, 3], "every request")
    assert [struct.unpack(">i", read_frame(sender))[0] for _ in range(3)] == [1, 2, 3]
    tap.close()
    sender.sendall(request(PRODUCE, 4))  # after the tap's close: not recorded
    listener.wait_for(lambda: 4 in listener.received, "the request after the close")
    sender.close()
    assert [FRAME_HEADER.unpack_from(e.request)[2] for e in tap.exchanges] == [2, 3], "Produce only"
    held, after = tap.exchanges
    assert held.received_ns < released_ns < held.forwarded_ns, "held: it went on after the release"
    assert (held.source, held.target) == (CLIENTS, 0)
    assert [struct.unpack(">i", e.answer)[0] for e in tap.exchanges] == [2, 3]
    # the connection's next request is read once the held one has gone on (TCP keeps their order)
    assert held.received_ns < held.forwarded_ns <= after.received_ns <= after.forwarded_ns
    assert held.forwarded_ns <= held.answered_ns <= after.answered_ns
