"""KafkaRaftClient against a MockLog, a MockNetworkChannel and a MockTime (in the manner of Kafka's
KafkaRaftClientTest): elections, the leader's first entry, fetching with divergence, the high
watermark's Figure 8 rule, Kafka's errors for requests it refuses, and the election timers."""

from __future__ import annotations

import pytest

from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.control_record_utils import LEADER_CHANGE, deserialize_leader_change_message
from kafka_lite.common.record.end_transaction_marker import ControlRecordType
from kafka_lite.raft import raft_util
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_client import LeaderAndEpoch, NotLeaderException
from kafka_lite.raft.raft_util import RaftErrors
from kafka_lite.testing.raft_client_test_context import (
    ELECTION_TIMEOUT_MS,
    FETCH_TIMEOUT_MS,
    METADATA_PARTITION,
    MockListener,
    RaftClientTestContext,
    batch,
)

pytestmark = pytest.mark.unit

LOCAL = 0
VOTERS = {0, 1, 2}


# -- elections ---------------------------------------------------------------------------------------------


def test_single_voter_elects_itself_and_commits_an_append():
    ctx = RaftClientTestContext(LOCAL, {LOCAL})
    # A quorum of one stands at once and its own vote is a majority.
    assert ctx.state_name() == "Leader"
    assert ctx.quorum().epoch() == 1
    ctx.poll()
    assert ctx.log.end_offset().offset == 1  # the LeaderChange record
    assert ctx.log.high_watermark().offset == 1
    offset = ctx.client.schedule_append(1, ["a", "b"])
    assert offset == 2
    ctx.poll()
    assert ctx.log.end_offset().offset == 3
    assert ctx.log.high_watermark().offset == 3
    assert ctx.listener.committed_records() == ["a", "b"]
    # The control batch reached the listener as a batch without records, in its place.
    assert [(b.base_offset, b.is_control) for b in ctx.listener.commits] == [(0, True), (1, False)]
    assert ctx.listener.leader_changes[-1] == LeaderAndEpoch(LOCAL, 1)
    with pytest.raises(NotLeaderException):
        ctx.client.schedule_append(0, ["stale"])


def test_the_leader_flushes_an_append_before_it_counts_it_towards_the_high_watermark(monkeypatch):
    """A single voter's own entry is the whole majority: when its log is flushed, the high watermark
    has not passed the new entries yet; right after, it has. Kafka 3.3 counts first, then flushes."""
    ctx = RaftClientTestContext(LOCAL, {LOCAL})
    ctx.poll(3)
    assert ctx.state_name() == "Leader"
    at_flush: list[tuple[int, int]] = []
    flush = ctx.log.flush
    monkeypatch.setattr(
        ctx.log,
        "flush",
        lambda *a, **k: (
            at_flush.append((ctx.log.end_offset().offset, ctx.log.high_watermark().offset)),
            flush(*a, **k),
        )[1],
    )
    start = ctx.log.end_offset().offset
    ctx.client.schedule_append(ctx.quorum().epoch(), ["a", "b"])
    ctx.poll(2)
    assert at_flush == [(start + 2, start)], "the high watermark moved before the entries were on disk"
    assert ctx.log.high_watermark().offset == start + 2


