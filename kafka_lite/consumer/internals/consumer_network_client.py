"""The consumer's network client: requests sent as futures, and one ``poll`` that moves them all.

Mirrors: org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient, with its
         RequestFutureCompletionHandler and PollCondition
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/ConsumerNetworkClient.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.2 (polling the consumer's network client), 4.2.1 (asynchronous requests),
         4.2.3 (polling the network client)
Differs: Java overloads ``poll``; here ``poll(timeout_ms, now, poll_condition)`` is the core and
         ``poll_future(future, timeout_ms)`` is Kafka's ``poll(future)`` and ``poll(future, timeout)``.
         ``send`` takes the request's version and body (kafka_lite's requests are dicts encoded by
         schema) where Kafka's takes an ``AbstractRequest`` sent at the latest version. Nodes are
         ``Node``s, as in Kafka; the ``NetworkClient`` below knows them by their id string. The book
         (0.10.0) also describes a ``DelayedTaskQueue`` run from ``poll`` for the heartbeat and
         auto-commit tasks; Kafka 0.10.1 removed it when heartbeats moved to their own thread
         (KIP-62), and kafka_lite follows 0.10.1.

``send`` does no I/O: it files the request under its node in ``unsent`` and returns a
``RequestFuture``. ``poll`` does the work, in Kafka's order:

1. fire the completions left over from the last poll (outside the lock);
2. under the lock: send what can be sent (``try_send``: a node takes requests once ``ready``);
   block in ``NetworkClient.poll`` unless the caller's condition is already met; fail the unsent
   requests of nodes whose connection failed (``check_disconnects``); raise ``WakeupException`` if
   another thread asked (``maybe_trigger_wakeup``); send again (a connection may have just
   finished); fail the unsent requests older than ``request.timeout.ms`` (``fail_expired_requests``);
3. fire the completions this poll produced (outside the lock).

Why completions wait in a queue: the ``NetworkClient`` calls a request's callback inside ``poll``,
under this client's lock. Were the future's listeners run there, a listener that takes another lock
(the coordinator's, say) while another thread holding that lock waits for this one would deadlock.
So the callback only queues the response, and listeners run after the lock is released.

Thread safety, as 0.10.1's: the consumer's thread and the heartbeat thread share one client, and
every method that touches ``unsent`` or the ``NetworkClient`` holds the client's lock (Kafka's
``synchronized (this)``). Two things are kept out of the lock, so another thread can reach them while
a poll blocks: the wakeup flag and the queue of completions.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any, Protocol

from kafka_lite.clients.metadata import Metadata, Node
from kafka_lite.clients.network_client import ClientRequest, ClientResponse, NetworkClient
from kafka_lite.common.errors import (
    DisconnectException,
    IllegalStateException,
    TimeoutException,
    WakeupException,
)
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import Time
from kafka_lite.common.utils import LONG_MAX
from kafka_lite.consumer.internals.request_future import RequestFuture

log = logging.getLogger(__name__)


class PollCondition(Protocol):
    """What a caller of ``poll`` waits for; checked under the lock just before blocking, because
    another thread's poll may have satisfied it already. ``RequestFuture`` is one (not done yet)."""

    def should_block(self) -> bool: ...


