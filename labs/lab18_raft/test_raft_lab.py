"""Lab 18 graded tests: kafka_lite's own Raft (Kafka 3.3), graded on the deterministic simulator.

Each stage has two kinds of test. The unit tests drive the learner's functions directly (an epoch
state, a candidate's tally, a MockLog, a LeaderState) and name the rule a wrong answer breaks. The
simulation tests run whole quorums of KafkaRaftClients over the simulated network
(``kafka_lite.raft.simulation``) on fixed seeds, then on a batch of seeds drawn afresh on each run:
a failure names its seed, the invariant broken and the command that replays it.

The simulations of stages 1 and 2 must not need the later stages' code, so they hold those out:
stage 1's quorums drop every Fetch request (no follower replicates, so no fetch is validated and
followers time out into new elections again and again) and stage 1's and 2's leaders never move
their high watermark (``LeaderState._maybe_update_high_watermark`` answers False: nothing is
committed). What they check is what does not need a commit: one leader per epoch, epochs that
never go back, and (stage 2) logs that end up identical after they diverged. Stages 3 and 4 run
``python -m kafka_lite.raft.simulation``'s own scenarios, whole (stage 4's is ``snapshot_install``,
the only one of them whose logs are cleaned: no earlier stage's simulation moves a log start).

Before a simulation starts, the stage's functions, then those of the stages it runs on, are checked
to be written, so the untouched starter fails at once on the lab's own NotImplementedError (naming
the first function still to write) rather than inside a simulated node.
``KAFKA_LITE_LAB18_SEEDS`` (``7`` or ``0..199``) replaces the drawn batch: the handout's repeat runner.
"""

from __future__ import annotations

import logging
import os
import random

import pytest

from kafka_lite.common.errors import KafkaException, OffsetOutOfRangeException
from kafka_lite.common.protocol.raft_messages import RaftApiKeys
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.default_record_batch import set_partition_leader_epoch
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.grading.grader import GRADE_COMMAND_ENV
from kafka_lite.raft.candidate_state import CandidateState
from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.follower_state import FollowerState
from kafka_lite.raft.isolation import Isolation
from kafka_lite.raft.kafka_metadata_log import KafkaMetadataLog
from kafka_lite.raft.kafka_raft_client import KafkaRaftClient, _ListenerContext
from kafka_lite.raft.leader_state import LeaderState
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_message import RaftRequest
from kafka_lite.raft.raft_util import RaftErrors
from kafka_lite.raft.records_snapshot_reader import RecordsSnapshotReader
from kafka_lite.raft.records_snapshot_writer import RecordsSnapshotWriter
from kafka_lite.raft.replicated_log import ReplicatedLog
from kafka_lite.raft.simulation import scenarios
from kafka_lite.raft.simulation.event_scheduler import SimulationFailure
from kafka_lite.raft.simulation.invariants import MonotonicEpoch, SingleLeader
from kafka_lite.raft.simulation.message_router import DropAllTraffic, NetworkFilter, PermitAllTraffic
from kafka_lite.raft.simulation.mock_log import MockLog
from kafka_lite.raft.simulation.replicated_counter import IntSerde, ReplicatedCounter
from kafka_lite.raft.unattached_state import UnattachedState
from kafka_lite.raft.valid_offset_and_epoch import ValidOffsetAndEpoch
from kafka_lite.raft.voted_state import VotedState
from kafka_lite.testing.lab_stubs import written
from kafka_lite.testing.raft_client_test_context import RaftClientTestContext, batch

pytestmark = [pytest.mark.lab(18), pytest.mark.timeout(60)]

SEEDS_ENV = "KAFKA_LITE_LAB18_SEEDS"
# How the learner grades this workspace (``lab grade 18``, with ``--dir`` for one started elsewhere).
GRADE_COMMAND = os.environ.get(GRADE_COMMAND_ENV, ".venv/bin/kafka-lite lab grade 18")
RANDOM_BATCH = 4  # seeds drawn afresh per run, per stage
TP = TopicPartition("__cluster_metadata", 0)
STAGE1 = (
    KafkaRaftClient.handle_vote_request,
    KafkaRaftClient._on_vote,
    UnattachedState.can_grant_vote,
    VotedState.can_grant_vote,
    FollowerState.can_grant_vote,
    CandidateState.is_vote_granted,
    CandidateState.is_vote_rejected,
)
STAGE2 = (
    KafkaRaftClient._complete_fetch_request,
    KafkaRaftClient.handle_fetch_response,
    ReplicatedLog.validate_offset_and_epoch,
    ReplicatedLog.truncate_to_end_offset,
)
STAGE3 = (LeaderState._maybe_update_high_watermark,)
STAGE4 = (MockLog.delete_before_snapshot, _ListenerContext.fire_handle_snapshot)


@pytest.fixture(autouse=True)
def _quiet_raft_logs():
    # A simulated quorum logs every vote and truncation; the failures say what matters.
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def wanted_seeds() -> list[int] | None:
    """``$KAFKA_LITE_LAB18_SEEDS``: one seed, or an inclusive range ``A..B``; None when unset."""
    wanted = os.environ.get(SEEDS_ENV, "").strip()
    if not wanted:
        return None
    low, _, high = wanted.partition("..")
    return list(range(int(low), int(high or low) + 1))


def drawn_seeds() -> list[int]:
    """The seeds a random-seed test runs: the repeat runner's, else a batch drawn afresh."""
    return wanted_seeds() or random.SystemRandom().sample(range(100_000, 1_000_000), RANDOM_BATCH)


# A repeat run of many seeds gets a second per seed, never less than the usual minute.
REPEAT_TIMEOUT_S = max(60, len(wanted_seeds() or ()))