def test_candidate_sends_votes_wins_on_majority_and_begins_the_epoch():
    ctx = RaftClientTestContext(LOCAL, VOTERS, log_batches=[batch(0, 1, ["x"])])
    assert ctx.state_name() == "Unattached"
    ctx.poll()
    assert ctx.drain_sent(RaftApiKeys.VOTE) == []
    ctx.expire_election_timeout()
    ctx.poll()
    assert ctx.state_name() == "Candidate"
    assert ctx.quorum().epoch() == 2  # the log's epoch 1 plus one
    ctx.poll()
    votes = ctx.drain_sent(RaftApiKeys.VOTE)
    assert sorted(v.destination_id for v in votes) == [1, 2]
    partition = votes[0].data["topics"][0]["partitions"][0]
    assert (partition["candidate_epoch"], partition["candidate_id"]) == (2, LOCAL)
    assert (partition["last_offset_epoch"], partition["last_offset"]) == (1, 1)
    # One grant is a majority of three with our own vote.
    ctx.deliver_response(votes[0], ctx.vote_response(True, 2))
    ctx.poll()
    assert ctx.state_name() == "Leader"
    assert ctx.log.end_offset().offset == 1  # the LeaderChange waits in the accumulator
    ctx.poll()
    begins = ctx.drain_sent(RaftApiKeys.BEGIN_QUORUM_EPOCH)
    assert sorted(b.destination_id for b in begins) == [1, 2]
    assert begins[0].data["topics"][0]["partitions"][0]["leader_epoch"] == 2
    # The leader's first entry of its epoch is the LeaderChange control record, at the epoch start.
    first = ctx.log.read_batches(1)[0]
    assert (first.epoch, first.is_control_batch, first.first_offset()) == (2, True, 1)
    record = next(MemoryRecords(first.data).records())
    assert ControlRecordType.parse_type_id(record.key) == LEADER_CHANGE
    message = deserialize_leader_change_message(record)
    assert message["leader_id"] == LOCAL
    assert sorted(v["voter_id"] for v in message["voters"]) == [0, 1, 2]
    assert sorted(v["voter_id"] for v in message["granting_voters"]) == [0, votes[0].destination_id]
    # An acknowledged BeginQuorumEpoch is not sent again; the other one still is, after its timeout.
    ctx.deliver_response(begins[0], ctx.begin_epoch_response(2, LOCAL))
    ctx.poll()
    assert ctx.quorum().leader_state_or_throw().non_acknowledging_voters() == {begins[1].destination_id}


def test_rejected_votes_start_the_backoff_and_a_new_election_follows():
    ctx = RaftClientTestContext(LOCAL, VOTERS)
    ctx.expire_election_timeout()
    ctx.poll(2)
    votes = ctx.drain_sent(RaftApiKeys.VOTE)
    for v in votes:
        ctx.deliver_response(v, ctx.vote_response(False, 1))
    ctx.poll(2)
    state = ctx.quorum().candidate_state_or_throw()
    assert state.is_vote_rejected() and state.is_backing_off()
    ctx.time.sleep(state.remaining_backoff_ms(ctx.time.milliseconds()))
    ctx.poll()
    assert (ctx.state_name(), ctx.quorum().epoch()) == ("Candidate", 2)
    assert ctx.quorum().candidate_state_or_throw().retries() == 2


def test_vote_response_with_a_newer_epoch_and_leader_makes_the_candidate_follow():
    ctx = RaftClientTestContext(LOCAL, VOTERS)
    ctx.expire_election_timeout()
    ctx.poll(2)
    vote = ctx.drain_sent(RaftApiKeys.VOTE)[0]
    ctx.deliver_response(vote, ctx.vote_response(False, 4, leader_id=2))
    ctx.poll()
    assert (ctx.state_name(), ctx.quorum().epoch(), ctx.quorum().leader_id()) == ("Follower", 4, 2)
    assert ctx.listener.leader_changes[-1] == LeaderAndEpoch(2, 4)


def test_vote_granted_to_an_up_to_date_candidate_and_persisted():
    ctx = RaftClientTestContext(LOCAL, VOTERS, log_batches=[batch(0, 1, ["x", "y"])])
    request = ctx.deliver_vote_request(candidate_id=1, epoch=2, last_epoch=1, last_offset=2)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request))
    assert (partition["error_code"], partition["vote_granted"], partition["leader_epoch"]) == (0, True, 2)
    assert ctx.store.read_election_state() == ElectionState.with_voted_candidate(2, 1, VOTERS)
    # A second candidate of the same epoch is refused: one vote per epoch.
    other = ctx.deliver_vote_request(candidate_id=2, epoch=2, last_epoch=1, last_offset=2)
    ctx.poll()
    assert ctx.partition_of(ctx.response_of(other))["vote_granted"] is False


def test_vote_refused_to_a_candidate_with_a_shorter_log():
    ctx = RaftClientTestContext(LOCAL, VOTERS, log_batches=[batch(0, 1, ["x", "y"])])
    request = ctx.deliver_vote_request(candidate_id=1, epoch=2, last_epoch=1, last_offset=1)
    ctx.poll()
    assert ctx.partition_of(ctx.response_of(request))["vote_granted"] is False
    # The higher epoch is still learned, and no vote is written.
    assert (ctx.state_name(), ctx.quorum().epoch()) == ("Unattached", 2)
    assert not ctx.store.read_election_state().has_voted()


