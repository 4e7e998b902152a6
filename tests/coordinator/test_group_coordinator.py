"""GroupCoordinator's membership half under MockTime: JoinGroup (with the initial rebalance delay),
SyncGroup, Heartbeat, LeaveGroup, session and rebalance timeouts, the checks before every request,
DescribeGroups and ListGroups, and groups dying when their partition moves away (after Kafka
0.10.1's GroupCoordinatorResponseTest, driven through the real purgatories and timing wheels).

Every state transition a test takes is recorded. A test declares the edges of the group state table
it is there to cross (``@crosses``), and its fixture checks that it crossed them and none outside the
table; the last test checks that the declarations, together, cover every edge. Each test stands
alone, in any order.
"""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.time import MockTime
from kafka_lite.coordinator.group_coordinator import DEAD_GROUP, EMPTY_GROUP, UNKNOWN_MEMBER_ID, GroupConfig
from kafka_lite.coordinator.group_metadata import GROUP_VALID_PREVIOUS_STATES, GroupMetadata, GroupState
from kafka_lite.coordinator.group_metadata_manager import (
    GROUP_METADATA_TOPIC_NAME,
    OffsetConfig,
    OffsetMetadataAndError,
)
from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata
from kafka_lite.testing.group_coordinator import (
    PROTOCOLS,
    REBALANCE_MS,
    SESSION_MS,
    CoordinatorHarness,
)
from kafka_lite.testing.in_process_replicas import in_process_brokers, leader_and_isr
from kafka_lite.testing.logs import read_all

pytestmark = pytest.mark.unit

G = GroupState
GROUP_ID = "group"
OTHER_GROUP_ID = "other-group"
PROTOCOL_TYPE = "consumer"
MIN_SESSION_MS = 100
MAX_SESSION_MS = 30_000
INITIAL_DELAY_MS = 300
OFFSETS_PARTITIONS = 4

Edge = tuple[GroupState, GroupState]  # (from, to)

TABLE_EDGES: frozenset[Edge] = frozenset(
    (source, target) for target, sources in GROUP_VALID_PREVIOUS_STATES.items() for source in sources
)

# Edges no request or timeout of the membership half can cross, each with the reason.
EXCLUDED: dict[Edge, str] = {
    (G.DEAD, G.DEAD): (
        "a Dead group leaves the coordinator's cache under its lock as it dies, so a second removal "
        "meets it only when the offsets manager's expiry of an Empty group races the partition's "
        "emigration on another thread"
    ),
}


def crosses(*edges: Edge):
    """The edges of the state table a test is there to cross: its fixture checks that it crossed
    them, and the last test that the tests' edges together cover the table."""

    def declare(test):
        test.edges_crossed = frozenset(edges)
        return test

    return declare


@pytest.fixture(autouse=True)
def record_transitions(monkeypatch, request):
    """Wrap GroupMetadata.transition_to: record each transition the coordinator attempts, then make it
    (recorded first, so that an attempt outside the table, which raises, is seen too). Afterwards the
    test crossed the edges it declares, none outside the table and none of the excluded ones."""
    original = GroupMetadata.transition_to
    crossed: set[Edge] = set()

    def recording(self, group_state):
        crossed.add((self.current_state, group_state))
        original(self, group_state)

    monkeypatch.setattr(GroupMetadata, "transition_to", recording)
    yield
    assert crossed <= TABLE_EDGES, f"transitions attempted outside the table: {crossed - TABLE_EDGES}"
    assert not crossed & EXCLUDED.keys(), "an excluded edge was crossed: take it off the exclusions"
    missing = getattr(request.function, "edges_crossed", frozenset()) - crossed
    assert not missing, (
        f"{request.function.__name__} did not cross {sorted((s.value, t.value) for s, t in missing)}"
    )


class Harness(CoordinatorHarness):
    """A started coordinator owning GROUP_ID's partition, its two purgatories on one MockTime, its
    group manager storing into an in-memory replica manager (``kafka_lite.testing``, as lab 7's)."""

    def __init__(
        self,
        initial_delay_ms: int = INITIAL_DELAY_MS,
        answer_appends: bool = True,
        replica_manager=None,
        time: MockTime | None = None,
    ) -> None:
        super().__init__(
            GroupConfig(MIN_SESSION_MS, MAX_SESSION_MS, initial_delay_ms),
            GROUP_ID,
            offsets_partitions=OFFSETS_PARTITIONS,
            answer_appends=answer_appends,
            replica_manager=replica_manager,
            time=time,
        )

    def stable_group(self, members: int = 2) -> tuple[list[str], int]:
        """Join ``members`` members, wait out the initial delay, sync: a Stable group."""
        answers = [self.join(client_id=f"client{i}") for i in range(members)]
        self.advance(2 * INITIAL_DELAY_MS)
        results = [only(a) for a in answers]
        member_ids = [r.member_id for r in results]
        generation = results[0].generation_id
        leader = results[0].leader_id
        syncs = {m: self.sync(m, generation) for m in member_ids if m != leader}
        syncs[leader] = self.sync(leader, generation, {m: m.encode() for m in member_ids})
        for member_id, answer in syncs.items():
            assert only(answer) == (member_id.encode(), Errors.NONE)
        assert self.state() is G.STABLE
        return member_ids, generation


