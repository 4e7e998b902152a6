"""QuorumState: every move its table allows and every one it refuses, the restart rules of
initialize, persistence before the state changes, and the election timers (Kafka's QuorumStateTest)."""

from __future__ import annotations

import random

import pytest

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.time import MockTime
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.file_based_state_store import FileBasedStateStore
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.quorum_state import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    OBSERVER_TRANSITIONS,
    RESIGNED,
    STATE_NAMES,
    UNATTACHED,
    VOTED,
    VOTER_TRANSITIONS,
    EpochRule,
    QuorumState,
)
from kafka_lite.raft.simulation.mock_quorum_state_store import MockQuorumStateStore
from kafka_lite.raft.timer import LONG_MAX

pytestmark = pytest.mark.unit

LOCAL = 0
VOTERS = {0, 1, 2}
ELECTION_TIMEOUT_MS = 1000
FETCH_TIMEOUT_MS = 2000
START_EPOCH = 4


def build(store=None, local_id=LOCAL, voters=VOTERS, time=None, seed=7):
    return QuorumState(
        local_id,
        voters,
        ELECTION_TIMEOUT_MS,
        FETCH_TIMEOUT_MS,
        store if store is not None else MockQuorumStateStore(),
        time if time is not None else MockTime(),
        random.Random(seed),
    )


def in_state(name: str, local_id=LOCAL, epoch=START_EPOCH) -> QuorumState:
    """A QuorumState in state ``name`` at ``epoch``, reached through the public transitions."""
    state = build(local_id=local_id)
    state.initialize(OffsetAndEpoch(0, 0))
    if name == UNATTACHED:
        state.transition_to_unattached(epoch)
    elif name == VOTED:
        state.transition_to_voted(epoch, 1)
    elif name == FOLLOWER:
        state.transition_to_follower(epoch, 1)
    elif name in (CANDIDATE, LEADER, RESIGNED):
        state.transition_to_unattached(epoch - 1)
        state.transition_to_candidate()
        if name != CANDIDATE:
            state.candidate_state_or_throw().record_granted_vote(1)
            state.transition_to_leader(10, None)
        if name == RESIGNED:
            state.transition_to_resigned([1, 2])
    assert state.current_state().name() == name and state.epoch() == epoch
    return state


def attempt(state: QuorumState, to: str, epoch: int) -> None:
    """Ask ``state`` to move to ``to`` in ``epoch`` (Candidate, Leader, Resigned choose their own)."""
    if to == UNATTACHED:
        state.transition_to_unattached(epoch)
    elif to == VOTED:
        state.transition_to_voted(epoch, 2)
    elif to == FOLLOWER:
        state.transition_to_follower(epoch, 2)
    elif to == CANDIDATE:
        state.transition_to_candidate()
    elif to == LEADER:
        if state.is_candidate():
            state.candidate_state_or_throw().record_granted_vote(2)
        state.transition_to_leader(20, None)
    else:
        state.transition_to_resigned([])


# Candidate, Leader and Resigned choose their own epoch, so only Unattached, Voted and Follower are
# tried one epoch below, at and above the current one.
VOTER_CASES = [
    (frm, to, delta)
    for frm in STATE_NAMES
    for to in STATE_NAMES
    for delta in ((-1, 0, 1) if to in (UNATTACHED, VOTED, FOLLOWER) else (0,))
]


@pytest.mark.parametrize(("frm", "to", "delta"), VOTER_CASES)
def test_voter_transitions_follow_the_table(frm, to, delta):
    state = in_state(frm)
    epoch = START_EPOCH + delta
    rule = VOTER_TRANSITIONS[frm].get(to)
    expected_epoch = (
        START_EPOCH + 1 if to == CANDIDATE else START_EPOCH if to in (LEADER, RESIGNED) else epoch
    )
    allowed = rule is not None and rule.allows(START_EPOCH, expected_epoch)
    if allowed:
        attempt(state, to, epoch)
        assert state.current_state().name() == to
        assert state.epoch() == expected_epoch
    else:
        with pytest.raises(IllegalStateException, match=f"Cannot transition to {to}") as refused:
            attempt(state, to, epoch)
        # The refusal names where the node was, and it stays there.
        assert frm in str(refused.value)
        assert state.current_state().name() == frm and state.epoch() == START_EPOCH