def replayed(failure: SimulationFailure, test: str, reference: bool) -> AssertionError:
    """The simulator's failure, with the commands that replay its seed."""
    lines = [
        f"{failure.check} violated (seed {failure.seed}, simulated time {failure.time_ms} ms, nodes "
        f"{failure.nodes}): {failure.detail}",
        f"replay it on your code: {SEEDS_ENV}={failure.seed} {GRADE_COMMAND} -k {test}",
    ]
    if reference:
        lines.append(
            f"the reference on the same seed: .venv/bin/python -m kafka_lite.raft.simulation "
            f"{failure.scenario} --seed {failure.seed}"
        )
    return AssertionError("\n".join(lines))


# -- stage 1: the election -------------------------------------------------------------------------------

VOTERS = {0, 1, 2}
LOCAL = 0  # the node under test; 1 and 2 are the other voters


def node(election: ElectionState | None = None, log: list[tuple[int, int]] = ()) -> RaftClientTestContext:
    """Node 0 of voters {0, 1, 2}, its log holding ``count`` entries of each ``(epoch, count)``."""
    batches, offset = [], 0
    for epoch, count in log:
        batches.append(batch(offset, epoch, [f"e{epoch}-{i}" for i in range(count)]))
        offset += count
    return RaftClientTestContext(LOCAL, VOTERS, election, log_batches=batches)


def vote(ctx: RaftClientTestContext, candidate: int, epoch: int, last_epoch: int, last_offset: int) -> dict:
    """Candidate ``candidate``'s Vote request of ``epoch`` (its last entry ``last_epoch``, ending at
    ``last_offset``) delivered to the node; the partition of the node's answer."""
    request = ctx.deliver_vote_request(candidate, epoch, last_epoch, last_offset)
    ctx.poll()
    data = ctx.response_of(request)
    assert data["error_code"] == RaftErrors.NONE, (
        f"the answer to candidate {candidate}'s Vote request of epoch {epoch} (last entry ({last_epoch}, ending "
        f"at {last_offset})) carries the top-level error {RaftErrors(data['error_code']).name}: the candidate "
        "then reads nothing of its partition's answer, neither the refusal's reason nor the voter's epoch "
        "and leader"
    )
    return ctx.partition_of(data)


def voted_for(ctx: RaftClientTestContext) -> tuple[int, int | None]:
    """What the node's quorum-state file says: its epoch and the candidate it voted for in it."""
    stored = ctx.store.read_election_state()
    return stored.epoch, stored.voted_id_opt


def candidate_of(voters: set[int]) -> tuple[RaftClientTestContext, list]:
    """Node 0 of ``voters`` after its election timeout: a candidate of epoch 1 whose Vote requests
    are out; returns them."""
    ctx = RaftClientTestContext(LOCAL, voters)
    ctx.expire_election_timeout()
    ctx.poll(2)
    assert ctx.state_name() == "Candidate", f"node 0 is {ctx.state_name()} after its election timeout"
    return ctx, sorted(ctx.drain_sent(RaftApiKeys.VOTE), key=lambda r: r.destination_id)