# -- Kafka's errors ----------------------------------------------------------------------------------------


def follower_context(epoch: int = 5, leader: int = 1, **kwargs) -> RaftClientTestContext:
    return RaftClientTestContext(
        LOCAL, VOTERS, ElectionState.with_elected_leader(epoch, leader, VOTERS), **kwargs
    )


@pytest.mark.parametrize(
    ("candidate_id", "epoch", "error"),
    [(9, 6, RaftErrors.INCONSISTENT_VOTER_SET), (2, 4, RaftErrors.FENCED_LEADER_EPOCH)],
    ids=["non-voter", "old-epoch"],
)
def test_refused_vote_requests_change_nothing(candidate_id, epoch, error):
    ctx = follower_context()
    stored = ctx.store.read_election_state()
    request = ctx.deliver_vote_request(candidate_id, epoch, last_epoch=3, last_offset=100)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request))
    assert RaftErrors(partition["error_code"]) == error
    assert partition["vote_granted"] is False
    assert (partition["leader_epoch"], partition["leader_id"]) == (5, 1)
    assert (ctx.state_name(), ctx.quorum().epoch(), ctx.quorum().leader_id()) == ("Follower", 5, 1)
    assert ctx.store.read_election_state() == stored


def leader_context() -> tuple[RaftClientTestContext, int]:
    ctx = RaftClientTestContext(LOCAL, VOTERS)
    return ctx, ctx.become_leader()


@pytest.mark.parametrize(
    ("epoch_delta", "error"),
    [(-1, RaftErrors.FENCED_LEADER_EPOCH), (1, RaftErrors.UNKNOWN_LEADER_EPOCH)],
    ids=["old-epoch", "future-epoch"],
)
def test_fetch_with_another_epoch_gets_kafkas_error_and_changes_nothing(epoch_delta, error):
    ctx, epoch = leader_context()
    request = ctx.deliver_fetch_request(1, epoch + epoch_delta, fetch_offset=0, last_fetched_epoch=0)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request), "responses")
    assert RaftErrors(partition["error_code"]) == error
    assert partition["records"] == b""
    assert (ctx.state_name(), ctx.quorum().epoch()) == ("Leader", epoch)
    # The refused fetch did not count as node 1 catching up.
    assert ctx.quorum().leader_state_or_throw().voter_states()[1].end_offset is None


def test_fetch_from_an_unknown_replica_is_served_as_an_observer_and_never_counts():
    # Kafka has no error for a Fetch from a replica outside the voters: it is an observer (a broker
    # reading the metadata log). It is served, tracked for DescribeQuorum, and left out of the majority.
    ctx, epoch = leader_context()
    request = ctx.deliver_fetch_request(9, epoch, fetch_offset=1, last_fetched_epoch=epoch)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request), "responses")
    assert partition["error_code"] == 0
    assert partition["high_watermark"] == -1
    leader = ctx.quorum().leader_state_or_throw()
    assert 9 in leader.observer_states() and 9 not in leader.voter_states()
    assert leader.high_watermark() is None


@pytest.mark.parametrize(
    "change",
    [{"fetch_offset": -1}, {"last_fetched_epoch": 99}, {"partition": 3}],
    ids=["negative-offset", "epoch-above-leader-epoch", "unknown-partition"],
)
def test_malformed_fetch_is_an_invalid_request(change):
    ctx, epoch = leader_context()

    data = raft_util.fetch_request(
        raft_util.METADATA_TOPIC_ID, METADATA_PARTITION, None, 1, 0, epoch, 1, epoch, 100
    )
    data["topics"][0]["partitions"][0].update(change)
    request = ctx.deliver_request(RaftApiKeys.FETCH, data)
    ctx.poll()
    data = ctx.response_of(request)
    codes = [data["error_code"]] + [p["error_code"] for t in data["responses"] for p in t["partitions"]]
    assert RaftErrors.INVALID_REQUEST in codes
    assert ctx.quorum().leader_state_or_throw().voter_states()[1].end_offset is None