def test_table_matches_kafkas_rules():
    # A spot check of the table against rules QuorumStateTest pins down, so an edit to the table
    # that the parametrised test would follow blindly still fails here.
    assert VOTER_TRANSITIONS[VOTED][FOLLOWER] is EpochRule.SAME_OR_HIGHER  # follow whom we voted for
    assert VOTER_TRANSITIONS[VOTED][VOTED] is EpochRule.HIGHER  # one vote per epoch
    assert VOTER_TRANSITIONS[UNATTACHED][VOTED] is EpochRule.SAME_OR_HIGHER
    assert LEADER not in VOTER_TRANSITIONS[FOLLOWER] and CANDIDATE not in VOTER_TRANSITIONS[LEADER]
    assert set(VOTER_TRANSITIONS[LEADER]) == {UNATTACHED, VOTED, FOLLOWER, RESIGNED}
    assert set(OBSERVER_TRANSITIONS) == {UNATTACHED, FOLLOWER}


OBSERVER_CASES = [(frm, to, d) for frm in (UNATTACHED, FOLLOWER) for to in STATE_NAMES for d in (-1, 0, 1)]


@pytest.mark.parametrize(("frm", "to", "delta"), OBSERVER_CASES)
def test_observer_transitions_follow_the_table(frm, to, delta):
    state = build(local_id=None)
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_unattached(START_EPOCH)
    if frm == FOLLOWER:
        state.transition_to_follower(START_EPOCH, 1)
    rule = OBSERVER_TRANSITIONS[frm].get(to)
    epoch = START_EPOCH + delta
    if rule is not None and rule.allows(START_EPOCH, epoch):
        attempt(state, to, epoch)
        assert state.current_state().name() == to
    else:
        with pytest.raises(IllegalStateException):
            attempt(state, to, epoch)
        assert state.current_state().name() == frm


@pytest.mark.parametrize(
    ("frm", "to"),
    [
        # The moves Kafka's QuorumStateTest refuses outright, written out rather than read from
        # the table, so a wrong table entry fails here.
        (UNATTACHED, LEADER),
        (UNATTACHED, RESIGNED),
        (VOTED, LEADER),
        (VOTED, RESIGNED),
        (FOLLOWER, LEADER),
        (FOLLOWER, RESIGNED),
        (CANDIDATE, RESIGNED),
        (LEADER, CANDIDATE),
        (LEADER, LEADER),
        (RESIGNED, LEADER),
        (RESIGNED, RESIGNED),
    ],
)
def test_kafkas_refused_moves(frm, to):
    state = in_state(frm)
    with pytest.raises(IllegalStateException, match=f"Cannot transition to {to}"):
        attempt(state, to, START_EPOCH)


@pytest.mark.parametrize(
    ("frm", "to", "epoch"),
    [
        # Same-epoch moves Kafka allows although the javadoc's list does not name them all.
        (VOTED, FOLLOWER, START_EPOCH),
        (CANDIDATE, FOLLOWER, START_EPOCH),
        (RESIGNED, FOLLOWER, START_EPOCH),
        (UNATTACHED, VOTED, START_EPOCH),
        (RESIGNED, CANDIDATE, START_EPOCH + 1),
        (LEADER, VOTED, START_EPOCH + 1),
    ],
)
def test_kafkas_allowed_moves(frm, to, epoch):
    state = in_state(frm)
    attempt(state, to, epoch)
    assert state.current_state().name() == to and state.epoch() == epoch


def test_a_node_cannot_vote_for_or_follow_itself_or_a_non_voter():
    state = in_state(UNATTACHED)
    with pytest.raises(IllegalStateException, match=r"matches the local broker\.id"):
        state.transition_to_voted(START_EPOCH, LOCAL)
    with pytest.raises(IllegalStateException, match=r"matches the local broker\.id"):
        state.transition_to_follower(START_EPOCH, LOCAL)
    with pytest.raises(IllegalStateException, match="not one of the voters"):
        state.transition_to_follower(START_EPOCH, 9)
    with pytest.raises(IllegalStateException, match="not one of the voters"):
        state.transition_to_voted(START_EPOCH, 9)


def test_leader_needs_a_majority_of_votes():
    state = build(voters={0, 1, 2, 3, 4})
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_candidate()
    state.candidate_state_or_throw().record_granted_vote(1)
    with pytest.raises(IllegalStateException, match="without majority votes granted"):
        state.transition_to_leader(0, None)
    state.candidate_state_or_throw().record_granted_vote(2)
    leader = state.transition_to_leader(0, None)
    assert leader.granting_voters() == {0, 1, 2}
    assert state.leader_id() == LOCAL and not state.has_remote_leader()


def test_single_voter_becomes_leader_on_its_own_vote():
    state = build(voters={LOCAL})
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_candidate()
    assert state.candidate_state_or_throw().is_vote_granted()
    state.transition_to_leader(0, None)
    assert state.is_leader() and state.epoch() == 1