class ConsumerNetworkClient:
    # No single network wait is longer than this, so a poll with a long timeout still comes back
    # now and then to send what other threads queued meanwhile.
    MAX_POLL_TIMEOUT_MS = 5000

    def __init__(
        self,
        client: NetworkClient,
        metadata: Metadata,
        time: Time,
        retry_backoff_ms: int,
        request_timeout_ms: int,
    ) -> None:
        self.client = client
        self.metadata = metadata
        self.time = time
        self.retry_backoff_ms = retry_backoff_ms
        # An unsent request fails after request.timeout.ms: the node never became ready in time.
        self.unsent_expiry_ms = request_timeout_ms
        # Reentrant as Java's monitors are; guards ``unsent``, ``wakeup_disabled_count`` and the client.
        self._lock = threading.RLock()
        self.unsent: dict[Node, list[ClientRequest]] = {}
        self._nodes: dict[str, Node] = {}  # the nodes requests were sent to, by id string
        self.wakeup_disabled_count = 0
        # Outside the lock (see the module docstring): deque's append and popleft are thread-safe,
        # as Kafka's ConcurrentLinkedQueue, and an Event is Kafka's AtomicBoolean.
        self.pending_completion: deque[RequestFutureCompletionHandler] = deque()
        self._wakeup = threading.Event()

    # -- sending ----------------------------------------------------------------------------------------------

    def send(
        self, node: Node, api: ApiKeys, version: int, body: dict[str, Any]
    ) -> RequestFuture[ClientResponse]:
        """Queue a request for ``node``; it goes out in a later ``poll``. The future completes with the
        ``ClientResponse``, or fails: ``DisconnectException`` if the connection fails first,
        ``TimeoutException`` if the node is not ready within ``request.timeout.ms``."""
        if not isinstance(node, Node):
            raise TypeError(f"send needs the destination as a Node, not {node!r}")
        self._remember_address(node)
        now = self.time.milliseconds()
        completion_handler = RequestFutureCompletionHandler(self.pending_completion)
        # The handler is the request's callback: the NetworkClient calls it with the response.
        request = ClientRequest(
            node.id_string, api, version, body, callback=completion_handler, created_ms=now
        )
        self._put(node, request)
        # Wake a poll blocked in another thread, so that it sends the new request now.
        self.client.wakeup()
        return completion_handler.future

    def _remember_address(self, node: Node) -> None:
        # A Node carries its address, as Kafka's does, so a node the metadata does not list (the group
        # coordinator's connection of its own, ``2**31 - 1 - broker id``) is reachable too.
        with self._lock:
            if node.id_string not in self._nodes:
                self._nodes[node.id_string] = node
                self.client.set_node(node.id_string, node.host, node.port)

    def _put(self, node: Node, request: ClientRequest) -> None:
        # As in 0.10.1, this waits while another thread's poll holds the lock.
        with self._lock:
            self.unsent.setdefault(node, []).append(request)

    def least_loaded_node(self) -> Node | None:
        """The known node with the fewest requests in flight, to ask for metadata or the coordinator;
        None if every node is blacked out. The ``NetworkClient`` answers with an id, which is looked
        up in the metadata's cluster (the bootstrap servers, then the brokers)."""
        with self._lock:
            node_id = self.client.least_loaded_node(self.time.milliseconds())
        if node_id is None:
            return None
        return self.metadata.cluster.nodes.get(int(node_id)) or self._nodes.get(node_id)

    # -- waiting --------------------------------------------------------------------------------------------

    def await_metadata_update(self, timeout_ms: int = LONG_MAX) -> bool:
        """Poll until a metadata refresh lands or ``timeout_ms`` passes; True if one landed."""
        start_ms = self.time.milliseconds()
        version = self.metadata.request_update()
        while True:
            self.poll(timeout_ms)
            if self.metadata.version != version or self.time.milliseconds() - start_ms >= timeout_ms:
                break
        return self.metadata.version > version

    def ensure_fresh_metadata(self) -> None:
        """If a refresh is asked for or due, block until it has landed."""
        if self.metadata.need_update or self.metadata.time_to_next_update(self.time.milliseconds()) == 0:
            self.await_metadata_update()

    def wakeup(self) -> None:
        """Make the poll running in another thread (or the next poll) raise ``WakeupException``.

        No lock: a poll holds it while it blocks. The flag and the selector's wakeup are both safe to
        touch from any thread."""
        self._wakeup.set()
        self.client.wakeup()

    def poll_future(self, future: RequestFuture[Any], timeout_ms: int | None = None) -> bool:
        """Poll until ``future`` is done, or, with ``timeout_ms``, until that much time has passed;
        True if it is done. (Kafka's ``poll(future)`` and ``poll(future, timeout)``.)"""
        if timeout_ms is None:
            while not future.is_done():
                self.poll(self.MAX_POLL_TIMEOUT_MS, self.time.milliseconds(), future)
            return True
        begin = now = self.time.milliseconds()
        remaining = timeout_ms
        while True:
            self.poll(remaining, now, future)
            now = self.time.milliseconds()
            remaining = timeout_ms - (now - begin)
            if future.is_done() or remaining <= 0:
                break
        return future.is_done()

    # --8<-- [start:poll]
    def poll(
        self, timeout_ms: int, now: int | None = None, poll_condition: PollCondition | None = None
    ) -> None:
        """Send what can be sent, wait up to ``timeout_ms`` for network events (not at all if
        ``poll_condition`` no longer needs to), and complete the futures of what finished.

        Raises ``WakeupException`` if ``wakeup`` was called (once per call of ``wakeup``)."""
        if now is None:
            now = self.time.milliseconds()
        # Handlers left over from a poll that a wakeup interrupted.
        self._fire_pending_completed_requests()

        with self._lock:
            self._try_send(now)

            # The condition is checked here, under the lock, because a completion fired by another
            # thread's poll may have met it since the caller last looked.
            if poll_condition is None or poll_condition.should_block():
                # With nothing in flight no response can end the wait, so wait only as long as the
                # retry back-off: a node may become connectable again by then.
                if self.client.in_flight_request_count() == 0:
                    timeout_ms = min(timeout_ms, self.retry_backoff_ms)
                self.client.poll(min(self.MAX_POLL_TIMEOUT_MS, timeout_ms), now)
                now = self.time.milliseconds()
            else:
                self.client.poll(0, now)

            # Right after the network poll, before a later ready() resets a failed node's state.
            self._check_disconnects(now)
            # A broker refused our SASL credentials: no retry will succeed (Kafka 1.0's
            # ``maybeThrowAuthFailure``).
            if self.metadata.authentication_exception is not None:
                raise self.metadata.authentication_exception

            # After the disconnects are checked, so their handlers are queued for the next poll.
            self._maybe_trigger_wakeup()

            # A connection may have completed, or a slot opened up, during the poll.
            self._try_send(now)

            self._fail_expired_requests(now)

        # Outside the lock: a listener may take other locks (see the module docstring).
        self._fire_pending_completed_requests()

    # --8<-- [end:poll]

    def poll_no_wakeup(self) -> None:
        """Do the network I/O that is ready now, without blocking and without raising
        ``WakeupException`` (the heartbeat thread's poll; a pending wakeup stays for the next poll)."""
        self.disable_wakeups()
        try:
            self.poll(0, self.time.milliseconds(), None)
        finally:
            self.enable_wakeups()

    def await_pending_requests(self, node: Node) -> None:
        """Poll until every request to ``node``, sent or not, has finished."""
        while self.pending_request_count(node) > 0:
            self.poll(self.retry_backoff_ms)

    def pending_request_count(self, node: Node | None = None) -> int:
        """Requests not yet finished, to ``node`` or to every node: both unsent and in flight."""
        with self._lock:
            if node is not None:
                return len(self.unsent.get(node, ())) + self.client.in_flight_request_count(node.id_string)
            unsent = sum(len(requests) for requests in self.unsent.values())
            return unsent + self.client.in_flight_request_count()

    # -- inside poll ----------------------------------------------------------------------------------------

    def _fire_pending_completed_requests(self) -> None:
        completed_requests_fired = False
        while self.pending_completion:
            try:
                completion_handler = self.pending_completion.popleft()
            except IndexError:
                break  # another thread's poll took the last one
            completion_handler.fire_completion()
            completed_requests_fired = True
        # A poll in another thread may be blocked waiting for one of these futures.
        if completed_requests_fired:
            self.client.wakeup()

    def _check_disconnects(self, now: int) -> None:
        # The NetworkClient already failed the requests in flight to a node that disconnected; the
        # ones still unsent are ours to fail, as if disconnected too.
        for node in list(self.unsent):
            if self.client.connection_failed(node.id_string):
                # Removed before the handlers see it, so no handler finds these requests again.
                requests = self.unsent.pop(node)
                for request in requests:
                    request.callback(ClientResponse(request, now, disconnected=True))

    def _fail_expired_requests(self, now: int) -> None:
        for node in list(self.unsent):
            requests = self.unsent[node]
            # Oldest first, so the expired ones are a prefix.
            while requests and requests[0].created_ms < now - self.unsent_expiry_ms:
                request = requests.pop(0)
                request.callback.on_failure(
                    TimeoutException(f"Failed to send request after {self.unsent_expiry_ms} ms.")
                )
            if not requests:
                del self.unsent[node]

    def fail_unsent_requests(self, node: Node, e: Exception) -> None:
        """Fail every request still waiting to go to ``node`` with ``e`` (the coordinator does this
        when it marks its coordinator dead)."""
        with self._lock:
            for request in self.unsent.pop(node, []):
                request.callback.on_failure(e)
        # Outside the lock, as in poll.
        self._fire_pending_completed_requests()

    def _try_send(self, now: int) -> bool:
        requests_sent = False
        for node, requests in self.unsent.items():
            # Each request checks readiness afresh: a node takes only max.in.flight at a time.
            while requests and self.client.ready(node.id_string, now):
                self.client.send(requests.pop(0), now)
                requests_sent = True
        return requests_sent

    def _maybe_trigger_wakeup(self) -> None:
        if self.wakeup_disabled_count == 0 and self._wakeup.is_set():
            self._wakeup.clear()
            raise WakeupException("The consumer's poll was woken up.")

    def disable_wakeups(self) -> None:
        with self._lock:
            self.wakeup_disabled_count += 1

    def enable_wakeups(self) -> None:
        with self._lock:
            if self.wakeup_disabled_count <= 0:
                raise IllegalStateException("Cannot enable wakeups since they were never disabled")
            self.wakeup_disabled_count -= 1
            # A wakeup that arrived while disabled may have been swallowed by a poll(0): wake again,
            # so that the next blocking poll returns and raises it.
            if self.wakeup_disabled_count == 0 and self._wakeup.is_set():
                self.client.wakeup()

    # -- connections ----------------------------------------------------------------------------------------

    def connection_failed(self, node: Node) -> bool:
        """True if the last connection to ``node`` failed, until the next attempt (``try_connect``
        or a request sent to it) starts."""
        with self._lock:
            return self.client.connection_failed(node.id_string)

    def try_connect(self, node: Node) -> None:
        """Start connecting to ``node`` if allowed; mostly to clear a failed connection's state."""
        self._remember_address(node)
        with self._lock:
            self.client.ready(node.id_string, self.time.milliseconds())

    def close(self) -> None:
        with self._lock:
            self.client.close_all()