def only(answers: list):
    assert len(answers) == 1, f"expected exactly one answer, got {answers}"
    return answers[0]


@pytest.fixture
def h() -> Harness:
    return Harness()


# -- JoinGroup and the initial rebalance delay ----------------------------------------------------------------


@crosses((G.EMPTY, G.PREPARING_REBALANCE), (G.PREPARING_REBALANCE, G.AWAITING_SYNC))
def test_first_join_waits_the_initial_delay_and_takes_a_member_joining_meanwhile(h):
    first = h.join(client_id="a")
    assert first == [] and h.state() is G.PREPARING_REBALANCE
    h.advance(100)
    second = h.join(client_id="b")
    # At the first delay's end a new member is in: the group waits another delay.
    h.advance(INITIAL_DELAY_MS - 100 + 10)
    assert first == [] and second == []
    h.advance(INITIAL_DELAY_MS)
    a, b = only(first), only(second)

    assert a.error is Errors.NONE and b.error is Errors.NONE
    assert a.member_id.startswith("a-") and b.member_id.startswith("b-")
    assert a.generation_id == b.generation_id == 1
    assert a.leader_id == b.leader_id == a.member_id  # the first to join leads
    assert a.sub_protocol == b.sub_protocol == "range"  # both prefer range
    assert a.members == {a.member_id: b"range-metadata", b.member_id: b"range-metadata"}
    assert b.members == {}  # only the leader gets the members
    assert h.state() is G.AWAITING_SYNC


def test_initial_delay_without_new_members_ends_after_one_delay(h):
    answers = h.join()
    h.advance(INITIAL_DELAY_MS - 5)
    assert answers == []
    h.advance(10)
    assert only(answers).generation_id == 1


