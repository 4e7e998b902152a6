"""The Raft client's network channel over real sockets: requests to the voters by id, through
kafka_lite's NetworkClient, on a send thread of their own.

Mirrors: kafka.raft.KafkaNetworkChannel and RaftSendThread
         (core/src/main/scala/kafka/raft/KafkaNetworkChannel.scala, Kafka 3.3.0), with the parts of
         kafka.common.InterBrokerSendThread (core/src/main/scala/kafka/common/) that the send thread runs
Book:    beyond the book: chapter 12 (KRaft); the NetworkClient is chapter 2's (2.1.3)
Differs: the NetworkClient is kafka_lite's 0.10.1 one, whose codec is the client table; the quorum's
         RPCs live in ``RAFT_REQUESTS`` (see raft_messages.py), so ``_RaftNetworkClient`` swaps the
         codec in the two methods that touch bytes and nothing else.

How a request travels. The Raft thread calls ``send`` and goes on: the channel puts the request on
the send thread's queue and wakes it. The send thread (``RaftSendThread.do_work``, one pass of
Kafka's InterBrokerSendThread) takes the queue into its pending list, sends each pending request
whose node is ready (connecting first if need be), fails a pending request older than the request
timeout or whose connection attempt failed, and polls the NetworkClient, whose callbacks complete
each request's ``completion`` with a ``RaftResponse.Inbound``. The Raft client's own callback puts
that response on its message queue, and the Raft thread handles it on a later ``poll``.

A failure is an answer, not an exception: a node that cannot be reached, or a connection that drops,
completes the request with a BROKER_NOT_AVAILABLE error response, as Kafka's does; the Raft client
backs off and tries again, which is all Raft asks of its network (messages may be lost, never forged).
"""

from __future__ import annotations

import itertools
import logging
import threading
from dataclasses import dataclass

from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.protocol.raft_messages import RaftApiKeys, encode_raft_request, parse_raft_response
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.network.channel_builders import PLAINTEXT_CHANNEL_BUILDER, ChannelBuilder
from kafka_lite.network.selector import Selector
from kafka_lite.raft import raft_util
from kafka_lite.raft.network_channel import NetworkChannel
from kafka_lite.raft.raft_message import RaftRequest, RaftResponse
from kafka_lite.raft.raft_util import RaftErrors

log = logging.getLogger(__name__)

# How long one pass of the send thread may wait for I/O when nothing is pending (Kafka's
# InterBrokerSendThread polls with the time to the next request timeout, at most this).
POLL_TIMEOUT_MS = 100


class _RaftNetworkClient(NetworkClient):
    """The NetworkClient with the quorum's codec: request header v1/v2 as the version calls for, and
    the schemas of ``RAFT_REQUESTS``/``RAFT_RESPONSES``."""

    def _encode_request(self, header: RequestHeader, body: dict) -> bytes:
        return encode_raft_request(header, body)

    def _parse_response(self, request: ClientRequest, payload: bytes) -> tuple[int, dict]:
        return parse_raft_response(request.api, request.version, payload)


@dataclass
class _RequestAndCompletionHandler:
    """Kafka's RequestAndCompletionHandler: a request waiting for the send thread, and its callback."""

    creation_time_ms: int
    destination: str
    request: ClientRequest


