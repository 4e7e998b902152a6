"""The client selector against real sockets on loopback: connects, sends in pieces, frames arriving
in parts, muting, peers that close, hostile size prefixes, idle expiry and wakeups."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from kafka_lite.common.errors import SaslAuthenticationException
from kafka_lite.common.time import MockTime
from kafka_lite.network.channel_builders import SaslChannelBuilder
from kafka_lite.network.selector import Selector
from kafka_lite.network.transfer import NetworkSend

pytestmark = pytest.mark.unit
DEADLINE_S = 10


def poll_until(selector: Selector, condition, what: str):
    """Poll until ``condition(selector)`` holds, with a deadline (never a bare sleep)."""
    end = time.monotonic() + DEADLINE_S
    seen = {"sends": [], "receives": [], "connected": [], "disconnected": []}
    while time.monotonic() < end:
        selector.poll(50)
        seen["sends"] += selector.completed_sends
        seen["receives"] += selector.completed_receives
        seen["connected"] += selector.connected
        seen["disconnected"] += selector.disconnected
        if condition(seen):
            return seen
    raise AssertionError(f"timed out waiting for {what}: {seen}")


@pytest.fixture
def server():
    listener = socket.create_server(("127.0.0.1", 0))
    yield listener
    listener.close()


@pytest.fixture
def selector():
    s = Selector(max_receive_size=1 << 20)
    yield s
    s.close_all()


def _connect(selector, server) -> socket.socket:
    selector.connect("node-1", server.getsockname())
    peer, _ = server.accept()
    poll_until(selector, lambda seen: "node-1" in seen["connected"], "the connect")
    return peer


def _read_frame(peer: socket.socket) -> bytes:
    peer.settimeout(DEADLINE_S)
    size = struct.unpack(">i", _read_exactly(peer, 4))[0]
    return _read_exactly(peer, size)


def _read_exactly(peer: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = peer.recv(n - len(data))
        assert chunk, "peer closed early"
        data += chunk
    return bytes(data)


def test_a_large_send_goes_out_in_pieces_and_arrives_whole(selector, server):
    peer = _connect(selector, server)
    payload = bytes(range(256)) * 32768  # 8 MiB: more than the socket buffers hold at once
    selector.send(NetworkSend("node-1", payload))
    received = {}
    reader = threading.Thread(target=lambda: received.update(frame=_read_frame(peer)))
    reader.start()
    seen = poll_until(selector, lambda seen: seen["sends"], "the send to complete")
    reader.join(DEADLINE_S)
    assert received["frame"] == payload
    assert seen["sends"][0].completed()
    with pytest.raises(RuntimeError, match="no connection"):
        selector.send(NetworkSend("node-9", b"x"))


def test_a_frame_arriving_in_two_reads_completes_once(selector, server):
    peer = _connect(selector, server)
    frame = struct.pack(">i", 10) + b"0123456789"
    peer.sendall(frame[:7])  # the size and three bytes of payload
    selector.poll(100)
    assert selector.completed_receives == []
    peer.sendall(frame[7:])
    seen = poll_until(selector, lambda seen: seen["receives"], "the rest of the frame")
    assert [bytes(r.payload()) for r in seen["receives"]] == [b"0123456789"]


def test_a_muted_channel_reads_nothing_until_unmuted(selector, server):
    peer = _connect(selector, server)
    selector.mute("node-1")
    peer.sendall(struct.pack(">i", 3) + b"abc")
    for _ in range(5):
        selector.poll(20)
        assert selector.completed_receives == []
    selector.unmute("node-1")
    seen = poll_until(selector, lambda seen: seen["receives"], "the receive after unmute")
    assert bytes(seen["receives"][0].payload()) == b"abc"


def test_a_peer_that_closes_is_disconnected(selector, server):
    peer = _connect(selector, server)
    peer.close()
    poll_until(selector, lambda seen: "node-1" in seen["disconnected"], "the disconnect")
    assert "node-1" not in selector.channels


@pytest.mark.parametrize("size", [-5, 1 << 21])
def test_a_hostile_size_prefix_closes_the_connection_before_allocating(selector, server, size, caplog):
    peer = _connect(selector, server)
    peer.sendall(struct.pack(">i", size))
    poll_until(
        selector, lambda seen: "node-1" in seen["disconnected"], "the bad frame to close the connection"
    )
    assert any("Invalid receive" in r.getMessage() for r in caplog.records)


def test_a_refused_connect_is_a_disconnect():
    closed = socket.create_server(("127.0.0.1", 0))
    address = closed.getsockname()
    closed.close()  # nothing listens there now
    selector = Selector()
    try:
        selector.connect("gone", address)
        poll_until(selector, lambda seen: "gone" in seen["disconnected"], "the refused connect")
    finally:
        selector.close_all()


def test_a_peer_that_stays_down_is_warned_of_once_and_its_return_once(caplog):
    """A client retries a dead peer every reconnect.backoff.ms: one warning when it cannot connect,
    none for the retries, one when it connects again."""
    listener = socket.create_server(("127.0.0.1", 0))
    address = listener.getsockname()
    listener.close()  # nothing listens there now
    selector = Selector()
    caplog.set_level("DEBUG", logger="kafka_lite.network.selector")
    try:
        for _ in range(3):
            selector.connect("gone", address)
            poll_until(selector, lambda seen: "gone" in seen["disconnected"], "the refused connect")
        with socket.create_server(address) as back:
            selector.connect("gone", address)
            poll_until(selector, lambda seen: "gone" in seen["connected"], "the connect once it listens")
            back.accept()[0].close()
    finally:
        selector.close_all()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 2, warnings
    assert "could not be established" in warnings[0] and "established again" in warnings[1], warnings
    assert sum("could not be established" in r.getMessage() for r in caplog.records) == 3


def test_idle_connections_expire_on_mock_time(server):
    clock = MockTime()
    selector = Selector(connections_max_idle_ms=1000, time=clock)
    try:
        peer = _connect(selector, server)  # kept: a collected peer socket would close the connection
        clock.advance(999)
        selector.poll(0)
        assert "node-1" in selector.channels
        clock.advance(2)
        selector.poll(0)
        assert selector.disconnected == ["node-1"] and "node-1" not in selector.channels
        peer.close()
    finally:
        selector.close_all()


class Refusing:
    """An authenticator that refuses whatever the peer sends, as a wrong password is refused."""

    attempts = 0

    def authenticate(self, sock: socket.socket) -> None:
        Refusing.attempts += 1
        raise SaslAuthenticationException("Authentication failed: Invalid username or password")

    def has_pending_send(self) -> bool:
        return False

    def complete(self) -> bool:
        return False


def test_a_failed_authentication_closes_the_connection_after_the_delay_on_mock_time():
    """Kafka 2.1's connection.failed.authentication.delay.ms: the refused connection stays open,
    reading and writing nothing, until the delay has passed on the selector's clock."""
    clock = MockTime()
    selector = Selector(
        time=clock,
        channel_builder=SaslChannelBuilder(lambda _id, _sock: Refusing()),
        failed_authentication_delay_ms=100,
    )
    ours, peer = socket.socketpair()
    try:
        Refusing.attempts = 0
        selector.register("c", ours)
        peer.sendall(b"\x00\x00\x00\x01x")  # the peer's first frame, which the authenticator refuses
        poll_until(selector, lambda _seen: Refusing.attempts, "the authenticator to refuse the peer")
        assert Refusing.attempts == 1 and "c" in selector.channels and selector.disconnected == []
        clock.advance(99)
        selector.poll(0)
        assert "c" in selector.channels, "closed before the delay passed"
        clock.advance(1)
        selector.poll(0)
        assert selector.disconnected == ["c"] and "c" not in selector.channels
        assert isinstance(selector.authentication_failures["c"], SaslAuthenticationException)
    finally:
        selector.close_all()
        peer.close()


