"""The broker's socket server: an acceptor per listener, N processors each, and the request channel.

Mirrors: kafka.network.SocketServer, Acceptor, Processor and ConnectionQuotas
         (core/src/main/scala/kafka/network/SocketServer.scala, Kafka 0.10.1)
Book:    chapter 2, 2.3 (the server side: 2.3.1 the acceptor, 2.3.2 the processors,
         2.3.3 the request channel and the handlers)
Differs: listeners are named, as in Kafka 0.10.2 (KIP-103; 0.10.1 keys them by security protocol),
         and are PLAINTEXT or SASL_PLAINTEXT (a SASL listener's ``channel_builder`` gives each
         connection an authenticator, which runs before any request is parsed); request parsing
         happens in the processor, as in Kafka 0.10, and a request that fails to parse closes its
         connection with one warning line.
Labs:    lab 4 (Processor.process_completed_receives and process_completed_sends)

A KRaft controller (beyond the book: chapter 12, Kafka 3.3.0) runs this same socket server on its
``controller.listener.names``, built for ``ListenerType.CONTROLLER``: its processors parse with the
controller's table (Raft's RPCs, the controller's, and the admin APIs a broker forwards; see
``common/protocol/listener_type.py``) instead of the client table, as Kafka 3.3's ``SocketServer``
is built with an ``ApiVersionManager`` of one listener type. A broker's listeners keep the client
table and the path below exactly; a KRaft broker's (``ListenerType.BROKER``) parses DescribeQuorum,
the one api key it takes from Raft's table, as the controller's listener does.

Each listener (``Listener``: a name such as ``PLAINTEXT`` or ``INTERNAL``, its security protocol,
address and channel builder) has its own acceptor and ``num.network.threads`` processors, as Kafka
0.10.2 starts them; every request carries its listener's name, so that the API layer answers a
client with the addresses of the listener it came in on. The book's broker has one listener.

The threads of one listener (``ThreadPicture`` in the chapter guide draws them)::

    Acceptor ──accept──▶ Processor i (own Selector) ──Request──▶ RequestChannel.request_queue
                              ▲                                        │
                              └──── response_queues[i] ◀── KafkaRequestHandler × num.io.threads

Ordering: after a processor hands a request over it *mutes* the connection, so the selector stops
reading it; the next request waits in the socket buffer until this one's response has been written
(or the handler said there is none), and then the processor unmutes it. One request in flight per
connection is what keeps a client's responses in the order of its requests.
"""

from __future__ import annotations

import logging
import queue
import selectors
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.listener_type import (
    ListenerType,
    parse_listener_request_body,
    parse_listener_request_header,
)
from kafka_lite.common.protocol.requests import parse_request_body, parse_request_header
from kafka_lite.common.protocol.types import SchemaException
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.utils import INT32_MAX
from kafka_lite.network.channel_builders import PLAINTEXT_CHANNEL_BUILDER, ChannelBuilder
from kafka_lite.network.request_channel import Request, RequestChannel, Response, ResponseAction
from kafka_lite.network.request_metrics import RequestMetrics
from kafka_lite.network.selector import Selector
from kafka_lite.network.transfer import ResponseSend

log = logging.getLogger(__name__)

FAILED_AUTHENTICATION_DELAY_MS = 100  # Kafka 2.1's connection.failed.authentication.delay.ms default


class TooManyConnectionsException(Exception):
    def __init__(self, ip: str, count: int) -> None:
        super().__init__(f"Too many connections from {ip} (maximum = {count})")


