"""The node's place in the quorum: which of the six epoch states it is in, and the only ways out of
each.

Mirrors: org.apache.kafka.raft.QuorumState
         (raft/src/main/java/org/apache/kafka/raft/QuorumState.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the transitions are a table (``VOTER_TRANSITIONS``, ``OBSERVER_TRANSITIONS``) that every
         ``transition_to_*`` checks, where Kafka's methods check with ``if``s. The table holds what
         those ``if``s accept, which is a little more than QuorumState's javadoc lists (the javadoc
         names each move's usual trigger, and leaves out, for one, a Voted node following the leader
         it voted for). No ``LogContext``.

Every change of state goes through ``_transition_to``, which writes the new state's election to the
store *before* the node acts in it. That order is Raft's rule for stable storage: a vote must be on
disk before the node answers "granted", or a crash right after could let it vote again in the same
epoch for someone else. Resigned is the one state not written: the file already names this node
leader of the epoch, and a restart from that comes back Resigned anyway.

Each table entry says in which epochs the move is allowed, relative to the current one:

* ``HIGHER``: a later epoch only. A node may learn of a new election from any state, but never go
  back to an epoch it has left (Raft's terms only grow).
* ``SAME_OR_HIGHER``: this epoch too. An Unattached node may vote in its epoch (it has not voted
  yet); a node with no leader may learn this epoch's leader.
* ``NEXT``: a candidate always stands in the current epoch plus one.
* ``SAME``: a candidate becomes leader of the epoch it stood in; a leader resigns in its own epoch.

Observers (no local id, or one not among the voters) can neither vote nor stand, so only Unattached
and Follower are theirs.
"""

from __future__ import annotations

import enum
import logging
import random as _random
from collections.abc import Sequence, Set
from typing import Any

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.time import Time
from kafka_lite.raft.candidate_state import CandidateState
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.epoch_state import EpochState
from kafka_lite.raft.follower_state import FollowerState
from kafka_lite.raft.leader_state import LeaderState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.quorum_state_store import QuorumStateStore
from kafka_lite.raft.resigned_state import ResignedState
from kafka_lite.raft.timer import LONG_MAX
from kafka_lite.raft.unattached_state import UnattachedState
from kafka_lite.raft.voted_state import VotedState

log = logging.getLogger(__name__)


class EpochRule(enum.Enum):
    """In which epoch, relative to the current one, a move may land."""

    SAME = "in the same epoch"
    HIGHER = "in a higher epoch"
    SAME_OR_HIGHER = "in the same or a higher epoch"
    NEXT = "in the next epoch"

    def allows(self, current_epoch: int, epoch: int) -> bool:
        if self is EpochRule.SAME:
            return epoch == current_epoch
        if self is EpochRule.HIGHER:
            return epoch > current_epoch
        if self is EpochRule.SAME_OR_HIGHER:
            return epoch >= current_epoch
        return epoch == current_epoch + 1


UNATTACHED = "Unattached"
VOTED = "Voted"
CANDIDATE = "Candidate"
LEADER = "Leader"
FOLLOWER = "Follower"
RESIGNED = "Resigned"
STATE_NAMES = (UNATTACHED, VOTED, CANDIDATE, LEADER, FOLLOWER, RESIGNED)

_H, _S, _SH, _N = EpochRule.HIGHER, EpochRule.SAME, EpochRule.SAME_OR_HIGHER, EpochRule.NEXT

# --8<-- [start:transitions]
# From each state, the states a voter may move to, and in which epoch. The trigger of each, as
# QuorumState's javadoc gives it: Unattached on learning of a higher epoch; Voted on granting a vote;
# Candidate when the election (or fetch) timer expires; Leader on a majority of votes; Follower on
# learning of the epoch's leader; Resigned on a graceful shutdown.
VOTER_TRANSITIONS: dict[str, dict[str, EpochRule]] = {
    UNATTACHED: {UNATTACHED: _H, VOTED: _SH, CANDIDATE: _N, FOLLOWER: _SH},
    VOTED: {UNATTACHED: _H, VOTED: _H, CANDIDATE: _N, FOLLOWER: _SH},
    CANDIDATE: {UNATTACHED: _H, VOTED: _H, CANDIDATE: _N, FOLLOWER: _SH, LEADER: _S},
    LEADER: {UNATTACHED: _H, VOTED: _H, FOLLOWER: _H, RESIGNED: _S},
    FOLLOWER: {UNATTACHED: _H, VOTED: _H, CANDIDATE: _N, FOLLOWER: _H},
    RESIGNED: {UNATTACHED: _H, VOTED: _H, CANDIDATE: _N, FOLLOWER: _SH},
}

