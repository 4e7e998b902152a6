"""The request channel: where processors leave requests for the handlers, and handlers leave responses.

Mirrors: kafka.network.RequestChannel (core/src/main/scala/kafka/network/RequestChannel.scala,
         Kafka 0.10.1): ``Request``, ``Response`` with its ``ResponseAction`` (Send, NoOp, Close)
Book:    chapter 2, 2.3.3 (the request channel between processors and handlers)

One queue of requests, bounded by ``queued.max.requests``, shared by every processor: when the
handlers fall behind, a processor blocks on ``send_request`` and stops reading sockets, which is the
broker's back-pressure. Kafka's queue is an ``ArrayBlockingQueue``; here the queue is CPython's
``SimpleQueue``, whose waiting ``get`` is written in C, and the bound is a semaphore of
``queued.max.requests`` permits that a processor takes before it queues a request and a handler
gives back when it takes one. (``queue.Queue`` would bound it itself, but it waits through a
Condition written in Python: every hand-over from a processor to a waiting handler would cost
several more trips through the interpreter lock, on the path every request takes.)

One response queue per processor, because only the processor that owns a connection may touch its
socket: a handler puts the response on that processor's queue and wakes its selector.

Each request carries the times Kafka's request metrics are made of (all ``time.nanoseconds()``):
received by the processor, taken by a handler, handler done, response ready (the same moment unless
the request waited in a purgatory), response dequeued by the processor, response sent.
"""

from __future__ import annotations

import enum
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.security.auth.kafka_principal import KafkaPrincipal
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.network.transfer import FileRegion


@dataclass(frozen=True)
class Session:
    """Who sent a request and from where (Kafka's ``RequestChannel.Session``): the principal its
    connection authenticated as, ``User:ANONYMOUS`` on a PLAINTEXT listener, and the client's host.
    The authorizer decides on these two."""

    principal: KafkaPrincipal
    client_address: str


@dataclass(eq=False)
class Request:
    """A parsed request, and where it came from (``processor``, ``connection_id``)."""

    processor: int
    connection_id: str
    header: RequestHeader
    body: dict[str, Any]
    size: int
    client_address: str
    start_ns: int
    # ApiVersions at a version we do not speak is still answered, with UNSUPPORTED_VERSION, so that a
    # client can retry at a lower one (KIP-35; ``KafkaApis.handle_api_versions_request`` answers it).
    unsupported_version: bool = False
    dequeue_ns: int = 0
    api_local_complete_ns: int = 0  # the handler's own work done
    api_remote_complete_ns: int = 0  # the response ready (later, when it waited in a purgatory)
    response_dequeue_ns: int = 0
    principal: KafkaPrincipal = KafkaPrincipal.ANONYMOUS  # the connection's, set by the processor
    # The listener the request came in on (Kafka 0.10.2's ``RequestChannel.Request.listenerName``):
    # Metadata and FindCoordinator answer with the addresses of this listener.
    listener_name: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"
    # The header's API, looked up once. A broker's listener reads it from the client table; a
    # controller's processor passes the member of the table it parsed with (see listener_type.py),
    # since api key 1 there is Raft's Fetch v13, and 62 is BrokerRegistration, which ApiKeys lacks.
    api: Any = None
    # A request a broker forwarded (KIP-590) is handled as the client's: this is the Envelope that
    # carried it, on whose connection the answer goes back, inside an Envelope answer.
    envelope: Request | None = None
    session: Session = field(init=False)

    def __post_init__(self) -> None:
        if self.api is None:
            self.api = ApiKeys(self.header.api_key)
        self.session = Session(self.principal, self.client_address)


class ResponseAction(enum.Enum):
    SEND = "send"  # write the response, then unmute the connection
    NO_OP = "no-op"  # nothing to write (acks=0): just unmute, so the next request is read
    CLOSE = "close"  # close the connection (acks=0 and the produce failed: the only way to tell)


@dataclass(eq=False)
class Response:
    processor: int
    request: Request
    action: ResponseAction
    pieces: list[bytes | FileRegion] = field(default_factory=list)


class RequestChannel:
    def __init__(self, num_processors: int, queue_size: int, time: Time = SYSTEM) -> None:
        self.time = time
        self.request_queue: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
        self._queue_slots = threading.BoundedSemaphore(queue_size)
        self.response_queues: list[queue.SimpleQueue[Response]] = [
            queue.SimpleQueue() for _ in range(num_processors)
        ]
        self._response_listeners: list[Callable[[int], None]] = []
        self._lock = threading.Lock()

    def add_response_listener(self, listener: Callable[[int], None]) -> None:
        """``listener(processor_id)`` is called after a response is queued (the processor's wakeup)."""
        self._response_listeners.append(listener)

    def send_request(self, request: Request, still_running: Callable[[], bool]) -> bool:
        """Queue ``request`` for the handlers, blocking while the queue is full; False if the
        server stopped while we waited."""
        while still_running():
            if self._queue_slots.acquire(timeout=0.3):
                self.request_queue.put(request)
                return True
        return False

    def receive_request(self, timeout_ms: int) -> Request | None:
        try:
            request = self.request_queue.get(timeout=timeout_ms / 1000)
        except queue.Empty:
            return None
        if request is not None:
            self._queue_slots.release()
            request.dequeue_ns = self.time.nanoseconds()
        return request

    def request_queue_size(self) -> int:
        """Requests waiting for a handler (Kafka's ``RequestQueueSize`` gauge)."""
        return self.request_queue.qsize()

    def send_response(self, response: Response) -> None:
        self.response_queues[response.processor].put(response)
        for listener in self._response_listeners:
            listener(response.processor)

    def no_operation(self, request: Request) -> None:
        self.send_response(Response(request.processor, request, ResponseAction.NO_OP))

    def close_connection(self, request: Request) -> None:
        self.send_response(Response(request.processor, request, ResponseAction.CLOSE))

    def receive_response(self, processor: int) -> Response | None:
        responses = self.response_queues[processor]
        if responses.empty():  # only this processor takes from its queue: not empty means one is there
            return None
        response = responses.get_nowait()
        response.request.response_dequeue_ns = self.time.nanoseconds()
        return response

    def shutdown(self, handlers: int) -> None:
        """Wake every handler with a ``None`` (Kafka's ``AllDone`` request) so it exits."""
        for _ in range(handlers):
            self.request_queue.put(None)  # past the bound: a stopping broker reads no more requests