class ConnectionQuotas:
    """``max.connections.per.ip``, with per-address overrides (``max.connections.per.ip.overrides``)."""

    def __init__(self, default_max: int, overrides: dict[str, int] | None = None) -> None:
        self.default_max = default_max
        self.overrides = dict(overrides or {})
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def inc(self, ip: str) -> None:
        with self._lock:
            count = self._counts.get(ip, 0) + 1
            limit = self.overrides.get(ip, self.default_max)
            if count > limit:
                raise TooManyConnectionsException(ip, limit)
            self._counts[ip] = count

    def dec(self, ip: str) -> None:
        with self._lock:
            count = self._counts.get(ip, 0) - 1
            if count <= 0:
                self._counts.pop(ip, None)
            else:
                self._counts[ip] = count

    def get(self, ip: str) -> int:
        with self._lock:
            return self._counts.get(ip, 0)


@dataclass(frozen=True)
class Listener:
    """One listener the socket server serves: an end point (Kafka's ``EndPoint``) with the channel
    builder of its security protocol (Kafka's ``ChannelBuilders.serverChannelBuilder``)."""

    listener_name: str
    security_protocol: str
    host: str
    port: int
    channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER


class Processor(threading.Thread):
    """Owns a set of connections: reads requests from them, and writes their responses back."""

    def __init__(
        self,
        processor_id: int,
        request_channel: RequestChannel,
        connection_quotas: ConnectionQuotas,
        metrics: RequestMetrics,
        max_request_size: int,
        connections_max_idle_ms: int,
        time: Time = SYSTEM,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
        listener_name: str = "PLAINTEXT",
        security_protocol: str = "PLAINTEXT",
        listener_type: ListenerType = ListenerType.ZK_BROKER,
    ) -> None:
        super().__init__(name=f"kafka-network-thread-{listener_name}-{processor_id}", daemon=True)
        self.id = processor_id
        self.listener_type = listener_type
        self.listener_name = listener_name
        self.security_protocol = security_protocol
        self.request_channel = request_channel
        self.connection_quotas = connection_quotas
        self.metrics = metrics
        self.time = time
        # A refused SASL login is closed 100 ms after its answer (Kafka 2.1's default delay).
        self.selector = Selector(
            max_request_size, connections_max_idle_ms, time, channel_builder, FAILED_AUTHENTICATION_DELAY_MS
        )
        self._new_connections: queue.SimpleQueue[socket.socket] = queue.SimpleQueue()
        self._inflight_responses: dict[str, Response] = {}
        self._ips: dict[str, str] = {}  # connection id -> remote ip, for the quota on close
        self._running = threading.Event()
        self._running.set()

    # -- hand-over from the acceptor -----------------------------------------------------------------------

    def accept(self, sock: socket.socket) -> None:
        self._new_connections.put(sock)
        self.selector.wakeup()

    def wakeup(self) -> None:
        self.selector.wakeup()

    # --8<-- [start:run]
    def run(self) -> None:
        while self._running.is_set():
            try:
                self.configure_new_connections()
                self.process_new_responses()
                self.selector.poll(300)
                self.process_completed_receives()
                self.process_completed_sends()
                self.process_disconnected()
            except Exception:  # Kafka's processor logs and carries on: one bad event must not stop it
                log.exception("Processor %d got an unexpected error", self.id)
        self._close_all()

    # --8<-- [end:run]

    def configure_new_connections(self) -> None:
        while not self._new_connections.empty():  # only this processor takes from it
            sock = self._new_connections.get_nowait()
            try:
                local, remote = sock.getsockname(), sock.getpeername()
            except OSError:  # gone before we got to it
                sock.close()
                continue
            # Kafka's connection id: "localHost:localPort-remoteHost:remotePort", unique while open.
            connection_id = f"{local[0]}:{local[1]}-{remote[0]}:{remote[1]}"
            self._ips[connection_id] = remote[0]
            self.selector.register(connection_id, sock)

    # --8<-- [start:responses]
    def process_new_responses(self) -> None:
        while (response := self.request_channel.receive_response(self.id)) is not None:
            connection_id = response.request.connection_id
            if connection_id not in self.selector.channels:
                continue  # the client went away while its request was being handled
            if response.action is ResponseAction.SEND:
                self.selector.send(ResponseSend(connection_id, response.pieces))
                self._inflight_responses[connection_id] = response
            elif response.action is ResponseAction.NO_OP:
                self._record(response.request, 0)
                self.selector.unmute(connection_id)
            else:
                self._record(response.request, 0)
                self._close(connection_id)

    # --8<-- [end:responses]

    # --8<-- [start:receives]
    def process_completed_receives(self) -> None:
        """Parse each completed receive into a ``Request``, mute its connection and hand it to the
        handlers; a frame that does not parse closes its connection with one warning line."""
        # BEGIN SOLUTION
        for receive in self.selector.completed_receives:
            connection_id = receive.source
            frame = receive.payload()
            try:
                request = self._parse(connection_id, frame)
            except SchemaException as e:
                # A frame we cannot read: Kafka closes the connection (there is no correlation id
                # it could trust to answer with) and logs one line.
                log.warning("Closing connection %s: invalid request: %s", connection_id, e)
                self._close(connection_id)
                continue
            self.selector.mute(connection_id)  # one request in flight per connection
            if not self.request_channel.send_request(request, self._running.is_set):
                return
        # END SOLUTION

    # --8<-- [end:receives]

    def _parse(self, connection_id: str, frame: bytearray) -> Request:
        if self.listener_type is ListenerType.CONTROLLER:
            return self._parse_for_listener(connection_id, frame)
        now = self.time.nanoseconds()
        ip = self._ips.get(connection_id, "")
        header, body_start = parse_request_header(frame)
        if header.api_key == ApiKeys.API_VERSIONS and not ApiKeys.API_VERSIONS.is_version_supported(
            header.api_version
        ):
            return Request(
                self.id, connection_id, header, {}, len(frame), ip, now, unsupported_version=True,
                listener_name=self.listener_name, security_protocol=self.security_protocol,
            )  # fmt: skip
        if header.api is None and self.listener_type is ListenerType.BROKER:
            # Not the client table's: a KRaft broker's listener also takes DescribeQuorum, in
            # Raft's table, whose flexible header the listener's parse reads.
            return self._parse_for_listener(connection_id, frame)
        body = parse_request_body(header, frame, body_start)
        principal = self.selector.channels[connection_id].principal()  # as it authenticated
        return Request(
            self.id, connection_id, header, body, len(frame), ip, now, principal=principal,
            listener_name=self.listener_name, security_protocol=self.security_protocol,
        )  # fmt: skip

    def _parse_for_listener(self, connection_id: str, frame: bytearray) -> Request:
        """``_parse`` with the listener type's table, as Kafka 3.3's processor parses a controller's
        requests (chapter 12): the header's api key names the API in that table, and its version
        chooses the header's and the body's schema. An ApiVersions at a version we do not speak is
        still handed on, to be answered with UNSUPPORTED_VERSION."""
        now = self.time.nanoseconds()
        ip = self._ips.get(connection_id, "")
        header, api, body_start = parse_listener_request_header(self.listener_type, frame)
        unsupported = header.api_key == ApiKeys.API_VERSIONS and not api.is_version_supported(
            header.api_version
        )
        body = {} if unsupported else parse_listener_request_body(api, header, frame, body_start)
        principal = self.selector.channels[connection_id].principal()
        return Request(
            self.id, connection_id, header, body, len(frame), ip, now, unsupported_version=unsupported,
            principal=principal, listener_name=self.listener_name, security_protocol=self.security_protocol,
            api=api,
        )  # fmt: skip

    # --8<-- [start:sends]
    def process_completed_sends(self) -> None:
        """A response went out in full: record the request's metrics and unmute its connection, so
        the selector reads the next request."""
        # BEGIN SOLUTION
        for send in self.selector.completed_sends:
            response = self._inflight_responses.pop(send.destination, None)
            if response is None:
                continue
            self._record(response.request, send.size)
            self.selector.unmute(send.destination)
        # END SOLUTION

    # --8<-- [end:sends]

    def process_disconnected(self) -> None:
        for connection_id in self.selector.disconnected:
            self._forget(connection_id)

    def _record(self, request: Request, response_bytes: int) -> None:
        stamps = [
            request.start_ns,
            request.dequeue_ns,
            request.api_local_complete_ns,
            request.api_remote_complete_ns,
            request.response_dequeue_ns,
            self.time.nanoseconds(),
        ]
        header = request.header
        self.metrics.record(
            request.api, header.api_version, request.size, response_bytes, stamps, header.client_id or ""
        )

    def _close(self, connection_id: str) -> None:
        self.selector.close(connection_id)
        self._forget(connection_id)

    def _forget(self, connection_id: str) -> None:
        """A connection is gone (closed by us or by the peer): drop its pending response and give its
        address's slot under ``max.connections.per.ip`` back."""
        self._inflight_responses.pop(connection_id, None)
        ip = self._ips.pop(connection_id, None)
        if ip is not None:
            self.connection_quotas.dec(ip)

    def _close_all(self) -> None:
        for connection_id in list(self.selector.channels):
            self._close(connection_id)
        self.selector.close_all()

    def connection_count(self) -> int:
        return len(self.selector.channels)

    def shutdown(self) -> None:
        self._running.clear()
        self.selector.wakeup()


