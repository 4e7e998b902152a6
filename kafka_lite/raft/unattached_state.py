"""Unattached: the node knows an epoch but neither its leader nor a vote in it.

Mirrors: org.apache.kafka.raft.UnattachedState
         (raft/src/main/java/org/apache/kafka/raft/UnattachedState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Labs:    lab 18, stage 1 (``UnattachedState.can_grant_vote``)

A voter lands here when it sees a higher epoch than its own (a Vote or a Fetch carrying it) before it
learns who leads that epoch; and on a fresh start. It has not voted in this epoch, so it is the state
in which a voter may still give its vote (``can_grant_vote``). If no leader shows up before the
election timer expires, it stands as a candidate itself. An observer waits here
forever (its timeout is ``LONG_MAX``): it never stands, it only learns of a leader.
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


class UnattachedState(EpochState):
    """The node knows the epoch, but neither its leader nor a vote of its own in it."""

    def __init__(
        self,
        time: Time,
        epoch: int,
        voters: Set[int],
        high_watermark: LogOffsetMetadata | None,
        election_timeout_ms: int,
    ) -> None:
        self._epoch = epoch
        self._voters = frozenset(voters)
        self._high_watermark = high_watermark
        self._election_timeout_ms = election_timeout_ms
        self._election_timer = Timer(time, election_timeout_ms)

    def election(self) -> ElectionState:
        return ElectionState(self._epoch, None, None, self._voters)

    def epoch(self) -> int:
        return self._epoch

    def name(self) -> str:
        return "Unattached"

    def election_timeout_ms(self) -> int:
        return self._election_timeout_ms

    def remaining_election_time_ms(self, current_time_ms: int) -> int:
        self._election_timer.update(current_time_ms)
        return self._election_timer.remaining_ms()

    def has_election_timeout_expired(self, current_time_ms: int) -> bool:
        self._election_timer.update(current_time_ms)
        return self._election_timer.is_expired()

    def high_watermark(self) -> LogOffsetMetadata | None:
        return self._high_watermark

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        # BEGIN SOLUTION
        # No vote cast yet in this epoch: the first candidate whose log is at least as up to date as
        # ours gets it (Raft's election restriction, the paper's 5.4.1); the client then moves this
        # node to Voted.
        if not is_log_up_to_date:
            log.debug(
                "Rejecting vote request from candidate %d since candidate epoch/offset is not up to date with us",
                candidate_id,
            )
        return is_log_up_to_date
        # END SOLUTION

    def __repr__(self) -> str:
        return (
            f"Unattached(epoch={self._epoch}, voters={sorted(self._voters)}, "
            f"electionTimeoutMs={self._election_timeout_ms})"
        )
