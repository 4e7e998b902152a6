"""The smaller epoch states: Unattached and Voted (who gets a vote), Follower (the fetch timer and a
high watermark that only moves forward), Resigned (the EndQuorumEpoch retry set)."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.time import MockTime
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.follower_state import FollowerState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.resigned_state import ResignedState
from kafka_lite.raft.timer import LONG_MAX, Timer
from kafka_lite.raft.unattached_state import UnattachedState
from kafka_lite.raft.voted_state import VotedState

pytestmark = pytest.mark.unit

VOTERS = {0, 1, 2}


@pytest.mark.parametrize("up_to_date", [True, False])
def test_unattached_votes_for_an_up_to_date_log(up_to_date):
    state = UnattachedState(MockTime(), 3, VOTERS, None, 500)
    assert state.can_grant_vote(1, up_to_date) is up_to_date
    assert state.election() == ElectionState.with_unknown_leader(3, VOTERS)


def test_voted_grants_again_only_to_its_candidate():
    time = MockTime()
    state = VotedState(time, 3, 1, VOTERS, None, 500)
    assert state.can_grant_vote(1, False)  # a retried request from the same candidate
    assert not state.can_grant_vote(2, True)
    assert state.election() == ElectionState.with_voted_candidate(3, 1, VOTERS)
    state.override_election_timeout(time.milliseconds(), 50)
    time.advance(50)
    assert state.has_election_timeout_expired(time.milliseconds())


def test_follower_fetch_timer_and_override():
    time = MockTime()
    state = FollowerState(time, 3, 1, VOTERS, None, 2000)
    assert not state.can_grant_vote(2, True)
    assert state.election() == ElectionState.with_elected_leader(3, 1, VOTERS)
    state.override_fetch_timeout(time.milliseconds(), 10)
    time.advance(10)
    assert state.has_fetch_timeout_expired(time.milliseconds())
    state.reset_fetch_timeout(time.milliseconds())
    assert state.remaining_fetch_time_ms(time.milliseconds()) == 2000


def test_follower_high_watermark_moves_only_forward():
    state = FollowerState(MockTime(), 3, 1, VOTERS, None, 2000)
    # Unknown to unknown counts as an update in Kafka too (only a known value is compared).
    assert state.update_high_watermark(None)
    assert state.high_watermark() is None
    assert state.update_high_watermark(5)
    assert state.high_watermark() == LogOffsetMetadata(5)
    assert not state.update_high_watermark(5)
    assert state.update_high_watermark(9)
    with pytest.raises(IllegalArgumentException, match="Non-monotonic"):
        state.update_high_watermark(8)
    with pytest.raises(IllegalArgumentException, match="unknown value"):
        state.update_high_watermark(None)
    with pytest.raises(IllegalArgumentException, match="negative"):
        state.update_high_watermark(-1)
    assert state.high_watermark() == LogOffsetMetadata(9)


def test_follower_closes_the_snapshot_it_was_fetching():
    class Writer:
        closed = False

        def close(self):
            self.closed = True

    state = FollowerState(MockTime(), 3, 1, VOTERS, None, 2000)
    first, second = Writer(), Writer()
    state.set_fetching_snapshot(first)
    state.set_fetching_snapshot(second)
    assert first.closed and not second.closed
    state.close()
    assert second.closed


def test_resigned_tracks_end_quorum_epoch_acknowledgements():
    time = MockTime()
    state = ResignedState(time, 0, 3, VOTERS, 500, [2, 1])
    assert state.unacked_voters() == {1, 2}
    assert state.preferred_successors() == [2, 1]
    assert state.election() == ElectionState.with_elected_leader(3, 0, VOTERS)
    state.acknowledge_resignation(2)
    assert state.unacked_voters() == {1}
    with pytest.raises(IllegalArgumentException, match="non-voter 7"):
        state.acknowledge_resignation(7)
    assert not state.can_grant_vote(1, True)
    time.advance(500)
    assert state.has_election_timeout_expired(time.milliseconds())


def test_timer_reads_the_clock_it_is_given_and_never_goes_back():
    time = MockTime()
    timer = Timer(time, 100)
    start = time.milliseconds()
    timer.update(start + 60)
    assert timer.remaining_ms() == 40 and timer.elapsed_ms() == 60
    # An older reading does not move the timer back.
    timer.update(start + 10)
    assert timer.remaining_ms() == 40
    timer.update(start + 100)
    assert timer.is_expired() and timer.remaining_ms() == 0
    # reset starts from the timer's own "now", not the clock's.
    time.advance(500)
    timer.reset(30)
    assert timer.remaining_ms() == 30
    timer.update()
    assert timer.is_expired()
    with pytest.raises(IllegalArgumentException, match="negative timeout"):
        timer.reset(-1)
    assert Timer(time, LONG_MAX).remaining_ms() == LONG_MAX - time.milliseconds()