def test_fetch_to_a_follower_is_not_leader_or_follower():
    ctx = follower_context()
    request = ctx.deliver_fetch_request(2, 5, fetch_offset=0, last_fetched_epoch=0)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request), "responses")
    assert RaftErrors(partition["error_code"]) == RaftErrors.NOT_LEADER_OR_FOLLOWER
    assert partition["current_leader"] == {"leader_id": 1, "leader_epoch": 5}


# -- timers -----------------------------------------------------------------------------------------------


def test_fetch_timeout_moves_a_follower_to_candidate():
    ctx = follower_context()
    ctx.poll()
    assert len(ctx.drain_sent(RaftApiKeys.FETCH)) == 1
    ctx.time.sleep(FETCH_TIMEOUT_MS - 1)
    ctx.poll()
    assert ctx.state_name() == "Follower"
    ctx.time.sleep(1)
    ctx.poll()
    assert (ctx.state_name(), ctx.quorum().epoch()) == ("Candidate", 6)
    ctx.poll()
    assert sorted(v.destination_id for v in ctx.drain_sent(RaftApiKeys.VOTE)) == [1, 2]


def test_election_timeout_moves_a_voted_node_to_candidate():
    ctx = RaftClientTestContext(LOCAL, VOTERS, ElectionState.with_voted_candidate(3, 2, VOTERS))
    assert ctx.state_name() == "Voted"
    ctx.time.sleep(ELECTION_TIMEOUT_MS - 1)
    ctx.poll()
    assert ctx.state_name() == "Voted"
    ctx.time.sleep(ELECTION_TIMEOUT_MS + 1)
    ctx.poll()
    assert (ctx.state_name(), ctx.quorum().epoch()) == ("Candidate", 4)


# -- fetching and the high watermark ----------------------------------------------------------------------


def fetched(request) -> dict:
    return request.data["topics"][0]["partitions"][0]


def test_follower_truncates_at_a_diverging_epoch_then_fetches_and_advances_its_high_watermark():
    # Our log: epoch 1 at offsets 0-1, epoch 3 at 2-4 (a leader of epoch 3 that lost its election's
    # entries). The leader of epoch 5 has epoch 1 at 0-1 and epoch 2 at 2-3 and never saw epoch 3, so
    # it answers our fetch (offset 5, last epoch 3) with its end of the largest epoch <= 3: epoch 2,
    # offset 4. We never had epoch 2, so we keep what precedes it here: offsets 0-1.
    ctx = follower_context(log_batches=[batch(0, 1, ["a", "b"]), batch(2, 3, ["x", "y", "z"])])
    ctx.poll()
    request = ctx.drain_sent(RaftApiKeys.FETCH)[0]
    assert request.destination_id == 1
    assert (fetched(request)["fetch_offset"], fetched(request)["last_fetched_epoch"]) == (5, 3)
    assert fetched(request)["current_leader_epoch"] == 5
    ctx.deliver_response(request, ctx.fetch_response(5, 1, diverging_epoch=(2, 4), high_watermark=0))
    ctx.poll()
    assert (ctx.log.end_offset().offset, ctx.log.last_fetched_epoch()) == (2, 1)
    # The next fetch starts where the logs agree, and the leader's entries fill the log from there.
    ctx.poll()
    request = ctx.drain_sent(RaftApiKeys.FETCH)[0]
    assert (fetched(request)["fetch_offset"], fetched(request)["last_fetched_epoch"]) == (2, 1)
    records = bytes(batch(2, 2, ["c", "d"]).buffer())
    # (A leader's high watermark falls on a batch boundary: its voters fetch whole batches.)
    ctx.deliver_response(request, ctx.fetch_response(5, 1, records=records, high_watermark=2))
    ctx.poll()
    assert (ctx.log.end_offset().offset, ctx.log.last_fetched_epoch()) == (4, 2)
    assert ctx.log.high_watermark().offset == 2
    assert ctx.quorum().high_watermark().offset == 2
    assert ctx.listener.committed_records() == ["a", "b"]
    # A high watermark past our log end is capped at it.
    ctx.poll()
    request = ctx.drain_sent(RaftApiKeys.FETCH)[0]
    ctx.deliver_response(request, ctx.fetch_response(5, 1, high_watermark=10))
    ctx.poll()
    assert ctx.log.high_watermark().offset == 4
    assert ctx.listener.committed_records() == ["a", "b", "c", "d"]


