"""The two halves of a transfer: a size-prefixed receive, and a send that may go out in pieces.

Mirrors: org.apache.kafka.common.network.NetworkReceive and NetworkSend / ByteBufferSend
         (clients/src/main/java/org/apache/kafka/common/network/, Kafka 0.10.1)
Book:    chapter 2, 2.1.3 (the client's network connection objects)
Labs:    lab 3 (NetworkReceive.read_from)

Kafka frames every request and response as ``int32 size`` + payload. A non-blocking socket hands
over whatever bytes have arrived, so a receive is a small state machine: fill the 4-byte size
buffer (possibly over several reads), check the size, allocate the payload, fill it (possibly over
several more). A send is the mirror image: the socket may take only part of it per write.
"""

from __future__ import annotations

import socket
import struct

from kafka_lite.common.errors import KafkaException

UNLIMITED = -1
_SIZE = struct.Struct(">i")


class InvalidReceiveException(KafkaException):
    """A size prefix that is negative or larger than allowed (``socket.request.max.bytes``)."""


class NetworkReceive:
    """Reads one size-prefixed frame from a non-blocking socket, across as many reads as it takes."""

    def __init__(self, source: str, max_size: int = UNLIMITED) -> None:
        self.source = source
        self.max_size = max_size
        self._size = bytearray()  # the 4-byte prefix as it arrives
        self._payload: bytearray | None = None
        self._filled = 0

    # --8<-- [start:read_from]
    def read_from(self, sock: socket.socket) -> int:
        """Read what the socket has for this frame; return the bytes read (0 if none were ready).

        Raises ``EOFError`` when the peer has closed the connection, and
        ``InvalidReceiveException`` for a negative size or one above ``max_size``, checked before
        the payload is allocated: a hostile 4-byte prefix must not make us allocate 2 GiB.
        """
        # BEGIN SOLUTION
        read = 0
        if len(self._size) < 4:
            chunk = _recv(sock, 4 - len(self._size))
            read += len(chunk)
            self._size += chunk
            if len(self._size) < 4:
                return read
            (size,) = _SIZE.unpack(self._size)
            if size < 0:
                raise InvalidReceiveException(f"Invalid receive (size = {size})")
            if self.max_size != UNLIMITED and size > self.max_size:
                raise InvalidReceiveException(f"Invalid receive (size = {size} larger than {self.max_size})")
            self._payload = bytearray(size)
        view = memoryview(self._payload)
        while self._filled < len(self._payload):
            n = _recv_into(sock, view[self._filled :])
            if n == 0:
                break
            self._filled += n
            read += n
        return read
        # END SOLUTION

    # --8<-- [end:read_from]

    def complete(self) -> bool:
        return self._payload is not None and self._filled == len(self._payload)

    def payload(self) -> bytearray:
        if not self.complete():
            raise RuntimeError("the receive is not complete")
        return self._payload


def _recv(sock: socket.socket, n: int) -> bytes:
    try:
        data = sock.recv(n)
    except (BlockingIOError, InterruptedError):
        return b""
    if not data:
        raise EOFError("connection closed by peer")
    return data


def _recv_into(sock: socket.socket, view: memoryview) -> int:
    try:
        n = sock.recv_into(view)
    except (BlockingIOError, InterruptedError):
        return 0
    if n == 0:
        raise EOFError("connection closed by peer")
    return n


class NetworkSend:
    """A size-prefixed frame on its way out; ``write_to`` sends what the socket will take."""

    def __init__(self, destination: str, payload: bytes | bytearray | memoryview) -> None:
        self.destination = destination
        self._buffers = [memoryview(_SIZE.pack(len(payload))), memoryview(payload)]
        self.size = 4 + len(payload)
        self._remaining = self.size

    def write_to(self, sock: socket.socket) -> int:
        """Write as much as the socket accepts now; return the bytes written."""
        try:
            n = sock.sendmsg(self._buffers)
        except (BlockingIOError, InterruptedError):
            return 0
        self._remaining -= n
        written = n
        while self._buffers and n >= len(self._buffers[0]):
            n -= len(self._buffers[0])
            self._buffers.pop(0)
        if self._buffers and n:
            self._buffers[0] = self._buffers[0][n:]
        return written

    def completed(self) -> bool:
        return self._remaining == 0