def test_initial_delay_extends_at_most_to_the_rebalance_timeout(h):
    answers = [h.join(client_id="first")]
    # a member every 100 ms: each delay ends with a new member in, up to the rebalance timeout
    for _ in range(REBALANCE_MS // 100 - 1):
        h.advance(100)
        answers.append(h.join())
    h.advance(100 - 10)  # 10 ms before the rebalance timeout
    assert all(a == [] for a in answers)
    h.advance(20)
    results = [only(a) for a in answers]
    assert {r.generation_id for r in results} == {1}
    assert len(results[0].members) == REBALANCE_MS // 100


def test_a_group_emptied_later_waits_one_initial_delay_only(h):
    (a,), generation = h.stable_group(members=1)
    assert h.leave(a) is Errors.NONE and h.state() is G.EMPTY
    first = h.join(client_id="c")
    h.advance(100)
    second = h.join(client_id="d")
    # past generation 0 a new member does not extend the delay (Kafka 0.11 extends only the first)
    h.advance(INITIAL_DELAY_MS - 100 + 10)
    assert only(first).generation_id == only(second).generation_id == generation + 2


def test_zero_initial_delay_completes_the_first_join_at_once():
    h = Harness(initial_delay_ms=0)
    result = only(h.join())
    assert result.error is Errors.NONE and result.generation_id == 1 and result.leader_id == result.member_id
    assert h.state() is G.AWAITING_SYNC


# -- SyncGroup and Heartbeat ----------------------------------------------------------------------------------


@crosses((G.AWAITING_SYNC, G.STABLE))
def test_sync_from_the_leader_hands_every_member_its_assignment(h):
    first, second, third = h.join(client_id="a"), h.join(client_id="b"), h.join(client_id="c")
    h.advance(2 * INITIAL_DELAY_MS)
    leader, b, c = only(first).member_id, only(second).member_id, only(third).member_id
    follower_sync = h.sync(b, 1)
    assert follower_sync == []  # waits for the leader
    assert h.state() is G.AWAITING_SYNC

    leader_sync = h.sync(leader, 1, {leader: b"for-a", b: b"for-b"})  # c left out
    assert only(leader_sync) == (b"for-a", Errors.NONE)
    assert only(follower_sync) == (b"for-b", Errors.NONE)
    assert h.state() is G.STABLE
    # a member that syncs once the group is Stable gets its assignment at once (empty if left out)
    assert only(h.sync(c, 1)) == (b"", Errors.NONE)
    assert only(h.sync(b, 1)) == (b"for-b", Errors.NONE)
    summary = h.coordinator.handle_describe_group(GROUP_ID)[1]
    assert {m.member_id: m.assignment for m in summary.members} == {leader: b"for-a", b: b"for-b", c: b""}


def test_heartbeats_keep_members_alive(h):
    (a, b), generation = h.stable_group()
    for _ in range(6):  # three session timeouts
        h.advance(SESSION_MS // 2)
        assert h.heartbeat(a, generation) is Errors.NONE
        assert h.heartbeat(b, generation) is Errors.NONE
    assert h.state() is G.STABLE and h.group().all_members() == {a, b}
    assert h.group().generation_id == generation


@crosses((G.STABLE, G.PREPARING_REBALANCE))
def test_a_session_expiry_rebalances_the_group(h):
    (a, b), generation = h.stable_group()
    for step in (SESSION_MS // 2, SESSION_MS // 2 - 10):  # only a heartbeats
        h.advance(step)
        assert h.state() is G.STABLE
        assert h.heartbeat(a, generation) is Errors.NONE
    h.advance(20)  # b's session is over
    assert h.state() is G.PREPARING_REBALANCE and b not in h.group().all_members()
    assert h.group().all_members() == {a}
    # a's heartbeat now tells it to rejoin; its rejoin completes the rebalance at once
    assert h.heartbeat(a, generation) is Errors.REBALANCE_IN_PROGRESS
    rejoin = only(h.join(a))
    assert (rejoin.error, rejoin.generation_id, rejoin.leader_id) == (Errors.NONE, generation + 1, a)
    assert rejoin.members == {a: b"range-metadata"}
    assert h.state() is G.AWAITING_SYNC


@crosses((G.AWAITING_SYNC, G.PREPARING_REBALANCE))
def test_a_member_that_never_syncs_expires_while_the_group_awaits_sync(h):
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first).member_id, only(second).member_id
    assert only(first).leader_id == a  # a leads, and never sends the assignment
    assert h.heartbeat(b, 1) is Errors.REBALANCE_IN_PROGRESS  # AwaitingSync: no session reset
    h.advance(SESSION_MS + 10)
    # neither had a parked request nor a heartbeat: both expired, the last one emptying the group
    assert h.group().is_empty() and h.state() is G.EMPTY
    assert h.group().generation_id == 2


def test_a_parked_sync_keeps_a_member_alive_until_the_leader_syncs(h):
    first = h.join(client_id="a", session_timeout_ms=3 * SESSION_MS)
    second = h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first).member_id, only(second).member_id
    parked = h.sync(b, 1)
    h.advance(SESSION_MS + 10)  # b's session is over, but its SyncGroup is parked: it is alive
    assert parked == [] and h.state() is G.AWAITING_SYNC and h.group().all_members() == {a, b}
    assert only(h.sync(a, 1, {a: b"A", b: b"B"})) == (b"A", Errors.NONE)
    assert only(parked) == (b"B", Errors.NONE) and h.state() is G.STABLE
    # with its assignment, b's session starts again; b never heartbeats, so it expires
    h.advance(SESSION_MS - 10)
    assert h.state() is G.STABLE
    h.advance(20)
    assert h.state() is G.PREPARING_REBALANCE and h.group().all_members() == {a}


def test_a_leader_that_never_syncs_expires_and_parked_syncs_are_told_to_rejoin(h):
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first).member_id, only(second).member_id
    follower_sync = h.sync(b, 1)
    h.advance(SESSION_MS - 10)
    assert h.heartbeat(a, 1) is Errors.REBALANCE_IN_PROGRESS  # AwaitingSync: no session reset
    h.advance(20)
    # the leader, which never synced, expired; b, whose SyncGroup was parked, was alive: b's sync
    # is answered REBALANCE_IN_PROGRESS and the group rebalances without a
    assert a not in h.group().all_members()
    assert only(follower_sync) == (b"", Errors.REBALANCE_IN_PROGRESS)
    assert h.state() is G.PREPARING_REBALANCE and h.group().all_members() == {b}