class RaftSendThread(threading.Thread):
    def __init__(self, name: str, network_client: NetworkClient, request_timeout_ms: int, time: Time) -> None:
        super().__init__(name=name, daemon=True)
        self._network_client = network_client
        self._request_timeout_ms = request_timeout_ms
        self._time = time
        self._queue: list[_RequestAndCompletionHandler] = []
        self._queue_lock = threading.Lock()
        self._pending: list[_RequestAndCompletionHandler] = []
        self._running = threading.Event()
        self._running.set()

    def send_request(self, request: _RequestAndCompletionHandler) -> None:
        with self._queue_lock:
            self._queue.append(request)
        self._network_client.wakeup()

    def _generate_requests(self) -> list[_RequestAndCompletionHandler]:
        with self._queue_lock:
            taken, self._queue = self._queue, []
        return taken

    def run(self) -> None:
        while self._running.is_set():
            try:
                self.do_work()
            except Exception:  # Kafka's ShutdownableThread logs and carries on
                log.exception("Error in the Raft send thread")

    def do_work(self) -> None:
        """One pass of Kafka's InterBrokerSendThread.doWork."""
        now = self._time.milliseconds()
        self._pending.extend(self._generate_requests())
        self._send_requests(now)
        self._network_client.poll(POLL_TIMEOUT_MS if not self._pending else 10, now)
        now = self._time.milliseconds()
        self._check_disconnects(now)
        self._fail_expired_requests(now)

    def _send_requests(self, now: int) -> None:
        still_pending = []
        for entry in self._pending:
            if self._network_client.ready(entry.destination, now):
                self._network_client.send(entry.request, now)
            else:
                still_pending.append(entry)
        self._pending = still_pending

    def _check_disconnects(self, now: int) -> None:
        # A request whose node's connection attempt failed will not go out on it: fail it now, so
        # the Raft client's backoff, not the request timeout, decides when to try again.
        still_pending = []
        for entry in self._pending:
            if self._network_client.connection_failed(entry.destination):
                entry.request.callback(ClientResponse(entry.request, now, disconnected=True))
            else:
                still_pending.append(entry)
        self._pending = still_pending

    def _fail_expired_requests(self, now: int) -> None:
        still_pending = []
        for entry in self._pending:
            if now - entry.creation_time_ms > self._request_timeout_ms:
                log.debug("Failed to send %s to node %s in %d ms", entry.request.api, entry.destination,
                          self._request_timeout_ms)  # fmt: skip
                entry.request.callback(ClientResponse(entry.request, now, disconnected=True))
            else:
                still_pending.append(entry)
        self._pending = still_pending

    def initiate_shutdown(self) -> None:
        self._running.clear()
        self._network_client.wakeup()

    def shutdown(self) -> None:
        self.initiate_shutdown()
        if self.is_alive():
            self.join(timeout=2)
        self._network_client.close_all()


class KafkaNetworkChannel(NetworkChannel):
    def __init__(
        self,
        time: Time = SYSTEM,
        request_timeout_ms: int = 2_000,
        thread_name_prefix: str = "raft",
        client_id: str = "raft-client",
        reconnect_backoff_ms: int = 50,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
    ) -> None:
        """``channel_builder``: how a connection to a voter logs in (the controller listener's
        protocol and ``sasl.mechanism.controller.protocol``; see ``KafkaConfig.controller_channel_builder``)."""
        self._correlation_id_counter = itertools.count()
        self._endpoints: dict[int, tuple[str, int]] = {}
        # One request in flight per connection is what RequestManager sends anyway; allowing a few
        # more keeps a late answer to a timed-out request from blocking the next one.
        self._client = _RaftNetworkClient(
            Selector(time=time, channel_builder=channel_builder), client_id, max_in_flight_requests_per_connection=5,
            reconnect_backoff_ms=reconnect_backoff_ms, request_timeout_ms=request_timeout_ms, time=time,
        )  # fmt: skip
        self._request_thread = RaftSendThread(
            f"{thread_name_prefix}-outbound-request-thread", self._client, request_timeout_ms, time
        )

    def new_correlation_id(self) -> int:
        return next(self._correlation_id_counter)

    def send(self, request: RaftRequest.Outbound) -> None:
        def complete_future(data: dict) -> None:
            request.completion.set_result(
                RaftResponse.Inbound(request.correlation_id, request.api_key, data, request.destination_id)
            )

        def on_complete(client_response: ClientResponse) -> None:
            if client_response.disconnected or client_response.body is None:
                complete_future(raft_util.error_response(request.api_key, RaftErrors.BROKER_NOT_AVAILABLE))
            else:
                complete_future(client_response.body)

        if request.destination_id not in self._endpoints:
            complete_future(raft_util.error_response(request.api_key, RaftErrors.BROKER_NOT_AVAILABLE))
            return
        api = RaftApiKeys(request.api_key)
        destination = str(request.destination_id)
        client_request = ClientRequest(
            destination, api, api.latest_version, request.data, callback=on_complete
        )
        self._request_thread.send_request(
            _RequestAndCompletionHandler(request.created_time_ms, destination, client_request)
        )

    def update_endpoint(self, node_id: int, address: tuple[str, int]) -> None:
        self._endpoints[node_id] = address
        self._client.set_node(str(node_id), address[0], address[1])

    def start(self) -> None:
        self._request_thread.start()

    def initiate_shutdown(self) -> None:
        self._request_thread.initiate_shutdown()

    def close(self) -> None:
        self._request_thread.shutdown()