def test_each_transition_is_persisted_before_the_state_changes():
    store = MockQuorumStateStore()
    state = build(store)
    state.initialize(OffsetAndEpoch(0, 0))
    seen = []

    class Spy(MockQuorumStateStore):
        def write_election_state(self, latest):
            # What the node is in when the write happens: still the old state.
            seen.append((state.current_state().name(), latest))
            super().write_election_state(latest)

    state._store = spy = Spy()
    state.transition_to_voted(3, 1)
    assert seen == [(UNATTACHED, ElectionState.with_voted_candidate(3, 1, VOTERS))]
    assert spy.read_election_state() == ElectionState.with_voted_candidate(3, 1, VOTERS)
    state.transition_to_follower(3, 1)
    assert spy.read_election_state() == ElectionState.with_elected_leader(3, 1, VOTERS)
    state.transition_to_candidate()
    assert spy.read_election_state() == ElectionState.with_voted_candidate(4, LOCAL, VOTERS)


def test_resigned_is_not_persisted():
    state = in_state(LEADER)
    state.transition_to_resigned([2, 1])
    assert state.resigned_state_or_throw().preferred_successors() == [2, 1]
    assert state._store.read_election_state() == ElectionState.with_elected_leader(START_EPOCH, LOCAL, VOTERS)


def test_initialize_primordial_epoch():
    state = build()
    state.initialize(OffsetAndEpoch(0, 0))
    assert state.is_unattached() and state.epoch() == 0 and not state.has_leader()
    assert state._store.read_election_state() == ElectionState.with_unknown_leader(0, VOTERS)


@pytest.mark.parametrize(
    ("written", "expected", "check"),
    [
        (ElectionState.with_unknown_leader(5, VOTERS), UNATTACHED, lambda s: None),
        (ElectionState.with_elected_leader(5, 1, VOTERS), FOLLOWER, lambda s: s.leader_id() == 1),
        (
            ElectionState.with_voted_candidate(5, 2, VOTERS),
            VOTED,
            lambda s: s.voted_state_or_throw().voted_id() == 2,
        ),
        # A candidate's election restarts, in the same epoch, its own vote already counted.
        (
            ElectionState.with_voted_candidate(5, LOCAL, VOTERS),
            CANDIDATE,
            lambda s: (
                s.candidate_state_or_throw().granting_voters() == {LOCAL}
                and s.candidate_state_or_throw().unrecorded_voters() == {1, 2}
            ),
        ),
        # A leader comes back Resigned in its epoch, with the EndQuorumEpoch targets to tell.
        (
            ElectionState.with_elected_leader(5, LOCAL, VOTERS),
            RESIGNED,
            lambda s: s.resigned_state_or_throw().unacked_voters() == {1, 2},
        ),
    ],
)
def test_initialize_comes_back_in_the_stored_state(written, expected, check):
    store = MockQuorumStateStore()
    store.write_election_state(written)
    state = build(store)
    state.initialize(OffsetAndEpoch(0, 3))
    assert state.current_state().name() == expected and state.epoch() == 5
    assert check(state) is not False
    assert state.current_state().election() == written


def test_restart_from_the_file_keeps_the_vote(tmp_path):
    path = tmp_path / "quorum-state"
    first = build(FileBasedStateStore(path))
    first.initialize(OffsetAndEpoch(0, 0))
    first.transition_to_voted(2, 1)
    # A new process: a new QuorumState over the same file.
    second = build(FileBasedStateStore(path), seed=99)
    second.initialize(OffsetAndEpoch(0, 0))
    assert second.is_voted() and second.epoch() == 2
    assert not second.can_grant_vote(2, True)
    assert second.can_grant_vote(1, True)


def test_log_with_a_later_epoch_wins_over_the_file():
    store = MockQuorumStateStore()
    store.write_election_state(ElectionState.with_voted_candidate(3, 1, VOTERS))
    state = build(store)
    state.initialize(OffsetAndEpoch(100, 6))
    assert state.is_unattached() and state.epoch() == 6


def test_unreadable_store_is_cleared(tmp_path):
    path = tmp_path / "quorum-state"
    path.write_text("{not json\n")
    state = build(FileBasedStateStore(path))
    state.initialize(OffsetAndEpoch(0, 2))
    assert state.is_unattached() and state.epoch() == 2
    assert FileBasedStateStore(path).read_election_state() == ElectionState.with_unknown_leader(2, VOTERS)


def test_voters_different_from_the_file_are_refused():
    store = MockQuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(5, 1, {0, 1, 2, 3}))
    with pytest.raises(IllegalStateException, match="different from the voter set read from the state file"):
        build(store).initialize(OffsetAndEpoch(0, 0))


@pytest.mark.parametrize("local_id", [None, 7])
def test_observer_with_a_stored_vote_is_refused(local_id):
    store = MockQuorumStateStore()
    store.write_election_state(ElectionState.with_voted_candidate(5, 1, VOTERS))
    with pytest.raises(IllegalStateException, match="with a voted candidate"):
        build(store, local_id=local_id).initialize(OffsetAndEpoch(0, 0))