def test_a_rebalance_timeout_removes_the_members_that_did_not_rejoin(h):
    (a, b), generation = h.stable_group()
    rejoin = h.join(a)  # the leader's JoinGroup starts a rebalance
    assert rejoin == [] and h.state() is G.PREPARING_REBALANCE
    # b keeps heartbeating (its session stays alive) but never rejoins
    for _ in range(REBALANCE_MS // (SESSION_MS // 2) - 1):
        h.advance(SESSION_MS // 2)
        assert h.heartbeat(b, generation) is Errors.REBALANCE_IN_PROGRESS
    assert rejoin == []
    h.advance(SESSION_MS // 2 + 10)
    result = only(rejoin)
    assert (result.error, result.generation_id, result.leader_id) == (Errors.NONE, generation + 1, a)
    assert h.group().all_members() == {a}
    assert h.heartbeat(b, generation + 1) is Errors.UNKNOWN_MEMBER_ID
    # b's session expiry, parked by its last heartbeat, ended with b: it starts no rebalance
    assert only(h.sync(a, generation + 1, {a: b"all"})) == (b"all", Errors.NONE)
    for step in (SESSION_MS // 2, SESSION_MS // 2 + 10):
        h.advance(step)
        assert h.heartbeat(a, generation + 1) is Errors.NONE
    assert h.state() is G.STABLE and h.group().generation_id == generation + 1


def test_a_follower_rejoining_unchanged_gets_the_current_generation(h):
    (a, b), generation = h.stable_group()
    result = only(h.join(b))
    assert (result.error, result.generation_id, result.leader_id, result.members) == (
        Errors.NONE,
        generation,
        a,
        {},
    )
    assert h.state() is G.STABLE


# -- LeaveGroup ----------------------------------------------------------------------------------------------


@crosses((G.PREPARING_REBALANCE, G.EMPTY))
def test_leave_group_rebalances_and_the_last_to_leave_empties_the_group(h):
    (a, b), generation = h.stable_group()
    assert h.leave(b) is Errors.NONE
    assert h.state() is G.PREPARING_REBALANCE and h.group().all_members() == {a}
    assert h.leave(b) is Errors.UNKNOWN_MEMBER_ID
    result = only(h.join(a))
    assert (result.generation_id, result.leader_id) == (generation + 1, a)
    assert only(h.sync(a, generation + 1, {a: b"all"})) == (b"all", Errors.NONE)
    # b's session expiry, still parked from before it left, completed when it left: its deadline
    # passes without another rebalance
    for step in (SESSION_MS // 2, SESSION_MS // 2 + 10):
        h.advance(step)
        assert h.heartbeat(a, generation + 1) is Errors.NONE
    assert h.state() is G.STABLE and h.group().generation_id == generation + 1

    assert h.leave(a) is Errors.NONE
    assert h.state() is G.EMPTY and h.group().is_empty()
    assert h.group().generation_id == generation + 2
    # the leaving member's session expiry completed quietly: nothing else happens later
    h.advance(2 * SESSION_MS)
    assert h.state() is G.EMPTY


def test_each_rebalance_logs_why_it_began(h, caplog):
    caplog.set_level("INFO", logger="kafka_lite.coordinator.group_coordinator")

    def reasons() -> list[str]:
        lines = [r.getMessage() for r in caplog.records if "Preparing to rebalance" in r.getMessage()]
        caplog.clear()
        return [line.rsplit("(reason: ", 1)[1].rstrip(")") for line in lines]

    (a, b), _ = h.stable_group()
    lines = [r.getMessage() for r in caplog.records if "Preparing to rebalance" in r.getMessage()]
    assert [line.split(" (reason")[0].split("group ", 1)[1] for line in lines] == [
        f"{GROUP_ID} in state EMPTY with old generation 0 (__consumer_offsets-{h.partition})"
    ], "the line names the group, the state it left and its generation"
    assert reasons() == [f"adding new member {a}"], "the second join found the group already rebalancing"
    assert h.leave(b) is Errors.NONE
    assert reasons() == [f"removing member {b} on LeaveGroup"]
    rejoin = only(h.join(a))
    assert only(h.sync(a, rejoin.generation_id, {a: b"all"})) == (b"all", Errors.NONE)
    changed = only(h.join(a, protocols=[("roundrobin", b"other-metadata")]))
    assert reasons() == [f"updating metadata for member {a}"]
    assert only(h.sync(a, changed.generation_id, {a: b"all"})) == (b"all", Errors.NONE)
    h.advance(SESSION_MS + 10)  # a stops heartbeating
    assert reasons() == [f"removing member {a} on heartbeat expiration"]
    assert h.state() is G.EMPTY


def test_leave_during_awaiting_sync_answers_parked_syncs_with_rebalance_in_progress(h):
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first).member_id, only(second).member_id
    parked = h.sync(b, 1)
    assert h.leave(a) is Errors.NONE  # the leader leaves before sending the assignment
    assert only(parked) == (b"", Errors.REBALANCE_IN_PROGRESS)
    assert h.state() is G.PREPARING_REBALANCE
    result = only(h.join(b))
    assert (result.generation_id, result.leader_id) == (2, b)  # b leads now


# -- new metadata -------------------------------------------------------------------------------------------


def test_a_rejoin_with_other_protocols_rebalances_onto_a_common_one(h):
    (a, b), generation = h.stable_group()
    b_rejoin = h.join(b, protocols=[("roundrobin", b"b-new")])
    assert b_rejoin == [] and h.state() is G.PREPARING_REBALANCE
    a_rejoin = h.join(a)
    a_result, b_result = only(a_rejoin), only(b_rejoin)
    assert a_result.generation_id == b_result.generation_id == generation + 1
    assert a_result.sub_protocol == "roundrobin"  # the only protocol both support now
    assert a_result.members == {a: b"roundrobin-metadata", b: b"b-new"}


def test_new_metadata_during_awaiting_sync_restarts_the_rebalance(h):
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first).member_id, only(second).member_id
    parked = h.sync(b, 1)
    # the same metadata again (a lost JoinGroup answer): the current generation, no rebalance
    again = only(h.join(a))
    assert (again.generation_id, again.leader_id, set(again.members)) == (1, a, {a, b})
    assert h.state() is G.AWAITING_SYNC and parked == []
    # new metadata: the rebalance starts over and the parked SyncGroup is told so
    a_rejoin = h.join(a, protocols=[("roundrobin", b"a-new"), ("range", b"range-metadata")])
    assert only(parked) == (b"", Errors.REBALANCE_IN_PROGRESS)
    assert h.state() is G.PREPARING_REBALANCE and a_rejoin == []
    b_rejoin = h.join(b)
    assert only(a_rejoin).generation_id == only(b_rejoin).generation_id == 2


# -- bad requests -------------------------------------------------------------------------------------------


def test_inconsistent_protocols_are_refused_and_leave_the_group_unchanged(h):
    (_, b), _ = h.stable_group()
    before = (h.state(), h.group().all_members(), h.group().generation_id, h.group().protocol)
    for kwargs in (
        {"protocol_type": "connect"},  # an unknown protocol type
        {"protocols": [("sticky", b"")]},  # no protocol in common
    ):
        for member_id in (UNKNOWN_MEMBER_ID, b):
            result = only(h.join(member_id, **kwargs))
            assert result.error is Errors.INCONSISTENT_GROUP_PROTOCOL, kwargs
            assert (result.member_id, result.generation_id) == (member_id, 0)
    assert (h.state(), h.group().all_members(), h.group().generation_id, h.group().protocol) == before
    assert h.group().get(b).supported_protocols == PROTOCOLS
    assert h.join_purgatory.delayed() == 0  # and no rebalance was left waiting


def test_a_join_without_protocols_is_refused(h):
    for kwargs in ({"protocols": []}, {"protocol_type": ""}):
        assert only(h.join(**kwargs)).error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert h.state() is G.EMPTY and h.group().is_empty()


def test_unknown_members_are_refused(h):
    # a member id for a group the coordinator does not hold: refused, and no group is created
    assert only(h.join("ghost")).error is Errors.UNKNOWN_MEMBER_ID
    assert h.group_manager.get_group(GROUP_ID) is None
    assert only(h.sync("ghost", 1)) == (b"", Errors.UNKNOWN_MEMBER_ID)
    assert h.heartbeat("ghost", 1) is Errors.UNKNOWN_MEMBER_ID
    assert h.leave("ghost") is Errors.UNKNOWN_MEMBER_ID

    (a, b), generation = h.stable_group()
    assert only(h.join("ghost")).error is Errors.UNKNOWN_MEMBER_ID
    assert h.heartbeat("ghost", generation) is Errors.UNKNOWN_MEMBER_ID
    assert h.leave("ghost") is Errors.UNKNOWN_MEMBER_ID
    assert h.state() is G.STABLE and h.group().all_members() == {a, b}


def test_a_sync_from_a_non_member_is_refused_and_changes_nothing(h):
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first).member_id, only(second).member_id
    assert only(h.sync("ghost", 1, {a: b"x", b: b"y"})) == (b"", Errors.UNKNOWN_MEMBER_ID)
    assert h.state() is G.AWAITING_SYNC and h.group().all_members() == {a, b}
    assert h.group().get(a).assignment == b"" and h.group().get(b).assignment == b""
    # the leader's own sync still works
    assert only(h.sync(a, 1, {a: b"A", b: b"B"})) == (b"A", Errors.NONE)


def test_a_wrong_generation_is_refused(h):
    (a, b), generation = h.stable_group()
    assert h.heartbeat(a, generation + 1) is Errors.ILLEGAL_GENERATION
    assert h.heartbeat(b, generation - 1) is Errors.ILLEGAL_GENERATION
    assert only(h.sync(b, generation + 1)) == (b"", Errors.ILLEGAL_GENERATION)
    h.join(a)  # a rebalance
    assert h.heartbeat(b, generation + 1) is Errors.ILLEGAL_GENERATION
    assert h.heartbeat(b, generation) is Errors.REBALANCE_IN_PROGRESS
    assert only(h.sync(b, generation)) == (b"", Errors.REBALANCE_IN_PROGRESS)


def test_the_checks_before_every_request(h):
    # a session timeout outside the broker's bounds
    for session_timeout_ms in (MIN_SESSION_MS - 1, MAX_SESSION_MS + 1):
        result = only(h.join(session_timeout_ms=session_timeout_ms))
        assert result.error is Errors.INVALID_SESSION_TIMEOUT
    assert h.group_manager.get_group(GROUP_ID) is None
    assert only(h.join(group_id="")).error is Errors.INVALID_GROUP_ID

    # a group whose partition this broker does not lead
    other = next(f"g{i}" for i in range(100) if h.coordinator.partition_for(f"g{i}") != h.partition)
    assert only(h.join(group_id=other)).error is Errors.NOT_COORDINATOR
    assert only(h.sync("m", 1, group_id=other)) == (b"", Errors.NOT_COORDINATOR)
    assert h.heartbeat("m", 1, group_id=other) is Errors.NOT_COORDINATOR
    assert h.leave("m", group_id=other) is Errors.NOT_COORDINATOR
    assert h.coordinator.handle_describe_group(other) == (Errors.NOT_COORDINATOR, EMPTY_GROUP)

    # a partition still loading its groups
    loading = h.coordinator.partition_for(other)
    h.coordinator.on_elected(loading)  # the load waits on the scheduler
    assert only(h.join(group_id=other)).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert h.leave("m", group_id=other) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert h.heartbeat("m", 1, group_id=other) is Errors.NONE  # answered blindly, as Kafka does
    assert h.coordinator.handle_describe_group(other) == (Errors.COORDINATOR_LOAD_IN_PROGRESS, EMPTY_GROUP)
    assert h.coordinator.handle_list_groups()[0] is Errors.COORDINATOR_LOAD_IN_PROGRESS
    h.scheduler.tick()  # the load runs: a new log, no groups
    assert h.coordinator.handle_list_groups() == (Errors.NONE, [])
    assert h.coordinator.handle_describe_group(other) == (Errors.NONE, DEAD_GROUP)

    # a coordinator not started (or shut down)
    h.coordinator.shutdown()
    assert only(h.join()).error is Errors.COORDINATOR_NOT_AVAILABLE
    assert only(h.sync("m", 1)) == (b"", Errors.COORDINATOR_NOT_AVAILABLE)
    assert h.heartbeat("m", 1) is Errors.COORDINATOR_NOT_AVAILABLE
    assert h.leave("m") is Errors.COORDINATOR_NOT_AVAILABLE
    assert h.coordinator.handle_list_groups() == (Errors.COORDINATOR_NOT_AVAILABLE, [])
    assert h.coordinator.handle_describe_group(GROUP_ID) == (Errors.COORDINATOR_NOT_AVAILABLE, EMPTY_GROUP)


def test_bad_configuration_is_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match=r"group_min_session_timeout_ms \(10\) is larger"):
        GroupConfig(group_min_session_timeout_ms=10, group_max_session_timeout_ms=5)
    with pytest.raises(ValueError, match="group_initial_rebalance_delay_ms must be an int >= 0"):
        GroupConfig(group_initial_rebalance_delay_ms=-1)
    h = Harness()
    with pytest.raises(ValueError, match=r"__consumer_offsets has partitions 0\.\.3, not 4"):
        h.coordinator.on_elected(OFFSETS_PARTITIONS)


# -- storing the group ---------------------------------------------------------------------------------------


def test_a_failed_store_answers_the_error_and_rebalances():
    h = Harness(answer_appends=False)
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first).member_id, only(second).member_id
    follower, leader = h.sync(b, 1), h.sync(a, 1, {a: b"A"})
    assignment, callback = only(h.stores)
    assert assignment == {a: b"A", b: b""}  # the member left out gets an empty assignment
    assert follower == [] and leader == [] and h.state() is G.AWAITING_SYNC  # until the store answers
    callback(Errors.NOT_ENOUGH_REPLICAS)  # the manager answers COORDINATOR_NOT_AVAILABLE for it
    assert only(follower) == (b"", Errors.COORDINATOR_NOT_AVAILABLE)
    assert only(leader) == (b"", Errors.COORDINATOR_NOT_AVAILABLE)
    assert h.state() is G.PREPARING_REBALANCE