class Acceptor(threading.Thread):
    """Accepts connections on the listener and deals them out to the processors in turn."""

    def __init__(
        self,
        host: str,
        port: int,
        processors: list[Processor],
        connection_quotas: ConnectionQuotas,
        send_buffer_size: int = -1,
        receive_buffer_size: int = -1,
        listener_name: str = "PLAINTEXT",
    ) -> None:
        super().__init__(name=f"kafka-socket-acceptor-{listener_name}", daemon=True)
        self.processors = processors
        self.connection_quotas = connection_quotas
        self.send_buffer_size = send_buffer_size
        self.receive_buffer_size = receive_buffer_size
        self.server_socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if receive_buffer_size > 0:
            self.server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer_size)
        try:
            self.server_socket.bind((host, port))
        except OSError as e:
            self.server_socket.close()
            raise OSError(e.errno, f"Socket server failed to bind to {host}:{port}: {e.strerror}") from None
        self.server_socket.listen(128)
        self.server_socket.setblocking(False)
        self.port = self.server_socket.getsockname()[1]
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.server_socket, selectors.EVENT_READ)
        self._wake_r, self._wake_w = socket.socketpair()  # shutdown() wakes select() at once
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._running = threading.Event()
        self._running.set()
        self._next = 0

    def run(self) -> None:
        while self._running.is_set():
            for key, _ in self._selector.select(0.5):
                if key.fileobj is self.server_socket:
                    self._accept_all()
        self._selector.close()
        self.server_socket.close()
        self._wake_r.close()
        self._wake_w.close()

    def _accept_all(self) -> None:
        while True:
            try:
                sock, (ip, _) = self.server_socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                log.warning("Error accepting a connection: %s", e)
                return
            try:
                self.connection_quotas.inc(ip)
            except TooManyConnectionsException as e:
                log.info("Rejected connection from %s: %s", ip, e)
                sock.close()
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            if self.send_buffer_size > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer_size)
            processor = self.processors[self._next % len(self.processors)]
            self._next += 1
            processor.accept(sock)

    def shutdown(self) -> None:
        self._running.clear()
        try:
            self._wake_w.send(b"\x00")
        except OSError:  # the thread has already stopped and closed its sockets
            pass


