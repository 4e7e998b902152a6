"""A broker's channel to the active controller: requests out to whichever controller is active now,
sent again to the next one when the first stops being it, answers back to the caller.

Mirrors: kafka.server.BrokerToControllerChannelManager, BrokerToControllerRequestThread,
         ControllerNodeProvider and RaftControllerNodeProvider
         (core/src/main/scala/kafka/server/BrokerToControllerChannelManager.scala, Kafka 3.3.0), with
         the parts of kafka.common.InterBrokerSendThread (core/src/main/scala/kafka/common/) the
         request thread runs
Book:    beyond the book: chapter 12 (KRaft); the NetworkClient is chapter 2's (2.1.3)
Differs: the NetworkClient is kafka_lite's 0.10.1 one, whose codec is the client table; the
         controller's RPCs live in ``ControllerApiKeys`` (controller_messages.py), so
         ``_ControllerNetworkClient`` swaps the codec in its two byte-touching methods, as the Raft
         channel does. No ApiVersions exchange with the controller (``controller_api_versions``):
         each API is sent at the one version kafka_lite's controller speaks.

Who uses it. In KRaft mode a broker never writes metadata itself: it asks the active controller.
The lifecycle manager sends BrokerRegistration and BrokerHeartbeat through one of these channels,
and (in Kafka) the broker forwards AlterPartition, AllocateProducerIds and the clients' admin
requests through others. The caller hands over a request and a ``ControllerRequestCompletionHandler``
and goes on; the channel's one thread does the rest.

Finding the controller. The ``ControllerNodeProvider`` says which node is the active controller now.
In KRaft it is ``RaftControllerNodeProvider``: the Raft client's ``leader_and_epoch()`` names the
leader's id, and ``controller.quorum.voters`` gives that voter's address. The request thread keeps
the node it last found (``active_controller_address``) and asks the provider again only after it has
dropped it.

How a request travels (``do_work``, one pass of the thread's loop)::

    no active controller known:  ask the provider; none yet -> poll the network 100 ms and look again
    an active controller known:  take the first queued request (answering on_timeout() for any whose
                                 retry_timeout_ms has passed), send it when the connection is ready,
                                 poll, and hand each answer to handle_response:

        the connection dropped              -> forget the controller, the request goes back first in line
        the answer holds NOT_CONTROLLER     -> close the connection, forget the controller, same
        anything else                       -> the caller's on_complete(response)

So a request follows the controller from node to node until it is answered or ``retry_timeout_ms``
after it was first handed over; only then does the caller hear ``on_timeout()``. One request is in
flight at a time (``max.in.flight.requests.per.connection`` is 1), so the controller answers them in
the order they were sent.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_lite.clients.metadata import Node
from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.controller_messages import (
    ControllerApiKeys,
    encode_controller_request,
    parse_controller_response,
)
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.network.channel_builders import PLAINTEXT_CHANNEL_BUILDER, ChannelBuilder
from kafka_lite.network.selector import Selector
from kafka_lite.raft.raft_client import RaftClient
from kafka_lite.raft.raft_config import quorum_voter_strings_to_nodes

log = logging.getLogger(__name__)

# How long the request thread waits for I/O while it knows no controller, before asking the provider
# again (Kafka's "need to backoff to avoid tight loops").
NO_CONTROLLER_BACKOFF_MS = 100


# -- the codec: the controller's RPC table ----------------------------------------------------------------


class _ControllerNetworkClient(NetworkClient):
    """The NetworkClient with the controller's codec: ``CONTROLLER_REQUESTS``/``CONTROLLER_RESPONSES``."""

    def _encode_request(self, header: RequestHeader, body: dict) -> bytes:
        return encode_controller_request(header, body)

    def _parse_response(self, request: ClientRequest, payload: bytes) -> tuple[int, dict]:
        return parse_controller_response(request.api, request.version, payload)


# -- finding the controller -------------------------------------------------------------------------------


class ControllerNodeProvider(ABC):
    """Which node is the active controller now, if any is known."""

    @abstractmethod
    def get(self) -> Node | None: ...


class RaftControllerNodeProvider(ControllerNodeProvider):
    """The active controller is the Raft quorum's leader: its id from the Raft client, its address
    from ``controller.quorum.voters``. A broker is an observer of the quorum, so its Raft client
    learns each new leader from the voters it fetches from."""

    def __init__(
        self, raft_client: RaftClient, controller_quorum_voter_nodes: Sequence[Node], listener_name: str
    ) -> None:
        self._raft_client = raft_client
        self.listener_name = listener_name
        self.id_to_node = {node.id: node for node in controller_quorum_voter_nodes}

    @staticmethod
    def voter_nodes(quorum_voters: Sequence[str]) -> list[Node]:
        """The nodes of ``controller.quorum.voters`` entries (``id@host:port``)."""
        return [
            Node(node_id, host, port) for node_id, host, port in quorum_voter_strings_to_nodes(quorum_voters)
        ]

    def get(self) -> Node | None:
        leader_id = self._raft_client.leader_and_epoch().leader_id
        return None if leader_id is None else self.id_to_node[leader_id]


