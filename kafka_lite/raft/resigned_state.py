"""Resigned: a leader that has fenced itself and hands the quorum over.

Mirrors: org.apache.kafka.raft.ResignedState
         (raft/src/main/java/org/apache/kafka/raft/ResignedState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

A leader resigns when it shuts down gracefully (or hits a soft failure), and a leader that restarts
comes back in this state in its old epoch. Either way it accepts no writes and votes for no one in
this epoch: it was this epoch's leader, and a vote now could elect a second one.

Resigning is faster than dying: the node sends EndQuorumEpoch to the other voters, naming its
preferred successors (the voters by how far they have fetched, furthest first), so that the best
placed voter stands at once instead of everyone waiting out a fetch timeout. ``unacked_voters`` are
those who have not yet answered; the node retries them until they do or a new epoch begins. It stays
here until it learns of another election or its own election timer expires and it stands itself.

The state is soft: ``QuorumState`` does not persist it (the file already names this node leader of
this epoch, which is what a restart needs to come back Resigned).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence, Set

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.time import Time
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.epoch_state import EpochState
from kafka_lite.raft.timer import Timer

log = logging.getLogger(__name__)


class ResignedState(EpochState):
    def __init__(
        self,
        time: Time,
        local_id: int,
        epoch: int,
        voters: Set[int],
        election_timeout_ms: int,
        preferred_successors: Sequence[int],
    ) -> None:
        self._local_id = local_id
        self._epoch = epoch
        self._voters = frozenset(voters)
        self._unacked_voters = set(voters) - {local_id}
        self._election_timeout_ms = election_timeout_ms
        self._election_timer = Timer(time, election_timeout_ms)
        self._preferred_successors = list(preferred_successors)

    def election(self) -> ElectionState:
        return ElectionState.with_elected_leader(self._epoch, self._local_id, self._voters)

    def epoch(self) -> int:
        return self._epoch

    def unacked_voters(self) -> set[int]:
        """The voters still to acknowledge EndQuorumEpoch: the targets of its retries."""
        return self._unacked_voters

    def acknowledge_resignation(self, voter_id: int) -> None:
        """``voter_id`` answered EndQuorumEpoch successfully: stop sending it."""
        if voter_id not in self._voters:
            raise IllegalArgumentException(
                f"Attempt to acknowledge delivery of `EndQuorumEpoch` by a non-voter {voter_id}"
            )
        self._unacked_voters.discard(voter_id)

    def has_election_timeout_expired(self, current_time_ms: int) -> bool:
        self._election_timer.update(current_time_ms)
        return self._election_timer.is_expired()

    def remaining_election_time_ms(self, current_time_ms: int) -> int:
        self._election_timer.update(current_time_ms)
        return self._election_timer.remaining_ms()

    def preferred_successors(self) -> list[int]:
        return self._preferred_successors

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        log.debug(
            "Rejecting vote request from candidate %d since we have resigned as candidate/leader in epoch %d",
            candidate_id,
            self._epoch,
        )
        return False

    def name(self) -> str:
        return "Resigned"

    def __repr__(self) -> str:
        return (
            f"ResignedState(localId={self._local_id}, epoch={self._epoch}, voters={sorted(self._voters)}, "
            f"electionTimeoutMs={self._election_timeout_ms}, unackedVoters={sorted(self._unacked_voters)}, "
            f"preferredSuccessors={self._preferred_successors})"
        )