def test_a_listener_registered_after_the_last_transition_is_told_the_leader():
    # Kafka 3.7.1 and 3.8's rule (KAFKA-16286): Kafka 3.3 would tell it only at the next election.
    ctx = follower_context()
    ctx.poll(2)
    assert ctx.listener.leader_changes == [LeaderAndEpoch(1, 5)]
    late = MockListener()
    ctx.client.register(late)
    ctx.poll()
    assert late.leader_changes == [LeaderAndEpoch(1, 5)]
    ctx.poll()
    assert late.leader_changes == [LeaderAndEpoch(1, 5)]  # once


def test_follower_refuses_to_truncate_below_its_high_watermark():
    ctx = follower_context(log_batches=[batch(0, 1, ["a", "b"])])
    ctx.poll()
    request = ctx.drain_sent(RaftApiKeys.FETCH)[0]
    ctx.deliver_response(request, ctx.fetch_response(5, 1, high_watermark=2))
    ctx.poll(2)
    request = ctx.drain_sent(RaftApiKeys.FETCH)[0]
    ctx.deliver_response(request, ctx.fetch_response(5, 1, diverging_epoch=(1, 1)))
    with pytest.raises(Exception, match="below the current high watermark"):
        ctx.poll()
    assert ctx.log.end_offset().offset == 2


def test_leader_answers_a_diverging_follower_with_its_epoch_end():
    # The leader's log: epoch 1 at 0-2, then its own LeaderChange (epoch 2) at 3.
    ctx = RaftClientTestContext(LOCAL, VOTERS, log_batches=[batch(0, 1, ["a", "b", "c"])])
    epoch = ctx.become_leader()
    assert epoch == 2
    # Follower 1 has an epoch-1 entry at offset 3 (fetch offset 4) the leader never had.
    request = ctx.deliver_fetch_request(1, epoch, fetch_offset=4, last_fetched_epoch=1)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request), "responses")
    assert partition["diverging_epoch"] == {"epoch": 1, "end_offset": 3}
    assert partition["records"] == b""
    assert partition["current_leader"] == {"leader_id": LOCAL, "leader_epoch": 2}


def test_leader_high_watermark_waits_for_an_entry_of_its_own_epoch():
    # Raft's Figure 8: the leader (epoch 2) and follower 1 both hold epoch 1's entries 0-2, a
    # majority; still they are not committed until the leader's own first entry (offset 3) is.
    ctx = RaftClientTestContext(LOCAL, VOTERS, log_batches=[batch(0, 1, ["a", "b", "c"])])
    epoch = ctx.become_leader()
    leader = ctx.quorum().leader_state_or_throw()
    assert leader.epoch_start_offset() == 3
    assert ctx.log.end_offset().offset == 4
    request = ctx.deliver_fetch_request(1, epoch, fetch_offset=3, last_fetched_epoch=1)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request), "responses")
    assert partition["high_watermark"] == -1
    assert leader.high_watermark() is None
    assert ctx.log.high_watermark().offset == 0
    assert ctx.listener.commits == []
    # The follower returns for offset 4: it holds the LeaderChange, and everything up to it commits.
    request = ctx.deliver_fetch_request(1, epoch, fetch_offset=4, last_fetched_epoch=epoch)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request), "responses")
    assert partition["high_watermark"] == 4
    assert ctx.log.high_watermark().offset == 4
    assert ctx.listener.committed_records() == ["a", "b", "c"]
    # Only now, caught up to the epoch start, is the state machine told it leads: on the next poll,
    # whose leader's poll checks the listener's position, as Kafka 3.3's pollLeader does.
    assert LeaderAndEpoch(LOCAL, epoch) not in ctx.listener.leader_changes
    ctx.poll()
    assert ctx.listener.leader_changes[-1] == LeaderAndEpoch(LOCAL, epoch)


def test_leader_commits_an_append_once_a_majority_fetched_it():
    ctx, epoch = leader_context()
    ctx.client.schedule_append(epoch, ["v"])
    ctx.poll()
    assert ctx.log.end_offset().offset == 2
    request = ctx.deliver_fetch_request(2, epoch, fetch_offset=0, last_fetched_epoch=0)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request), "responses")
    # Node 2 gets the log from 0; both batches fit MockLog's two-batch read.
    assert len(list(MemoryRecords(partition["records"]).batches())) == 2
    request = ctx.deliver_fetch_request(2, epoch, fetch_offset=2, last_fetched_epoch=epoch)
    ctx.poll()
    assert ctx.partition_of(ctx.response_of(request), "responses")["high_watermark"] == 2
    assert ctx.listener.committed_records() == ["v"]