def test_a_store_answering_after_the_group_moved_on_changes_nothing():
    h = Harness(answer_appends=False)
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first).member_id, only(second).member_id
    h.sync(a, 1, {a: b"A", b: b"B"})
    _, store_callback = h.stores[-1]
    h.join(b, protocols=[("roundrobin", b"new")])  # new metadata: a rebalance
    assert h.state() is G.PREPARING_REBALANCE
    store_callback(Errors.NONE)
    assert h.state() is G.PREPARING_REBALANCE and h.group().get(a).assignment == b""


# -- DescribeGroups and ListGroups ---------------------------------------------------------------------------


def test_describe_and_list_groups(h):
    assert h.coordinator.handle_describe_group(GROUP_ID) == (Errors.NONE, DEAD_GROUP)
    (a, b), _ = h.stable_group()
    error, summary = h.coordinator.handle_describe_group(GROUP_ID)
    assert error is Errors.NONE
    assert (summary.state, summary.protocol_type, summary.protocol) == ("Stable", PROTOCOL_TYPE, "range")
    assert [(m.member_id, m.metadata, m.assignment) for m in summary.members] == [
        (a, b"range-metadata", a.encode()),
        (b, b"range-metadata", b.encode()),
    ]
    error, overviews = h.coordinator.handle_list_groups()
    assert error is Errors.NONE
    assert [(o.group_id, o.protocol_type) for o in overviews] == [(GROUP_ID, PROTOCOL_TYPE)]


