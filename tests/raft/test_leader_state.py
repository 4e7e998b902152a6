"""LeaderState: the high watermark as the majority's offset, only past the epoch's start (Raft's
Figure 8), never backwards; replica and observer tracking; describe_quorum (Kafka's LeaderStateTest)."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException
from kafka_lite.common.time import MockTime
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.leader_state import OBSERVER_SESSION_TIMEOUT_MS, LeaderState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata

pytestmark = pytest.mark.unit

LOCAL = 0
EPOCH = 5


def leader(voters, epoch_start_offset=0):
    return LeaderState(LOCAL, EPOCH, epoch_start_offset, voters, {LOCAL}, None)


def lom(offset, metadata=None):
    return LogOffsetMetadata(offset, metadata)


def test_election_and_acknowledgements():
    state = leader({0, 1, 2})
    assert state.election() == ElectionState.with_elected_leader(EPOCH, LOCAL, {0, 1, 2})
    assert state.non_acknowledging_voters() == {1, 2}
    state.add_acknowledgement_from(1)
    assert state.non_acknowledging_voters() == {2}
    # Fetching acknowledges the leader too.
    state.update_replica_state(2, 0, lom(0))
    assert state.non_acknowledging_voters() == set()
    with pytest.raises(IllegalArgumentException, match="non-voter 9"):
        state.add_acknowledgement_from(9)


def test_single_voter_high_watermark_follows_its_own_log():
    state = leader({LOCAL}, epoch_start_offset=15)
    # At the epoch start nothing of this epoch is committed yet.
    assert not state.update_local_state(lom(15))
    assert state.high_watermark() is None
    assert state.update_local_state(lom(16))
    assert state.high_watermark() == lom(16)
    assert state.update_local_state(lom(20))
    assert state.high_watermark() == lom(20)


def test_high_watermark_waits_for_an_entry_of_the_current_epoch():
    # Raft's Figure 8: entries of earlier epochs held by a majority (offsets below 10) do not
    # count as committed until a majority also holds one of this epoch (offset 10 onwards).
    state = leader({0, 1, 2}, epoch_start_offset=10)
    assert not state.update_local_state(lom(11))
    assert not state.update_replica_state(1, 0, lom(8))
    assert not state.update_replica_state(2, 0, lom(10))
    assert state.high_watermark() is None
    # Now a majority (the leader and node 1) holds offset 10, the epoch's first entry.
    assert state.update_replica_state(1, 0, lom(11))
    assert state.high_watermark() == lom(11)


@pytest.mark.parametrize(
    ("voters", "follower_offsets", "expected"),
    [
        # 3 voters: the leader at 20 and one more make a majority.
        ({0, 1, 2}, {1: 12, 2: 17}, 17),
        # 5 voters: three must hold the offset; the third highest of 20, 18, 15, 12, 11 is 15.
        ({0, 1, 2, 3, 4}, {1: 11, 2: 18, 3: 15, 4: 12}, 15),
        # 5 voters, two silent: the third highest of 20, 18, 15 is 15.
        ({0, 1, 2, 3, 4}, {1: 18, 2: 15}, 15),
        # 4 voters: the majority is 3, so the third highest.
        ({0, 1, 2, 3}, {1: 19, 2: 14, 3: 13}, 14),
    ],
)
def test_high_watermark_is_the_majoritys_offset(voters, follower_offsets, expected):
    state = leader(voters, epoch_start_offset=10)
    state.update_local_state(lom(20))
    for node_id, offset in follower_offsets.items():
        state.update_replica_state(node_id, 0, lom(offset))
    assert state.high_watermark() == lom(expected)


def test_no_high_watermark_without_a_majority_reporting():
    state = leader({0, 1, 2, 3, 4}, epoch_start_offset=0)
    state.update_local_state(lom(20))
    state.update_replica_state(1, 0, lom(20))
    assert state.high_watermark() is None
    assert state.update_replica_state(2, 0, lom(5))
    assert state.high_watermark() == lom(5)


def test_high_watermark_never_goes_back():
    state = leader({0, 1, 2}, epoch_start_offset=0)
    state.update_local_state(lom(20))
    state.update_replica_state(1, 0, lom(15))
    assert state.high_watermark() == lom(15)
    # Node 1 truncated (its log lost data it had acknowledged): a warning, no step back.
    assert not state.update_replica_state(1, 0, lom(10))
    assert state.high_watermark() == lom(15)
    assert state.update_replica_state(2, 0, lom(18))
    assert state.high_watermark() == lom(18)


def test_same_offset_new_metadata_refreshes_the_high_watermark():
    state = leader({0, 1}, epoch_start_offset=0)
    state.update_local_state(lom(10, "segment-0"))
    state.update_replica_state(1, 0, lom(10))
    assert state.high_watermark() == lom(10)
    # The high watermark is the majority entry's (node 1's here): the leader's own new metadata is not it.
    assert state.update_local_state(lom(10, "segment-1")) is False
    assert not state.update_replica_state(1, 0, lom(10))
    assert state.update_replica_state(1, 0, lom(10, "segment-1"))
    assert state.high_watermark() == lom(10, "segment-1")


def test_local_end_offset_is_monotonic():
    state = leader({0, 1, 2})
    state.update_local_state(lom(15))
    with pytest.raises(IllegalStateException, match="non-monotonic update of local end offset: 15 -> 14"):
        state.update_local_state(lom(14))


def test_fetches_from_non_replicas_and_from_self():
    state = leader({0, 1, 2})
    state.update_local_state(lom(5))
    assert not state.update_replica_state(-1, 0, lom(5))
    assert state.observer_states() == {}
    with pytest.raises(IllegalStateException, match="matches the local leader ID"):
        state.update_replica_state(LOCAL, 0, lom(5))


def test_observers_never_move_the_high_watermark():
    state = leader({0, 1, 2}, epoch_start_offset=0)
    state.update_local_state(lom(10))
    assert not state.update_replica_state(7, 0, lom(10))
    assert not state.update_replica_state(8, 0, lom(10))
    assert state.high_watermark() is None
    assert set(state.observer_states()) == {7, 8}


def test_preferred_successors_by_descending_fetch_offset():
    state = leader({0, 1, 2, 3})
    state.update_local_state(lom(20))
    state.update_replica_state(1, 0, lom(5))
    state.update_replica_state(3, 0, lom(12))
    # Node 2 never fetched: last. Ties would go by node id.
    assert state.non_leader_voters_by_descending_fetch_offset() == [3, 1, 2]


def test_caught_up_and_fetch_times():
    time = MockTime()
    state = leader({0, 1})
    state.update_local_state(lom(10))
    t0 = time.milliseconds()
    state.update_replica_state(1, t0, lom(5))
    replica = state.voter_states()[1]
    assert replica.last_fetch_timestamp == t0 and replica.last_caught_up_timestamp == -1
    # The leader moves on to 15; the follower reaches 10, the leader's end at its previous fetch:
    # it was caught up as of that previous fetch.
    state.update_local_state(lom(15))
    time.advance(100)
    state.update_replica_state(1, time.milliseconds(), lom(10))
    assert replica.last_caught_up_timestamp == t0
    time.advance(100)
    state.update_replica_state(1, time.milliseconds(), lom(15))
    assert replica.last_caught_up_timestamp == time.milliseconds()


def test_describe_quorum():
    time = MockTime()
    state = leader({0, 1, 2}, epoch_start_offset=0)
    state.update_local_state(lom(10))
    state.update_replica_state(1, time.milliseconds(), lom(10))
    state.update_replica_state(9, time.milliseconds(), lom(4))
    time.advance(1000)
    now = time.milliseconds()
    described = state.describe_quorum(now)
    assert (described.error_code, described.leader_id, described.leader_epoch, described.high_watermark) == (
        0,
        LOCAL,
        EPOCH,
        10,
    )
    voters = {r.replica_id: r for r in described.current_voters}
    assert voters[LOCAL].log_end_offset == 10 and voters[LOCAL].last_fetch_timestamp == now
    assert voters[1].last_fetch_timestamp == now - 1000 and voters[1].last_caught_up_timestamp == now - 1000
    assert voters[2].log_end_offset == -1 and voters[2].last_fetch_timestamp == -1
    assert [(o.replica_id, o.log_end_offset) for o in described.observers] == [(9, 4)]
    # An observer silent for the session timeout is forgotten.
    time.advance(OBSERVER_SESSION_TIMEOUT_MS)
    assert state.describe_quorum(time.milliseconds()).observers == []


def test_leader_refuses_every_vote():
    state = leader({0, 1, 2})
    assert not state.can_grant_vote(1, True)
    assert not state.can_grant_vote(LOCAL, True)


def test_resign_request():
    state = leader({0, 1, 2})
    assert not state.is_resign_requested()
    state.request_resign()
    assert state.is_resign_requested()