def answer(ctx: RaftClientTestContext, request, granted: bool) -> None:
    ctx.deliver_response(request, ctx.vote_response(granted, 1))
    ctx.poll()


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_voter_grants_a_candidate_whose_log_is_as_up_to_date_and_remembers_the_vote():
    ctx = node(log=[(1, 2)])  # entries 0 and 1, of epoch 1
    answer_ = vote(ctx, candidate=1, epoch=2, last_epoch=1, last_offset=2)
    assert answer_["vote_granted"] is True, (
        "candidate 1 of epoch 2, whose last entry (epoch 1, ending at offset 2) is exactly the voter's, "
        "was refused"
    )
    assert answer_["leader_epoch"] == 2, "the answer does not carry the candidate's epoch 2"
    assert voted_for(ctx) == (2, 1), (
        f"the voter granted candidate 1 in epoch 2, but its quorum-state file says (epoch, voted for) = "
        f"{voted_for(ctx)}: a voter restarted now could vote again in epoch 2"
    )
    ahead = node(log=[(1, 2)])
    assert vote(ahead, candidate=2, epoch=3, last_epoch=2, last_offset=1)["vote_granted"] is True, (
        "a candidate whose last entry is of a later epoch (2, ending at 1) than the voter's (1, ending at 2) "
        "was refused: it is more up to date, whatever the offsets"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_voter_refuses_a_candidate_whose_log_is_behind_and_still_moves_to_its_epoch():
    for last_epoch, last_offset, why in ((1, 3, "of an earlier epoch"), (2, 1, "shorter in the same epoch")):
        ctx = node(log=[(1, 2), (2, 2)])  # epoch 1 at 0-1, epoch 2 at 2-3: the last entry (2, ending at 4)
        answer_ = vote(ctx, candidate=1, epoch=3, last_epoch=last_epoch, last_offset=last_offset)
        assert answer_["vote_granted"] is False, (
            f"candidate 1's last entry ({last_epoch}, ending at {last_offset}), {why} than the voter's "
            "(2, ending at 4), got the vote: the winner could lack an entry a majority holds"
        )
        assert (ctx.state_name(), ctx.quorum().epoch()) == ("Unattached", 3), (
            f"after refusing candidate 1 of epoch 3 the voter is {ctx.state_name()} in epoch "
            f"{ctx.quorum().epoch()}: a request of a later epoch tells it that epoch has begun"
        )
        assert voted_for(ctx) == (3, None), f"the voter's quorum-state file says {voted_for(ctx)}"


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_one_vote_per_epoch_across_retries_and_restarts():
    ctx = node(log=[(1, 2)])
    assert vote(ctx, candidate=1, epoch=2, last_epoch=1, last_offset=2)["vote_granted"] is True
    assert vote(ctx, candidate=2, epoch=2, last_epoch=1, last_offset=2)["vote_granted"] is False, (
        "a voter that granted candidate 1 in epoch 2 granted candidate 2 in epoch 2 too: two "
        "candidates of one epoch can then each gather a majority"
    )
    assert vote(ctx, candidate=1, epoch=2, last_epoch=1, last_offset=2)["vote_granted"] is True, (
        "candidate 1 asked again in epoch 2 (its first answer was lost) and was refused the vote the "
        "voter had already given it"
    )
    ctx.client = ctx.new_client(ctx.store)  # the voter restarts, over its quorum-state file
    ctx.client.register(ctx.listener)
    ctx.client.initialize()
    assert vote(ctx, candidate=2, epoch=2, last_epoch=1, last_offset=2)["vote_granted"] is False, (
        "the voter, restarted, granted candidate 2 in epoch 2, where it had voted for candidate 1 "
        "before the restart"
    )
    assert vote(ctx, candidate=2, epoch=3, last_epoch=1, last_offset=2)["vote_granted"] is True, (
        "candidate 2 of epoch 3 was refused by a voter that had voted only in epoch 2"
    )


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_an_epoch_with_a_leader_gives_no_vote_and_a_stale_candidate_learns_the_epoch():
    ctx = node(ElectionState.with_elected_leader(5, 1, VOTERS), log=[(1, 2)])
    answer_ = vote(ctx, candidate=2, epoch=5, last_epoch=1, last_offset=2)
    assert answer_["vote_granted"] is False, (
        "a follower of leader 1 in epoch 5 granted candidate 2 a vote in epoch 5, which already has a leader"
    )
    stale = vote(ctx, candidate=2, epoch=4, last_epoch=1, last_offset=2)
    assert (stale["vote_granted"], RaftErrors(stale["error_code"])) == (
        False,
        RaftErrors.FENCED_LEADER_EPOCH,
    ), (
        f"candidate 2 of epoch 4, behind the voter's 5, was answered granted={stale['vote_granted']}, "
        f"error {RaftErrors(stale['error_code']).name}"
    )
    assert (stale["leader_epoch"], stale["leader_id"]) == (5, 1), (
        "the answer to a stale candidate does not name the current epoch and its leader"
    )
    assert (ctx.state_name(), ctx.quorum().epoch(), ctx.quorum().leader_id()) == ("Follower", 5, 1), (
        f"the follower is {ctx.state_name()} in epoch {ctx.quorum().epoch()} after refusing both"
    )


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_a_candidate_whose_last_entry_is_not_of_an_earlier_epoch_is_refused_as_malformed():
    for last_epoch, last_offset in ((6, 0), (7, 3), (-1, 0), (2, -1)):
        ctx = node(ElectionState.with_elected_leader(5, 1, VOTERS))
        answer_ = vote(ctx, candidate=2, epoch=6, last_epoch=last_epoch, last_offset=last_offset)
        assert RaftErrors(answer_["error_code"]) == RaftErrors.INVALID_REQUEST, (
            f"a candidate of epoch 6 whose last entry is ({last_epoch}, ending at {last_offset}) was answered "
            f"{RaftErrors(answer_['error_code']).name}: a candidate's log can hold entries only of epochs "
            "before its candidacy, at offsets from 0"
        )
        assert (ctx.state_name(), ctx.quorum().epoch()) == ("Follower", 5), (
            f"a malformed Vote request moved the voter to {ctx.state_name()} in epoch {ctx.quorum().epoch()}"
        )


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_a_non_voter_is_refused_and_a_vote_request_is_judged_on_its_form_then_its_epoch():
    ctx = node(ElectionState.with_elected_leader(5, 1, VOTERS), log=[(1, 2)])
    cases = [
        # (candidate, epoch, last entry's epoch, its end offset), the answer's error, why
        (7, 6, 1, 2, RaftErrors.INCONSISTENT_VOTER_SET, "node 7 is not one of the voters {0, 1, 2}"),
        (2, 4, 4, 2, RaftErrors.INVALID_REQUEST, "its last entry is of epoch 4, not before its own epoch 4"),
        (7, 4, 1, 2, RaftErrors.FENCED_LEADER_EPOCH, "its epoch 4 is behind the voter's 5"),
    ]
    for candidate, epoch, last_epoch, last_offset, want, why in cases:
        answer_ = vote(ctx, candidate=candidate, epoch=epoch, last_epoch=last_epoch, last_offset=last_offset)
        got = RaftErrors(answer_["error_code"])
        assert (got, answer_["vote_granted"]) == (want, False), (
            f"node {candidate}'s Vote request of epoch {epoch}, its last entry ({last_epoch}, ending at "
            f"{last_offset}), to a follower of epoch 5 ({why}) was answered {got.name}, "
            f"granted={answer_['vote_granted']}"
        )
        assert (ctx.state_name(), ctx.quorum().epoch(), voted_for(ctx)) == ("Follower", 5, (5, None)), (
            f"after refusing node {candidate}'s Vote request of epoch {epoch} the voter is {ctx.state_name()} "
            f"in epoch {ctx.quorum().epoch()}, its quorum-state file (epoch, voted for) = {voted_for(ctx)}: "
            "a refused request changes nothing"
        )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_candidate_leads_once_a_majority_of_voters_granted_its_own_vote_counted_once():
    ctx, requests = candidate_of({0, 1, 2})
    assert [r.destination_id for r in requests] == [1, 2], "the candidate did not ask voters 1 and 2"
    answer(ctx, requests[0], granted=True)
    assert ctx.state_name() == "Leader", (
        f"a candidate of 3 voters granted by voter 1 (2 of 3, with its own) is {ctx.state_name()}"
    )
    five, requests = candidate_of({0, 1, 2, 3, 4})
    answer(five, requests[0], granted=True)
    assert five.state_name() == "Candidate", (
        f"a candidate of 5 voters granted by voter 1 alone (2 of 5, with its own) is {five.state_name()}"
    )
    answer(five, requests[2], granted=True)
    assert five.state_name() == "Leader", (
        f"a candidate of 5 voters granted by 1 and 3 (3 of 5, with its own) is {five.state_name()}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_a_candidate_gives_up_and_backs_off_once_the_rejections_leave_no_majority(monkeypatch):
    ctx, requests = candidate_of({0, 1, 2, 3, 4})
    # A backoff of a second (the drawn one may be 0 ms): the late grant below arrives during it.
    monkeypatch.setattr(ctx.client, "_binary_exponential_election_backoff_ms", lambda retries: 1_000)
    answer(ctx, requests[0], granted=False)
    answer(ctx, requests[1], granted=False)
    state = ctx.quorum().candidate_state_or_throw()
    assert not state.is_backing_off(), (
        "2 of 5 voters refused and the candidate stopped its election: with itself, 3 and 4 it can "
        "still have 3 of 5"
    )
    answer(ctx, requests[2], granted=False)
    assert ctx.quorum().candidate_state_or_throw().is_backing_off(), (
        "3 of 5 voters refused and the candidate still waits for its election timeout: no majority "
        "is left, and a split vote clears sooner when it backs off now"
    )
    answer(ctx, requests[3], granted=True)
    assert ctx.state_name() == "Candidate", (
        f"after 3 refusals of 5, one late grant made the candidate {ctx.state_name()}"
    )
    granting = ctx.quorum().candidate_state_or_throw().granting_voters()
    assert granting == {0, 4}, (
        f"voter 4 granted while the candidate was backing off, and the candidate's tally of grants is "
        f"{sorted(granting)}: an answer that arrives during the backoff is still an answer of this epoch"
    )


class DropFetches(NetworkFilter):
    """Fetch requests are lost: nobody replicates, followers time out, and elections go on and on."""

    def accept_outbound(self, message) -> bool:
        return not (isinstance(message, RaftRequest.Outbound) and message.api_key == RaftApiKeys.FETCH)


def never_commit(monkeypatch) -> None:
    # Held out of stages 1 and 2: their simulations check nothing that needs a commit.
    monkeypatch.setattr(LeaderState, "_maybe_update_high_watermark", lambda self: False)


def elections(seed: int, monkeypatch, test: str) -> int:
    """Fifteen simulated seconds of elections among 3 or 5 voters that never replicate; returns the
    number of epochs that elected a leader. SingleLeader and MonotonicEpoch run after every event."""
    never_commit(monkeypatch)
    num_voters = random.Random(f"{seed}/lab18").choice([3, 5])
    sim = scenarios.setup(
        "lab18-elections", seed, num_voters, invariants=lambda c: [SingleLeader(c), MonotonicEpoch(c)]
    )
    for node_id in sim.cluster.nodes:
        sim.router.filter(node_id, DropFetches())
    led: set[int] = set()

    def note_leaders() -> bool:
        for node in sim.cluster.running.values():
            if node.client.quorum().is_leader():
                led.add(node.client.quorum().epoch())
        return False

    try:
        sim.scheduler.run_until(note_leaders, "fifteen seconds", 15_000)
    except SimulationFailure as failure:
        if failure.check != "fifteen seconds" or "not reached" not in failure.detail:
            raise replayed(failure, test, reference=False) from None
    if len(led) < 2:
        raise AssertionError(
            f"seed {seed}: only {len(led)} epochs elected a leader in 15 simulated seconds of {num_voters} "
            f"voters whose followers time out every 3 s: elections do not complete (is a majority of "
            f"grants counted as a win?)\nreplay it on your code: {SEEDS_ENV}={seed} {GRADE_COMMAND} -k {test}"
        )
    return len(led)


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_elections_on_fixed_seeds_elect_one_leader_per_epoch(monkeypatch):
    written(*STAGE1)
    for seed in range(4):
        elections(seed, monkeypatch, "test_elections_on_random_seeds")


@pytest.mark.stage(1)
@pytest.mark.points(1)
@pytest.mark.timeout(REPEAT_TIMEOUT_S)
def test_elections_on_random_seeds_elect_one_leader_per_epoch(monkeypatch):
    written(*STAGE1)
    for seed in drawn_seeds():
        elections(seed, monkeypatch, "test_elections_on_random_seeds")


# -- stage 2: fetch, and truncation at the diverging epoch --------------------------------------------------


def append(log: ReplicatedLog, n: int, epoch: int) -> None:
    """``n`` records at the log end, as the leader of ``epoch``, one batch each (a log truncates whole
    batches)."""
    for i in range(n):
        records = MemoryRecords.with_records([(0, None, b"%d" % i)], base_offset=log.end_offset().offset)
        data = bytearray(records.buffer())
        set_partition_leader_epoch(data, 0, epoch)  # as the leader's accumulator stamps its batches
        log.append_as_leader(MemoryRecords(bytes(data)), epoch)


def leader_log() -> MockLog:
    """Epoch 1 at offsets 0-3, epoch 3 at 4-6, end offset 7 (epoch 2's leader wrote nothing here)."""
    log = MockLog(TP)
    append(log, 4, 1)
    append(log, 3, 3)
    return log


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_fetch_position_the_leaders_log_holds_is_valid():
    log = leader_log()
    for offset, epoch in [(0, 0), (3, 1), (4, 1), (6, 3), (7, 3)]:
        got = log.validate_offset_and_epoch(offset, epoch)
        assert got == ValidOffsetAndEpoch.valid(OffsetAndEpoch(offset, epoch)), (
            f"leader log epochs (1 @ 0) (3 @ 4), end 7; a follower fetching offset {offset} whose last "
            f"entry is of epoch {epoch} agrees with it up to there: VALID, got {got}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_diverging_fetch_is_told_the_end_of_the_largest_epoch_not_above_its_own():
    log = leader_log()
    cases = [
        ((6, 2), (4, 1), "epoch 2 is not in the leader's log; the largest epoch below it, 1, ends at 4"),
        ((6, 1), (4, 1), "the follower has more of epoch 1 than the leader, whose epoch 1 ends at 4"),
        ((9, 3), (7, 3), "the follower is ahead of the leader within epoch 3, which ends at 7 here"),
    ]
    for (offset, epoch), (end, end_epoch), why in cases:
        got = log.validate_offset_and_epoch(offset, epoch)
        want = ValidOffsetAndEpoch.diverging(OffsetAndEpoch(end, end_epoch))
        assert got == want, (
            f"leader log epochs (1 @ 0) (3 @ 4), end 7; fetch offset {offset}, last epoch {epoch}: "
            f"{why}, so the answer is {want}, got {got}"
        )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_fetch_from_before_the_log_start_is_sent_the_latest_snapshot(tmp_path):
    # The log over chapter 6's Log: its log start moves past a snapshot without any code of yours.
    log = KafkaMetadataLog.create(TP, tmp_path / "__cluster_metadata-0", MockTime(), segment_bytes=1024)
    append(log, 10, 1)
    append(log, 10, 2)
    log.update_high_watermark(LogOffsetMetadata(20))
    for snapshot_id in (OffsetAndEpoch(10, 1), OffsetAndEpoch(15, 2)):
        writer = log.store_snapshot(snapshot_id)
        writer.append(b"state")
        writer.freeze()
        writer.close()
    log.delete_before_snapshot(OffsetAndEpoch(10, 1))
    got = log.validate_offset_and_epoch(5, 1)
    assert got == ValidOffsetAndEpoch.snapshot(OffsetAndEpoch(15, 2)), (
        f"the log starts at 10 (a snapshot stands for offsets 0-9); a follower fetching offset 5 must load "
        f"a snapshot, the latest one (15, 2) so it skips as far ahead as it can: got {got}"
    )
    got = log.validate_offset_and_epoch(10, 2)
    assert got == ValidOffsetAndEpoch.snapshot(OffsetAndEpoch(15, 2)), (
        "a follower fetching offset 10, the log start, with its last entry of epoch 2 (the snapshot at the "
        f"log start ends epoch 1 there, so the follower's entry 9 is not the log's): got {got}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_follower_truncates_to_where_its_log_and_the_leaders_agree():
    follower = MockLog(TP)
    append(follower, 6, 1)  # epoch 1 at offsets 0-5: more of epoch 1 than the leader's (which ends at 4)
    got = follower.truncate_to_end_offset(OffsetAndEpoch(4, 1))
    assert (got, follower.end_offset().offset) == (4, 4), (
        f"both logs have epoch 1, the leader's ends at 4 and ours at 6: they agree up to 4, the shorter "
        f"end; truncate_to_end_offset returned {got} and the log ends at {follower.end_offset().offset}"
    )
    follower = MockLog(TP)
    append(follower, 4, 1)
    append(follower, 3, 4)  # epoch 4 at 4-6: the leader's answer names epoch 3, which we never had
    got = follower.truncate_to_end_offset(OffsetAndEpoch(6, 3))
    assert (got, follower.end_offset().offset) == (4, 4), (
        "the leader says its epoch 3 ends at 6, and this log has no epoch 3: its largest epoch below 3 is "
        "1, which ends at 4 here, so only offsets 0-3 are known to agree; truncating to the leader's "
        f"offset would keep entries of epoch 4 the leader never had: returned {got}, log end "
        f"{follower.end_offset().offset}"
    )
    short = MockLog(TP)
    append(short, 2, 1)
    got = short.truncate_to_end_offset(OffsetAndEpoch(4, 1))
    assert (got, short.end_offset().offset) == (2, 2), (
        f"the leader's epoch 1 ends at 4 and ours at 2: nothing to remove, return 2; returned {got}"
    )


def batches(node) -> list[tuple[int, int, bytes]]:
    return [(b.base_offset, b.epoch, bytes(b.data)) for b in node.log.read_batches(0)]


def divergence(seed: int, monkeypatch, test: str) -> None:
    """A leader cut off keeps appending entries nobody fetches while the others elect a leader and
    append their own; after the cut heals, every log must become the new leader's. Nothing commits."""
    never_commit(monkeypatch)
    # Only this test appends (the simulator's counter would append on every leader, without end).
    monkeypatch.setattr(ReplicatedCounter, "is_writable", lambda self: False)
    num_voters = random.Random(f"{seed}/lab18").choice([3, 5])
    sim = scenarios.setup(
        "lab18-divergence", seed, num_voters, invariants=lambda c: [SingleLeader(c), MonotonicEpoch(c)]
    )
    rng = random.Random(f"{seed}/lab18/appends")

    def append_on(node_id: int, n: int) -> None:
        node = sim.cluster.running[node_id]
        for _ in range(n):
            node.client.schedule_append(node.client.quorum().epoch(), [rng.randrange(1000)])

    def all_logs_equal(node_ids) -> bool:
        logs = [batches(sim.cluster.running[n]) for n in node_ids]
        return all(log == logs[0] for log in logs)

    everyone = set(sim.cluster.nodes)
    try:
        sim.scheduler.run_until(sim.cluster.has_consistent_leader, "a leader", scenarios.ELECTION_BOUND_MS)
        old = sim.cluster.latest_leader()
        append_on(old, rng.randint(2, 5))
        sim.scheduler.run_until(lambda: all_logs_equal(everyone), "every log the leader's", 5_000)
        sim.router.filter(old, DropAllTraffic())
        append_on(old, rng.randint(3, 8))  # entries of the old epoch nobody else will have
        others = everyone - {old}
        sim.scheduler.run_until(
            lambda: sim.cluster.latest_leader() not in (None, old),
            "a new leader",
            scenarios.ELECTION_BOUND_MS,
        )
        new = sim.cluster.latest_leader()
        sim.scheduler.run_until(lambda: all_logs_equal(others), "the majority's logs equal", 5_000)
        append_on(new, rng.randint(1, 4))
        sim.router.filter(old, PermitAllTraffic())
        sim.scheduler.run_until(
            lambda: (
                all_logs_equal(everyone)
                and sim.cluster.running[old].log.end_offset().offset
                == sim.cluster.running[new].log.end_offset().offset
            ),
            f"every log, the old leader {old}'s too, equal to the new leader {new}'s",
            10_000,
        )
    except SimulationFailure as failure:
        detail = "\n".join(
            f"  node {n}: last batches (base offset, epoch) {[(o, e) for o, e, _ in batches(node)][-8:]}"
            for n, node in sorted(sim.cluster.running.items())
        )
        failure.detail += f"\n{detail}"
        raise replayed(failure, test, reference=False) from None


def fetch(ctx: RaftClientTestContext, replica: int, epoch: int, offset: int, last_epoch: int) -> dict:
    """Replica ``replica``'s Fetch (of ``epoch``, from ``offset``, its last entry of ``last_epoch``)
    delivered to the node; the partition of the node's answer."""
    request = ctx.deliver_fetch_request(replica, epoch, fetch_offset=offset, last_fetched_epoch=last_epoch)
    ctx.poll()
    return ctx.partition_of(ctx.response_of(request), "responses")


def next_fetch(ctx: RaftClientTestContext):
    """The follower's next Fetch request, and where it fetches from: (fetch offset, last fetched epoch)."""
    ctx.poll()
    request = ctx.drain_sent(RaftApiKeys.FETCH)[-1]
    partition = request.data["topics"][0]["partitions"][0]
    return request, (partition["fetch_offset"], partition["last_fetched_epoch"])


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_the_leader_answers_a_fetch_with_its_entries_or_with_where_the_logs_part(monkeypatch):
    never_commit(monkeypatch)
    ctx = node(log=[(1, 3)])  # epoch 1 at 0-2; as leader of epoch 2 it writes its LeaderChange at 3
    epoch = ctx.become_leader()
    agreeing = fetch(ctx, replica=1, epoch=epoch, offset=3, last_epoch=1)
    assert isinstance(agreeing["records"], (bytes, bytearray)), (
        f"the answer's records field is a {type(agreeing['records']).__name__}, not bytes: the Fetch "
        "response carries its entries as the bytes of their batches"
    )
    assert agreeing["diverging_epoch"]["epoch"] == -1 and agreeing["records"], (
        "follower 1, whose log is the leader's up to offset 3, fetched from 3 and got no entries "
        f"(diverging epoch {agreeing['diverging_epoch']})"
    )
    assert next(MemoryRecords(bytes(agreeing["records"])).batches()).base_offset == 3, (
        "the entries sent to a fetch from offset 3 do not start at 3"
    )
    parted = fetch(ctx, replica=2, epoch=epoch, offset=5, last_epoch=1)
    assert parted["diverging_epoch"] == {"epoch": 1, "end_offset": 3}, (
        "follower 2 fetched from offset 5 with its last entry of epoch 1, where the leader's epoch 1 "
        f"ends at 3; the answer named the diverging epoch {parted['diverging_epoch']}"
    )
    assert not parted["records"], "a follower whose log parts from the leader's was sent entries to append"


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_follower_told_it_diverged_truncates_and_fetches_from_where_the_logs_agree():
    leader_5 = ElectionState.with_elected_leader(5, 1, VOTERS)
    ctx = node(leader_5, log=[(1, 2), (3, 3)])  # epoch 1 at 0-1, epoch 3 at 2-4: a lost leader's tail
    request, position = next_fetch(ctx)
    assert position == (5, 3)
    ctx.deliver_response(request, ctx.fetch_response(5, 1, diverging_epoch=(2, 4)))
    ctx.poll()
    assert ctx.log.end_offset().offset == 2, (
        "the leader of epoch 5 has epoch 2 up to offset 4 and never had epoch 3; the follower's log "
        f"(epoch 1 at 0-1, epoch 3 at 2-4) now ends at {ctx.log.end_offset().offset}"
    )
    _, position = next_fetch(ctx)
    assert position == (2, 1), f"after the truncation the follower fetched from (offset, epoch) {position}"


def told_to_part_below_the_high_watermark(log, high_watermark: int, diverging_epoch) -> tuple[bool, int]:
    """A follower with ``log`` (epoch, records) batches, told by the leader of epoch 5 that its
    high watermark is ``high_watermark``, then that their logs part at ``diverging_epoch``: whether
    the follower stopped with a KafkaException, and where its log ends."""
    ctx = node(ElectionState.with_elected_leader(5, 1, VOTERS), log=log)
    request, _ = next_fetch(ctx)
    ctx.deliver_response(request, ctx.fetch_response(5, 1, high_watermark=high_watermark))
    ctx.poll()
    assert ctx.quorum().follower_state_or_throw().high_watermark().offset == high_watermark
    request, _ = next_fetch(ctx)
    ctx.deliver_response(request, ctx.fetch_response(5, 1, diverging_epoch=diverging_epoch))
    try:
        ctx.poll()
    except KafkaException:
        return True, ctx.log.end_offset().offset
    return False, ctx.log.end_offset().offset


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_follower_told_to_truncate_below_its_high_watermark_stops():
    stopped, end = told_to_part_below_the_high_watermark(
        [(1, 2), (1, 2), (1, 2)], 4, (1, 2)
    )  # epoch 1 at 0-5
    assert stopped and end == 6, (
        "the follower's high watermark is 4 (offsets 0-3 are committed) and the leader of epoch 5 said "
        f"its log parts from ours at offset 2, inside the committed entries; the follower "
        f"{'stopped' if stopped else 'went on without a KafkaException'}, its log now ending at {end} "
        "(it ended at 6)"
    )
    # The leader's offset is below the high watermark, though this log would truncate above it.
    log = [(1, 4), (1, 4), (1, 2), (4, 1)]  # epoch 1 at 0-9, epoch 4 at 10
    stopped, end = told_to_part_below_the_high_watermark(log, 8, (3, 7))
    assert stopped and end == 11, (
        "the follower's high watermark is 8 (offsets 0-7 are committed) and the leader of epoch 5 said its "
        "epoch 3 ends at offset 7 in its log: the leader holds nothing of the follower's epochs past 7, so "
        "it lacks committed entry 7, though this log (no epoch 3; epoch 1 ending at 10) alone would keep "
        f"0-9; the follower {'stopped' if stopped else 'went on without a KafkaException'}, its log now "
        f"ending at {end} (it ended at 11)"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_diverged_logs_converge_on_fixed_seeds(monkeypatch):
    written(*STAGE2, *STAGE1)
    for seed in range(4):
        divergence(seed, monkeypatch, "test_diverged_logs_converge_on_random_seeds")


@pytest.mark.stage(2)
@pytest.mark.points(1)
@pytest.mark.timeout(REPEAT_TIMEOUT_S)
def test_diverged_logs_converge_on_random_seeds(monkeypatch):
    written(*STAGE2, *STAGE1)
    for seed in drawn_seeds():
        divergence(seed, monkeypatch, "test_diverged_logs_converge_on_random_seeds")


# -- stage 3: the high watermark ----------------------------------------------------------------------------


def leader(voters: set[int], epoch_start_offset: int, log_end: int) -> LeaderState:
    state = LeaderState(0, 5, epoch_start_offset, voters, {0}, None)
    state.update_local_state(LogOffsetMetadata(log_end))
    return state


def hw(state: LeaderState) -> int | None:
    high_watermark = state.high_watermark()
    return None if high_watermark is None else high_watermark.offset


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_the_high_watermark_is_the_offset_a_majority_of_voters_has_reached():
    state = leader({0, 1, 2}, epoch_start_offset=10, log_end=15)
    assert hw(state) is None, "a leader alone of 3 voters has no majority: no high watermark yet"
    state.update_replica_state(1, 0, LogOffsetMetadata(12))
    assert hw(state) == 12, (
        f"voters' end offsets: leader 15, voter 1 12, voter 2 none; the largest offset a majority (2 of 3) "
        f"has reached is 12 (the leader counted once), got {hw(state)}"
    )
    five = leader({0, 1, 2, 3, 4}, epoch_start_offset=10, log_end=20)
    for voter, offset in [(1, 18), (2, 14), (3, 11), (4, 16)]:
        five.update_replica_state(voter, 0, LogOffsetMetadata(offset))
    assert hw(five) == 16, (
        f"end offsets 20, 18, 16, 14, 11: three of five voters have reached 16, got {hw(five)}"
    )
    five.update_replica_state(9, 0, LogOffsetMetadata(20))  # an observer
    assert hw(five) == 16, "an observer's fetch never counts toward the high watermark"
    four = leader({0, 1, 2, 3}, epoch_start_offset=10, log_end=20)
    for voter, offset in [(1, 18), (2, 14), (3, 11)]:
        four.update_replica_state(voter, 0, LogOffsetMetadata(offset))
    assert hw(four) == 14, (
        f"end offsets 20, 18, 14, 11: a majority of four voters is three, and three have reached 14 "
        f"(two of four, at 18, are no majority), got {hw(four)}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_the_high_watermark_moves_only_past_the_epoch_start_offset():
    state = leader({0, 1, 2}, epoch_start_offset=10, log_end=11)
    state.update_replica_state(1, 0, LogOffsetMetadata(10))
    assert hw(state) is None, (
        "the majority has reached 10, the epoch start offset: that is only the entries of earlier epochs, "
        "and Raft commits those only once an entry of the leader's own epoch (the LeaderChange record "
        f"at 10) is on a majority (the paper's 5.4.2, Figure 8); got {hw(state)}"
    )
    state.update_replica_state(1, 0, LogOffsetMetadata(11))
    assert hw(state) == 11, "the LeaderChange record at 10 is on a majority: the high watermark is 11"


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_the_high_watermark_never_moves_back():
    state = leader({0, 1, 2}, epoch_start_offset=10, log_end=15)
    state.update_replica_state(1, 0, LogOffsetMetadata(14))
    assert hw(state) == 14
    state.update_replica_state(1, 0, LogOffsetMetadata(12))  # voter 1 truncated, or its fetch is late
    assert hw(state) == 14, (
        f"the majority's offset fell to 12 after 14 was reported committed: the high watermark stays at "
        f"14 (what was committed stays committed), got {hw(state)}"
    )


STAGE3_SCENARIOS = [
    "canElectInitialLeader",
    "canRecoverAfterAllNodesKilled",
    "canMakeProgressIfMajorityIsReachable",
]


def whole_scenario(scenario: str, seed: int, test: str) -> None:
    try:
        scenarios.SCENARIOS[scenario](seed)
    except SimulationFailure as failure:
        raise replayed(failure, test, reference=True) from None


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_the_simulators_scenarios_on_fixed_seeds():
    written(*STAGE3, *STAGE2, *STAGE1)
    for scenario in STAGE3_SCENARIOS:
        for seed in range(2):
            whole_scenario(scenario, seed, "test_the_simulators_scenarios_on_random_seeds")


@pytest.mark.stage(3)
@pytest.mark.points(1)
@pytest.mark.timeout(REPEAT_TIMEOUT_S)
def test_the_simulators_scenarios_on_random_seeds():
    written(*STAGE3, *STAGE2, *STAGE1)
    for i, seed in enumerate(drawn_seeds()):
        scenario = STAGE3_SCENARIOS[i % len(STAGE3_SCENARIOS)]
        whole_scenario(scenario, seed, "test_the_simulators_scenarios_on_random_seeds")


# -- stage 4: snapshots: the log start and the listener's load ---------------------------------------------


def snapshot(log: MockLog, snapshot_id: OffsetAndEpoch, value: int) -> None:
    """A counter's snapshot, as the simulator's ReplicatedCounter writes one: one record, its value."""
    writer = RecordsSnapshotWriter.create_with_header(
        lambda: log.store_snapshot(snapshot_id), 1024, MockTime(), 0, IntSerde()
    )
    with writer:
        writer.append([value])
        writer.freeze()


@pytest.mark.stage(4)
@pytest.mark.points(2)
def test_the_log_start_moves_to_a_snapshot_and_the_older_snapshots_go():
    log = MockLog(TP)
    append(log, 10, 1)
    append(log, 10, 2)
    log.update_high_watermark(LogOffsetMetadata(16))
    snapshot(log, OffsetAndEpoch(10, 1), 10)
    snapshot(log, OffsetAndEpoch(15, 2), 15)
    assert log.delete_before_snapshot(OffsetAndEpoch(15, 2)) is True, (
        "delete_before_snapshot((15, 2)) on a log that holds snapshot (15, 2) answered False"
    )
    again = log.delete_before_snapshot(OffsetAndEpoch(15, 2))
    assert again is True and log.start_offset() == 15, (
        f"asked again for snapshot (15, 2), where the log already starts, the log answered {again} and now "
        f"starts at {log.start_offset()}: it holds the snapshot and starts at it, as after the first call"
    )
    got = (log.start_offset(), log.earliest_snapshot_id(), log.latest_snapshot_id())
    assert got == (15, OffsetAndEpoch(15, 2), OffsetAndEpoch(15, 2)), (
        "after delete_before_snapshot((15, 2)) the log starts at 15, where the snapshot ends, and the older "
        "snapshot (10, 1) is gone: the earliest snapshot is the one at the log start, which a follower "
        f"fetching from below it is sent; got (log start, earliest, latest) = {got}"
    )
    first = log.read_batches(15)[0].base_offset if log.read_batches(15) else None
    assert first == 15, f"the entries from 15 on stay: the first batch read from 15 starts at {first}"
    with pytest.raises(OffsetOutOfRangeException):
        log.read(14, Isolation.UNCOMMITTED)  # below the log start: the snapshot stands for it
    log.update_high_watermark(LogOffsetMetadata(18))
    snapshot(
        log, OffsetAndEpoch(20, 2), 20
    )  # a follower's copy of the leader's snapshot, past our high watermark
    try:
        past = log.delete_before_snapshot(OffsetAndEpoch(20, 2))
    except OffsetOutOfRangeException:
        past = "refused"
    assert past == "refused" and log.start_offset() == 15, (
        f"asked to move the log start from 15 to snapshot (20, 2), past the high watermark 18, the log "
        f"answered {past} (not OffsetOutOfRangeException) and now starts at {log.start_offset()}: entries "
        "above the high watermark are not committed, and a snapshot stands only for committed ones"
    )
    missing = log.delete_before_snapshot(OffsetAndEpoch(17, 2))
    assert missing is False, (
        f"delete_before_snapshot((17, 2)), a snapshot the log does not hold, answered {missing}"
    )
    assert log.start_offset() == 15, "a snapshot the log does not hold moves nothing"
    try:
        moved_back = log.delete_before_snapshot(OffsetAndEpoch(10, 1))
    except OffsetOutOfRangeException:
        moved_back = "refused"
    assert moved_back == "refused" and log.start_offset() == 15, (
        f"asked to move the log start back from 15 to snapshot (10, 1), the log answered {moved_back} and "
        f"now starts at {log.start_offset()}: the entries below 15 are gone, the log start never moves back"
    )


@pytest.mark.stage(4)
@pytest.mark.points(1)
def test_after_the_log_start_moves_each_epoch_the_log_holds_still_ends_where_it_did():
    log = MockLog(TP)
    append(log, 10, 1)
    append(log, 10, 2)
    log.update_high_watermark(LogOffsetMetadata(16))
    # (10, 1) ends epoch 1: entry 10, the new log start, is epoch 2's first; (15, 2) ends inside epoch 2.
    for snapshot_id in (OffsetAndEpoch(10, 1), OffsetAndEpoch(15, 2)):
        snapshot(log, snapshot_id, snapshot_id.offset)
        assert log.delete_before_snapshot(snapshot_id) is True, f"the log holds snapshot {snapshot_id}: True"
        got = log.end_offset_for_epoch(2)
        assert got == OffsetAndEpoch(20, 2), (
            f"the log holds epoch 2 at offsets 10-19; after its start moved to snapshot {snapshot_id} "
            f"(it now starts at {log.start_offset()}), end_offset_for_epoch(2) says {got}: a follower fetching "
            "from inside epoch 2 would be told its log parts from the leader's"
        )


@pytest.mark.stage(4)
@pytest.mark.points(2)
def test_a_listener_that_loads_a_snapshot_takes_its_state_and_goes_on_from_its_end():
    log = MockLog(TP)
    append(log, 12, 1)
    log.update_high_watermark(LogOffsetMetadata(12))
    snapshot(log, OffsetAndEpoch(12, 1), 41)
    counter = ReplicatedCounter(0, None)  # the simulator's state machine, as a listener
    context = _ListenerContext(counter)
    context.fire_handle_snapshot(
        RecordsSnapshotReader.of(log.read_snapshot(OffsetAndEpoch(12, 1)), IntSerde())
    )
    assert (counter.snapshots_loaded, counter.committed) == (1, 41), (
        "the listener is handed the snapshot and loads its state from it (the counter's value, 41); got "
        f"snapshots loaded {counter.snapshots_loaded}, value {counter.committed}"
    )
    assert context.next_expected_offset() == 12, (
        "the snapshot stands for offsets 0-11: the listener goes on from its end offset, 12, or it would be "
        f"given entries it already holds (or no longer in the log); next expected offset {context.next_expected_offset()}"
    )


def snapshot_install(seed: int, test: str) -> None:
    try:
        scenarios.SCENARIOS["snapshot_install"](seed)
    except SimulationFailure as failure:
        raise replayed(failure, test, reference=True) from None


@pytest.mark.stage(4)
@pytest.mark.points(2)
def test_a_voter_catches_up_by_snapshot_on_fixed_seeds():
    written(*STAGE4, *STAGE3, *STAGE2, *STAGE1)
    for seed in range(2):
        snapshot_install(seed, "test_a_voter_catches_up_by_snapshot_on_random_seeds")


@pytest.mark.stage(4)
@pytest.mark.points(1)
@pytest.mark.timeout(max(REPEAT_TIMEOUT_S, 2 * len(wanted_seeds() or ())))
def test_a_voter_catches_up_by_snapshot_on_random_seeds():
    written(*STAGE4, *STAGE3, *STAGE2, *STAGE1)
    for seed in wanted_seeds() or drawn_seeds()[:2]:
        snapshot_install(seed, "test_a_voter_catches_up_by_snapshot_on_random_seeds")
