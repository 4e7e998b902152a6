"""The quorum's own listener: accept the voters' connections, read their requests, hand each to the
Raft client, and write its answer back.

Mirrors: kafka.network.SocketServer's Acceptor and Processor, as Kafka 3.3 runs them for the
         controller listener (core/src/main/scala/kafka/network/SocketServer.scala, Kafka 3.3.0),
         with the hand-over of kafka.raft.RaftManager.handleRequest (core/src/main/scala/kafka/raft/)
Book:    beyond the book: chapter 12 (KRaft); the socket server is chapter 2's (2.3)
Differs: one processor, the broker's with the quorum's codec, and no request channel or handler
         threads: a decoded request goes straight to the Raft client's message queue, whose one
         thread is the only handler there is, and the answer comes back through the request's
         completion; the broker's SocketServer parses with the client table, which does not hold
         the quorum's RPCs (see raft_messages.py). A Fetch answer's records smaller than 64 KiB
         are copied into the frame (Kafka sends every slice with ``transferTo``).

Kafka 3.3's controller runs a SocketServer of its own on ``controller.listener.names``, and its
ControllerApis passes the Raft RPCs to ``KafkaRaftManager.handleRequest``, which wraps each in a
``RaftRequest.Inbound`` for ``KafkaRaftClient.handle``. Here the same path in one thread::

    Acceptor ──accept──▶ RaftProcessor (Selector) ──RaftRequest.Inbound──▶ KafkaRaftClient.handle
                               ▲                                                │
                               └──── responses queue ◀── completion (Raft thread, or a held Fetch)

As the broker's processor does, it mutes a connection while its request is being answered, so a
peer's responses come back in the order of its requests (the NetworkClient on the other side
matches each answer to the oldest request in flight). A frame it cannot read (an unknown api key or
version, a body that does not decode, a size that is too large) closes that connection with one
warning line; the node and its quorum state are untouched, and other connections carry on.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable

from kafka_lite.common.protocol.raft_messages import RaftApiKeys, parse_raft_request, write_raft_response
from kafka_lite.common.protocol.types import SchemaException
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.network.socket_server import Acceptor, ConnectionQuotas, Processor
from kafka_lite.network.transfer import OWN_PIECE, FileRegion, PieceWriter, ResponseSend
from kafka_lite.raft.raft_message import RaftRequest

log = logging.getLogger(__name__)

# Kafka's socket.request.max.bytes default: a larger size prefix is refused before it is read.
MAX_REQUEST_SIZE = 100 * 1024 * 1024
# Kafka's connections.max.idle.ms default.
CONNECTIONS_MAX_IDLE_MS = 600_000


class RaftProcessor(Processor):
    """The broker's Processor (its loop, connections, quotas and close) with the quorum's codec: a
    request goes to the Raft client, not to a request channel, and its answer comes back through the
    request's completion."""

    def __init__(
        self,
        handler: Callable[[RaftRequest.Inbound], None],
        connection_quotas: ConnectionQuotas,
        time: Time = SYSTEM,
    ) -> None:
        # No request channel and no request metrics: the Raft thread is the only handler.
        super().__init__(
            0, None, connection_quotas, None, MAX_REQUEST_SIZE, CONNECTIONS_MAX_IDLE_MS, time,
            listener_name="CONTROLLER",
        )  # fmt: skip
        self._handler = handler
        # (connection id, the response's pieces or None), put by whichever thread completed the
        # request.
        self._responses: queue.SimpleQueue[tuple[str, list | None]] = queue.SimpleQueue()

    def process_new_responses(self) -> None:
        while not self._responses.empty():
            connection_id, pieces = self._responses.get_nowait()
            if connection_id not in self.selector.channels:
                continue  # the peer went away meanwhile
            if pieces is None:  # the request failed without an answer: nothing can be sent back
                self._close(connection_id)
            else:
                self.selector.send(ResponseSend(connection_id, pieces))

    def process_completed_receives(self) -> None:
        for receive in self.selector.completed_receives:
            connection_id = receive.source
            try:
                header, body = parse_raft_request(receive.payload())
            except (SchemaException, ValueError, IndexError) as e:
                log.warning("Closing connection %s: invalid Raft request: %s", connection_id, e)
                self._close(connection_id)
                continue
            self.selector.mute(connection_id)  # one request in flight per connection
            request = RaftRequest.Inbound(
                header.correlation_id, header.api_key, body, self.time.milliseconds()
            )
            request.completion.add_done_callback(
                lambda done, cid=connection_id, version=header.api_version: self._on_answered(
                    cid, version, done
                )
            )
            self._handler(request)

    def _on_answered(self, connection_id: str, version: int, done) -> None:
        # Runs on the Raft thread (or wherever the completion came from): encode there, and leave
        # the socket to this thread.
        exception = done.exception()
        if exception is not None:
            log.warning("Closing connection %s: no answer to its request: %s", connection_id, exception)
            self._responses.put((connection_id, None))
            self.selector.wakeup()
            return
        response = done.result()
        if response.api_key == RaftApiKeys.FETCH:
            _file_regions(response.data)
        out = PieceWriter()
        write_raft_response(out, response.api_key, version, response.correlation_id, response.data)
        self._responses.put((connection_id, out.finish()))
        self.selector.wakeup()

    def process_completed_sends(self) -> None:
        for send in self.selector.completed_sends:
            if send.destination in self.selector.channels:
                self.selector.unmute(send.destination)


def _file_regions(fetch_response: dict) -> None:
    """Replace a Fetch answer's records, a slice of a segment file (``FileRecords``), by what the
    send takes: a ``FileRegion`` that ``ResponseSend`` hands to ``os.sendfile`` (book 2.3, 6.1: the
    bytes go from the page cache to the socket, never through the interpreter), or, for a slice
    under 64 KiB, its bytes, read now on the Raft thread (one ``pread``, which costs less than a
    frame of two pieces and a sendfile call for the few KiB a follower that keeps up fetches).
    The region holds the slice, and with it the segment's descriptor, until it is sent."""
    for topic in fetch_response.get("responses", []):
        for partition in topic["partitions"]:
            records = partition.get("records")
            if isinstance(records, FileRecords):
                size = records.size_in_bytes()
                partition["records"] = (
                    FileRegion(records.fd, records.start, size, owner=records)
                    if size >= OWN_PIECE
                    else records.read_bytes()
                )


class RaftSocketServer:
    """The listener: an Acceptor (the broker's) and one RaftProcessor."""

    def __init__(
        self, host: str, port: int, handler: Callable[[RaftRequest.Inbound], None], time: Time = SYSTEM
    ) -> None:
        # Kafka's max.connections.per.ip is unbounded by default; a quorum has a few peers and tools.
        quotas = ConnectionQuotas(1_000)
        self.processor = RaftProcessor(handler, quotas, time)
        self.acceptor = Acceptor(host, port, [self.processor], quotas, listener_name="CONTROLLER")

    @property
    def port(self) -> int:
        return self.acceptor.port

    def startup(self) -> None:
        self.processor.start()
        self.acceptor.start()

    def shutdown(self) -> None:
        self.acceptor.shutdown()
        self.processor.shutdown()
        self.acceptor.join(timeout=2)
        self.processor.join(timeout=2)