# -- groups dying when their partition moves away ------------------------------------------------------------


@crosses((G.STABLE, G.DEAD))
def test_resigning_kills_a_stable_group_and_members_find_the_new_coordinator(h):
    (a, b), generation = h.stable_group()
    group = h.group()
    h.resign(h.partition)
    assert group.current_state is G.DEAD and h.group_manager.get_group(GROUP_ID) is None
    assert h.heartbeat(a, generation) is Errors.NOT_COORDINATOR
    assert only(h.sync(b, generation)) == (b"", Errors.NOT_COORDINATOR)
    assert only(h.join(a)).error is Errors.NOT_COORDINATOR
    h.advance(2 * SESSION_MS)  # the dead group's sessions expire without effect
    assert group.current_state is G.DEAD
    # elected again: the group comes back from the log as its last SyncGroup stored it, Stable in
    # the same generation, and its members carry on with the coordinator that loaded it
    h.elect(h.partition)
    reloaded = h.group()
    assert reloaded is not group and reloaded.current_state is G.STABLE
    assert reloaded.generation_id == generation and reloaded.all_members() == {a, b}
    assert h.heartbeat(a, generation) is Errors.NONE
    assert only(h.sync(b, generation)) == (b.encode(), Errors.NONE)


@crosses((G.PREPARING_REBALANCE, G.DEAD))
def test_resigning_answers_parked_joins_with_not_coordinator(h):
    first = h.join()
    group = h.group()
    h.resign(h.partition)
    result = only(first)
    assert (result.error, result.generation_id) == (Errors.NOT_COORDINATOR, 0)
    assert group.current_state is G.DEAD
    h.advance(2 * REBALANCE_MS)  # the delayed join completes on the dead group: nothing more happens
    assert len(first) == 1 and group.current_state is G.DEAD