# -- the caller's side ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ControllerRequestCompletionHandler:
    """What the caller hears: ``on_complete`` with the controller's answer (``ClientResponse.body``,
    a dict of the API's response schema), or ``on_timeout`` once the request could not be answered
    within the channel's ``retry_timeout_ms``, counting every controller it was sent to."""

    on_complete: Callable[[ClientResponse], None]
    on_timeout: Callable[[], None]


@dataclass
class BrokerToControllerQueueItem:
    created_time_ms: int
    api: ControllerApiKeys
    body: dict[str, Any]
    callback: ControllerRequestCompletionHandler


class BrokerToControllerChannelManager:
    def __init__(
        self,
        controller_node_provider: ControllerNodeProvider,
        time: Time = SYSTEM,
        broker_id: int = -1,
        channel_name: str = "heartbeat",
        retry_timeout_ms: int = 60_000,
        request_timeout_ms: int = 30_000,
        reconnect_backoff_ms: int = 50,
        channel_builder: ChannelBuilder = PLAINTEXT_CHANNEL_BUILDER,
    ) -> None:
        """``channel_builder``: how a connection to a controller logs in (``KafkaConfig.controller_channel_builder``)."""
        self._channel_name = channel_name
        self._broker_id = broker_id
        # One request in flight, so that the controller answers in the order requests were sent.
        network_client = _ControllerNetworkClient(
            Selector(time=time, channel_builder=channel_builder), str(broker_id), max_in_flight_requests_per_connection=1,
            reconnect_backoff_ms=reconnect_backoff_ms, request_timeout_ms=request_timeout_ms, time=time,
        )  # fmt: skip
        self.request_thread = BrokerToControllerRequestThread(
            network_client, controller_node_provider, time,
            f"BrokerToControllerChannelManager broker={broker_id} name={channel_name}",
            request_timeout_ms, retry_timeout_ms,
        )  # fmt: skip

    def start(self) -> None:
        self.request_thread.start()

    def shutdown(self) -> None:
        self.request_thread.shutdown()
        log.info("Broker to controller channel manager for %s shutdown", self._channel_name)

    def send_request(
        self, api: ControllerApiKeys, body: dict[str, Any], callback: ControllerRequestCompletionHandler
    ) -> None:
        """Queue ``body`` (a dict of ``api``'s request schema) for the active controller."""
        self.request_thread.enqueue(
            BrokerToControllerQueueItem(self.request_thread.time.milliseconds(), api, body, callback)
        )


# -- the request thread -----------------------------------------------------------------------------------