def test_observer_never_stands_and_waits_forever():
    state = build(local_id=None)
    state.initialize(OffsetAndEpoch(0, 0))
    assert state.is_observer() and not state.is_voter()
    with pytest.raises(IllegalStateException, match="not one of the voters"):
        state.transition_to_candidate()
    state.transition_to_follower(1, 1)
    state.transition_to_unattached(2)
    assert state.unattached_state_or_throw().election_timeout_ms() == LONG_MAX


def test_election_timeout_is_randomised_between_one_and_two_timeouts():
    time = MockTime()
    state = build(time=time, seed=3)
    state.initialize(OffsetAndEpoch(0, 0))
    expected = ELECTION_TIMEOUT_MS + random.Random(3).randrange(ELECTION_TIMEOUT_MS)
    unattached = state.unattached_state_or_throw()
    assert unattached.remaining_election_time_ms(time.milliseconds()) == expected
    time.advance(expected - 1)
    assert not unattached.has_election_timeout_expired(time.milliseconds())
    time.advance(1)
    assert unattached.has_election_timeout_expired(time.milliseconds())


def test_same_seed_same_timeouts():
    def timeouts(seed):
        state = build(seed=seed)
        state.initialize(OffsetAndEpoch(0, 0))
        out = []
        for _ in range(5):
            state.transition_to_candidate()
            out.append(state.candidate_state_or_throw().remaining_election_time_ms(0))
        return out

    assert timeouts(11) == timeouts(11)
    assert all(ELECTION_TIMEOUT_MS <= t < 2 * ELECTION_TIMEOUT_MS for t in timeouts(11))


def test_unattached_keeps_the_running_election_deadline():
    # A voter already waiting for an election keeps its deadline when a higher epoch arrives.
    time = MockTime()
    state = build(time=time)
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_voted(1, 1)
    remaining = state.voted_state_or_throw().remaining_election_time_ms(time.milliseconds())
    time.advance(300)
    state.transition_to_unattached(2)
    assert (
        state.unattached_state_or_throw().remaining_election_time_ms(time.milliseconds()) == remaining - 300
    )


def test_candidate_retries_count_up_and_epoch_grows():
    state = in_state(CANDIDATE)
    assert state.candidate_state_or_throw().retries() == 1
    state.transition_to_candidate()
    assert state.candidate_state_or_throw().retries() == 2 and state.epoch() == START_EPOCH + 1


def test_follower_fetch_timer():
    time = MockTime()
    state = build(time=time)
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_follower(1, 1)
    follower = state.follower_state_or_throw()
    assert follower.remaining_fetch_time_ms(time.milliseconds()) == FETCH_TIMEOUT_MS
    time.advance(1500)
    follower.reset_fetch_timeout(time.milliseconds())
    time.advance(1999)
    assert not follower.has_fetch_timeout_expired(time.milliseconds())
    time.advance(1)
    assert follower.has_fetch_timeout_expired(time.milliseconds())


def test_high_watermark_survives_transitions_except_to_leader():
    state = build()
    state.initialize(OffsetAndEpoch(0, 0))
    state.transition_to_follower(5, 1)
    assert state.follower_state_or_throw().update_high_watermark(10)
    hw = LogOffsetMetadata(10)
    state.transition_to_unattached(6)
    assert state.high_watermark() == hw
    state.transition_to_voted(7, 1)
    assert state.high_watermark() == hw
    state.transition_to_candidate()
    assert state.high_watermark() == hw
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(10, None)
    assert state.high_watermark() is None


def test_has_remote_leader():
    state = build(voters={0, 1})
    state.initialize(OffsetAndEpoch(0, 0))
    assert not state.has_remote_leader()
    state.transition_to_candidate()
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(0, None)
    assert not state.has_remote_leader()
    state.transition_to_follower(state.epoch() + 1, 1)
    assert state.has_remote_leader() and state.leader_id_or_sentinel() == 1
    assert state.remote_voters() == {1}


def test_state_or_throw_names_the_current_state():
    state = in_state(FOLLOWER)
    with pytest.raises(
        IllegalStateException, match="Expected to be Leader, but the current state is FollowerState"
    ):
        state.leader_state_or_throw()
    assert state.maybe_leader_state() is None


def test_leader_closes_its_accumulator_when_it_leaves():
    class Accumulator:
        closed = False

        def close(self):
            self.closed = True

    acc = Accumulator()
    state = in_state(CANDIDATE)
    state.candidate_state_or_throw().record_granted_vote(1)
    assert state.transition_to_leader(10, acc).accumulator() is acc
    state.transition_to_unattached(START_EPOCH + 1)
    assert acc.closed