# -- resigning, shutting down, describing -----------------------------------------------------------------


def test_resign_sends_end_quorum_epoch_with_the_most_caught_up_successor_first():
    ctx, epoch = leader_context()
    request = ctx.deliver_fetch_request(2, epoch, fetch_offset=1, last_fetched_epoch=epoch)
    ctx.poll()
    # Node 2 holds the LeaderChange record (offset 0): with the leader, a majority of three.
    partition = ctx.partition_of(ctx.response_of(request), "responses")
    assert (partition["error_code"], partition["high_watermark"], partition["records"]) == (0, 1, b"")
    ctx.client.resign(epoch)
    ctx.poll()
    assert ctx.state_name() == "Resigned"
    ctx.poll()
    ends = ctx.drain_sent(RaftApiKeys.END_QUORUM_EPOCH)
    assert sorted(e.destination_id for e in ends) == [1, 2]
    assert ends[0].data["topics"][0]["partitions"][0]["preferred_successors"] == [2, 1]
    with pytest.raises(Exception, match="larger than the current epoch"):
        ctx.client.resign(epoch + 1)


def test_end_quorum_epoch_makes_the_first_successor_stand_at_once():
    ctx = follower_context()

    request = ctx.deliver_request(
        RaftApiKeys.END_QUORUM_EPOCH,
        raft_util.end_quorum_epoch_request(METADATA_PARTITION, None, 5, 1, [0, 2]),
    )
    ctx.poll()
    assert ctx.partition_of(ctx.response_of(request))["error_code"] == 0
    ctx.poll()
    assert (ctx.state_name(), ctx.quorum().epoch()) == ("Candidate", 6)


def test_graceful_shutdown_of_a_follower_completes_at_once():
    ctx = follower_context()
    future = ctx.client.shutdown(5_000)
    ctx.poll()
    assert future.done() and future.exception() is None


def test_describe_quorum_from_the_leader_and_elsewhere():

    ctx, epoch = leader_context()
    request = ctx.deliver_request(
        RaftApiKeys.DESCRIBE_QUORUM, raft_util.describe_quorum_request(METADATA_PARTITION)
    )
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request))
    assert (partition["leader_id"], partition["leader_epoch"]) == (LOCAL, epoch)
    assert sorted(v["replica_id"] for v in partition["current_voters"]) == [0, 1, 2]
    follower = follower_context()
    request = follower.deliver_request(
        RaftApiKeys.DESCRIBE_QUORUM, raft_util.describe_quorum_request(METADATA_PARTITION)
    )
    follower.poll()
    error = follower.partition_of(follower.response_of(request))["error_code"]
    assert RaftErrors(error) == RaftErrors.NOT_LEADER_OR_FOLLOWER


def test_vote_whose_last_epoch_is_not_below_its_candidate_epoch_is_invalid():
    ctx = follower_context()
    request = ctx.deliver_vote_request(candidate_id=2, epoch=6, last_epoch=6, last_offset=0)
    ctx.poll()
    partition = ctx.partition_of(ctx.response_of(request))
    assert RaftErrors(partition["error_code"]) == RaftErrors.INVALID_REQUEST
    assert (ctx.state_name(), ctx.quorum().epoch()) == ("Follower", 5)


def test_request_of_another_cluster_is_refused_at_the_top_level():

    ctx = follower_context()
    data = raft_util.vote_request(METADATA_PARTITION, "other-cluster", 6, 2, 5, 10)
    request = ctx.deliver_request(RaftApiKeys.VOTE, data)
    ctx.poll()
    assert RaftErrors(ctx.response_of(request)["error_code"]) == RaftErrors.INCONSISTENT_CLUSTER_ID
    assert ctx.quorum().epoch() == 5


# -- snapshots ----------------------------------------------------------------------------------------------