# An observer only learns of epochs and leaders.
OBSERVER_TRANSITIONS: dict[str, dict[str, EpochRule]] = {
    UNATTACHED: {UNATTACHED: _H, FOLLOWER: _SH},
    FOLLOWER: {UNATTACHED: _H, FOLLOWER: _H},
}
# --8<-- [end:transitions]


class QuorumState:
    def __init__(
        self,
        local_id: int | None,
        voters: Set[int],
        election_timeout_ms: int,
        fetch_timeout_ms: int,
        store: QuorumStateStore,
        time: Time,
        random: _random.Random,
    ) -> None:
        self._local_id = local_id
        self._voters = frozenset(voters)
        self._election_timeout_ms = election_timeout_ms
        self._fetch_timeout_ms = fetch_timeout_ms
        self._store = store
        self._time = time
        # Seeded by the caller: the election timeouts (and so who stands first) replay exactly.
        self._random = random
        self._state: EpochState | None = None

    # --8<-- [start:initialize]
    def initialize(self, log_end_offset_and_epoch: OffsetAndEpoch) -> None:
        """Come back in the state the node was in when it stopped, as far as the store tells it.

        A node that was leader or candidate may have missed an election meanwhile; it finds out
        from the answers to its Vote or BeginQuorumEpoch requests.
        """
        try:
            election = self._store.read_election_state()
            if election is None:
                election = ElectionState.with_unknown_leader(0, self._voters)
        except OSError as e:
            # A file that cannot be read is taken as corrupt: clear it and start from scratch.
            # The log's last epoch (below) still keeps the node from going back in epochs.
            log.warning("Clearing local quorum state store after error loading state %s: %s", self._store, e)
            self._store.clear()
            election = ElectionState.with_unknown_leader(0, self._voters)

        if election.voters() and self._voters != election.voters():
            raise IllegalStateException(
                f"Configured voter set: {sorted(self._voters)} is different from the voter set read from "
                f"the state file: {sorted(election.voters())}. Check if the quorum configuration is up to "
                "date, or wipe out the local state file if necessary"
            )
        if election.has_voted() and not self.is_voter():
            described = f"{self._local_id} is not a voter" if self._local_id is not None else "is undefined"
            raise IllegalStateException(
                f"Initialized quorum state {election} with a voted candidate, which indicates this node "
                f"was previously a voter, but the local id {described}"
            )

        initial_state: EpochState
        if election.epoch < log_end_offset_and_epoch.epoch:
            # The log has seen a later epoch than the file (the file was lost or is stale): trust
            # the log, and start unattached in its epoch, so the node never goes back in epochs.
            log.warning(
                "Epoch from quorum-state file is %d, which is smaller than last written epoch %d in the log",
                election.epoch,
                log_end_offset_and_epoch.epoch,
            )
            initial_state = UnattachedState(
                self._time,
                log_end_offset_and_epoch.epoch,
                self._voters,
                None,
                self._random_election_timeout_ms(),
            )
        elif self._local_id is not None and election.is_leader(self._local_id):
            # A leader comes back Resigned in its epoch: it may not vote for another leader in an
            # epoch it led, and it must not lead again in it, since unflushed entries it lost could
            # be written again at the same offset and epoch as different records.
            initial_state = ResignedState(
                self._time,
                self._local_id,
                election.epoch,
                self._voters,
                self._random_election_timeout_ms(),
                [],
            )
        elif self._local_id is not None and election.is_voted_candidate(self._local_id):
            # A candidate's election restarts in the same epoch, with its own vote (already on disk).
            initial_state = CandidateState(
                self._time,
                self._local_id,
                election.epoch,
                self._voters,
                None,
                1,
                self._random_election_timeout_ms(),
            )
        elif election.has_voted():
            initial_state = VotedState(
                self._time,
                election.epoch,
                election.voted_id(),
                self._voters,
                None,
                self._random_election_timeout_ms(),
            )
        elif election.has_leader():
            initial_state = FollowerState(
                self._time, election.epoch, election.leader_id(), self._voters, None, self._fetch_timeout_ms
            )
        else:
            initial_state = UnattachedState(
                self._time, election.epoch, self._voters, None, self._random_election_timeout_ms()
            )
        self._transition_to(initial_state)

    # --8<-- [end:initialize]

    # The node and its quorum.

    def remote_voters(self) -> set[int]:
        return {voter_id for voter_id in self._voters if voter_id != self.local_id_or_sentinel()}

    def local_id_or_sentinel(self) -> int:
        return self._local_id if self._local_id is not None else -1

    def local_id_or_throw(self) -> int:
        if self._local_id is None:
            raise IllegalStateException("Required local id is not present")
        return self._local_id

    def local_id(self) -> int | None:
        return self._local_id

    def voters(self) -> frozenset[int]:
        return self._voters

    def epoch(self) -> int:
        return self._current().epoch()

    def leader_id_or_sentinel(self) -> int:
        leader_id = self.leader_id()
        return leader_id if leader_id is not None else -1

    def high_watermark(self) -> LogOffsetMetadata | None:
        return self._current().high_watermark()

    def leader_id(self) -> int | None:
        election = self._current().election()
        return election.leader_id() if election.has_leader() else None

    def has_leader(self) -> bool:
        return self.leader_id() is not None

    def has_remote_leader(self) -> bool:
        return self.has_leader() and self.leader_id_or_sentinel() != self.local_id_or_sentinel()

    def is_voter(self, node_id: int | None = None) -> bool:
        """Is ``node_id`` a voter (this node, when omitted)?"""
        if node_id is None:
            return self._local_id is not None and self._local_id in self._voters
        return node_id in self._voters

    def is_observer(self) -> bool:
        return not self.is_voter()

    # The transitions.

    def transition_to_resigned(self, preferred_successors: Sequence[int]) -> None:
        """A leader steps down (graceful shutdown), naming the voters best placed to follow it."""
        self._check_transition(RESIGNED, self.epoch(), "")
        # Soft state, not persisted (see the module docstring).
        self._state = ResignedState(
            self._time,
            self.local_id_or_throw(),
            self.epoch(),
            self._voters,
            self._random_election_timeout_ms(),
            preferred_successors,
        )
        log.info("Completed transition to %s", self._state)

    def transition_to_unattached(self, epoch: int) -> None:
        """A higher epoch is under way and its leader is not yet known."""
        self._check_transition(UNATTACHED, epoch, f" with epoch={epoch}")
        # A node already waiting on an election keeps its deadline: a stream of higher epochs must
        # not keep postponing its candidacy for ever. An observer never stands.
        if self.is_observer():
            election_timeout_ms = LONG_MAX
        elif self.is_candidate():
            election_timeout_ms = self.candidate_state_or_throw().remaining_election_time_ms(
                self._time.milliseconds()
            )
        elif self.is_voted():
            election_timeout_ms = self.voted_state_or_throw().remaining_election_time_ms(
                self._time.milliseconds()
            )
        elif self.is_unattached():
            election_timeout_ms = self.unattached_state_or_throw().remaining_election_time_ms(
                self._time.milliseconds()
            )
        else:
            election_timeout_ms = self._random_election_timeout_ms()
        self._transition_to(
            UnattachedState(
                self._time, epoch, self._voters, self._current().high_watermark(), election_timeout_ms
            )
        )

    def transition_to_voted(self, epoch: int, candidate_id: int) -> None:
        """Grant ``candidate_id`` this node's vote in ``epoch``; it fetches nothing until it learns
        who won (``transition_to_follower``)."""
        details = f" with votedId={candidate_id} and epoch={epoch}"
        if self._local_id is not None and candidate_id == self._local_id:
            raise IllegalStateException(
                f"Cannot transition to Voted{details} since it matches the local broker.id"
            )
        if self.is_observer():
            raise IllegalStateException(
                f"Cannot transition to Voted{details} since the local broker.id={self._local_id} is not a voter"
            )
        if not self.is_voter(candidate_id):
            raise IllegalStateException(
                f"Cannot transition to Voted{details} since it is not one of the voters {sorted(self._voters)}"
            )
        self._check_transition(VOTED, epoch, details)
        # The election timer starts afresh: the candidate we voted for is at least as likely to win
        # as we would be, so give it the time.
        self._transition_to(
            VotedState(
                self._time,
                epoch,
                candidate_id,
                self._voters,
                self._current().high_watermark(),
                self._random_election_timeout_ms(),
            )
        )

    def transition_to_follower(self, epoch: int, leader_id: int) -> None:
        """Follow ``leader_id``, the elected leader of ``epoch``, and start fetching from it."""
        details = f" with leaderId={leader_id} and epoch={epoch}"
        if self._local_id is not None and leader_id == self._local_id:
            raise IllegalStateException(
                f"Cannot transition to Follower{details} since it matches the local broker.id={self._local_id}"
            )
        if not self.is_voter(leader_id):
            raise IllegalStateException(
                f"Cannot transition to Follower{details} since it is not one of the voters {sorted(self._voters)}"
            )
        self._check_transition(FOLLOWER, epoch, details)
        self._transition_to(
            FollowerState(
                self._time,
                epoch,
                leader_id,
                self._voters,
                self._current().high_watermark(),
                self._fetch_timeout_ms,
            )
        )

    def transition_to_candidate(self) -> None:
        """Stand for election in the next epoch, voting for ourselves."""
        if self.is_observer():
            raise IllegalStateException(
                f"Cannot transition to Candidate since the local broker.id={self._local_id} "
                f"is not one of the voters {sorted(self._voters)}"
            )
        new_epoch = self.epoch() + 1
        self._check_transition(CANDIDATE, new_epoch, "")
        # A candidate standing again counts its attempts: the backoff after a failure grows with them.
        retries = self.candidate_state_or_throw().retries() + 1 if self.is_candidate() else 1
        self._transition_to(
            CandidateState(
                self._time,
                self.local_id_or_throw(),
                new_epoch,
                self._voters,
                self._current().high_watermark(),
                retries,
                self._random_election_timeout_ms(),
            )
        )

    def transition_to_leader(self, epoch_start_offset: int, accumulator: Any) -> LeaderState:
        """Lead the epoch the candidate won; ``epoch_start_offset`` is the log end offset now, where
        the leader's first entry of the epoch goes."""
        if self.is_observer():
            raise IllegalStateException(
                f"Cannot transition to Leader since the local broker.id={self._local_id} "
                f"is not one of the voters {sorted(self._voters)}"
            )
        self._check_transition(LEADER, self.epoch(), "")
        candidate_state = self.candidate_state_or_throw()
        if not candidate_state.is_vote_granted():
            raise IllegalStateException("Cannot become leader without majority votes granted")
        # The high watermark known as a follower is dropped: see LeaderState's module docstring.
        state = LeaderState(
            self.local_id_or_throw(),
            self.epoch(),
            epoch_start_offset,
            self._voters,
            candidate_state.granting_voters(),
            accumulator,
        )
        self._transition_to(state)
        return state

    def _check_transition(self, to: str, epoch: int, details: str) -> None:
        """Refuse a move the table does not allow, naming where from and where to."""
        state = self._current()
        table = VOTER_TRANSITIONS if self.is_voter() else OBSERVER_TRANSITIONS
        allowed = table.get(state.name(), {})
        rule = allowed.get(to)
        if rule is None:
            raise IllegalStateException(
                f"Cannot transition to {to}{details} from the current state {state}: "
                f"a{'' if self.is_voter() else 'n observer'} {state.name()} node may only move to "
                f"{sorted(allowed)}"
            )
        if not rule.allows(state.epoch(), epoch):
            raise IllegalStateException(
                f"Cannot transition to {to}{details} from the current state {state}: "
                f"{state.name()} may move to {to} only {rule.value} (the current epoch is {state.epoch()})"
            )

    def _transition_to(self, state: EpochState) -> None:
        if self._state is not None:
            self._state.close()
        # Persist first, then act: see the module docstring.
        self._store.write_election_state(state.election())
        self._state = state
        log.info("Completed transition to %s", state)

    def _random_election_timeout_ms(self) -> int:
        # Raft's randomized election timeout (the paper's 5.2): between one and two base timeouts,
        # so that one voter usually times out, stands and wins before the others wake.
        if self._election_timeout_ms == 0:
            return 0
        return self._election_timeout_ms + self._random.randrange(self._election_timeout_ms)

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        return self._current().can_grant_vote(candidate_id, is_log_up_to_date)

    # The current state, typed.

    def _current(self) -> EpochState:
        if self._state is None:
            raise IllegalStateException("QuorumState is not initialized: call initialize() first")
        return self._state

    def current_state(self) -> EpochState:
        return self._current()

    def follower_state_or_throw(self) -> FollowerState:
        return self._state_or_throw(FollowerState, FOLLOWER)

    def voted_state_or_throw(self) -> VotedState:
        return self._state_or_throw(VotedState, VOTED)

    def unattached_state_or_throw(self) -> UnattachedState:
        return self._state_or_throw(UnattachedState, UNATTACHED)

    def leader_state_or_throw(self) -> LeaderState:
        return self._state_or_throw(LeaderState, LEADER)

    def maybe_leader_state(self) -> LeaderState | None:
        state = self._state
        return state if isinstance(state, LeaderState) else None

    def resigned_state_or_throw(self) -> ResignedState:
        return self._state_or_throw(ResignedState, RESIGNED)

    def candidate_state_or_throw(self) -> CandidateState:
        return self._state_or_throw(CandidateState, CANDIDATE)

    def _state_or_throw(self, cls: type, name: str) -> Any:
        state = self._current()
        if isinstance(state, cls):
            return state
        raise IllegalStateException(f"Expected to be {name}, but the current state is {state}")

    def is_follower(self) -> bool:
        return isinstance(self._state, FollowerState)

    def is_voted(self) -> bool:
        return isinstance(self._state, VotedState)

    def is_unattached(self) -> bool:
        return isinstance(self._state, UnattachedState)

    def is_leader(self) -> bool:
        return isinstance(self._state, LeaderState)

    def is_resigned(self) -> bool:
        return isinstance(self._state, ResignedState)

    def is_candidate(self) -> bool:
        return isinstance(self._state, CandidateState)
