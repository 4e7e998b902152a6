"""The quorum's own listener: accept the voters' connections, read their requests, hand each to the
Raft client, and write its answer back.

Mirrors: kafka.network.SocketServer's Acceptor and Processor, as Kafka 3.3 runs them for the
         controller listener (core/src/main/scala/kafka/network/SocketServer.scala, Kafka 3.3.0),
         with the hand-over of kafka.raft.RaftManager.handleRequest (core/src/main/scala/kafka/raft/)
Book:    beyond the book: chapter 12 (KRaft); the socket server is chapter 2's (2.3)
Differs: one processor and no request channel or handler threads: a decoded request goes straight to
         the Raft client's message queue, whose one thread is the only handler there is, and the
         answer comes back through the request's completion; the broker's SocketServer parses
         with the client table, which does not hold the quorum's RPCs (see raft_messages.py).

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
import socket
import threading
from collections.abc import Callable

from kafka_lite.common.protocol.raft_messages import RaftApiKeys, encode_raft_response, parse_raft_request
from kafka_lite.common.protocol.types import SchemaException
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.network.selector import Selector
from kafka_lite.network.socket_server import Acceptor, ConnectionQuotas
from kafka_lite.network.transfer import NetworkSend
from kafka_lite.raft.raft_message import RaftRequest

log = logging.getLogger(__name__)

# Kafka's socket.request.max.bytes default: a larger size prefix is refused before it is read.
MAX_REQUEST_SIZE = 100 * 1024 * 1024


class RaftProcessor(threading.Thread):
    def __init__(
        self,
        handler: Callable[[RaftRequest.Inbound], None],
        connection_quotas: ConnectionQuotas,
        time: Time = SYSTEM,
    ) -> None:
        super().__init__(name="raft-network-thread", daemon=True)
        self._handler = handler
        self._connection_quotas = connection_quotas
        self._ips: dict[str, str] = {}  # connection id -> remote ip, for the quota on close
        self._time = time
        self.selector = Selector(MAX_REQUEST_SIZE, time=time)
        self._new_connections: queue.SimpleQueue[socket.socket] = queue.SimpleQueue()
        # (connection id, response frame), put by whichever thread completed the request.
        self._responses: queue.SimpleQueue[tuple[str, bytes]] = queue.SimpleQueue()
        self._ids = iter(range(1 << 62))
        self._running = threading.Event()
        self._running.set()

    def accept(self, sock: socket.socket) -> None:
        self._new_connections.put(sock)
        self.selector.wakeup()

    def run(self) -> None:
        while self._running.is_set():
            try:
                self.configure_new_connections()
                self.process_new_responses()
                self.selector.poll(300)
                self.process_completed_receives()
                self.process_completed_sends()
                self.process_disconnected()
            except Exception:  # one bad event must not stop the listener
                log.exception("Raft processor got an unexpected error")
        self.selector.close_all()

    def configure_new_connections(self) -> None:
        while not self._new_connections.empty():
            sock = self._new_connections.get_nowait()
            try:
                local, remote = sock.getsockname(), sock.getpeername()
            except OSError:
                sock.close()
                continue
            connection_id = f"{local[0]}:{local[1]}-{remote[0]}:{remote[1]}-{next(self._ids)}"
            self._ips[connection_id] = remote[0]
            self.selector.register(connection_id, sock)

    def process_new_responses(self) -> None:
        while not self._responses.empty():
            connection_id, frame = self._responses.get_nowait()
            if connection_id not in self.selector.channels:
                continue  # the peer went away meanwhile
            if frame is None:  # the request failed without an answer: nothing can be sent back
                self._close(connection_id)
            else:
                self.selector.send(NetworkSend(connection_id, frame))

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
                header.correlation_id, header.api_key, body, self._time.milliseconds()
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
            _read_file_records(response.data)
        frame = encode_raft_response(response.api_key, version, response.correlation_id, response.data)
        self._responses.put((connection_id, frame))
        self.selector.wakeup()

    def process_completed_sends(self) -> None:
        for send in self.selector.completed_sends:
            if send.destination in self.selector.channels:
                self.selector.unmute(send.destination)

    def process_disconnected(self) -> None:
        for connection_id in self.selector.disconnected:
            self._forget(connection_id)

    def _close(self, connection_id: str) -> None:
        self.selector.close(connection_id)
        self._forget(connection_id)

    def _forget(self, connection_id: str) -> None:
        """Give the address's slot under the acceptor's connection quota back."""
        ip = self._ips.pop(connection_id, None)
        if ip is not None:
            self._connection_quotas.dec(ip)

    def connection_count(self) -> int:
        return len(self.selector.channels)

    def shutdown(self) -> None:
        self._running.clear()
        self.selector.wakeup()


def _read_file_records(fetch_response: dict) -> None:
    """Replace a Fetch answer's records, a slice of a segment file (``FileRecords``), by its bytes.

    The broker sends such a slice with sendfile (``FileRegion``); the quorum's listener copies it
    into the frame instead, on the Raft thread, while the slice still holds what the read saw.
    """
    for topic in fetch_response.get("responses", []):
        for partition in topic["partitions"]:
            records = partition.get("records")
            if isinstance(records, FileRecords):
                partition["records"] = records.read_bytes()


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
