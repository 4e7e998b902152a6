"""Requests sent (or being sent) that await a response, per node, oldest first out.

Mirrors: org.apache.kafka.clients.InFlightRequests (clients/src/main/java/org/apache/kafka/clients/,
         Kafka 0.10.1)
Book:    chapter 2, 2.1.3

Why per node and in order: Kafka answers a connection's requests in the order they were sent, so the
next response from a node always belongs to that node's oldest in-flight request; the correlation id
only confirms it. ``max.in.flight.requests.per.connection`` (5) caps the pipeline; 1 keeps a retried
batch from overtaking the next one, which is why idempotent producers before Kafka 1.0 needed it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any


class InFlightRequests:
    def __init__(self, max_in_flight_requests_per_connection: int = 5) -> None:
        self.max_per_connection = max_in_flight_requests_per_connection
        self._requests: dict[str, deque] = {}

    def add(self, request: Any) -> None:
        """``request`` needs ``.destination``, ``.send`` (a NetworkSend) and ``.created_ms``."""
        self._requests.setdefault(request.destination, deque()).appendleft(request)  # newest first

    def complete_next(self, node: str) -> Any:
        """The oldest in-flight request to ``node``: the one the next response answers."""
        queue = self._requests.get(node)
        if not queue:
            raise RuntimeError(f"Response from {node} with no request in flight")
        return queue.pop()

    def last_sent(self, node: str) -> Any:
        return self._requests[node][0]

    def complete_last_sent(self, node: str) -> Any:
        """Remove the newest request (one that expects no response, like acks=0 produce)."""
        return self._requests[node].popleft()

    def can_send_more(self, node: str) -> bool:
        """Nothing in flight, or the newest request fully sent and fewer than the cap in flight."""
        queue = self._requests.get(node)
        return not queue or (queue[0].send.completed() and len(queue) < self.max_per_connection)

    def count(self, node: str | None = None) -> int:
        if node is not None:
            return len(self._requests.get(node, ()))
        return sum(len(q) for q in self._requests.values())

    def clear_all(self, node: str) -> list:
        """Remove and return every request to ``node`` (its connection dropped), oldest first."""
        queue = self._requests.pop(node, deque())
        return list(reversed(queue))

    def nodes_with_timed_out_requests(self, now: int, request_timeout_ms: int) -> Iterable[str]:
        return [
            node
            for node, queue in self._requests.items()
            if queue and now - queue[-1].created_ms > request_timeout_ms
        ]