@crosses((G.AWAITING_SYNC, G.DEAD))
def test_resigning_answers_parked_syncs_with_not_coordinator(h):
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    group = h.group()
    assert only(first).leader_id != only(second).member_id
    parked = h.sync(only(second).member_id, 1)
    h.resign(h.partition)
    assert only(parked) == (b"", Errors.NOT_COORDINATOR)
    assert group.current_state is G.DEAD


@crosses((G.EMPTY, G.DEAD))
def test_resigning_kills_an_empty_group_and_leaves_other_partitions_alone(h):
    other = next(f"g{i}" for i in range(100) if h.coordinator.partition_for(f"g{i}") != h.partition)
    h.elect(h.coordinator.partition_for(other))
    (a,), _ = h.stable_group(members=1)
    assert h.leave(a) is Errors.NONE and h.state() is G.EMPTY
    other_join = h.join(group_id=other)
    group = h.group()

    def held() -> list[str]:  # what Kafka's NumGroups gauge counts
        return sorted(g.group_id for g in h.group_manager.current_groups())

    assert held() == sorted([GROUP_ID, other])
    h.resign(h.partition)
    assert group.current_state is G.DEAD
    assert h.group_manager.get_group(other).current_state is G.PREPARING_REBALANCE and other_join == []
    assert held() == [other]


# -- bad input against a real offsets log --------------------------------------------------------------------


class ManagedHarness(Harness):
    """The harness with a real GroupMetadataManager over broker 0's replica manager, which leads
    every ``__consumer_offsets`` partition (ISR [0]): groups and offsets are appended to real logs,
    with the offsets topic's default ``max.message.bytes``."""

    def __init__(self, replica_manager, time: MockTime) -> None:
        config = OffsetConfig(offsets_topic_num_partitions=OFFSETS_PARTITIONS)
        replica_manager.topic_config_lookup = lambda topic: (
            config.offsets_topic_configs() if topic == GROUP_METADATA_TOPIC_NAME else {}
        )
        for p in range(OFFSETS_PARTITIONS):
            error, _ = replica_manager.become_leader_or_follower(
                leader_and_isr((GROUP_METADATA_TOPIC_NAME, p), 0, [0], [0])
            )
            assert error is Errors.NONE
        super().__init__(replica_manager=replica_manager, time=time)  # the (empty) log is loaded
        assert self.group_manager.config == config
        assert not self.group_manager.is_group_loading(GROUP_ID)

    def log(self):
        tp = (GROUP_METADATA_TOPIC_NAME, self.partition)
        return self.replica_manager.get_partition(tp).log

    def records(self) -> list:
        return list(read_all(self.log()))

    def commit(self, member_id: str, generation_id: int, offsets) -> dict:
        answers: list[dict] = []
        self.coordinator.handle_commit_offsets(GROUP_ID, member_id, generation_id, offsets, answers.append)
        return only(answers)

    def fetch(self, partitions) -> dict:
        answers: list = []
        self.coordinator.handle_fetch_offsets(GROUP_ID, partitions, lambda e, o: answers.append((e, o)))
        error, offsets = only(answers)
        assert error is Errors.NONE
        return offsets


@pytest.fixture
def managed(tmp_path):
    time = MockTime()
    with in_process_brokers(tmp_path, time, count=1) as (replica_manager,):
        yield ManagedHarness(replica_manager, time)


def test_a_join_refused_during_a_rebalance_leaves_the_rebalance_as_it_was(h):
    """An unknown protocol type, or no assignor in common with the group, is refused at once with
    INCONSISTENT_GROUP_PROTOCOL while a rebalance waits: the parked join is not disturbed and the
    rebalance completes with the members it had."""
    first = h.join(client_id="a")
    assert h.state() is G.PREPARING_REBALANCE
    (a,) = h.group().all_members()
    for kwargs in ({"protocol_type": "connect"}, {"protocols": [("sticky", b"")]}):
        assert only(h.join(client_id="c", **kwargs)).error is Errors.INCONSISTENT_GROUP_PROTOCOL
        assert h.group().all_members() == {a} and h.group().protocol_type == PROTOCOL_TYPE
    assert first == []
    h.advance(INITIAL_DELAY_MS + 10)
    result = only(first)
    assert (result.error, result.generation_id, result.members) == (Errors.NONE, 1, {a: b"range-metadata"})


