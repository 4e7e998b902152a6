"""CandidateState: votes granted and rejected, the majority for 1, 3 and 5 voters, the election timer
and the randomised backoff under MockTime (Kafka's CandidateStateTest)."""

from __future__ import annotations

import random

import pytest

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException
from kafka_lite.common.time import MockTime
from kafka_lite.raft.candidate_state import (
    RETRY_BACKOFF_BASE_MS,
    CandidateState,
    binary_exponential_election_backoff_ms,
)
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata

pytestmark = pytest.mark.unit

LOCAL = 0
EPOCH = 5
ELECTION_TIMEOUT_MS = 1000


def candidate(voters, time=None, high_watermark=None):
    return CandidateState(time or MockTime(), LOCAL, EPOCH, voters, high_watermark, 1, ELECTION_TIMEOUT_MS)


def test_single_voter_wins_at_once():
    state = candidate({LOCAL})
    assert state.majority_size() == 1
    assert state.is_vote_granted() and not state.is_vote_rejected()
    assert state.granting_voters() == {LOCAL} and state.unrecorded_voters() == set()


def test_three_voters_one_grant_wins():
    state = candidate({0, 1, 2})
    assert state.majority_size() == 2
    assert not state.is_vote_granted() and not state.is_vote_rejected()
    assert state.record_granted_vote(1)
    assert state.is_vote_granted()
    assert state.granting_voters() == {0, 1} and state.unrecorded_voters() == {2}


def test_three_voters_two_rejections_lose():
    state = candidate({0, 1, 2})
    assert state.record_rejected_vote(1)
    assert not state.is_vote_rejected()  # node 2 could still grant
    assert state.record_rejected_vote(2)
    assert state.is_vote_rejected() and not state.is_vote_granted()
    assert state.rejecting_voters() == {1, 2}


@pytest.mark.parametrize(
    ("grants", "rejections", "granted", "rejected"),
    [
        ([1], [], False, False),
        ([1, 2], [], True, False),
        ([1], [2, 3], False, False),  # node 4 could still make three
        ([1], [2, 3, 4], False, True),
        ([], [1, 2, 3], False, True),
        ([1, 2], [3, 4], True, False),
    ],
)
def test_five_voters(grants, rejections, granted, rejected):
    state = candidate({0, 1, 2, 3, 4})
    assert state.majority_size() == 3
    for node_id in grants:
        state.record_granted_vote(node_id)
    for node_id in rejections:
        state.record_rejected_vote(node_id)
    assert (state.is_vote_granted(), state.is_vote_rejected()) == (granted, rejected)


def test_recording_twice_reports_false():
    state = candidate({0, 1, 2})
    assert state.record_granted_vote(1)
    assert not state.record_granted_vote(1)
    assert state.record_rejected_vote(2)
    assert not state.record_rejected_vote(2)


def test_a_voter_cannot_change_its_answer():
    state = candidate({0, 1, 2})
    state.record_granted_vote(1)
    state.record_rejected_vote(2)
    with pytest.raises(IllegalArgumentException, match="previously granted"):
        state.record_rejected_vote(1)
    with pytest.raises(IllegalArgumentException, match="previously rejected"):
        state.record_granted_vote(2)


def test_non_voters_cannot_vote():
    state = candidate({0, 1, 2})
    with pytest.raises(IllegalArgumentException, match="non-voter 9"):
        state.record_granted_vote(9)
    with pytest.raises(IllegalArgumentException, match="non-voter 9"):
        state.record_rejected_vote(9)


def test_election_persists_the_self_vote():
    state = candidate({0, 1, 2})
    assert state.election() == ElectionState.with_voted_candidate(EPOCH, LOCAL, {0, 1, 2})
    assert state.election().voters() == {0, 1, 2}


def test_candidate_refuses_every_vote_itself_included():
    state = candidate({0, 1, 2})
    assert not state.can_grant_vote(1, True)
    assert not state.can_grant_vote(LOCAL, True)


def test_election_timer():
    time = MockTime()
    state = candidate({0, 1, 2}, time)
    assert state.remaining_election_time_ms(time.milliseconds()) == ELECTION_TIMEOUT_MS
    time.advance(ELECTION_TIMEOUT_MS - 1)
    assert not state.has_election_timeout_expired(time.milliseconds())
    time.advance(1)
    assert state.has_election_timeout_expired(time.milliseconds())
    assert state.remaining_election_time_ms(time.milliseconds()) == 0


def test_backoff():
    time = MockTime()
    state = candidate({0, 1, 2}, time)
    assert not state.is_backing_off()
    with pytest.raises(IllegalStateException, match="not currently backing off"):
        state.remaining_backoff_ms(time.milliseconds())
    state.start_backing_off(time.milliseconds(), 300)
    assert state.is_backing_off()
    time.advance(299)
    assert state.remaining_backoff_ms(time.milliseconds()) == 1
    assert not state.is_backoff_complete(time.milliseconds())
    time.advance(1)
    assert state.is_backoff_complete(time.milliseconds())


def test_high_watermark_is_carried():
    assert candidate({0, 1}, high_watermark=LogOffsetMetadata(7)).high_watermark() == LogOffsetMetadata(7)


@pytest.mark.parametrize("retries", [1, 2, 3, 5, 30])
def test_backoff_is_a_random_multiple_of_the_base_within_a_doubling_range(retries):
    rng = random.Random(retries)
    draws = {binary_exponential_election_backoff_ms(retries, rng, 1_000_000) for _ in range(200)}
    limit = RETRY_BACKOFF_BASE_MS * (2 << min(20, retries - 1))
    assert all(d % RETRY_BACKOFF_BASE_MS == 0 and 0 <= d < limit for d in draws)
    # Random, not fixed: several distinct values in the range.
    assert len(draws) > 1


def test_backoff_is_capped_and_deterministic_for_a_seed():
    draws = [binary_exponential_election_backoff_ms(10, random.Random(4), 1000) for _ in range(3)]
    assert len(set(draws)) == 1  # the same seed, the same draw
    assert all(binary_exponential_election_backoff_ms(10, random.Random(s), 1000) <= 1000 for s in range(50))
    with pytest.raises(IllegalArgumentException, match="Retries 0 should be larger than zero"):
        binary_exponential_election_backoff_ms(0, random.Random(0), 1000)
