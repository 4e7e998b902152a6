"""Which peers the Raft client may send to now: one request in flight per destination, a backoff
after a failed one, and a timeout after which an unanswered one no longer blocks the next.

Mirrors: org.apache.kafka.raft.RequestManager and its ConnectionState
         (raft/src/main/java/org/apache/kafka/raft/RequestManager.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Each destination's connection is in one of three states::

    READY ──send──> AWAITING_REQUEST ──answer──> READY
                          │  └──request timeout──> READY
                          └──error──> BACKING_OFF ──retry backoff──> READY

Raft's requests are idempotent (a Vote asked twice gets the same answer, a Fetch re-reads from the
same offset), so a request that timed out is simply sent again, and a late answer to it is dropped
because its correlation id is no longer the one in flight.
"""

from __future__ import annotations

import enum
import random as _random
from collections.abc import Set

from kafka_lite.raft.timer import LONG_MAX


class _State(enum.Enum):
    AWAITING_REQUEST = "AWAITING_REQUEST"
    BACKING_OFF = "BACKING_OFF"
    READY = "READY"


class ConnectionState:
    def __init__(self, node_id: int, retry_backoff_ms: int, request_timeout_ms: int) -> None:
        self._id = node_id
        self._retry_backoff_ms = retry_backoff_ms
        self._request_timeout_ms = request_timeout_ms
        self._state = _State.READY
        self._last_send_time_ms = 0
        self._last_fail_time_ms = 0
        self.in_flight_correlation_id: int | None = None

    def id(self) -> int:
        return self._id

    def _is_backoff_complete(self, time_ms: int) -> bool:
        return (
            self._state is _State.BACKING_OFF and time_ms >= self._last_fail_time_ms + self._retry_backoff_ms
        )

    def has_request_timed_out(self, time_ms: int) -> bool:
        return (
            self._state is _State.AWAITING_REQUEST
            and time_ms >= self._last_send_time_ms + self._request_timeout_ms
        )

    def is_ready(self, time_ms: int) -> bool:
        if self._is_backoff_complete(time_ms) or self.has_request_timed_out(time_ms):
            self._state = _State.READY
        return self._state is _State.READY

    def is_backing_off(self, time_ms: int) -> bool:
        return self._state is _State.BACKING_OFF and not self._is_backoff_complete(time_ms)

    def has_inflight_request(self, time_ms: int) -> bool:
        return self._state is _State.AWAITING_REQUEST and not self.has_request_timed_out(time_ms)

    def remaining_request_time_ms(self, time_ms: int) -> int:
        if self.has_inflight_request(time_ms):
            return self._last_send_time_ms + self._request_timeout_ms - time_ms
        return 0

    def remaining_backoff_ms(self, time_ms: int) -> int:
        if self.is_backing_off(time_ms):
            return self._last_fail_time_ms + self._retry_backoff_ms - time_ms
        return 0

    def is_response_expected(self, correlation_id: int) -> bool:
        return self.in_flight_correlation_id == correlation_id

    def on_response_error(self, correlation_id: int, time_ms: int) -> None:
        # Only the answer to the request in flight counts: a late answer to a timed-out one does not
        # start a backoff for the request sent after it.
        if self.in_flight_correlation_id == correlation_id:
            self._last_fail_time_ms = time_ms
            self._state = _State.BACKING_OFF
            self.in_flight_correlation_id = None

    def on_response_received(self, correlation_id: int) -> None:
        if self.in_flight_correlation_id == correlation_id:
            self._state = _State.READY
            self.in_flight_correlation_id = None

    def on_request_sent(self, correlation_id: int, time_ms: int) -> None:
        self._last_send_time_ms = time_ms
        self.in_flight_correlation_id = correlation_id
        self._state = _State.AWAITING_REQUEST

    def reset(self) -> None:
        # On every change of state: a request of the old state is no longer awaited.
        self._state = _State.READY
        self.in_flight_correlation_id = None

    def __repr__(self) -> str:
        return (
            f"ConnectionState(id={self._id}, state={self._state.value}, "
            f"lastSendTimeMs={self._last_send_time_ms}, lastFailTimeMs={self._last_fail_time_ms}, "
            f"inFlightCorrelationId={self.in_flight_correlation_id})"
        )


class RequestManager:
    def __init__(
        self, voter_ids: Set[int], retry_backoff_ms: int, request_timeout_ms: int, random: _random.Random
    ) -> None:
        self._retry_backoff_ms = retry_backoff_ms
        self._request_timeout_ms = request_timeout_ms
        # Sorted, so a seeded random picks the same voter on every run.
        self._voters = sorted(voter_ids)
        self._random = random
        self._connections = {
            voter_id: ConnectionState(voter_id, retry_backoff_ms, request_timeout_ms)
            for voter_id in self._voters
        }

    def get_or_create(self, node_id: int) -> ConnectionState:
        connection = self._connections.get(node_id)
        if connection is None:
            connection = self._connections[node_id] = ConnectionState(
                node_id, self._retry_backoff_ms, self._request_timeout_ms
            )
        return connection

    def find_ready_voter(self, current_time_ms: int) -> int | None:
        """A voter an observer may send its leader-finding Fetch to, or None while one such Fetch
        is still in flight (one at a time is enough to find the leader)."""
        start_index = self._random.randrange(len(self._voters))
        result = None
        for i in range(len(self._voters)):
            voter_id = self._voters[(start_index + i) % len(self._voters)]
            connection = self._connections[voter_id]
            if connection.is_ready(current_time_ms):
                result = voter_id
            elif connection.in_flight_correlation_id is not None:
                result = None
                break
        return result

    def backoff_before_available_voter(self, current_time_ms: int) -> int:
        """How long until some voter can be sent to: 0 if one can now."""
        min_backoff_ms = LONG_MAX
        for voter_id in self._voters:
            connection = self._connections[voter_id]
            if connection.is_ready(current_time_ms):
                return 0
            if connection.is_backing_off(current_time_ms):
                min_backoff_ms = min(min_backoff_ms, connection.remaining_backoff_ms(current_time_ms))
            else:
                min_backoff_ms = min(min_backoff_ms, connection.remaining_request_time_ms(current_time_ms))
        return min_backoff_ms

    def reset_all(self) -> None:
        for connection in self._connections.values():
            connection.reset()
