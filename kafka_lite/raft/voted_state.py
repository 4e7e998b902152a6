"""Voted: the node has voted for a candidate in this epoch and waits to hear who won.

Mirrors: org.apache.kafka.raft.VotedState
         (raft/src/main/java/org/apache/kafka/raft/VotedState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Labs:    lab 18, stage 1 (``VotedState.can_grant_vote``)

The node has cast its one vote of the epoch, the vote Raft's election safety rests on (the paper's
5.2); ``can_grant_vote`` answers any further Vote request of the epoch. The vote is on disk before
this state exists (``QuorumState`` persists first). If the election timer expires with no leader
heard, the node becomes a candidate of the next epoch.
"""

from __future__ import annotations

import logging
from collections.abc import Set

from kafka_lite.common.time import Time
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.epoch_state import EpochState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.timer import Timer

log = logging.getLogger(__name__)


class VotedState(EpochState):
    """The node voted for a candidate in this epoch (a vote it keeps across a restart) and waits to
    hear who won."""

    def __init__(
        self,
        time: Time,
        epoch: int,
        voted_id: int,
        voters: Set[int],
        high_watermark: LogOffsetMetadata | None,
        election_timeout_ms: int,
    ) -> None:
        self._epoch = epoch
        self._voted_id = voted_id
        self._voters = frozenset(voters)
        self._high_watermark = high_watermark
        self._election_timeout_ms = election_timeout_ms
        self._election_timer = Timer(time, election_timeout_ms)

    def election(self) -> ElectionState:
        return ElectionState(self._epoch, None, self._voted_id, self._voters)

    def voted_id(self) -> int:
        return self._voted_id

    def epoch(self) -> int:
        return self._epoch

    def name(self) -> str:
        return "Voted"

    def remaining_election_time_ms(self, current_time_ms: int) -> int:
        self._election_timer.update(current_time_ms)
        return self._election_timer.remaining_ms()

    def has_election_timeout_expired(self, current_time_ms: int) -> bool:
        self._election_timer.update(current_time_ms)
        return self._election_timer.is_expired()

    def override_election_timeout(self, current_time_ms: int, timeout_ms: int) -> None:
        self._election_timer.update(current_time_ms)
        self._election_timer.reset(timeout_ms)

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        # BEGIN SOLUTION
        # One vote per epoch is what makes a Raft leader unique: two candidates cannot both gather a
        # majority when no voter votes twice. So the vote goes again only to the same candidate (its
        # Vote request may have been retried after a lost response), and to no other.
        if self._voted_id == candidate_id:
            return True
        log.debug(
            "Rejecting vote request from candidate %d since we already have voted for another candidate %d in epoch %d",
            candidate_id,
            self._voted_id,
            self._epoch,
        )
        return False
        # END SOLUTION

    def high_watermark(self) -> LogOffsetMetadata | None:
        return self._high_watermark

    def __repr__(self) -> str:
        return (
            f"Voted(epoch={self._epoch}, votedId={self._voted_id}, voters={sorted(self._voters)}, "
            f"electionTimeoutMs={self._election_timeout_ms})"
        )
