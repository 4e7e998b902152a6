"""Where a voter keeps its ``ElectionState`` between runs.

Mirrors: org.apache.kafka.raft.QuorumStateStore
         (raft/src/main/java/org/apache/kafka/raft/QuorumStateStore.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

Two implementations: ``FileBasedStateStore`` (the ``quorum-state`` file a controller keeps beside
its metadata log) and ``MockQuorumStateStore`` (in memory, for unit tests and the simulation, where
a "restart" is a new ``QuorumState`` over the same store object).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.raft.election_state import ElectionState

# How the file spells "none" for the leader and the vote.
UNKNOWN_LEADER_ID = -1
NOT_VOTED = -1


class QuorumStateStore(ABC):
    @abstractmethod
    def read_election_state(self) -> ElectionState | None:
        """The last election state written, or None if none ever was."""

    @abstractmethod
    def write_election_state(self, latest: ElectionState) -> None:
        """Persist ``latest``. Atomic: a crash leaves either the old state whole or the new one."""

    @abstractmethod
    def clear(self) -> None:
        """Forget everything, for a fresh start."""
