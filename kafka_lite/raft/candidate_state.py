"""Candidate: the node stands for election in a new epoch and counts the votes.

Mirrors: org.apache.kafka.raft.CandidateState
         (raft/src/main/java/org/apache/kafka/raft/CandidateState.java, Kafka 3.3.0)
         and KafkaRaftClient.binaryExponentialElectionBackoffMs (the same directory)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the backoff rule lives here, beside the state it serves, rather than in KafkaRaftClient,
         so the client and the simulation draw it from one place.
Labs:    lab 18, stage 1 (``CandidateState.is_vote_granted``, ``is_vote_rejected``)

A candidate's life: it votes for itself, asks the others (Vote), and records each answer. A majority
of grants makes it leader. Enough rejections that a majority can no longer be reached, or the
election timer running out, means the election failed: the candidate backs off for a random while
and then stands again in the next epoch (``retries`` one higher). The randomness is Raft's answer to
split votes (the paper's 5.2): two candidates that failed together are unlikely to retry together.
Kafka's backoff grows with the retries, binary-exponentially, capped at
``controller.quorum.election.backoff.max.ms``; the random draws come from a ``random.Random`` the
caller passes in, so a seeded simulation replays the same elections.
"""

from __future__ import annotations

import enum
import logging
import random as _random
from collections.abc import Set

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException
from kafka_lite.common.time import Time
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.epoch_state import EpochState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.timer import Timer

log = logging.getLogger(__name__)

# KafkaRaftClient.RETRY_BACKOFF_BASE_MS: the unit of the election backoff.
RETRY_BACKOFF_BASE_MS = 100


def binary_exponential_election_backoff_ms(
    retries: int, random: _random.Random, election_backoff_max_ms: int
) -> int:
    """How long a candidate whose ``retries``-th election failed waits before the next.

    A random multiple of 100 ms below ``2 ** retries`` of them (0-100 ms after the first failure,
    0-300 after the second, ...), capped at ``election_backoff_max_ms``: the range doubles with each
    failure, so colliding candidates spread out quickly.
    """
    if retries <= 0:
        raise IllegalArgumentException(f"Retries {retries} should be larger than zero")
    # Kafka caps the exponent at 20 to keep the Java int from overflowing; we keep the cap so the
    # draws are the same.
    return min(RETRY_BACKOFF_BASE_MS * random.randrange(2 << min(20, retries - 1)), election_backoff_max_ms)


class _State(enum.Enum):
    UNRECORDED = "unrecorded"
    GRANTED = "granted"
    REJECTED = "rejected"


