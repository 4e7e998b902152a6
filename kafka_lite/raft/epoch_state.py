"""What every one of a node's six states in an epoch answers: its election, its epoch, whether it
would vote for a candidate, and the high watermark it knows.

Mirrors: org.apache.kafka.raft.EpochState
         (raft/src/main/java/org/apache/kafka/raft/EpochState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: no ``LogContext``: each state logs through its module's logger.

The six states, and what a node is in each (``QuorumState`` moves between them):

* Unattached: knows the epoch, knows no leader, has not voted in it;
* Voted: has voted for a candidate in this epoch, and may not vote for another;
* Candidate: is asking for votes in this epoch (it voted for itself);
* Leader: won this epoch's election;
* Follower: knows this epoch's leader and fetches from it;
* Resigned: was leader of this epoch and is stepping down (shutdown, or a failure).

A state is immutable in its epoch and its election: a new epoch, a vote or a leader is a new state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata


class EpochState(ABC):
    def high_watermark(self) -> LogOffsetMetadata | None:
        """The high watermark this node knows in this state, None when it knows none."""
        return None

    @abstractmethod
    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        """Whether to vote for ``candidate_id`` (the caller then calls
        ``QuorumState.transition_to_voted``). ``is_log_up_to_date``: the candidate's last entry is
        at least as recent as ours (the paper's 5.4.1), which the caller compares beforehand."""

    @abstractmethod
    def election(self) -> ElectionState:
        """The election state to persist for this state (immutable)."""

    @abstractmethod
    def epoch(self) -> int: ...

    @abstractmethod
    def name(self) -> str:
        """The state's name for people: "Unattached", "Voted", "Candidate", ..."""

    def close(self) -> None:
        """Release what the state holds when the node leaves it (the leader's accumulator).
        Most states hold nothing (Kafka's are ``Closeable`` with empty ``close``s)."""
        return None