def test_idle_connections_close_oldest_first_one_a_poll(server):
    # Kafka's maybeCloseOldestConnection: each poll looks at the least recently active connection only.
    clock = MockTime()
    selector = Selector(connections_max_idle_ms=1000, time=clock)
    peers = []
    try:
        for node in ("old", "new"):
            selector.connect(node, server.getsockname())
            peers.append(server.accept()[0])
            poll_until(selector, lambda seen, node=node: node in seen["connected"], f"the connect of {node}")
            clock.advance(10)
        clock.advance(1000)  # both idle for longer than 1000 ms now
        selector.poll(0)
        assert selector.disconnected == ["old"] and set(selector.channels) == {"new"}
        selector.poll(0)
        assert selector.disconnected == ["new"] and not selector.channels
    finally:
        for peer in peers:
            peer.close()
        selector.close_all()


def test_wakeup_returns_a_blocked_poll(selector):
    threading.Timer(0.05, selector.wakeup).start()
    start = time.monotonic()
    selector.poll(30_000)
    assert time.monotonic() - start < DEADLINE_S


def test_many_wakeups_without_a_poll_never_block(selector):
    """Wakeups from producer threads while no poll drains them must return at once: as Java's
    selector, a wakeup already pending is not written again (one byte wakes the next poll)."""
    wakeups = 200_000  # far more one-byte sends than a socket buffer holds
    done = threading.Event()

    def wake_many() -> None:
        for _ in range(wakeups):
            selector.wakeup()
        done.set()

    threading.Thread(target=wake_many, daemon=True).start()
    assert done.wait(DEADLINE_S), f"{wakeups} wakeups without a poll blocked the waking thread"
    pending = selector._wake_r.recv(65536, socket.MSG_PEEK)
    assert pending == b"\x00", f"{len(pending)} wake-up bytes written for one pending wakeup"
    start = time.monotonic()
    selector.poll(30_000)  # returns at once, and drains every pending byte
    selector.poll(0)
    assert time.monotonic() - start < DEADLINE_S
    threading.Timer(0.05, selector.wakeup).start()  # and a later wakeup still wakes a blocked poll
    start = time.monotonic()
    selector.poll(30_000)
    assert time.monotonic() - start < DEADLINE_S


def test_network_send_tracks_partial_writes_on_a_small_socket_buffer():
    sender, receiver = socket.socketpair()
    sender.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    sender.setblocking(False)
    payload = b"k" * 200_000
    send = NetworkSend("peer", payload)
    writes, received = 0, bytearray()
    end = time.monotonic() + DEADLINE_S
    while not send.completed() and time.monotonic() < end:
        if send.write_to(sender):
            writes += 1
        received += receiver.recv(65536)
    while len(received) < 4 + len(payload):
        received += receiver.recv(65536)
    assert send.completed() and writes > 1, f"{writes} writes"
    assert bytes(received) == struct.pack(">i", len(payload)) + payload
    sender.close()
    receiver.close()
