"""The network client: connections to nodes, requests out, responses matched back to them.

Mirrors: org.apache.kafka.clients.NetworkClient, ClientRequest and ClientResponse
         (clients/src/main/java/org/apache/kafka/clients/, Kafka 0.10.1)
Book:    chapter 2, 2.1.3 (the client's network connection objects)
Differs: requests carry a callback directly (Kafka wraps it in a RequestCompletionHandler); node
         addresses come from ``Metadata`` or are given with ``set_node`` (tests, bootstrap). The
         metadata updater's timeouts are Kafka 0.10.2's: with no node to ask it waits
         ``reconnect.backoff.ms``, with a connection on its way until that completes (0.10.1 keeps
         the time no node was available and waits ``retry.backoff.ms`` from then).

One thread calls ``ready``, ``send`` and ``poll``; nothing blocks except ``poll``'s wait for I/O.
``poll`` turns the selector's results into ``ClientResponse`` objects: a response matched to the
oldest in-flight request of its node (the correlation id must agree), a request that needed no
response once its bytes are out (acks=0), or a disconnect that fails every request in flight to that
node, after which the node is blacked out for ``reconnect.backoff.ms``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_lite.clients.connection_states import ClusterConnectionStates, ConnectionState
from kafka_lite.clients.in_flight_requests import InFlightRequests
from kafka_lite.clients.metadata import Cluster, Metadata, unavailable_topics
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request, parse_response
from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.network.selector import Selector
from kafka_lite.network.transfer import NetworkSend

log = logging.getLogger(__name__)


@dataclass
class ClientRequest:
    destination: str
    api: ApiKeys
    version: int
    body: dict[str, Any]
    expect_response: bool = True
    callback: Callable[[ClientResponse], None] | None = None
    correlation_id: int = -1  # assigned by NetworkClient.send
    created_ms: int = 0
    send: NetworkSend | None = field(default=None, repr=False)


@dataclass
class ClientResponse:
    request: ClientRequest
    received_ms: int
    body: dict[str, Any] | None = None
    disconnected: bool = False  # the connection dropped before the response came

    @property
    def request_latency_ms(self) -> int:
        """From the request's creation to its response (Kafka's ``requestLatencyMs``)."""
        return self.received_ms - self.request.created_ms


class NetworkClient:
    def __init__(
        self,
        selector: Selector,
        client_id: str = "kafka-lite",
        max_in_flight_requests_per_connection: int = 5,
        reconnect_backoff_ms: int = 50,
        request_timeout_ms: int = 30_000,
        time: Time = SYSTEM,
        metadata: Metadata | None = None,
    ) -> None:
        self.selector = selector
        # With a Metadata, the client keeps it fresh (Kafka's DefaultMetadataUpdater): before each
        # poll it asks the least loaded node for metadata when a refresh is due.
        self.metadata = metadata
        self._metadata_fetch_in_progress = False
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.time = time
        self.connection_states = ClusterConnectionStates(reconnect_backoff_ms)
        self.in_flight = InFlightRequests(max_in_flight_requests_per_connection)
        self._addresses: dict[str, tuple[str, int]] = {}
        # Where each node was last connected: Kafka hands NetworkClient.ready a Node, which carries its
        # address, so a node the metadata stops listing (it died, or the broker that answered the last
        # refresh has not yet heard it is back) is still reconnected where it was chosen.
        self._last_addresses: dict[str, tuple[str, int]] = {}
        self._correlation = itertools.count()
        self._authentication_exceptions: dict[str, Exception] = {}

    def authentication_exception(self, node: str) -> Exception | None:
        """Why the last connection to ``node`` failed SASL authentication, if it did (Kafka 1.0's
        ``NetworkClient.authenticationException``)."""
        return self._authentication_exceptions.get(node)

    def set_node(self, node: str, host: str, port: int) -> None:
        self._addresses[node] = (host, port)

    # -- connections ---------------------------------------------------------------------------------------

    def ready(self, node: str, now: int) -> bool:
        """True if a request can be sent to ``node`` now; otherwise start connecting if allowed."""
        if self.is_ready(node, now):
            return True
        if self.connection_states.can_connect(node, now):
            self._initiate_connect(node, now)
        return False

    def is_ready(self, node: str, now: int) -> bool:
        return self.connection_states.is_connected(node) and self.in_flight.can_send_more(node)

    def connection_failed(self, node: str) -> bool:
        """True if the last connection to ``node`` failed or closed, until the next attempt starts
        (Kafka's ``connectionFailed``): how the consumer's network client learns that requests it
        still holds for the node will not go out."""
        return self.connection_states.state_of(node) == ConnectionState.DISCONNECTED

    def connection_delay(self, node: str, now: int) -> int:
        return self.connection_states.connection_delay(node, now)

    def _address(self, node: str) -> tuple[str, int] | None:
        if node in self._addresses:
            return self._addresses[node]
        if self.metadata is not None:
            known = self.metadata.cluster.nodes.get(int(node)) if node.lstrip("-").isdigit() else None
            if known is not None:
                return known.host, known.port
        return self._last_addresses.get(node)

    def _known_nodes(self) -> list[str]:
        nodes = list(self._addresses)
        if self.metadata is not None:
            nodes += [str(n) for n in self.metadata.cluster.nodes if str(n) not in self._addresses]
        return nodes

    def _initiate_connect(self, node: str, now: int) -> None:
        address = self._address(node)
        if address is None:
            raise RuntimeError(f"no address known for node {node}")
        self._last_addresses[node] = address
        self.connection_states.connecting(node, now)
        try:
            self.selector.connect(node, address)
        except OSError as e:
            log.debug("Connection to node %s failed: %s", node, e)  # the selector warns, once
            self.connection_states.disconnected(node, now)

    def least_loaded_node(self, now: int) -> str | None:
        """The known node with the fewest in-flight requests that is not blacked out (for metadata)."""
        candidates = [n for n in self._known_nodes() if not self.connection_states.is_blacked_out(n, now)]
        return min(candidates, key=lambda n: (self.in_flight.count(n), n), default=None)

    # -- requests ------------------------------------------------------------------------------------------

    def send(self, request: ClientRequest, now: int) -> None:
        if not self.is_ready(request.destination, now):
            raise RuntimeError(f"Attempt to send a request to node {request.destination} which is not ready.")
        request.correlation_id = next(self._correlation) & 0x7FFFFFFF
        request.created_ms = now
        header = RequestHeader(request.api, request.version, request.correlation_id, self.client_id)
        request.send = NetworkSend(request.destination, self._encode_request(header, request.body))
        self.in_flight.add(request)
        self.selector.send(request.send)

    def _encode_request(self, header: RequestHeader, body: dict) -> bytes:
        """A request's frame in the client APIs' schemas. The Raft quorum's client overrides this and
        ``_parse_response``: its APIs are a table of their own (chapter 12)."""
        return encode_request(header, body)

    def _parse_response(self, request: ClientRequest, payload: bytes) -> tuple[int, dict]:
        return parse_response(request.api, request.version, payload)

    # --8<-- [start:poll]
    def poll(self, timeout_ms: int, now: int | None = None) -> list[ClientResponse]:
        """Do network I/O for up to ``timeout_ms``; return the responses that completed."""
        if now is None:
            now = self.time.milliseconds()
        metadata_timeout = self._maybe_update_metadata(now)
        self.selector.poll(min(timeout_ms, metadata_timeout, self.request_timeout_ms))
        # What completed did so during the selector's wait: stamped with the time after it, so that a
        # response's latency counts that wait and a request's timeout is judged now.
        updated_now = self.time.milliseconds()
        responses: list[ClientResponse] = []
        self._handle_completed_sends(responses, updated_now)
        self._handle_completed_receives(responses, updated_now)
        self._handle_disconnections(responses, updated_now)
        self._handle_connections()
        self._handle_timed_out_requests(responses, updated_now)
        for response in responses:
            if response.request.callback is not None:
                response.request.callback(response)
        return responses

    # --8<-- [end:poll]

    def _handle_completed_sends(self, responses: list[ClientResponse], now: int) -> None:
        for send in self.selector.completed_sends:
            request = self.in_flight.last_sent(send.destination)
            if not request.expect_response:  # acks=0: the request is done once it is on the wire
                self.in_flight.complete_last_sent(send.destination)
                responses.append(ClientResponse(request, now))

    def _handle_completed_receives(self, responses: list[ClientResponse], now: int) -> None:
        for receive in self.selector.completed_receives:
            request = self.in_flight.complete_next(receive.source)
            correlation_id, body = self._parse_response(request, receive.payload())
            if correlation_id != request.correlation_id:
                # Kafka treats this as a broken invariant of the connection, not a recoverable error.
                raise RuntimeError(
                    f"Correlation id for response ({correlation_id}) does not match request ({request.correlation_id})"
                )
            responses.append(ClientResponse(request, now, body))

    def _handle_disconnections(self, responses: list[ClientResponse], now: int) -> None:
        for node in self.selector.disconnected:
            self._process_disconnection(node, responses, now)

    def _process_disconnection(self, node: str, responses: list[ClientResponse], now: int) -> None:
        self.connection_states.disconnected(node, now)
        failure = self.selector.authentication_failures.get(node)
        if failure is not None:
            # SASL refused us (Kafka 1.0's AUTHENTICATION_FAILED state): say so once, loudly, and
            # hand the error to whoever waits for metadata; reconnecting would only be refused again.
            log.error("Connection to node %s failed authentication due to: %s", node, failure)
            self._authentication_exceptions[node] = failure
            if self.metadata is not None:
                self.metadata.failed_update(now, failure)
        if self.metadata is not None:
            self.metadata.request_update()  # a lost broker may mean moved leaders
        for request in self.in_flight.clear_all(node):
            log.debug("Cancelled request %s to node %s: disconnected", request.api.api_name, node)
            responses.append(ClientResponse(request, now, disconnected=True))

    def _handle_connections(self) -> None:
        for node in self.selector.connected:
            self._authentication_exceptions.pop(node, None)
            self.connection_states.connected(node)

    def _handle_timed_out_requests(self, responses: list[ClientResponse], now: int) -> None:
        for node in self.in_flight.nodes_with_timed_out_requests(now, self.request_timeout_ms):
            log.warning("Disconnecting from node %s due to request timeout.", node)
            self.selector.close(node)
            self._process_disconnection(node, responses, now)

    # -- keeping metadata fresh (Kafka's DefaultMetadataUpdater) ------------------------------------------------

    def _maybe_update_metadata(self, now: int) -> int:
        """Ask a node for metadata if a refresh is due and one can take the request; return how long
        ``poll`` may wait before it must look again (Kafka's ``DefaultMetadataUpdater.maybeUpdate``)."""
        if self.metadata is None:
            return LONG_MAX
        wait_for_metadata_fetch = self.request_timeout_ms if self._metadata_fetch_in_progress else 0
        metadata_timeout = max(self.metadata.time_to_next_update(now), wait_for_metadata_fetch)
        if metadata_timeout > 0:
            return metadata_timeout
        node = self.least_loaded_node(now)
        if node is None:
            # Every node is blacked out after a failed connection: look again after the back-off,
            # not at once, or a client whose brokers are all down spins through polls of 0 ms.
            log.debug("Give up sending metadata request since no node is available")
            return self.connection_states.reconnect_backoff_ms
        if self.is_ready(node, now):
            topics = sorted(self.metadata.topics) or None  # None: every topic
            if self.metadata.allow_auto_topic_creation:
                version, body = 1, {"topics": topics}
            else:
                version, body = 4, {"topics": topics, "allow_auto_topic_creation": False}
            request = ClientRequest(node, ApiKeys.METADATA, version, body, callback=self._handle_metadata)
            self._metadata_fetch_in_progress = True
            self.send(request, now)
            return self.request_timeout_ms
        if any(self.connection_states.is_connecting(n) for n in self._known_nodes()):
            # A connection on its way: its completion is a network event that ends the wait.
            return self.connection_states.reconnect_backoff_ms
        if self.connection_states.can_connect(node, now):
            self._initiate_connect(node, now)
            return self.connection_states.reconnect_backoff_ms
        # Connected but with no room for another request: a response will end the wait.
        return LONG_MAX

    def _handle_metadata(self, response: ClientResponse) -> None:
        self._metadata_fetch_in_progress = False
        if response.disconnected or response.body is None or not response.body["brokers"]:
            self.metadata.failed_update(response.received_ms)
            return
        body = response.body
        self.metadata.update(
            Cluster.from_metadata_response(body), response.received_ms, unavailable_topics(body)
        )

    def close(self, node: str) -> None:
        self.selector.close(node)
        self.in_flight.clear_all(node)
        self.connection_states.remove(node)

    # Kafka's KafkaClient also offers these, so that a client thread (the producer's Sender, the
    # consumer's ConsumerNetworkClient) never reaches through the NetworkClient to its selector.

    def in_flight_request_count(self, node: str | None = None) -> int:
        """Requests sent and not yet answered: to ``node``, or to every node."""
        return self.in_flight.count(node)

    def wakeup(self) -> None:
        """Make a ``poll`` blocked in another thread return now."""
        self.selector.wakeup()

    def close_all(self) -> None:
        """Close every connection and the selector itself (Kafka's ``NetworkClient.close()``)."""
        self.selector.close_all()
