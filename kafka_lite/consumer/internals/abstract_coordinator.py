"""A group member's side of the group protocol: find the coordinator, join, sync, heartbeat, leave.

Mirrors: org.apache.kafka.clients.consumer.internals.AbstractCoordinator, with its HeartbeatThread,
         Generation and response handlers
         (clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractCoordinator.java,
         Kafka 0.10.1)
Book:    chapter 4, 4.2 (the consumer's coordinator: finding it, joining the group), 4.3.1 (sending
         heartbeats), 4.3.3-4.3.5 (the heartbeat thread, its answers, a lost coordinator);
         chapter 5, 5.1.2 (the join and sync requests), 5.1.3 (the leader runs the assignment),
         5.1.4 (the join's preparation and completion)
Differs: the book's 4.3 describes 0.10.0's ``HeartbeatTask``, a task the consumer's ``poll`` ran from
         the network client's delayed-task queue, so a member whose application spent longer than
         the session timeout between polls was dropped from its group. Kafka 0.10.1 moved heartbeats
         onto their own thread (KIP-62): the ``HeartbeatThread`` below keeps the session alive while
         the application works, and a separate limit, ``max.poll.interval.ms``, catches an
         application that stopped polling: the thread then leaves the group itself. kafka_lite
         follows 0.10.1. Kafka's ``synchronized (this)``, ``wait`` and ``notify`` are one
         ``threading.Condition`` over a reentrant lock. A search for the coordinator that gives up
         after a timeout is a later Kafka's, behind ``ensure_coordinator_ready_within``. Requests go out at the versions
         0.10.1 sends (FindCoordinator v0, JoinGroup v1, SyncGroup, Heartbeat and LeaveGroup v0), and
         errors carry the protocol's current names (``NOT_COORDINATOR`` for 0.10's
         ``NOT_COORDINATOR_FOR_GROUP``, ``COORDINATOR_NOT_AVAILABLE``, ``COORDINATOR_LOAD_IN_PROGRESS``).
         Kafka's ``GroupCoordinatorMetrics`` are three plain ``Sensor`` fields (the heartbeat's, the
         join's and the sync's latency); ``last-heartbeat-seconds-ago`` is read from ``Heartbeat``.

The group protocol, as a member runs it (``ensure_active_group``):

1. **Find the coordinator** (``ensure_coordinator_ready``): ask the least loaded broker which broker
   coordinates the group (FindCoordinator, Kafka 0.10's GroupCoordinator request). The coordinator
   gets a connection of its own: its node id is ``2**31 - 1 - broker id``, so a JoinGroup the broker
   holds for seconds never queues the fetches to the same broker behind it.
2. **Join** (``join_group_if_needed``): call ``on_join_prepare`` (the consumer commits and revokes its
   partitions), then send JoinGroup with this member's protocols (``metadata()``: one entry per
   assignor, each carrying the member's subscription). The coordinator answers when every member has
   joined, with the generation, this member's id, the chosen protocol, and, to the leader only,
   every member's metadata.
3. **Sync**: the leader runs ``perform_assignment`` and sends every member's assignment in its
   SyncGroup; a follower sends an empty SyncGroup. Each gets back its own assignment, and
   ``on_join_complete`` hands it to the subclass.
4. **Heartbeat**: the heartbeat thread sends a Heartbeat every ``heartbeat.interval.ms`` while the
   member is STABLE. REBALANCE_IN_PROGRESS in an answer means the group is rebalancing: the member
   must rejoin (its next ``poll`` does). UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION means it was dropped:
   it rejoins as a new member.
5. **Leave** (``maybe_leave_group``): on ``close``, or when the application stopped polling for
   ``max.poll.interval.ms``, a LeaveGroup makes the coordinator rebalance at once instead of waiting
   for the session to time out.

A coordinator that answers NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE, or whose connection drops,
is marked dead (``coordinator_dead``): its unsent requests fail, and the next call finds the
coordinator again. The member's own state is a small enum, not a table: UNJOINED, REBALANCING (a
JoinGroup or SyncGroup is out), STABLE (joined; heartbeats flow).

Threads: the consumer's thread runs everything here except the heartbeat thread's loop. Both share
the ``ConsumerNetworkClient`` and this object's lock; the lock is never held while the consumer's
thread blocks for a JoinGroup (``join_group_if_needed`` takes it only for its bookkeeping), so the
heartbeat thread is never stuck behind a long rebalance. The locks are always taken in one order:
this coordinator's, then the network client's.

This module is long because it mirrors one Java file and its inner classes (the response handlers
and the heartbeat thread), which the book's 4.2-4.3 read together.
"""

