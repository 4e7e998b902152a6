"""Lab 3 graded tests: NetworkReceive.read_from on real, non-blocking socket pairs.

Every test reads through ``NetworkReceive.read_from`` (directly, or through KafkaChannel and the
Selector), so on the untouched starter each fails with the lab's NotImplementedError. Stage 1's
tests need only ``_read_size`` (frames that end with their size prefix: nothing ready, an empty
payload, bad sizes, a close before any byte); stage 2's read a payload, so they need both methods.
"""

from __future__ import annotations

import socket
import struct

import pytest

from kafka_lite.network.kafka_channel import KafkaChannel
from kafka_lite.network.transfer import _FIRST_ALLOCATION, InvalidReceiveException, NetworkReceive

pytestmark = [pytest.mark.lab(3)]


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    b.setblocking(False)  # we read from b, as the selector does: never blocking
    yield a, b
    a.close()
    b.close()


def _feed(
    receive: NetworkReceive, sock: socket.socket, pieces: list[bytes], writer: socket.socket
) -> list[int]:
    """Write each piece, then let the receive read; return what each read_from call reported."""
    reported = []
    for piece in pieces:
        writer.sendall(piece)
        reported.append(receive.read_from(sock))
    return reported


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_nothing_ready_reads_nothing(pair):
    _, reader = pair
    receive = NetworkReceive("n")
    assert receive.read_from(reader) == 0 and not receive.complete(), (
        "a non-blocking read with no data returns 0"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_an_empty_payload_completes(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    writer.sendall(struct.pack(">i", 0) + struct.pack(">i", 7))  # the next frame's size right behind
    assert receive.read_from(reader) == 4, "the frame is its 4-byte size alone: read just those 4 bytes"
    assert receive.complete() and bytes(receive.payload()) == b""
    left = reader.recv(16)
    assert left == struct.pack(">i", 7), (
        "the bytes after a frame belong to the next receive: reading the size must take exactly the 4 "
        f"size bytes, but what the socket still holds is {left!r}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
@pytest.mark.parametrize("size", [-1, -(2**31), 1_000_001])
def test_bad_sizes_are_rejected_before_allocating(pair, size):
    writer, reader = pair
    receive = NetworkReceive("n", max_size=1_000_000)
    writer.sendall(struct.pack(">i", size))
    with pytest.raises(InvalidReceiveException, match=f"size = {size}"):
        receive.read_from(reader)
    assert receive._payload is None, (
        f"a claimed size of {size} must be refused before the payload buffer is allocated: a hostile "
        "4-byte prefix must not make the broker allocate anything"
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_a_size_arriving_a_byte_at_a_time_is_checked_once_whole(pair):
    writer, reader = pair
    receive = NetworkReceive("n", max_size=1_000_000)
    prefix = struct.pack(">i", 1_000_001)
    reported = _feed(receive, reader, [bytes([b]) for b in prefix[:3]], writer)
    assert reported == [1, 1, 1], f"each call reads just the size bytes that arrived: {reported}"
    writer.sendall(prefix[3:])
    with pytest.raises(InvalidReceiveException, match="size = 1000001"):
        receive.read_from(reader)
    accepted = NetworkReceive("n", max_size=1_000_000)
    writer.sendall(struct.pack(">i", 1_000_000))
    assert accepted._read_size(reader) == 4, "_read_size reads the 4 size bytes and returns how many it read"
    assert accepted._payload is not None and len(accepted._payload) <= _FIRST_ALLOCATION, (
        "a size of exactly max_size is accepted, and the payload buffer starts at most _FIRST_ALLOCATION "
        f"({_FIRST_ALLOCATION}) bytes long: a claimed size is not a promise; got a buffer of "
        f"{None if accepted._payload is None else len(accepted._payload)} bytes"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_closed_peer_before_any_byte_is_end_of_file(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    writer.close()
    with pytest.raises(EOFError):
        receive.read_from(reader)
    assert not receive.started(), "a close between frames leaves the receive unstarted (a clean close)"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_whole_frame_in_one_read(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    writer.sendall(struct.pack(">i", 5) + b"hello")
    assert receive.read_from(reader) == 9, "read_from returns how many bytes it read (size prefix included)"
    assert receive.complete() and bytes(receive.payload()) == b"hello"


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_size_prefix_arriving_a_byte_at_a_time(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    frame = struct.pack(">i", 3) + b"abc"
    reported = _feed(receive, reader, [bytes([b]) for b in frame], writer)
    assert reported == [1] * 7, f"each call reads just what arrived: {reported}"
    assert receive.complete() and bytes(receive.payload()) == b"abc"


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_payload_arriving_in_pieces(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    payload = bytes(range(200))
    reported = _feed(
        receive, reader, [struct.pack(">i", 200) + payload[:50], payload[50:120], payload[120:]], writer
    )
    assert reported == [54, 70, 80]
    assert receive.complete() and bytes(receive.payload()) == payload
    # A frame larger than the first allocation: the buffer grows as bytes arrive, to the frame's size
    # and no further, so the payload is exactly the frame's.
    big = bytes(range(256)) * 600  # 153600 bytes
    large = NetworkReceive("n")
    pieces = [struct.pack(">i", len(big))] + [big[i : i + 10_000] for i in range(0, len(big), 10_000)]
    _feed(large, reader, pieces, writer)
    assert large.complete() and len(large.payload()) == len(big) and bytes(large.payload()) == big, (
        f"a {len(big)}-byte frame in 10000-byte pieces: payload() should be exactly its {len(big)} bytes, "
        f"got {len(large.payload()) if large.complete() else 'an incomplete receive'}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_closed_peer_is_end_of_file(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    writer.sendall(struct.pack(">i", 10) + b"abc")
    receive.read_from(reader)
    writer.close()
    with pytest.raises(EOFError):
        receive.read_from(reader)


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_channel_delivers_back_to_back_frames_one_at_a_time(pair):
    writer, reader = pair
    channel = KafkaChannel("n", reader)
    writer.sendall(struct.pack(">i", 2) + b"hi" + struct.pack(">i", 3) + b"you")
    first = channel.read()
    second = channel.read()
    assert first is not None and bytes(first.payload()) == b"hi", "a receive stops at its own frame's end"
    assert second is not None and bytes(second.payload()) == b"you"
    assert channel.read() is None