def test_follower_told_of_a_snapshot_fetches_it_in_pieces_and_continues_after_it():

    ctx = follower_context()
    ctx.poll()
    request = ctx.drain_sent(RaftApiKeys.FETCH)[0]
    ctx.deliver_response(request, ctx.fetch_response(5, 1, snapshot_id=(4, 3)))
    ctx.poll()
    snapshot_bytes = bytes(batch(0, 4, ["s0", "s1", "s2"]).buffer())
    half = len(snapshot_bytes) // 2
    for position, piece in ((0, snapshot_bytes[:half]), (half, snapshot_bytes[half:])):
        ctx.poll()
        (request,) = ctx.drain_sent(RaftApiKeys.FETCH_SNAPSHOT)
        assert ctx.drain_sent(RaftApiKeys.FETCH) == []  # no Fetch while the snapshot comes
        partition = request.data["topics"][0]["partitions"][0]
        assert partition["snapshot_id"] == {"end_offset": 3, "epoch": 4}
        assert partition["position"] == position
        ctx.deliver_response(
            request, ctx.fetch_snapshot_response((3, 4), len(snapshot_bytes), position, piece)
        )
        ctx.poll()
    assert ctx.log.latest_snapshot_id() == OffsetAndEpoch(3, 4)
    assert (ctx.log.start_offset(), ctx.log.end_offset().offset, ctx.log.high_watermark().offset) == (3, 3, 3)
    assert len(ctx.listener.snapshots) == 1
    ctx.poll()
    request = ctx.drain_sent(RaftApiKeys.FETCH)[0]
    assert (fetched(request)["fetch_offset"], fetched(request)["last_fetched_epoch"]) == (3, 4)


def test_leader_serves_a_snapshot_and_refuses_a_bad_position_or_unknown_id():

    ctx, epoch = leader_context()
    writer = ctx.log.store_snapshot(OffsetAndEpoch(1, 1))
    writer.append(b"0123456789")
    writer.freeze()

    def ask(snapshot_id, position):
        data = raft_util.fetch_snapshot_request(METADATA_PARTITION, None, 1, epoch, snapshot_id, position, 4)
        request = ctx.deliver_request(RaftApiKeys.FETCH_SNAPSHOT, data)
        ctx.poll()
        return ctx.partition_of(ctx.response_of(request))

    partition = ask((1, 1), 2)
    assert (partition["error_code"], partition["size"], partition["position"]) == (0, 10, 2)
    assert bytes(partition["unaligned_records"]) == b"2345"
    assert RaftErrors(ask((1, 1), 10)["error_code"]) == RaftErrors.POSITION_OUT_OF_RANGE
    assert RaftErrors(ask((7, 1), 0)["error_code"]) == RaftErrors.SNAPSHOT_NOT_FOUND


def test_leader_shutdown_resigns_and_completes_once_another_leader_is_known():
    ctx, epoch = leader_context()
    future = ctx.client.shutdown(5_000)
    ctx.poll()
    assert ctx.state_name() == "Resigned" and not future.done()
    ctx.poll()
    assert sorted(e.destination_id for e in ctx.drain_sent(RaftApiKeys.END_QUORUM_EPOCH)) == [1, 2]

    ctx.deliver_request(
        RaftApiKeys.BEGIN_QUORUM_EPOCH,
        raft_util.begin_quorum_epoch_request(METADATA_PARTITION, None, epoch + 1, 1),
    )
    ctx.poll(2)
    assert (ctx.state_name(), ctx.quorum().leader_id()) == ("Follower", 1)
    assert future.done() and future.exception() is None


def test_observer_finds_the_leader_by_fetching_from_any_voter():
    ctx = RaftClientTestContext(5, VOTERS)
    assert ctx.quorum().is_observer()
    ctx.poll()
    (request,) = ctx.drain_sent(RaftApiKeys.FETCH)
    assert request.destination_id in VOTERS and request.data["replica_id"] == 5
    ctx.deliver_response(request, ctx.fetch_response(3, 1, error=RaftErrors.NOT_LEADER_OR_FOLLOWER))
    ctx.poll()
    assert (ctx.state_name(), ctx.quorum().epoch(), ctx.quorum().leader_id()) == ("Follower", 3, 1)
    ctx.poll()
    assert [r.destination_id for r in ctx.drain_sent(RaftApiKeys.FETCH)] == [1]
