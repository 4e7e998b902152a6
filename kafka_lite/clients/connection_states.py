"""Per-node connection state, and the back-off before reconnecting to a node that failed.

Mirrors: org.apache.kafka.clients.ClusterConnectionStates and ConnectionState
         (clients/src/main/java/org/apache/kafka/clients/, Kafka 0.10.1)
Book:    chapter 2, 2.1.3

Why a back-off: when a broker is down, every client would otherwise retry its connection on every
poll, flooding the network and the broker's accept queue when it returns. After a disconnect a node
is "blacked out" for ``reconnect.backoff.ms``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kafka_lite.common.utils import LONG_MAX


class ConnectionState(enum.Enum):
    DISCONNECTED = "DISCONNECTED"
    CONNECTING = "CONNECTING"
    CONNECTED = "CONNECTED"


@dataclass
class _NodeState:
    state: ConnectionState
    last_connect_attempt_ms: int


class ClusterConnectionStates:
    def __init__(self, reconnect_backoff_ms: int = 50) -> None:
        self.reconnect_backoff_ms = reconnect_backoff_ms
        self._nodes: dict[str, _NodeState] = {}

    def can_connect(self, node: str, now: int) -> bool:
        """Never tried, or disconnected for at least the back-off."""
        s = self._nodes.get(node)
        if s is None:
            return True
        return (
            s.state == ConnectionState.DISCONNECTED
            and now - s.last_connect_attempt_ms >= self.reconnect_backoff_ms
        )

    def is_blacked_out(self, node: str, now: int) -> bool:
        s = self._nodes.get(node)
        return (
            s is not None
            and s.state == ConnectionState.DISCONNECTED
            and now - s.last_connect_attempt_ms < self.reconnect_backoff_ms
        )

    def connection_delay(self, node: str, now: int) -> int:
        """How long until a connection attempt is allowed (0 now); LONG_MAX while one is open or opening:
        then the caller waits for network events rather than for time."""
        s = self._nodes.get(node)
        if s is None:
            return 0
        if s.state == ConnectionState.DISCONNECTED:
            return max(self.reconnect_backoff_ms - (now - s.last_connect_attempt_ms), 0)
        return LONG_MAX

    def connecting(self, node: str, now: int) -> None:
        self._nodes[node] = _NodeState(ConnectionState.CONNECTING, now)

    def connected(self, node: str) -> None:
        self._state(node).state = ConnectionState.CONNECTED

    def disconnected(self, node: str, now: int) -> None:
        s = self._state(node)
        s.state = ConnectionState.DISCONNECTED
        s.last_connect_attempt_ms = now

    def is_connected(self, node: str) -> bool:
        s = self._nodes.get(node)
        return s is not None and s.state == ConnectionState.CONNECTED

    def is_connecting(self, node: str) -> bool:
        s = self._nodes.get(node)
        return s is not None and s.state == ConnectionState.CONNECTING

    def state_of(self, node: str) -> ConnectionState:
        s = self._nodes.get(node)
        return ConnectionState.DISCONNECTED if s is None else s.state

    def remove(self, node: str) -> None:
        self._nodes.pop(node, None)

    def _state(self, node: str) -> _NodeState:
        s = self._nodes.get(node)
        if s is None:
            raise RuntimeError(f"No entry found for connection {node}")
        return s
