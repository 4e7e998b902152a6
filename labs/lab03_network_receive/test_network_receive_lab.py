"""Lab 3 graded tests: NetworkReceive.read_from on real, non-blocking socket pairs.

Every test reads through ``NetworkReceive.read_from`` (directly, or through KafkaChannel and the
Selector), so on the untouched starter each fails with the lab's NotImplementedError. Stage 1's
tests need only ``_read_size`` (frames that end with their size prefix: nothing ready, an empty
payload, bad sizes, no limit, a close before any byte); stage 2's read a payload, so they need both methods.
"""

from __future__ import annotations

import socket
import struct

import pytest

from kafka_lite.network.kafka_channel import KafkaChannel
from kafka_lite.network.transfer import _FIRST_ALLOCATION, UNLIMITED, InvalidReceiveException, NetworkReceive

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
    got = receive.read_from(reader)
    assert got == 0 and not receive.complete(), (
        f"nothing was sent, yet read_from reported {got} bytes read"
        + (" and the receive says it is complete" if receive.complete() else "")
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_an_empty_payload_completes(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    writer.sendall(struct.pack(">i", 0) + struct.pack(">i", 7))  # the next frame's size right behind
    got = receive.read_from(reader)
    assert got == 4, (
        f"the socket held a frame of size 0 (4 bytes) and the next frame's size; read_from reported {got}"
    )
    assert receive.complete() and bytes(receive.payload()) == b"", "a frame of size 0 did not complete"
    left = reader.recv(16)
    assert left == struct.pack(">i", 7), (
        f"after the size-0 frame was received, the socket still holds {left!r}; the next frame's size "
        f"{struct.pack('>i', 7)!r} was sent right behind it"
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
@pytest.mark.parametrize("size", [-1, -(2**31), 1_000_001])
def test_bad_sizes_are_rejected_before_allocating(pair, size):
    writer, reader = pair
    receive = NetworkReceive("n", max_size=1_000_000)
    writer.sendall(struct.pack(">i", size))
    with pytest.raises(InvalidReceiveException) as refused:
        receive.read_from(reader)
    assert str(size) in str(refused.value), f"the refusal does not state the size claimed: {refused.value}"
    assert receive._payload is None, (
        f"a claimed size of {size} (max_size 1000000) was refused, but only after a payload buffer of "
        f"{len(receive._payload)} bytes was allocated for it"
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_a_size_arriving_a_byte_at_a_time_is_checked_once_whole(pair):
    writer, reader = pair
    receive = NetworkReceive("n", max_size=1_000_000)
    prefix = struct.pack(">i", 1_000_001)
    reported = _feed(receive, reader, [bytes([b]) for b in prefix[:3]], writer)
    assert reported == [1, 1, 1], (
        f"the size 1000001 arrived one byte per read_from call; the first three calls reported {reported}"
    )
    writer.sendall(prefix[3:])
    with pytest.raises(InvalidReceiveException) as refused:
        receive.read_from(reader)
    assert "1000001" in str(refused.value), f"the refusal does not state the size claimed: {refused.value}"
    accepted = NetworkReceive("n", max_size=1_000_000)
    writer.sendall(struct.pack(">i", 1_000_000))
    try:
        got = accepted._read_size(reader)
    except InvalidReceiveException as e:
        pytest.fail(f"a size of 1000000 with max_size 1000000 was refused: {e}")
    assert got == 4, f"the 4 size bytes were there; _read_size reported {got}"
    assert accepted._payload is not None and len(accepted._payload) <= _FIRST_ALLOCATION, (
        f"after a size of 1000000 bytes arrived, and no payload yet, the payload buffer is "
        f"{None if accepted._payload is None else len(accepted._payload)} bytes long "
        f"(_FIRST_ALLOCATION is {_FIRST_ALLOCATION})"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_an_unlimited_receive_takes_any_size_without_allocating_it(pair):
    writer, reader = pair
    receive = NetworkReceive("n", max_size=UNLIMITED)
    largest = 2**28  # 256 MiB, over Kafka's default socket.request.max.bytes (100 MiB)
    writer.sendall(struct.pack(">i", largest))
    try:
        got = receive._read_size(reader)
    except InvalidReceiveException as e:
        pytest.fail(f"a receive with max_size UNLIMITED refused the size {largest}: {e}")
    assert got == 4 and not receive.complete(), f"_read_size reported {got} for the 4 size bytes alone"
    assert receive._payload is not None and len(receive._payload) <= _FIRST_ALLOCATION, (
        f"after a size of {largest} bytes arrived, and no payload yet, the payload buffer is "
        f"{None if receive._payload is None else len(receive._payload)} bytes long "
        f"(_FIRST_ALLOCATION is {_FIRST_ALLOCATION})"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_closed_peer_before_any_byte_is_end_of_file(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    writer.close()
    with pytest.raises(EOFError):
        receive.read_from(reader)
    assert not receive.started(), (
        "the peer closed before sending a byte, yet the receive reports it started (a close in the middle "
        "of a frame, not a clean one)"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_whole_frame_in_one_read(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    writer.sendall(struct.pack(">i", 5) + b"hello")
    got = receive.read_from(reader)
    assert got == 9, f"a whole 9-byte frame (size 5, b'hello') was on the socket; read_from reported {got}"
    assert receive.complete() and bytes(receive.payload()) == b"hello", (
        f"after the whole frame: complete() is {receive.complete()}"
        + (f", payload() is {bytes(receive.payload())!r}" if receive.complete() else "")
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_size_prefix_arriving_a_byte_at_a_time(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    frame = struct.pack(">i", 3) + b"abc"
    reported = _feed(receive, reader, [bytes([b]) for b in frame], writer)
    assert reported == [1] * 7, (
        f"the frame arrived one byte per read_from call; the calls reported {reported}"
    )
    assert receive.complete() and bytes(receive.payload()) == b"abc", (
        f"after all 7 bytes: complete() is {receive.complete()}"
        + (f", payload() is {bytes(receive.payload())!r}, not b'abc'" if receive.complete() else "")
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_the_payload_arriving_in_pieces(pair):
    writer, reader = pair
    receive = NetworkReceive("n")
    payload = bytes(range(200))
    reported = _feed(
        receive, reader, [struct.pack(">i", 200) + payload[:50], payload[50:120], payload[120:]], writer
    )
    assert reported == [54, 70, 80], (
        f"a frame of size 200 arrived as 4+50, 70 and 80 bytes; the read_from calls reported {reported}"
    )
    assert receive.complete() and bytes(receive.payload()) == payload, (
        "after all 200 payload bytes in three pieces: "
        + (
            "payload() differs from what was sent, first at byte "
            f"{next((i for i, (a, b) in enumerate(zip(receive.payload(), payload)) if a != b), 200)}"
            if receive.complete()
            else "the receive is not complete"
        )
    )
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
        pytest.fail(
            "the peer closed after 3 of 10 payload bytes, and read_from returned as if it might yet come"
        )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_channel_delivers_back_to_back_frames_one_at_a_time(pair):
    writer, reader = pair
    channel = KafkaChannel("n", reader)
    writer.sendall(struct.pack(">i", 2) + b"hi" + struct.pack(">i", 3) + b"you")
    first = channel.read()
    second = channel.read()
    assert first is not None and bytes(first.payload()) == b"hi", (
        "frames b'hi' and b'you' were sent back to back; the channel's first receive is "
        f"{None if first is None else bytes(first.payload())!r}"
    )
    assert second is not None and bytes(second.payload()) == b"you", (
        f"after b'hi', the channel's next receive is {None if second is None else bytes(second.payload())!r}"
    )
    assert channel.read() is None, "both frames were delivered, and the channel delivered yet another"
