"""The two halves of a transfer: a size-prefixed receive, and a send that may go out in pieces.

Mirrors: org.apache.kafka.common.network.NetworkReceive and NetworkSend / ByteBufferSend
         (clients/src/main/java/org/apache/kafka/common/network/, Kafka 0.10.1)
Book:    chapter 2, 2.1.3 (the client's network connection objects)
Labs:    lab 3 (NetworkReceive._read_size, then NetworkReceive._read_payload)

Kafka frames every request and response as ``int32 size`` + payload. A non-blocking socket hands
over whatever bytes have arrived, so a receive is a small state machine: fill the 4-byte size
buffer (possibly over several reads), check the size, allocate the payload, fill it (possibly over
several more). A send is the mirror image: the socket may take only part of it per write.
"""

from __future__ import annotations

import os
import socket
import struct

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.protocol.types import RecordsWriter

UNLIMITED = -1
_SIZE = struct.Struct(">i")
# A claimed size is not a promise: allocate at most this much up front and grow (doubling) as the
# bytes really arrive, so a connection that claims 100 MiB and sends 10 bytes costs 64 KiB, not 100 MiB.
# (Kafka 0.10 allocated the claimed size at once; Kafka 1.0's MemoryPool, KIP-72, bounds it instead.)
_FIRST_ALLOCATION = 64 * 1024


class PeerClosedException(EOFError):
    """The peer closed the connection between frames: an ordinary disconnect, not an error."""


class InvalidReceiveException(KafkaException):
    """A size prefix that is negative or larger than allowed (``socket.request.max.bytes``)."""


class NetworkReceive:
    """Reads one size-prefixed frame from a non-blocking socket, across as many reads as it takes."""

    def __init__(self, source: str, max_size: int = UNLIMITED) -> None:
        self.source = source
        self.max_size = max_size
        self._size = bytearray()  # the 4-byte prefix as it arrives
        self._payload: bytearray | None = None
        self._expected = 0  # the size the prefix claimed
        self._filled = 0

    # --8<-- [start:read_from]
    def read_from(self, sock: socket.socket) -> int:
        """Read what the socket has for this frame; return the bytes read (0 if none were ready).

        Kafka's two steps, in order: the size prefix until it is whole (``_read_size``, which checks
        it and allocates the payload), then the payload until it is complete (``_read_payload``).
        One call may do both, or part of either. Raises ``EOFError`` when the peer has closed the
        connection, and ``InvalidReceiveException`` for a size that is negative or above ``max_size``.
        """
        read = 0
        if self._payload is None:  # the size prefix is still arriving
            read += self._read_size(sock)
        if self._payload is not None and self._filled < self._expected:
            read += self._read_payload(sock)
        return read

    def _read_size(self, sock: socket.socket) -> int:
        """Read at most the missing bytes of the 4-byte size prefix into ``self._size``; return how
        many were read.

        Once all four are there, decode the size (big-endian int32) and check it **before**
        allocating anything, as a hostile 4-byte prefix must not make us allocate 2 GiB: a negative
        size raises ``InvalidReceiveException("Invalid receive (size = N)")``, one above
        ``self.max_size`` (unless that is ``UNLIMITED``) raises
        ``InvalidReceiveException("Invalid receive (size = N larger than MAX)")``. Then remember the
        size in ``self._expected`` and allocate ``self._payload`` as
        ``bytearray(min(size, _FIRST_ALLOCATION))``.
        """
        # BEGIN SOLUTION
        chunk = _recv(sock, 4 - len(self._size))
        self._size += chunk
        if len(self._size) < 4:
            return len(chunk)
        (size,) = _SIZE.unpack(self._size)
        if size < 0:
            raise InvalidReceiveException(f"Invalid receive (size = {size})")
        if self.max_size != UNLIMITED and size > self.max_size:
            raise InvalidReceiveException(f"Invalid receive (size = {size} larger than {self.max_size})")
        self._expected = size
        self._payload = bytearray(min(size, _FIRST_ALLOCATION))
        return len(chunk)
        # END SOLUTION

    def _read_payload(self, sock: socket.socket) -> int:
        """Read into ``self._payload`` until ``self._expected`` bytes are there or nothing more is
        ready; return how many were read, and count them in ``self._filled``.

        Read in place, through a ``memoryview`` of the part still to fill (no copies), and never
        past this frame's end: the next frame's bytes belong to the next receive. When the buffer is
        full but the frame is not, grow it by doubling, never past ``self._expected``, before
        reading on (release every view of the buffer first: a viewed ``bytearray`` cannot resize).
        """
        # BEGIN SOLUTION
        read = 0
        while self._filled < self._expected:
            if self._filled == len(self._payload):  # grow by doubling, never past the claimed size
                self._payload.extend(bytes(min(len(self._payload), self._expected - self._filled)))
            with memoryview(self._payload) as whole, whole[self._filled :] as view:
                n = _recv_into(sock, view)
            if n == 0:
                break
            self._filled += n
            read += n
        return read
        # END SOLUTION

    # --8<-- [end:read_from]

    def started(self) -> bool:
        """Whether any byte of this frame has arrived (a close before that is a clean close)."""
        return len(self._size) > 0

    def complete(self) -> bool:
        return self._payload is not None and self._filled == self._expected

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