from __future__ import annotations

import enum
import logging
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kafka_lite.clients.metadata import Node
from kafka_lite.clients.network_client import ClientResponse
from kafka_lite.common.errors import (
    DisconnectException,
    Errors,
    IllegalGenerationException,
    KafkaException,
    RebalanceInProgressException,
    RetriableException,
    UnknownMemberIdException,
)
from kafka_lite.common.metrics import Sensor
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import Time
from kafka_lite.common.utils import INT32_MAX, LONG_MAX
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient
from kafka_lite.consumer.internals.heartbeat import Heartbeat
from kafka_lite.consumer.internals.request_future import (
    RequestFuture,
    RequestFutureAdapter,
    RequestFutureListener,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_GENERATION_ID = -1  # OffsetCommitRequest.DEFAULT_GENERATION_ID
UNKNOWN_MEMBER_ID = ""  # JoinGroupRequest.UNKNOWN_MEMBER_ID

FIND_COORDINATOR_VERSION = 0
JOIN_GROUP_VERSION = 1  # the first with rebalance_timeout (KIP-62)
SYNC_GROUP_VERSION = 0
HEARTBEAT_VERSION = 0
LEAVE_GROUP_VERSION = 0


class MemberState(enum.Enum):
    UNJOINED = "UNJOINED"  # not part of a group
    REBALANCING = "REBALANCING"  # a JoinGroup or SyncGroup is out
    STABLE = "STABLE"  # joined, and sending heartbeats


@dataclass(frozen=True)
class Generation:
    """The group generation this member joined, its member id in it, and the protocol chosen."""

    generation_id: int
    member_id: str
    protocol: str | None


NO_GENERATION = Generation(DEFAULT_GENERATION_ID, UNKNOWN_MEMBER_ID, None)


class UnjoinedGroupException(RetriableException):
    """A JoinGroup answered after the member had already left the group (woken up, then closed)."""

    def __init__(self, message: str | None = None) -> None:
        KafkaException.__init__(
            self, message or "The member left the group before its JoinGroup was answered."
        )


def group_authorization_failed(group_id: str) -> KafkaException:
    return Errors.GROUP_AUTHORIZATION_FAILED.exception(f"Not authorized to access group: {group_id}")


class AbstractCoordinator(ABC):
    def __init__(
        self,
        client: ConsumerNetworkClient,
        group_id: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        time: Time,
        retry_backoff_ms: int,
    ) -> None:
        self.client = client
        self.time = time
        self.group_id = group_id
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        # The poll timeout is the rebalance timeout: max.poll.interval.ms is both (KIP-62).
        self.heartbeat = Heartbeat(
            session_timeout_ms, heartbeat_interval_ms, rebalance_timeout_ms, retry_backoff_ms
        )
        self.retry_backoff_ms = retry_backoff_ms
        # Kafka's ``synchronized (AbstractCoordinator.this)`` with its wait/notify.
        self._lock = threading.Condition(threading.RLock())
        self.heartbeat_thread: HeartbeatThread | None = None
        self.rejoin_needed = True
        self.needs_join_prepare = True
        self.state = MemberState.UNJOINED
        self.join_future: RequestFuture[bytes] | None = None
        self._coordinator: Node | None = None
        self._generation = NO_GENERATION
        self.find_coordinator_future: RequestFuture[None] | None = None
        # Kafka's GroupCoordinatorMetrics: each answer's latency, recorded as its handler reads it.
        self.heartbeat_latency = Sensor("heartbeat-response-time")
        self.join_latency = Sensor("join-time")
        self.sync_latency = Sensor("sync-time")

    # -- what a subclass says ---------------------------------------------------------------------------

    @abstractmethod
    def protocol_type(self) -> str:
        """The group's protocol type ("consumer"): members of one group must agree on it."""

    @abstractmethod
    def metadata(self) -> list[tuple[str, bytes]]:
        """This member's protocols, most preferred first: (name, metadata bytes) pairs."""

    @abstractmethod
    def on_join_prepare(self, generation: int, member_id: str) -> None:
        """Called before (re)joining: a consumer commits its offsets and revokes its partitions."""

    @abstractmethod
    def perform_assignment(
        self, leader_id: str, protocol: str, all_member_metadata: dict[str, bytes]
    ) -> dict[str, bytes]:
        """The leader's job: every member's assignment, from every member's metadata."""

    @abstractmethod
    def on_join_complete(
        self, generation: int, member_id: str, protocol: str, member_assignment: bytes
    ) -> None:
        """Called with this member's assignment once the group is synced."""

    # -- finding the coordinator ----------------------------------------------------------------------

    def ensure_coordinator_ready(self) -> None:
        """Block until the coordinator is known and connectable (0.10.1's ``ensureCoordinatorReady``)."""
        self.ensure_coordinator_ready_within(None)

    def ensure_coordinator_ready_within(self, timeout_ms: int | None) -> bool:
        """``ensure_coordinator_ready``, giving up after ``timeout_ms`` (None: never); True if found.

        The bound is a later Kafka's: 0.10.2's (KIP-102) for ``close``, 2.0's (KIP-266) for
        ``poll``. 0.10.1 blocks until the coordinator is found, so against brokers that are down
        neither a poll with a timeout nor a close returns. With a bound it looks at least once,
        however short (2.1's loop checks the time at its end): the FindCoordinator request stays in
        flight between calls, so a loop of ``poll(0)`` still finds the coordinator. Without one, the
        loop is 0.10.1's."""
        with self._lock:
            start = self.time.milliseconds()
            remaining = timeout_ms
            while self.coordinator_unknown():
                backoff_ms = (
                    self.retry_backoff_ms
                    if remaining is None
                    else max(0, min(remaining, self.retry_backoff_ms))
                )
                future = self.lookup_coordinator()
                self.client.poll_future(future, remaining)
                if future.is_done():
                    if future.failed():
                        if not future.is_retriable():
                            raise future.exception()
                        self.client.await_metadata_update(backoff_ms)
                    elif self._coordinator is not None and self.client.connection_failed(self._coordinator):
                        # Found, but the connection failed: forget it and back off before asking again.
                        self.coordinator_dead()
                        self.time.sleep(backoff_ms)
                if timeout_ms is not None:
                    remaining = timeout_ms - (self.time.milliseconds() - start)
                    if remaining <= 0:
                        break
            return not self.coordinator_unknown()

    def lookup_coordinator(self) -> RequestFuture[None]:
        """The FindCoordinator request in flight, or a new one to the least loaded broker."""
        with self._lock:
            if self.find_coordinator_future is None:
                node = self.client.least_loaded_node()
                if node is None:
                    return RequestFuture.no_brokers_available()
                self.find_coordinator_future = self._send_find_coordinator_request(node)
            return self.find_coordinator_future

    def _clear_find_coordinator_future(self) -> None:
        with self._lock:
            self.find_coordinator_future = None

    def _send_find_coordinator_request(self, node: Node) -> RequestFuture[None]:
        log.debug("Sending coordinator request for group %s to broker %s", self.group_id, node)
        future = self.client.send(
            node, ApiKeys.FIND_COORDINATOR, FIND_COORDINATOR_VERSION, {"group_id": self.group_id}
        )
        return future.compose(_FindCoordinatorResponseHandler(self))

    def coordinator_unknown(self) -> bool:
        return self.coordinator() is None

    def coordinator(self) -> Node | None:
        """The coordinator, or None if unknown or its connection failed (then it is marked dead)."""
        with self._lock:
            if self._coordinator is not None and self.client.connection_failed(self._coordinator):
                self.coordinator_dead()
                return None
            return self._coordinator

    def coordinator_dead(self) -> None:
        """Forget the coordinator and fail what was waiting to go to it; the next call finds it again."""
        with self._lock:
            if self._coordinator is not None:
                log.info("Marking the coordinator %s dead for group %s", self._coordinator, self.group_id)
                self.client.fail_unsent_requests(
                    self._coordinator, Errors.COORDINATOR_NOT_AVAILABLE.exception()
                )
                self._coordinator = None

    # -- joining ---------------------------------------------------------------------------------------

    def need_rejoin(self) -> bool:
        with self._lock:
            return self.rejoin_needed

    def _rejoin_incomplete(self) -> bool:
        with self._lock:
            return self.join_future is not None

    def poll_heartbeat(self, now: int) -> None:
        """Tell the heartbeat clock the application polled; raise what the heartbeat thread died of."""
        with self._lock:
            if self.heartbeat_thread is not None:
                if self.heartbeat_thread.has_failed():
                    # Raised once; the next ensure_active_group starts a new thread.
                    cause = self.heartbeat_thread.failure_cause()
                    self.heartbeat_thread = None
                    raise cause
                self.heartbeat.poll(now)

    def time_to_next_heartbeat(self, now: int) -> int:
        with self._lock:
            if self.state is MemberState.UNJOINED:
                return LONG_MAX  # not in a group: no heartbeats to send
            return self.heartbeat.time_to_next_heartbeat(now)

    def ensure_active_group(self) -> None:
        """Make sure the member is in the group, joined and synced, with its heartbeat thread running."""
        # The coordinator first: a heartbeat may have found it gone without the group changing.
        self.ensure_coordinator_ready()
        self._start_heartbeat_thread_if_needed()
        self.join_group_if_needed()

    def _start_heartbeat_thread_if_needed(self) -> None:
        with self._lock:
            if self.heartbeat_thread is None:
                self.heartbeat_thread = HeartbeatThread(self)
                self.heartbeat_thread.start()

    def _disable_heartbeat_thread(self) -> None:
        with self._lock:
            if self.heartbeat_thread is not None:
                self.heartbeat_thread.disable()

    # --8<-- [start:join_group_if_needed]
    def join_group_if_needed(self) -> None:
        """Join (prepare, JoinGroup, SyncGroup, complete) until the member is in the current generation."""
        while self.need_rejoin() or self._rejoin_incomplete():
            self.ensure_coordinator_ready()
            # Once per rebalance, even if a wakeup interrupts it and poll comes back here; but on each
            # pass of the loop, as Kafka does, since something may ask for another rebalance meanwhile.
            if self.needs_join_prepare:
                self.on_join_prepare(self._generation.generation_id, self._generation.member_id)
                self.needs_join_prepare = False

            future = self._initiate_join_group()
            self.client.poll_future(future)
            self._reset_join_group_future()

            if future.succeeded():
                self.needs_join_prepare = True
                generation = self._generation
                self.on_join_complete(
                    generation.generation_id, generation.member_id, generation.protocol, future.value()
                )
            else:
                exception = future.exception()
                if isinstance(
                    exception,
                    UnknownMemberIdException | RebalanceInProgressException | IllegalGenerationException,
                ):
                    continue  # rejoin at once: the coordinator is there and waiting
                if not future.is_retriable():
                    raise exception
                self.time.sleep(self.retry_backoff_ms)

    # --8<-- [end:join_group_if_needed]

    def _reset_join_group_future(self) -> None:
        with self._lock:
            self.join_future = None

    def _initiate_join_group(self) -> RequestFuture[bytes]:
        with self._lock:
            # Kept, so that a poll woken up mid-rebalance resumes this join rather than start another.
            if self.join_future is None:
                # Fence the heartbeat thread off: heartbeats of the old generation would only confuse
                # the join. (After on_join_prepare, which may take a while and needs the heartbeats.)
                self._disable_heartbeat_thread()
                self.state = MemberState.REBALANCING
                self.join_future = self._send_join_group_request()
                self.join_future.add_listener(_JoinStateListener(self))
            return self.join_future

    def _send_join_group_request(self) -> RequestFuture[bytes]:
        coordinator = self.coordinator()
        if coordinator is None:
            return RequestFuture.coordinator_not_available()
        log.info("(Re-)joining group %s", self.group_id)
        body = {
            "group_id": self.group_id,
            "session_timeout": self.session_timeout_ms,
            "rebalance_timeout": self.rebalance_timeout_ms,
            "member_id": self._generation.member_id,
            "protocol_type": self.protocol_type(),
            "group_protocols": [
                {"protocol_name": name, "protocol_metadata": metadata} for name, metadata in self.metadata()
            ],
        }
        future = self.client.send(coordinator, ApiKeys.JOIN_GROUP, JOIN_GROUP_VERSION, body)
        return future.compose(_JoinGroupResponseHandler(self))

    def _on_join_follower(self) -> RequestFuture[bytes]:
        log.debug(
            "Sending follower SyncGroup for group %s to coordinator %s", self.group_id, self._coordinator
        )
        return self._send_sync_group_request({})

    # --8<-- [start:on_join_leader]
    def _on_join_leader(self, join_response: dict[str, Any]) -> RequestFuture[bytes]:
        try:
            members = {m["member_id"]: bytes(m["member_metadata"]) for m in join_response["members"]}
            group_assignment = self.perform_assignment(
                join_response["leader_id"], join_response["group_protocol"], members
            )
        except KafkaException as e:
            return RequestFuture.failure(e)
        log.debug("Sending leader SyncGroup for group %s to coordinator %s", self.group_id, self._coordinator)
        return self._send_sync_group_request(group_assignment)

    # --8<-- [end:on_join_leader]

    def _send_sync_group_request(self, group_assignment: dict[str, bytes]) -> RequestFuture[bytes]:
        coordinator = self.coordinator()
        if coordinator is None:
            return RequestFuture.coordinator_not_available()
        body = {
            "group_id": self.group_id,
            "generation_id": self._generation.generation_id,
            "member_id": self._generation.member_id,
            "group_assignment": [
                {"member_id": member_id, "member_assignment": assignment}
                for member_id, assignment in group_assignment.items()
            ],
        }
        future = self.client.send(coordinator, ApiKeys.SYNC_GROUP, SYNC_GROUP_VERSION, body)
        return future.compose(_SyncGroupResponseHandler(self))

    # -- the generation ---------------------------------------------------------------------------------

    def generation(self) -> Generation | None:
        """The generation this member is in, or None while it is not STABLE in one."""
        with self._lock:
            if self.state is not MemberState.STABLE:
                return None
            return self._generation

    def reset_generation(self) -> None:
        """Forget the generation and member id: the member rejoins as a new member."""
        with self._lock:
            self._generation = NO_GENERATION
            self.rejoin_needed = True
            self.state = MemberState.UNJOINED

    def request_rejoin(self) -> None:
        with self._lock:
            self.rejoin_needed = True

    # -- leaving --------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the heartbeat thread and leave the group."""
        with self._lock:
            thread = self.heartbeat_thread
            if thread is not None:
                thread.close()
            self.maybe_leave_group()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def maybe_leave_group(self) -> None:
        """Send LeaveGroup if the member is in a generation, and forget the generation."""
        with self._lock:
            if (
                not self.coordinator_unknown()
                and self.state is not MemberState.UNJOINED
                and self._generation != NO_GENERATION
            ):
                # The response is not waited for: the member leaves either way.
                log.info("Member %s leaving group %s", self._generation.member_id, self.group_id)
                body = {"group_id": self.group_id, "member_id": self._generation.member_id}
                future = self.client.send(self._coordinator, ApiKeys.LEAVE_GROUP, LEAVE_GROUP_VERSION, body)
                future.compose(_LeaveGroupResponseHandler(self))
                self.client.poll_no_wakeup()
            self.reset_generation()

    # -- heartbeats ------------------------------------------------------------------------------------

    def send_heartbeat_request(self) -> RequestFuture[None]:
        with self._lock:
            body = {
                "group_id": self.group_id,
                "group_generation_id": self._generation.generation_id,
                "member_id": self._generation.member_id,
            }
            future = self.client.send(self._coordinator, ApiKeys.HEARTBEAT, HEARTBEAT_VERSION, body)
            return future.compose(_HeartbeatResponseHandler(self))


# -- response handlers ---------------------------------------------------------------------------------


class CoordinatorResponseHandler(RequestFutureAdapter[ClientResponse, T], Generic[T]):
    """Reads a coordinator's response; a disconnect marks the coordinator dead (Kafka's inner class)."""

    def __init__(self, coordinator: AbstractCoordinator) -> None:
        self.coordinator = coordinator
        self.response: ClientResponse | None = None

    @abstractmethod
    def handle(self, body: dict[str, Any], future: RequestFuture[T]) -> None: ...

    def on_failure(self, e: Exception, future: RequestFuture[T]) -> None:
        if isinstance(e, DisconnectException):
            self.coordinator.coordinator_dead()
        future.raise_(e)

    def on_success(self, value: ClientResponse, future: RequestFuture[T]) -> None:
        try:
            self.response = value
            self.handle(value.body or {}, future)
        except KafkaException as e:
            if not future.is_done():
                future.raise_(e)


class _FindCoordinatorResponseHandler(RequestFutureAdapter[ClientResponse, None]):
    def __init__(self, coordinator: AbstractCoordinator) -> None:
        self.coordinator = coordinator

    def on_success(self, value: ClientResponse, future: RequestFuture[None]) -> None:
        c = self.coordinator
        body = value.body or {}
        error = Errors.for_code(body.get("error_code", -1))
        c._clear_find_coordinator_future()
        if error is Errors.NONE:
            node = body["coordinator"]
            with c._lock:
                # A node id of its own, so the coordinator gets a connection of its own.
                c._coordinator = Node(INT32_MAX - node["node_id"], node["host"], node["port"])
                log.info("Discovered coordinator %s for group %s.", c._coordinator, c.group_id)
                c.client.try_connect(c._coordinator)
                c.heartbeat.reset_timeouts(c.time.milliseconds())
            future.complete(None)
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            future.raise_(group_authorization_failed(c.group_id))
        else:
            log.debug("Group coordinator lookup for group %s failed: %s", c.group_id, error.description)
            future.raise_(error)

    def on_failure(self, e: Exception, future: RequestFuture[None]) -> None:
        self.coordinator._clear_find_coordinator_future()
        future.raise_(e)


class _JoinStateListener(RequestFutureListener[bytes]):
    """The member's state once the join ends, set in the callback so it is set even if the consumer
    was woken up before the join finished."""

    def __init__(self, coordinator: AbstractCoordinator) -> None:
        self.coordinator = coordinator

    def on_success(self, value: bytes) -> None:
        c = self.coordinator
        with c._lock:
            log.info(
                "Successfully joined group %s with generation %d", c.group_id, c._generation.generation_id
            )
            c.state = MemberState.STABLE
            if c.heartbeat_thread is not None:
                c.heartbeat_thread.enable()

    def on_failure(self, e: Exception) -> None:
        # Handled by join_group_if_needed; a join finished after a wakeup is simply redone.
        with self.coordinator._lock:
            self.coordinator.state = MemberState.UNJOINED


# --8<-- [start:join_group_response]
class _JoinGroupResponseHandler(CoordinatorResponseHandler[bytes]):
    def handle(self, body: dict[str, Any], future: RequestFuture[bytes]) -> None:
        c = self.coordinator
        error = Errors.for_code(body["error_code"])
        if error is Errors.NONE:
            log.debug("Received successful JoinGroup response for group %s: %s", c.group_id, body)
            c.join_latency.record(self.response.request_latency_ms)
            with c._lock:
                if c.state is not MemberState.REBALANCING:
                    # Woken up and already left the group: do not go on to the SyncGroup.
                    future.raise_(UnjoinedGroupException())
                    return
                c._generation = Generation(body["generation_id"], body["member_id"], body["group_protocol"])
                c.rejoin_needed = False
                if body["member_id"] == body["leader_id"]:
                    c._on_join_leader(body).chain(future)
                else:
                    c._on_join_follower().chain(future)
        # --8<-- [end:join_group_response]
        elif error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            log.debug("Attempt to join group %s rejected since coordinator is loading the group.", c.group_id)
            future.raise_(error)
        elif error is Errors.UNKNOWN_MEMBER_ID:
            c.reset_generation()
            log.debug("Attempt to join group %s failed due to unknown member id.", c.group_id)
            future.raise_(error)
        elif error is Errors.COORDINATOR_NOT_AVAILABLE or error is Errors.NOT_COORDINATOR:
            c.coordinator_dead()
            log.debug("Attempt to join group %s failed due to obsolete coordinator information: %s",
                      c.group_id, error.description)  # fmt: skip
            future.raise_(error)
        elif error in (
            Errors.INCONSISTENT_GROUP_PROTOCOL,
            Errors.INVALID_SESSION_TIMEOUT,
            Errors.INVALID_GROUP_ID,
        ):
            log.error("Attempt to join group %s failed due to fatal error: %s", c.group_id, error.description)
            future.raise_(error)
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            future.raise_(group_authorization_failed(c.group_id))
        else:
            future.raise_(KafkaException(f"Unexpected error in join group response: {error.description}"))


class _SyncGroupResponseHandler(CoordinatorResponseHandler[bytes]):
    def handle(self, body: dict[str, Any], future: RequestFuture[bytes]) -> None:
        c = self.coordinator
        error = Errors.for_code(body["error_code"])
        if error is Errors.NONE:
            c.sync_latency.record(self.response.request_latency_ms)
            future.complete(bytes(body["member_assignment"]))
            return
        c.request_rejoin()
        if error is Errors.GROUP_AUTHORIZATION_FAILED:
            future.raise_(group_authorization_failed(c.group_id))
        elif error is Errors.REBALANCE_IN_PROGRESS:
            log.debug("SyncGroup for group %s failed due to coordinator rebalance", c.group_id)
            future.raise_(error)
        elif error is Errors.UNKNOWN_MEMBER_ID or error is Errors.ILLEGAL_GENERATION:
            log.debug("SyncGroup for group %s failed due to %s", c.group_id, error.name)
            c.reset_generation()
            future.raise_(error)
        elif error is Errors.COORDINATOR_NOT_AVAILABLE or error is Errors.NOT_COORDINATOR:
            log.debug("SyncGroup for group %s failed due to %s", c.group_id, error.name)
            c.coordinator_dead()
            future.raise_(error)
        else:
            future.raise_(KafkaException(f"Unexpected error from SyncGroup: {error.description}"))


class _LeaveGroupResponseHandler(CoordinatorResponseHandler[None]):
    def handle(self, body: dict[str, Any], future: RequestFuture[None]) -> None:
        error = Errors.for_code(body["error_code"])
        if error is Errors.NONE:
            log.debug("LeaveGroup request for group %s returned successfully", self.coordinator.group_id)
            future.complete(None)
        else:
            log.debug("LeaveGroup request for group %s failed with error: %s",
                      self.coordinator.group_id, error.description)  # fmt: skip
            future.raise_(error)


class _HeartbeatResponseHandler(CoordinatorResponseHandler[None]):
    def handle(self, body: dict[str, Any], future: RequestFuture[None]) -> None:
        c = self.coordinator
        c.heartbeat_latency.record(self.response.request_latency_ms)
        error = Errors.for_code(body["error_code"])
        if error is Errors.NONE:
            log.debug("Received successful heartbeat response for group %s", c.group_id)
            future.complete(None)
        elif error is Errors.COORDINATOR_NOT_AVAILABLE or error is Errors.NOT_COORDINATOR:
            log.debug("Attempt to heartbeat failed for group %s since coordinator %s is either not started "
                      "or not valid.", c.group_id, c._coordinator)  # fmt: skip
            c.coordinator_dead()
            future.raise_(error)
        elif error is Errors.REBALANCE_IN_PROGRESS:
            log.debug("Attempt to heartbeat failed for group %s since it is rebalancing.", c.group_id)
            c.request_rejoin()
            future.raise_(error)
        elif error is Errors.ILLEGAL_GENERATION or error is Errors.UNKNOWN_MEMBER_ID:
            log.debug("Attempt to heartbeat failed for group %s: %s", c.group_id, error.name)
            c.reset_generation()
            future.raise_(error)
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            future.raise_(group_authorization_failed(c.group_id))
        else:
            future.raise_(KafkaException(f"Unexpected error in heartbeat response: {error.description}"))


# -- the heartbeat thread (KIP-62) -----------------------------------------------------------------------


class HeartbeatThread(threading.Thread):
    """Sends the member's heartbeats while it is STABLE, and leaves the group for an application that
    stopped polling. A daemon: it never keeps the interpreter alive.

    Every step runs under the coordinator's lock; between steps the thread waits on it (released
    while waiting), for at most the retry back-off, or until ``enable`` or ``close`` notifies it.
    """

    def __init__(self, coordinator: AbstractCoordinator) -> None:
        suffix = f" | {coordinator.group_id}" if coordinator.group_id else ""
        super().__init__(name=f"kafka-coordinator-heartbeat-thread{suffix}", daemon=True)
        self.coordinator = coordinator
        self.enabled = False
        self.closed = False
        self._failed: Exception | None = None

    def enable(self) -> None:
        c = self.coordinator
        with c._lock:
            self.enabled = True
            c.heartbeat.reset_timeouts(c.time.milliseconds())
            c._lock.notify()

    def disable(self) -> None:
        with self.coordinator._lock:
            self.enabled = False

    def close(self) -> None:
        c = self.coordinator
        with c._lock:
            self.closed = True
            c._lock.notify()

    def has_failed(self) -> bool:
        return self._failed is not None

    def failure_cause(self) -> Exception | None:
        return self._failed

    # --8<-- [start:heartbeat_run]
    def run(self) -> None:
        c = self.coordinator
        try:
            while True:
                with c._lock:
                    if self.closed:
                        return
                    if not self.enabled:
                        c._lock.wait()
                        continue
                    if c.state is not MemberState.STABLE:
                        # The member left or is rebalancing: stop until a join completes.
                        self.disable()
                        continue

                    c.client.poll_no_wakeup()
                    now = c.time.milliseconds()

                    if c.coordinator_unknown():
                        if c.find_coordinator_future is None:
                            c.lookup_coordinator()
                        else:
                            self._wait(c.retry_backoff_ms)
                    elif c.heartbeat.session_timeout_expired(now):
                        # No heartbeat answered for a session: the coordinator is surely gone.
                        c.coordinator_dead()
                    elif c.heartbeat.poll_timeout_expired(now):
                        # The application stopped polling: leave, so its partitions go to a member
                        # that reads them (KIP-62); its next poll rejoins.
                        log.warning("Member %s leaving group %s: no poll for max.poll.interval.ms "
                                    "(%d ms)", c._generation.member_id, c.group_id, c.rebalance_timeout_ms)  # fmt: skip
                        c.maybe_leave_group()
                    elif not c.heartbeat.should_heartbeat(now):
                        # Responses come in on the next pass's poll, within the back-off.
                        self._wait(c.retry_backoff_ms)
                    else:
                        c.heartbeat.sent_heartbeat(now)
                        c.send_heartbeat_request().add_listener(_HeartbeatListener(c))
        except Exception as e:  # handed to the consumer's thread by poll_heartbeat
            log.error(
                "Heartbeat thread for group %s failed due to unexpected error", c.group_id, exc_info=True
            )
            self._failed = e

    # --8<-- [end:heartbeat_run]

    def _wait(self, ms: int) -> None:
        # Real time, as Java's Object.wait: the thread only needs to come round again soon.
        self.coordinator._lock.wait(ms / 1000.0)


class _HeartbeatListener(RequestFutureListener[None]):
    def __init__(self, coordinator: AbstractCoordinator) -> None:
        self.coordinator = coordinator

    def on_success(self, value: None) -> None:
        c = self.coordinator
        with c._lock:
            c.heartbeat.receive_heartbeat(c.time.milliseconds())

    def on_failure(self, e: Exception) -> None:
        c = self.coordinator
        with c._lock:
            if isinstance(e, RebalanceInProgressException):
                # The coordinator answered, so the session is alive; the member rejoins on its next poll.
                c.heartbeat.receive_heartbeat(c.time.milliseconds())
            else:
                c.heartbeat.fail_heartbeat()
                c._lock.notify()  # the retry is due after the back-off, not the full interval
