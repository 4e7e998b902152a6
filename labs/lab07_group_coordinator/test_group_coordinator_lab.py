"""Lab 7 graded tests: the range assignor (``RangeAssignor.assign_partitions``), then the end of a
rebalance's join phase (``GroupCoordinator.on_complete_join``), then SyncGroup
(``GroupCoordinator._do_sync_group``).

Stage 1's tests call ``assign_partitions`` directly. Stages 2 and 3 drive a real ``GroupCoordinator``
whose two purgatories run on ``MockTimer``s over one ``MockTime``, exactly as the broker's do: a
JoinGroup parks in the join purgatory, the clock moves a millisecond at a time, and the delayed
join completes through your ``on_complete_join``. Stage 2 sends no SyncGroup; every stage 3 test
needs a group awaiting sync, so stage 3 needs stage 2. No test uses the range assignor outside stage
1: the leader's assignments are plain bytes. The coordinator is ``kafka_lite.testing``'s
``CoordinatorHarness``, the one the unit tests use: its ``GroupMetadataManager`` stores each group
as Kafka does, appending the group's record through a replica manager, here an in-memory one
whose appends the tests read back and answer themselves.

Failure messages print the group as the coordinator holds it: its state, generation, protocol,
leader, and each member with what it waits for (a parked JoinGroup or SyncGroup) and its assignment;
a transition the state table does not allow raises GroupMetadata's own error, in Kafka's words.
"""

from __future__ import annotations

import threading

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.consumer.range_assignor import RangeAssignor
from kafka_lite.coordinator.group_coordinator import GroupConfig, JoinGroupResult
from kafka_lite.coordinator.group_metadata import GroupState
from kafka_lite.testing.group_coordinator import (
    REBALANCE_MS,
    SESSION_MS,
    CoordinatorHarness,
    InMemoryReplicaManager,
)

pytestmark = [pytest.mark.lab(7), pytest.mark.timeout(10)]

G = GroupState


# -- stage 1: the range assignor ---------------------------------------------------------------------------


def _assign(partitions_per_topic: dict[str, int], subscriptions: dict[str, list[str]]) -> dict:
    return RangeAssignor().assign_partitions(partitions_per_topic, subscriptions)


def _show(assignment: dict) -> str:
    if not isinstance(assignment, dict):
        return (
            f"    {assignment!r} (assign_partitions returns a dict: member id -> list of (topic, partition))"
        )
    lines = []
    for member, tps in assignment.items():
        shown = ", ".join(f"{t}-{p}" for t, p in tps) if isinstance(tps, list) else repr(tps)
        lines.append(f"    {member}: [{shown}]")
    return "\n".join(lines) or "    (no members)"