class FileRegion:
    """``length`` bytes of an open file from ``position``: a fetch response's records, left on disk.

    A response encoder that meets one (``PieceWriter`` below) writes its length prefix and leaves the
    bytes to ``ResponseSend``, which sends them with ``os.sendfile``: Kafka's ``FileRecords.writeTo``
    over ``FileChannel.transferTo``, the zero-copy path of book 2.3 and 6.1.

    ``owner`` is what keeps ``fd`` open (the log's slice the bytes come from): a segment deleted
    while the response waits for its socket is unlinked, and its descriptor is closed only when
    the last slice of it goes, so the region holds one until it is sent, never a number that
    another file may have taken since.
    """

    __slots__ = ("fd", "length", "owner", "position")

    def __init__(self, fd: int, position: int, length: int, owner: object = None) -> None:
        self.fd, self.position, self.length, self.owner = fd, position, length, owner

    def __len__(self) -> int:
        return self.length

    def read(self) -> bytes:
        """The bytes themselves (the read-and-send path, or a test)."""
        return os.pread(self.fd, self.length, self.position)


OWN_PIECE = 64 * 1024  # records this large are sent as they are, never copied into the response


class PieceWriter(RecordsWriter):
    """The output of a response's schema writer that lets fetched records (a ``FileRegion``, or a
    buffer of 64 KiB or more) through uncopied.

    The schema writes every field into this buffer and hands each ``RECORDS`` value to
    ``write_records``, which closes the bytes written so far into a piece and records the value as
    the next piece, so a fetch response's records are never copied after they are read from the
    file. Smaller record sets are copied in: one more buffer to send would cost more than the copy.
    """

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[bytes | FileRegion] = []

    def write_records(self, records: bytes | bytearray | memoryview | FileRegion) -> None:
        if isinstance(records, FileRegion) or len(records) >= OWN_PIECE:
            self.pieces.append(bytes(self))
            self.pieces.append(records)
            del self[:]
        else:
            self += records

    def finish(self) -> list[bytes | FileRegion]:
        if self:
            self.pieces.append(bytes(self))
            del self[:]
        return self.pieces


class ResponseSend(NetworkSend):
    """A size-prefixed frame made of byte buffers and file regions (Kafka's ``MultiSend`` of a
    ``ByteBufferSend`` and ``RecordsSend``s): buffers go out with ``sendmsg``, regions with
    ``os.sendfile``, in order."""

    def __init__(self, destination: str, pieces: list[bytes | FileRegion]) -> None:
        self.destination = destination
        payload = sum(len(p) for p in pieces)
        self.size = 4 + payload
        self._remaining = self.size
        self._pieces: list = [memoryview(_SIZE.pack(payload))]
        for piece in pieces:
            if isinstance(piece, FileRegion):
                # A copy to advance as it is sent, holding what keeps the descriptor open: the
                # quorum's listener lets go of its answer once the send is made.
                self._pieces.append(FileRegion(piece.fd, piece.position, piece.length, piece.owner))
            elif len(piece):
                self._pieces.append(memoryview(piece))

    def write_to(self, sock: socket.socket) -> int:
        written = 0
        while self._pieces:
            head = self._pieces[0]
            if isinstance(head, FileRegion):
                try:
                    n = os.sendfile(sock.fileno(), head.fd, head.position, head.length)
                except (BlockingIOError, InterruptedError):
                    break
                if n == 0:  # the file is shorter than the region: it was truncated under us
                    raise EOFError("log segment shrank while being sent")
                head.position += n
                head.length -= n
                if head.length == 0:
                    self._pieces.pop(0)
            else:
                buffers = []  # gather every leading byte buffer into one sendmsg
                for piece in self._pieces:
                    if isinstance(piece, FileRegion):
                        break
                    buffers.append(piece)
                try:
                    n = sock.sendmsg(buffers)
                except (BlockingIOError, InterruptedError):
                    break
                count = n
                while count and count >= len(self._pieces[0]):
                    count -= len(self._pieces[0])
                    self._pieces.pop(0)
                if count:
                    self._pieces[0] = self._pieces[0][count:]
            written += n
            self._remaining -= n
            if n == 0:
                break
        return written
