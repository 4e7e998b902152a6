"""A quorum state store in memory: what a node "persists" in unit tests and in the simulation.

Mirrors: org.apache.kafka.raft.MockQuorumStateStore
         (raft/src/test/java/org/apache/kafka/raft/MockQuorumStateStore.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A restart in a test is a new ``QuorumState`` over the same store: what it reads back is exactly what
the previous one wrote, which is all Raft asks of stable storage. Beside the simulator, which
restarts its nodes over one of these, as Kafka keeps it beside its tests: the runtime never imports it.
"""

from __future__ import annotations

from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.quorum_state_store import QuorumStateStore


class MockQuorumStateStore(QuorumStateStore):
    def __init__(self) -> None:
        self._current: ElectionState | None = None

    def read_election_state(self) -> ElectionState | None:
        return self._current

    def write_election_state(self, latest: ElectionState) -> None:
        self._current = latest

    def clear(self) -> None:
        self._current = None