def test_an_offset_commit_for_a_generation_that_is_over_is_refused_and_nothing_is_stored(managed):
    """Kafka's doCommitOffsets: a member of the group with an old generation id gets
    ILLEGAL_GENERATION, a member that left gets UNKNOWN_MEMBER_ID; neither offset reaches the log."""
    h = managed
    (a, b), generation = h.stable_group()
    assert h.leave(b) is Errors.NONE  # generation `generation` is over
    rejoined = h.join(a, client_id="client0")
    h.advance(10)
    assert only(rejoined).generation_id == generation + 1
    assert only(h.sync(a, generation + 1, {a: b"all"})) == (b"all", Errors.NONE)
    records_before = len(h.records())

    tp = ("orders", 0)
    assert h.commit(a, generation, {tp: OffsetAndMetadata(42)}) == {tp: Errors.ILLEGAL_GENERATION}
    assert h.commit(b, generation, {tp: OffsetAndMetadata(43)}) == {tp: Errors.UNKNOWN_MEMBER_ID}
    assert len(h.records()) == records_before, "a refused commit appends nothing"
    assert h.fetch([tp]) == {tp: OffsetMetadataAndError(-1)}
    assert h.state() is G.STABLE and h.group().all_members() == {a}

    # the current generation commits
    assert h.commit(a, generation + 1, {tp: OffsetAndMetadata(44)}) == {tp: Errors.NONE}
    assert h.fetch([tp]) == {tp: OffsetMetadataAndError(44)}


def test_an_oversized_member_metadata_blob_fails_the_leaders_sync_with_unknown_and_rebalances(managed):
    """What Kafka 0.10.1 does: JoinGroup takes member metadata of any size (no check), and the
    leader gets the blob in its JoinGroup answer. The leader's SyncGroup stores the group as one
    message in ``__consumer_offsets`` (GroupMetadataManager.prepareStoreGroup); with the blob in it
    that message is larger than the offsets topic's ``max.message.bytes`` (1000012 by default), so
    the append fails with MESSAGE_TOO_LARGE, which prepareStoreGroup's callback maps to UNKNOWN
    ("returning UNKNOWN error code to the client"). doSyncGroup then answers every member waiting
    for its assignment with UNKNOWN, empties their assignments, and prepares a rebalance. Nothing
    is written. The group recovers when the member rejoins with metadata that fits."""
    h = managed
    max_message_bytes = h.log().config.max_message_size
    assert max_message_bytes == 1000012
    blob = b"s" * (max_message_bytes + 1)
    big = h.join(client_id="big", protocols=[("range", blob)])
    small = h.join(client_id="small", protocols=[("range", b"small")])
    h.advance(2 * INITIAL_DELAY_MS)
    leader, follower = only(big), only(small)
    assert leader.error is follower.error is Errors.NONE
    assert leader.members[leader.member_id] == blob, "JoinGroup takes the blob and hands it to the leader"
    records_before = len(h.records())

    parked = h.sync(follower.member_id, 1)
    answer = h.sync(leader.member_id, 1, {leader.member_id: b"A", follower.member_id: b"B"})
    assert only(answer) == (b"", Errors.UNKNOWN)
    assert only(parked) == (b"", Errors.UNKNOWN)
    assert h.state() is G.PREPARING_REBALANCE
    assert all(m.assignment == b"" for m in h.group().all_member_metadata())
    assert len(h.records()) == records_before, "the oversized group message is not written"

    # both rejoin, the big member with metadata that fits: the group is stored and Stable
    again_big = h.join(leader.member_id, client_id="big", protocols=[("range", b"fits")])
    again_small = h.join(follower.member_id, client_id="small", protocols=[("range", b"small")])
    h.advance(10)
    generation = only(again_big).generation_id
    assert generation == only(again_small).generation_id == 2
    parked = h.sync(follower.member_id, generation)
    h.sync(leader.member_id, generation, {leader.member_id: b"A", follower.member_id: b"B"})
    assert only(parked) == (b"B", Errors.NONE) and h.state() is G.STABLE
    assert len(h.records()) == records_before + 1


# -- every edge of the state table --------------------------------------------------------------------------


def test_every_edge_of_the_state_table_is_crossed_by_a_test():
    """The tests above declare the edges they cross (each one's fixture checks its own): together
    with the exclusions, each with its reason, they cover every edge of GROUP_VALID_PREVIOUS_STATES."""
    declared = {edge for test in list(globals().values()) for edge in getattr(test, "edges_crossed", ())}
    assert declared <= TABLE_EDGES, f"declared edges outside the table: {declared - TABLE_EDGES}"
    assert EXCLUDED.keys() <= TABLE_EDGES, "an excluded edge is not in the table"
    assert not declared & EXCLUDED.keys(), "an edge is both declared and excluded"
    missing = sorted((s.value, t.value) for s, t in TABLE_EDGES - declared - EXCLUDED.keys())
    assert not missing, f"edges no test crosses: {missing}"