class BrokerToControllerRequestThread(threading.Thread):
    def __init__(
        self,
        network_client: NetworkClient,
        controller_node_provider: ControllerNodeProvider,
        time: Time,
        name: str,
        request_timeout_ms: int,
        retry_timeout_ms: int,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self._network_client = network_client
        self._controller_node_provider = controller_node_provider
        self.time = time
        self._request_timeout_ms = request_timeout_ms
        self._retry_timeout_ms = retry_timeout_ms
        # Kafka's LinkedBlockingDeque: callers add at the back, a request to resend goes back in front.
        self._request_queue: deque[BrokerToControllerQueueItem] = deque()
        self._queue_lock = threading.Lock()
        # InterBrokerSendThread's unsent requests: taken from the queue, waiting for a connection.
        self._unsent: list[ClientRequest] = []
        self._active_controller: Node | None = None
        self._running = threading.Event()
        self.started = False

    # -- called from other threads ----------------------------------------------------------------------

    def active_controller_address(self) -> Node | None:
        return self._active_controller

    def enqueue(self, request: BrokerToControllerQueueItem) -> None:
        if not self.started:
            raise RuntimeError("Cannot enqueue a request if the request thread is not running")
        with self._queue_lock:
            self._request_queue.append(request)
        if self.active_controller_address() is not None:
            self._network_client.wakeup()

    def queue_size(self) -> int:
        with self._queue_lock:
            return len(self._request_queue)

    def start(self) -> None:
        self._running.set()
        super().start()
        self.started = True

    def shutdown(self) -> None:
        self._running.clear()
        self._network_client.wakeup()
        if self.is_alive():
            self.join(timeout=5)
        self._network_client.close_all()

    # -- the thread -------------------------------------------------------------------------------------

    def run(self) -> None:
        while self._running.is_set():
            try:
                self.do_work()
            except Exception:  # Kafka's ShutdownableThread logs and carries on
                log.exception("Error in %s", self.name)

    def do_work(self) -> None:
        if self.active_controller_address() is not None:
            self._poll_once(LONG_MAX)
            return
        log.debug("Controller isn't cached, looking for local metadata changes")
        controller_node = self._controller_node_provider.get()
        if controller_node is not None:
            log.info("Recorded new controller, from now on will use node %s", controller_node)
            self._update_controller_address(controller_node)
            self._network_client.set_node(
                controller_node.id_string, controller_node.host, controller_node.port
            )
        else:
            log.debug("No controller defined in metadata cache, retrying after backoff")
            self._poll_once(NO_CONTROLLER_BACKOFF_MS)

    def _update_controller_address(self, new_active_controller: Node | None) -> None:
        self._active_controller = new_active_controller

    def generate_requests(self) -> ClientRequest | None:
        """The next request to send, if a controller is known; every queued request whose retry time
        has run out is answered ``on_timeout`` on the way."""
        current_time_ms = self.time.milliseconds()
        with self._queue_lock:
            queued = list(self._request_queue)
        for item in queued:
            if current_time_ms - item.created_time_ms >= self._retry_timeout_ms:
                self._remove(item)
                item.callback.on_timeout()
                continue
            controller = self.active_controller_address()
            if controller is not None:
                self._remove(item)
                return ClientRequest(
                    controller.id_string, item.api, item.api.latest_version, item.body,
                    callback=lambda response, item=item: self.handle_response(item, response),
                )  # fmt: skip
        return None

    def _remove(self, item: BrokerToControllerQueueItem) -> None:
        with self._queue_lock:
            self._request_queue.remove(item)

    def _put_first(self, item: BrokerToControllerQueueItem) -> None:
        with self._queue_lock:
            self._request_queue.appendleft(item)

    # --8<-- [start:handle_response]
    def handle_response(self, queue_item: BrokerToControllerQueueItem, response: ClientResponse) -> None:
        if response.disconnected:
            self._update_controller_address(None)
            self._put_first(queue_item)
        elif Errors.NOT_CONTROLLER.code in error_codes(response.body):
            # Close the connection and look for the new controller in do_work.
            controller = self.active_controller_address()
            if controller is not None:
                self._network_client.close(controller.id_string)
                self._update_controller_address(None)
            self._put_first(queue_item)
        else:
            queue_item.callback.on_complete(response)

    # --8<-- [end:handle_response]

    # -- one pass of InterBrokerSendThread --------------------------------------------------------------

    def _poll_once(self, max_timeout_ms: int) -> None:
        request = self.generate_requests()
        if request is not None:
            request.created_ms = self.time.milliseconds()
            self._unsent.append(request)
        now = self.time.milliseconds()
        timeout = self._send_requests(now, max_timeout_ms)
        self._network_client.poll(timeout, now)
        now = self.time.milliseconds()
        self._check_disconnects(now)
        self._fail_expired_requests(now)

    def _send_requests(self, now: int, max_timeout_ms: int) -> int:
        poll_timeout = max_timeout_ms
        still_unsent = []
        for request in self._unsent:
            if self._network_client.ready(request.destination, now):
                self._network_client.send(request, now)
            else:
                still_unsent.append(request)
                poll_timeout = min(
                    poll_timeout, self._network_client.connection_delay(request.destination, now)
                )
        self._unsent = still_unsent
        return poll_timeout

    def _check_disconnects(self, now: int) -> None:
        # A request already on the wire is failed by the NetworkClient when its connection drops;
        # one still waiting for its connection is failed here, if the connection attempt failed.
        failed = [r for r in self._unsent if self._network_client.connection_failed(r.destination)]
        for request in failed:
            self._unsent.remove(request)
            request.callback(ClientResponse(request, now, disconnected=True))

    def _fail_expired_requests(self, now: int) -> None:
        expired = [r for r in self._unsent if max(0, now - r.created_ms) > self._request_timeout_ms]
        for request in expired:
            log.debug("Failed to send %s after %d ms", request.api.api_name, self._request_timeout_ms)
            self._unsent.remove(request)
            request.callback(ClientResponse(request, now, disconnected=True))


def error_codes(body: Any) -> set[int]:
    """Every ``error_code`` in an answer, at the top and in its nested entries (Kafka's
    ``AbstractResponse.errorCounts``): AlterPartition's NOT_CONTROLLER is at the top, but an API may
    answer per partition."""
    if isinstance(body, dict):
        codes = {body["error_code"]} if "error_code" in body else set()
        for value in body.values():
            if isinstance(value, list):
                for entry in value:
                    codes |= error_codes(entry)
        return codes
    return set()