class CandidateState(EpochState):
    def __init__(
        self,
        time: Time,
        local_id: int,
        epoch: int,
        voters: Set[int],
        high_watermark: LogOffsetMetadata | None,
        retries: int,
        election_timeout_ms: int,
    ) -> None:
        self._local_id = local_id
        self._epoch = epoch
        self._high_watermark = high_watermark
        self._retries = retries
        self._is_backing_off = False
        self._election_timeout_ms = election_timeout_ms
        self._election_timer = Timer(time, election_timeout_ms)
        self._backoff_timer = Timer(time, 0)
        self._vote_states = {voter_id: _State.UNRECORDED for voter_id in voters}
        # A candidate's own vote is the first one granted (and the one persisted as votedId).
        self._vote_states[local_id] = _State.GRANTED

    def local_id(self) -> int:
        return self._local_id

    def majority_size(self) -> int:
        return len(self._vote_states) // 2 + 1

    def _num_in(self, state: _State) -> int:
        return sum(1 for s in self._vote_states.values() if s is state)

    def is_backing_off(self) -> bool:
        return self._is_backing_off

    def retries(self) -> int:
        return self._retries

    def is_vote_granted(self) -> bool:
        """True once the election is won."""
        # BEGIN SOLUTION
        # A majority of all the voters granted. The candidate's own vote is already among the
        # granted ones (see __init__): it counts once.
        granted = self._num_in(_State.GRANTED)
        return granted >= self.majority_size()
        # END SOLUTION

    def is_vote_rejected(self) -> bool:
        """True once the election can no longer be won."""
        # BEGIN SOLUTION
        # Even if every voter yet to answer granted, there would be no majority: the election is lost.
        granted = self._num_in(_State.GRANTED)
        still_possible = self._num_in(_State.UNRECORDED)
        return granted + still_possible < self.majority_size()
        # END SOLUTION

    def record_granted_vote(self, remote_node_id: int) -> bool:
        """Count ``remote_node_id``'s grant; True if it had not answered before. A voter cannot
        change its answer in one epoch, so a grant after a rejection is an error."""
        state = self._vote_states.get(remote_node_id)
        if state is None:
            raise IllegalArgumentException(f"Attempt to grant vote to non-voter {remote_node_id}")
        if state is _State.REJECTED:
            raise IllegalArgumentException(
                f"Attempt to grant vote from node {remote_node_id} which previously rejected our request"
            )
        self._vote_states[remote_node_id] = _State.GRANTED
        return state is _State.UNRECORDED

    def record_rejected_vote(self, remote_node_id: int) -> bool:
        """Count ``remote_node_id``'s rejection; True if it had not answered before."""
        state = self._vote_states.get(remote_node_id)
        if state is None:
            raise IllegalArgumentException(f"Attempt to reject vote to non-voter {remote_node_id}")
        if state is _State.GRANTED:
            raise IllegalArgumentException(
                f"Attempt to reject vote from node {remote_node_id} which previously granted our request"
            )
        self._vote_states[remote_node_id] = _State.REJECTED
        return state is _State.UNRECORDED

    def start_backing_off(self, current_time_ms: int, backoff_duration_ms: int) -> None:
        """The election failed (rejected, or timed out): wait ``backoff_duration_ms`` before the next."""
        self._backoff_timer.update(current_time_ms)
        self._backoff_timer.reset(backoff_duration_ms)
        self._is_backing_off = True

    def unrecorded_voters(self) -> set[int]:
        return self._voters_in_state(_State.UNRECORDED)

    def granting_voters(self) -> set[int]:
        """The voters that granted, the candidate itself always among them."""
        return self._voters_in_state(_State.GRANTED)

    def rejecting_voters(self) -> set[int]:
        return self._voters_in_state(_State.REJECTED)

    def _voters_in_state(self, state: _State) -> set[int]:
        return {voter_id for voter_id, s in self._vote_states.items() if s is state}

    def has_election_timeout_expired(self, current_time_ms: int) -> bool:
        self._election_timer.update(current_time_ms)
        return self._election_timer.is_expired()

    def is_backoff_complete(self, current_time_ms: int) -> bool:
        self._backoff_timer.update(current_time_ms)
        return self._backoff_timer.is_expired()

    def remaining_backoff_ms(self, current_time_ms: int) -> int:
        if not self._is_backing_off:
            raise IllegalStateException("Candidate is not currently backing off")
        self._backoff_timer.update(current_time_ms)
        return self._backoff_timer.remaining_ms()

    def remaining_election_time_ms(self, current_time_ms: int) -> int:
        self._election_timer.update(current_time_ms)
        return self._election_timer.remaining_ms()

    def election(self) -> ElectionState:
        return ElectionState.with_voted_candidate(self._epoch, self._local_id, self._vote_states.keys())

    def epoch(self) -> int:
        return self._epoch

    def high_watermark(self) -> LogOffsetMetadata | None:
        return self._high_watermark

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        # A candidate has voted for itself in this epoch, so it refuses everyone, itself included:
        # its own vote is implicit, never "granted" through a request.
        log.debug(
            "Rejecting vote request from candidate %d since we are already candidate in epoch %d",
            candidate_id,
            self._epoch,
        )
        return False

    def name(self) -> str:
        return "Candidate"

    def __repr__(self) -> str:
        return (
            f"CandidateState(localId={self._local_id}, epoch={self._epoch}, retries={self._retries}, "
            f"electionTimeoutMs={self._election_timeout_ms})"
        )