class SocketServer:
    """Starts an acceptor and its processors per listener; the handlers (``KafkaRequestHandlerPool``)
    read its one request channel. Given no ``listeners``, it serves one PLAINTEXT listener on
    ``host:port`` with ``channel_builder`` (the book's broker)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 9092,
        num_network_threads: int = 3,
        queued_max_requests: int = 500,
        socket_request_max_bytes: int = 104857600,
        max_connections_per_ip: int = INT32_MAX,
        max_connections_per_ip_overrides: dict[str, int] | None = None,
        connections_max_idle_ms: int = 600_000,
        send_buffer_bytes: int = 102400,
        receive_buffer_bytes: int = 102400,
        time: Time = SYSTEM,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
        listeners: Sequence[Listener] | None = None,
        listener_type: ListenerType = ListenerType.ZK_BROKER,
    ) -> None:
        self.listener_type = listener_type
        self.listeners = list(listeners or [Listener("PLAINTEXT", "PLAINTEXT", host, port, channel_builder)])
        self.host = self.listeners[0].host
        self.requested_port = self.listeners[0].port
        self.time = time
        self.request_channel = RequestChannel(
            num_network_threads * len(self.listeners), queued_max_requests, time
        )
        self.metrics = RequestMetrics(time)
        self.connection_quotas = ConnectionQuotas(max_connections_per_ip, max_connections_per_ip_overrides)
        # Kafka's ``processorBeginIndex``..``processorEndIndex``: listener i owns the processors
        # i*N..(i+1)*N-1, so that a processor's id is also its response queue's index.
        self.processors_by_listener: dict[str, list[Processor]] = {}
        self.processors: list[Processor] = []
        for listener in self.listeners:
            processors = [
                Processor(
                    len(self.processors) + i,
                    self.request_channel,
                    self.connection_quotas,
                    self.metrics,
                    socket_request_max_bytes,
                    connections_max_idle_ms,
                    time,
                    listener.channel_builder,
                    listener.listener_name,
                    listener.security_protocol,
                    listener_type,
                )
                for i in range(num_network_threads)
            ]
            self.processors_by_listener[listener.listener_name] = processors
            self.processors.extend(processors)
        self.request_channel.add_response_listener(lambda i: self.processors[i].wakeup())
        self._buffers = (send_buffer_bytes, receive_buffer_bytes)
        self.acceptors: dict[str, Acceptor] = {}

    @property
    def acceptor(self) -> Acceptor | None:
        """The first listener's acceptor (the book's broker has only that one)."""
        return self.acceptors.get(self.listeners[0].listener_name)

    @property
    def port(self) -> int:
        """The first listener's bound port (the real one when configured with port 0)."""
        return self.bound_port(self.listeners[0].listener_name)

    def bound_port(self, listener_name: str) -> int:
        """The port a listener is bound to (Kafka's ``boundPort(listenerName)``)."""
        acceptor = self.acceptors.get(listener_name)
        if acceptor is not None:
            return acceptor.port
        return next(x.port for x in self.listeners if x.listener_name == listener_name)

    def startup(self) -> None:
        for listener in self.listeners:
            try:
                self.acceptors[listener.listener_name] = Acceptor(
                    listener.host,
                    listener.port,
                    self.processors_by_listener[listener.listener_name],
                    self.connection_quotas,
                    *self._buffers,
                    listener_name=listener.listener_name,
                )
            except OSError:  # one port taken: release the ones already bound, then stop the broker
                for acceptor in self.acceptors.values():
                    acceptor.server_socket.close()
                self.acceptors.clear()
                raise
        for p in self.processors:
            p.start()
        for listener in self.listeners:
            self.acceptors[listener.listener_name].start()
            log.info(
                "Socket server listening on %s:%d (%s, %s)", listener.host,
                self.bound_port(listener.listener_name), listener.listener_name, listener.security_protocol,
            )  # fmt: skip

    def shutdown(self) -> None:
        for acceptor in self.acceptors.values():
            acceptor.shutdown()
        for acceptor in self.acceptors.values():
            if acceptor.is_alive():
                acceptor.join(5)
        for p in self.processors:
            p.shutdown()
        for p in self.processors:
            if p.is_alive():
                p.join(5)

    def connection_count(self) -> int:
        return sum(p.connection_count() for p in self.processors)