class RequestFutureCompletionHandler:
    """The callback the ``NetworkClient`` calls for one request: it queues the outcome in
    ``pending_completion``, and ``fire_completion`` (run later, outside the lock) completes the
    future: with the response, or with ``DisconnectException`` if the connection dropped first."""

    def __init__(self, pending_completion: deque[RequestFutureCompletionHandler]) -> None:
        self.future: RequestFuture[ClientResponse] = RequestFuture()
        self.response: ClientResponse | None = None
        self.e: Exception | None = None
        self._pending_completion = pending_completion

    def fire_completion(self) -> None:
        if self.e is not None:
            self.future.raise_(self.e)
        elif self.response.disconnected:
            request = self.response.request
            log.debug(
                "Cancelled %s request with correlation id %s due to node %s being disconnected",
                request.api.api_name,
                request.correlation_id,
                request.destination,
            )
            self.future.raise_(
                DisconnectException(f"Node {request.destination} disconnected before answering.")
            )
        else:
            self.future.complete(self.response)

    def on_failure(self, e: Exception) -> None:
        self.e = e
        self._pending_completion.append(self)

    def on_complete(self, response: ClientResponse) -> None:
        self.response = response
        self._pending_completion.append(self)

    # The NetworkClient calls a request's callback with its response (Kafka's RequestCompletionHandler).
    __call__ = on_complete