def _check(partitions_per_topic: dict, subscriptions: dict, expected: dict, why: str) -> None:
    got = _assign(partitions_per_topic, subscriptions)
    assert got == expected, (
        f"{why}\n  partitions per topic: {partitions_per_topic}\n  subscriptions: {subscriptions}\n"
        f"  expected:\n{_show(expected)}\n  got:\n{_show(got)}"
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_one_member_gets_every_partition_of_its_topics():
    _check(
        {"t0": 3, "t1": 2},
        {"c0": ["t0", "t1"]},
        {"c0": [("t0", 0), ("t0", 1), ("t0", 2), ("t1", 0), ("t1", 1)]},
        "a member alone gets all its topics' partitions, topic by topic in name order, partitions in order",
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_partitions_are_cut_into_consecutive_ranges():
    _check(
        {"t0": 4},
        {"c0": ["t0"], "c1": ["t0"]},
        {"c0": [("t0", 0), ("t0", 1)], "c1": [("t0", 2), ("t0", 3)]},
        "4 partitions over 2 members: 4 // 2 = 2 consecutive partitions each",
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_the_first_members_take_the_remainder_on_every_topic():
    _check(
        {"t0": 3, "t1": 3},
        {"c0": ["t0", "t1"], "c1": ["t0", "t1"]},
        {"c0": [("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)], "c1": [("t0", 2), ("t1", 2)]},
        "3 partitions over 2 members: 3 // 2 = 1 each, and the 3 % 2 = 1 left over goes to the first "
        "member, on each topic alike (the range assignor's known skew, book 5.1.1)",
    )
    _check(
        {"t0": 7},
        {"c0": ["t0"], "c1": ["t0"], "c2": ["t0"]},
        {"c0": [("t0", 0), ("t0", 1), ("t0", 2)], "c1": [("t0", 3), ("t0", 4)], "c2": [("t0", 5), ("t0", 6)]},
        "7 partitions over 3 members: 2 each and 1 extra for the first: member i starts at 2 * i + min(i, 1)",
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_members_are_ordered_by_member_id_not_by_arrival():
    _check(
        {"t0": 3},
        {"consumer-2": ["t0"], "consumer-10": ["t0"], "consumer-1": ["t0"]},
        {"consumer-1": [("t0", 0)], "consumer-10": [("t0", 1)], "consumer-2": [("t0", 2)]},
        "each topic's members are sorted by member id as strings (java_string_order): consumer-1 < "
        "consumer-10 < consumer-2, whatever order the subscriptions dict has",
    )


@pytest.mark.stage(1)
@pytest.mark.points(3)
def test_each_topic_is_cut_over_its_own_subscribers():
    _check(
        {"t0": 3, "t1": 2},
        {"c0": ["t0"], "c1": ["t0", "t1"], "c2": ["t1"]},
        {"c0": [("t0", 0), ("t0", 1)], "c1": [("t0", 2), ("t1", 0)], "c2": [("t1", 1)]},
        "t0 is cut over its subscribers c0 and c1 only, t1 over c1 and c2 only",
    )


@pytest.mark.stage(1)
@pytest.mark.points(2)
def test_every_member_is_in_the_answer_even_with_nothing():
    _check(
        {"t0": 2},
        {"c0": ["t0"], "c1": ["t0"], "c2": ["t0"], "c3": []},
        {"c0": [("t0", 0)], "c1": [("t0", 1)], "c2": [], "c3": []},
        "2 partitions over 3 members: the last member gets none; a member subscribed to nothing gets "
        "none; both are still in the answer, with an empty list (the leader sends every member its "
        "assignment)",
    )


@pytest.mark.stage(1)
@pytest.mark.points(1)
def test_a_topic_the_metadata_does_not_know_is_skipped():
    _check(
        {"t0": 2},
        {"c0": ["t0", "unknown"], "c1": ["unknown"]},
        {"c0": [("t0", 0), ("t0", 1)], "c1": []},
        "a subscribed topic missing from partitions_per_topic has no partitions to give",
    )


# -- stages 2 and 3: a coordinator on a MockTime -----------------------------------------------------------

GROUP_ID = "group"
INITIAL_DELAY_MS = 300


class Harness(CoordinatorHarness):
    """A started coordinator leading GROUP_ID's partition, its purgatories on one MockTime. Its group
    manager appends each group record to an in-memory replica manager, which answers NONE at once
    unless ``answer_stores`` is False (then the test answers: ``h.stores[i][1](error)``)."""

    def __init__(
        self, answer_stores: bool = True, replica_manager: InMemoryReplicaManager | None = None
    ) -> None:
        super().__init__(
            GroupConfig(100, 30_000, INITIAL_DELAY_MS), GROUP_ID, answer_appends=answer_stores,
            replica_manager=replica_manager,
        )  # fmt: skip


class LockWatchingReplicaManager(InMemoryReplicaManager):
    """Notes, at each append, whether another thread could take the group's lock at that moment (a
    real append may call back under other locks, or on another thread that needs the group)."""

    def __init__(self) -> None:
        super().__init__()
        self.group = None
        self.lock_free_at_append: list[bool] = []

    def append_records(self, *args, **kwargs) -> None:
        free: list[bool] = []

        def try_the_lock() -> None:
            taken = self.group.lock.acquire(timeout=0)
            if taken:
                self.group.lock.release()
            free.append(taken)

        other = threading.Thread(target=try_the_lock)
        other.start()
        other.join(10)
        self.lock_free_at_append.extend(free)
        super().append_records(*args, **kwargs)


def watched_harness() -> tuple[Harness, LockWatchingReplicaManager]:
    appends = LockWatchingReplicaManager()
    h = Harness(replica_manager=appends)
    return h, appends


def only(answers: list, what: str, h: Harness):
    assert len(answers) == 1, f"{what}: expected one answer, got {answers}\n{h.picture()}"
    return answers[0]


def two_joined(h: Harness, leader_session_ms: int = SESSION_MS) -> tuple[str, str]:
    """Two members join, the delayed join completes: (leader, follower), generation 1, AwaitingSync."""
    first, second = h.join(client_id="a", session_timeout_ms=leader_session_ms), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first, "a's JoinGroup", h), only(second, "b's JoinGroup", h)
    return a.member_id, b.member_id


def rebalance_the_follower_misses(h: Harness) -> tuple[str, str, str, JoinGroupResult, JoinGroupResult]:
    """Generation 1 of two members; a third joins, the leader rejoins, the follower only heartbeats
    (alive, but busy elsewhere) until the rebalance timeout ends the join: (leader, follower, the
    third's id, the leader's and the third's answers)."""
    leader, follower = two_joined(h)
    third = h.join(client_id="c")
    h.expect_state(G.PREPARING_REBALANCE, "a new member starts a rebalance")
    again = h.join(leader, client_id="a")
    # until the join completes (the rebalance timeout is 2000 ms), the follower heartbeats every 400 ms
    for ms in range(1, REBALANCE_MS + 100):
        h.advance(1)
        if again:
            break
        if ms % 400 == 0:
            h.heartbeat(follower, 1)
    a = only(again, "the leader's rejoin", h)
    c = only(third, "the new member's JoinGroup", h)
    return leader, follower, c.member_id, a, c


# -- stage 2: on_complete_join -----------------------------------------------------------------------------


@pytest.mark.stage(2)
@pytest.mark.points(4)
def test_the_join_completes_with_generation_one_and_the_leader_gets_the_members():
    h = Harness()
    first, second = h.join(client_id="a"), h.join(client_id="b")
    h.advance(2 * INITIAL_DELAY_MS)
    a, b = only(first, "the first JoinGroup", h), only(second, "the second JoinGroup", h)
    got = [(r.error, r.generation_id, r.sub_protocol, r.leader_id) for r in (a, b)]
    expected = [(Errors.NONE, 1, "range", a.member_id)] * 2
    assert got == expected, (
        "every parked JoinGroup is answered with the new generation (init_next_generation picks it, "
        "the protocol and the leader), as (error, generation, protocol, leader):\n"
        f"  expected {expected}\n  got      {got}\n{h.picture()}"
    )
    assert a.members == {a.member_id: b"range-metadata", b.member_id: b"range-metadata"}, (
        "the leader's answer carries every member's metadata for the chosen protocol "
        f"(group.current_member_metadata()), got {a.members}\n{h.picture()}"
    )
    assert b.members == {}, f"a follower's answer carries no members, got {b.members}"
    h.expect_state(G.AWAITING_SYNC, "after the join the group awaits the leader's SyncGroup")
    assert all(m.awaiting_join_callback is None for m in h.group().all_member_metadata()), (
        f"each answered JoinGroup's callback is cleared (awaiting_join_callback = None)\n{h.picture()}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_member_that_does_not_rejoin_in_time_is_removed():
    h = Harness()
    leader, follower, c, a_answer, c_answer = rebalance_the_follower_misses(h)
    assert (a_answer.generation_id, c_answer.generation_id) == (2, 2), (
        f"the rebalance timeout completes the join with generation 2\n{h.picture()}"
    )
    assert h.group().all_members() == {leader, c}, (
        f"{follower} heartbeated but never rejoined before the rebalance timeout: the join removes it "
        f"(group.not_yet_rejoined_members())\n{h.picture()}"
    )
    assert set(a_answer.members) == {leader, c}, (
        f"the leader's answer lists only the members that rejoined, got {sorted(a_answer.members)}"
    )
    assert h.heartbeat(follower, 2) is Errors.UNKNOWN_MEMBER_ID


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_a_removed_members_session_expiry_is_gone_and_the_others_start_a_new_session():
    h = Harness()
    leader, _, c, _, _ = rebalance_the_follower_misses(h)
    assert h.heartbeat_purgatory.delayed() == 2, (
        "after the join, exactly one session expiry is parked per member (the leader and the new "
        "member): the removed follower's went with it (_remove_heartbeat_for_leaving_member), and each "
        "answered member's started again (_complete_and_schedule_next_heartbeat_expiration); "
        f"parked: {h.heartbeat_purgatory.delayed()}\n{h.picture()}"
    )
    # The members' sessions started when the join completed: one session later, unheard, they expire.
    h.advance(SESSION_MS - 10)
    assert h.group().all_members() == {leader, c}, (
        f"a session started at the join's answer has not expired yet\n{h.picture()}"
    )
    h.advance(20)
    assert h.group().all_members() == set(), f"a session after the join, both expired\n{h.picture()}"


@pytest.mark.stage(2)
@pytest.mark.points(3)
def test_when_no_member_is_left_the_group_is_empty_and_stored_so():
    h = Harness()
    first = h.join(client_id="a")
    h.advance(INITIAL_DELAY_MS + 10)
    a = only(first, "the JoinGroup", h).member_id
    h.expect_state(G.AWAITING_SYNC, "one member joined")
    answers: list[Errors] = []
    h.coordinator.handle_leave_group(GROUP_ID, a, answers.append)
    assert answers == [Errors.NONE]
    h.expect_state(G.EMPTY, "the last member left: the rebalance completes at once with nobody in it")
    assert h.group().generation_id == 2, (
        f"an empty group still moves to the next generation (init_next_generation)\n{h.picture()}"
    )
    assert [assignment for assignment, _ in h.stores] == [{}], (
        "the empty generation is stored, with no assignment: "
        "group_manager.prepare_store_group(group, {}, callback), then group_manager.store; "
        f"stores: {[assignment for assignment, _ in h.stores]}"
    )


@pytest.mark.stage(2)
@pytest.mark.points(1)
def test_a_group_unloaded_before_its_join_completes_goes_no_further():
    h = Harness()
    first = h.join(client_id="a")
    group = h.group()
    h.resign(h.partition)  # another broker leads the group's partition now
    answered, generation = list(first), group.generation_id
    h.advance(2 * INITIAL_DELAY_MS)  # the delayed join comes due
    assert (group.current_state, group.generation_id) == (G.DEAD, generation), (
        f"the group was unloaded (Dead) before its join completed, yet the join moved it to "
        f"{group.current_state.name} in generation {group.generation_id}\n{h.picture()}"
    )
    assert first == answered and h.stores == [], (
        f"a group this broker no longer leads was answered {first[len(answered) :]} and stored "
        f"{[assignment for assignment, _ in h.stores]} after it was unloaded"
    )


@pytest.mark.stage(2)
@pytest.mark.points(2)
def test_a_rejoin_with_new_metadata_completes_onto_the_protocol_all_support():
    h = Harness()
    leader, follower = two_joined(h)
    roundrobin_only = [("roundrobin", b"rr-b")]
    b_again = h.join(follower, client_id="b", protocols=roundrobin_only)  # new metadata: a rebalance
    a_again = h.join(leader, client_id="a")
    h.advance(10)
    a, b = only(a_again, "the leader's rejoin", h), only(b_again, "the follower's rejoin", h)
    got = [(r.generation_id, r.sub_protocol, r.leader_id) for r in (a, b)]
    assert got == [(2, "roundrobin", leader)] * 2, (
        f"generation 2, on the one protocol both support, the same leader; got {got}\n{h.picture()}"
    )
    assert a.members == {leader: b"roundrobin-metadata", follower: b"rr-b"}, (
        f"the leader gets each member's metadata for roundrobin, got {a.members}"
    )


# -- stage 3: _do_sync_group -------------------------------------------------------------------------------


@pytest.mark.stage(3)
@pytest.mark.points(1)
def test_the_leaders_assignment_is_stored_with_the_groups_lock_free():
    h, appends = watched_harness()
    leader, follower = two_joined(h)
    appends.group = h.group()
    h.sync(follower, 1)
    h.sync(leader, 1, {leader: b"A", follower: b"B"})
    assert appends.lock_free_at_append == [True], (
        "when the leader's assignment was appended, another thread could not take the group's lock "
        f"(free at each append: {appends.lock_free_at_append}): an append that calls back under "
        "another lock, or on a thread that needs the group, would deadlock"
    )


@pytest.mark.stage(3)
@pytest.mark.points(4)
def test_the_leaders_sync_stores_the_assignment_then_every_member_gets_its_own():
    h = Harness(answer_stores=False)
    leader, follower = two_joined(h)
    parked = h.sync(follower, 1)
    assert parked == [], f"a follower's SyncGroup waits for the leader's\n{h.picture()}"
    h.expect_state(G.AWAITING_SYNC, "a follower's SyncGroup changes nothing")
    answer = h.sync(leader, 1, {leader: b"A", follower: b"B"})
    assert len(h.stores) == 1 and h.stores[0][0] == {leader: b"A", follower: b"B"}, (
        "the leader's SyncGroup stores its assignment first (group_manager.prepare_store_group, then "
        f"group_manager.store after the group's lock); stores: {h.stores}"
    )
    assert parked == [] and answer == [], f"nobody is answered before the store answers\n{h.picture()}"
    h.stores[0][1](Errors.NONE)
    assert (answer, parked) == ([(b"A", Errors.NONE)], [(b"B", Errors.NONE)]), (
        f"once stored, every member gets its own assignment: leader {answer}, follower {parked}\n{h.picture()}"
    )
    h.expect_state(G.STABLE, "an assignment stored makes the group Stable")
    assert {m.member_id: m.assignment for m in h.group().all_member_metadata()} == {
        leader: b"A",
        follower: b"B",
    }, f"each member keeps its assignment\n{h.picture()}"


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_member_the_leader_left_out_gets_an_empty_assignment():
    h = Harness()
    leader, follower = two_joined(h)
    parked = h.sync(follower, 1)
    answer = h.sync(leader, 1, {leader: b"A"})
    assert h.stores and h.stores[0][0] == {leader: b"A", follower: b""}, (
        f"the stored assignment has every member, b'' for the one the leader left out; stores: {h.stores}"
    )
    assert (answer, parked) == ([(b"A", Errors.NONE)], [(b"", Errors.NONE)]), (
        f"leader {answer}, follower {parked}\n{h.picture()}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_a_failed_store_answers_the_error_and_the_group_rebalances():
    h = Harness(answer_stores=False)
    leader, follower = two_joined(h)
    parked = h.sync(follower, 1)
    answer = h.sync(leader, 1, {leader: b"A", follower: b"B"})
    h.stores[0][1](Errors.NOT_LEADER_FOR_PARTITION)  # this broker lost __consumer_offsets' leadership
    assert (answer, parked) == ([(b"", Errors.NOT_COORDINATOR)], [(b"", Errors.NOT_COORDINATOR)]), (
        "a store that fails answers every waiting member with its error (the manager's callback "
        "turns the append's NOT_LEADER_FOR_PARTITION into NOT_COORDINATOR) and an empty assignment "
        f"(_reset_and_propagate_assignment_error): leader {answer}, follower {parked}\n{h.picture()}"
    )
    h.expect_state(
        G.PREPARING_REBALANCE, "after a failed store the group rebalances (_maybe_prepare_rebalance)"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_store_answering_after_the_group_moved_on_changes_nothing():
    h = Harness(answer_stores=False)
    leader, follower = two_joined(h)
    h.sync(leader, 1, {leader: b"A", follower: b"B"})
    h.join(follower, client_id="b", protocols=[("roundrobin", b"new")])  # new metadata: a rebalance
    h.expect_state(G.PREPARING_REBALANCE, "new metadata from a member rebalances the group")
    h.stores[0][1](Errors.NONE)
    h.expect_state(
        G.PREPARING_REBALANCE,
        "the store answered for generation 1 after the group moved on: only a group still awaiting "
        "sync in the same generation takes the assignment",
    )
    assert h.group().get(leader).assignment == b"", f"nothing was handed out\n{h.picture()}"
    # Moved on and back: the group awaits sync again, in generation 2, when generation 1's store answers.
    h = Harness(answer_stores=False)
    leader, follower = two_joined(h)
    h.sync(leader, 1, {leader: b"A", follower: b"B"})
    h.join(follower, client_id="b", protocols=[("roundrobin", b"new")])
    h.join(leader, client_id="a")
    h.advance(10)
    h.expect_state(G.AWAITING_SYNC, "both members rejoined: generation 2 awaits its leader's SyncGroup")
    waiting = h.sync(follower, 2)
    h.stores[0][1](Errors.NONE)
    h.expect_state(
        G.AWAITING_SYNC,
        "generation 1's store answered while generation 2 awaits its sync: the assignment it carries "
        "is generation 1's, so only a group in the same generation takes it",
    )
    assert waiting == [] and h.group().get(follower).assignment == b"", (
        f"generation 2's waiting follower gets nothing from generation 1's store; it got {waiting}\n{h.picture()}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(3)
def test_a_sync_the_group_cannot_take_is_refused_with_kafkas_errors():
    h = Harness()
    leader, follower = two_joined(h)
    cases = [
        ("a member the group does not know", "ghost", 1, Errors.UNKNOWN_MEMBER_ID),
        ("a generation that is not the group's", follower, 2, Errors.ILLEGAL_GENERATION),
    ]
    for what, member_id, generation, error in cases:
        got = h.sync(member_id, generation)
        assert got == [(b"", error)], f"{what}: expected [(b'', {error.name})], got {got}\n{h.picture()}"
    assert h.stores == [] and h.group().get(follower).awaiting_sync_callback is None, (
        f"a refused SyncGroup parks nothing and stores nothing\n{h.picture()}"
    )
    h.join(leader, client_id="a", protocols=[("range", b"new")])  # new metadata: a rebalance
    got = h.sync(follower, 1)
    assert got == [(b"", Errors.REBALANCE_IN_PROGRESS)], (
        f"during a rebalance a SyncGroup is told to rejoin: expected REBALANCE_IN_PROGRESS, got {got}\n"
        + h.picture()
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_stable_group_answers_a_sync_with_the_current_assignment():
    h = Harness()
    leader, follower = two_joined(h)
    h.sync(follower, 1)
    h.sync(leader, 1, {leader: b"A", follower: b"B"})
    h.expect_state(G.STABLE, "the leader's SyncGroup was stored")
    h.advance(SESSION_MS - 100)
    got = h.sync(follower, 1)
    assert got == [(b"B", Errors.NONE)], f"a Stable group answers the current assignment, got {got}"
    assert h.heartbeat(leader, 1) is Errors.NONE
    h.advance(200)  # past the session begun when the assignment was handed out
    assert h.group().has(follower), (
        "a SyncGroup to a Stable group restarts the member's session "
        f"(_complete_and_schedule_next_heartbeat_expiration)\n{h.picture()}"
    )


@pytest.mark.stage(3)
@pytest.mark.points(2)
def test_a_parked_sync_keeps_the_member_alive_until_the_leader_syncs():
    h = Harness()
    leader, follower = two_joined(h, leader_session_ms=3 * SESSION_MS)
    parked = h.sync(follower, 1)
    h.advance(SESSION_MS + 500)  # the follower's session is long over; the slow leader's is not
    assert h.group().has(follower), (
        "a member whose SyncGroup is parked (awaiting_sync_callback set) stays alive while the "
        f"leader takes its time\n{h.picture()}"
    )
    h.sync(leader, 1, {leader: b"A", follower: b"B"})
    assert parked == [(b"B", Errors.NONE)], f"the parked SyncGroup is answered, got {parked}"
