"""GroupMetadata: the group state table (every legal transition taken, every other refused with
Kafka's wording), members and their leader, the protocol vote, generations, and offsets
(Kafka 0.10.1's GroupMetadataTest, and more)."""

from __future__ import annotations

import itertools

import pytest

from kafka_lite.coordinator.group_metadata import (
    GROUP_VALID_PREVIOUS_STATES,
    NO_PROTOCOL,
    GroupMetadata,
    GroupOverview,
    GroupState,
    GroupSummary,
    IllegalStateException,
    OffsetAndMetadata,
)
from kafka_lite.coordinator.member_metadata import IllegalArgumentException, MemberMetadata, MemberSummary

pytestmark = pytest.mark.unit
G = GroupState
GROUP_ID = "groupId"

# Kafka 0.10.1's validPreviousStates, typed out again from GroupMetadata.scala rather than read from
# the code under test, so a changed table fails here.
KAFKA_TABLE = {
    G.DEAD: {G.STABLE, G.PREPARING_REBALANCE, G.AWAITING_SYNC, G.EMPTY, G.DEAD},
    G.AWAITING_SYNC: {G.PREPARING_REBALANCE},
    G.STABLE: {G.AWAITING_SYNC},
    G.PREPARING_REBALANCE: {G.STABLE, G.AWAITING_SYNC, G.EMPTY},
    G.EMPTY: {G.PREPARING_REBALANCE},
}
LEGAL = sorted(
    ((s, t) for t, sources in KAFKA_TABLE.items() for s in sources), key=lambda p: (p[0].value, p[1].value)
)
ILLEGAL = [(s, t) for s, t in itertools.product(GroupState, GroupState) if s not in KAFKA_TABLE[t]]
# The valid previous states as the message lists them (in GroupState's order, joined by commas).
MESSAGE_STATES = {
    G.EMPTY: "PreparingRebalance",
    G.PREPARING_REBALANCE: "Empty,AwaitingSync,Stable",
    G.AWAITING_SYNC: "PreparingRebalance",
    G.STABLE: "AwaitingSync",
}


def pair_id(pair) -> str:
    return f"{pair[0].value}->{pair[1].value}"


def new_member(
    member_id,
    protocols=(("range", b""), ("roundrobin", b"")),
    *,
    rebalance_timeout_ms=60000,
    protocol_type="consumer",
    group_id=GROUP_ID,
) -> MemberMetadata:
    return MemberMetadata(
        member_id,
        group_id,
        "clientId",
        "clientHost",
        rebalance_timeout_ms,
        10000,
        protocol_type,
        list(protocols),
    )


def joined(member: MemberMetadata) -> MemberMetadata:
    """The member with its JoinGroup parked, as the coordinator leaves it during a rebalance."""
    member.awaiting_join_callback = lambda result: None
    return member


# -- the state table --------------------------------------------------------------------------------------


def test_the_table_is_kafkas():
    assert GROUP_VALID_PREVIOUS_STATES == KAFKA_TABLE
    assert len(LEGAL) == 11
    assert len(ILLEGAL) == 25 - 11


def test_a_new_group_is_empty_at_generation_zero_with_no_leader_or_protocol():
    group = GroupMetadata(GROUP_ID)
    assert group.current_state is G.EMPTY
    assert group.is_(G.EMPTY) and group.not_(G.STABLE)
    assert (group.generation_id, group.leader_id, group.protocol, group.protocol_type) == (
        0,
        None,
        None,
        None,
    )
    assert group.is_empty()


@pytest.mark.parametrize("pair", LEGAL, ids=pair_id)
def test_every_legal_transition_is_taken(pair):
    source, target = pair
    group = GroupMetadata(GROUP_ID, initial_state=source)
    group.transition_to(target)
    assert group.current_state is target
    assert [s for s in GroupState if group.is_(s)] == [target]


@pytest.mark.parametrize("pair", ILLEGAL, ids=pair_id)
def test_every_illegal_transition_is_refused_with_kafkas_message(pair):
    source, target = pair
    group = GroupMetadata(GROUP_ID, initial_state=source)
    with pytest.raises(IllegalStateException) as e:
        group.transition_to(target)
    assert str(e.value) == (
        f"Group groupId should be in the {MESSAGE_STATES[target]} states before moving to {target.value} "
        f"state. Instead it is in {source.value} state"
    )
    assert group.current_state is source


def test_a_groups_life_walks_the_table_from_empty_to_dead():
    group = GroupMetadata(GROUP_ID)
    for state in (
        G.PREPARING_REBALANCE,
        G.AWAITING_SYNC,
        G.STABLE,
        G.PREPARING_REBALANCE,
        G.EMPTY,
        G.DEAD,
        G.DEAD,
    ):
        group.transition_to(state)
        assert group.current_state is state


@pytest.mark.parametrize(
    ("state", "can"),
    [
        (G.EMPTY, True),
        (G.PREPARING_REBALANCE, False),
        (G.AWAITING_SYNC, True),
        (G.STABLE, True),
        (G.DEAD, False),
    ],
)
def test_can_rebalance_from_empty_awaiting_sync_and_stable_only(state, can):
    assert GroupMetadata(GROUP_ID, initial_state=state).can_rebalance() is can


def test_initial_state_must_be_a_group_state():
    with pytest.raises(TypeError, match="initial_state must be a GroupState, not 'Stable'"):
        GroupMetadata(GROUP_ID, initial_state="Stable")


# -- members and the leader -------------------------------------------------------------------------------


def test_the_first_member_sets_the_protocol_type_and_leads():
    group = GroupMetadata(GROUP_ID)
    group.add(new_member("a"))
    assert group.protocol_type == "consumer"
    assert group.leader_id == "a"
    group.add(new_member("b"))
    group.add(new_member("c"))
    assert group.leader_id == "a"
    assert group.has("b") and not group.has("z")
    assert group.get("b").member_id == "b"
    assert group.all_members() == {"a", "b", "c"}
    assert [m.member_id for m in group.all_member_metadata()] == ["a", "b", "c"]
    assert not group.is_empty()


def test_when_the_leader_leaves_the_earliest_remaining_member_leads():
    group = GroupMetadata(GROUP_ID)
    for member_id in ("a", "b", "c"):
        group.add(new_member(member_id))
    group.remove("b")  # a follower: the leader stays
    assert group.leader_id == "a"
    group.add(new_member("d"))
    group.remove("a")
    assert group.leader_id == "c"
    group.remove("c")
    assert group.leader_id == "d"
    group.remove("d")
    assert group.leader_id is None
    assert group.is_empty()
    # The protocol type stays with the group; the next first member sets it again.
    group.add(new_member("e", protocol_type="connect"))
    assert (group.leader_id, group.protocol_type) == ("e", "connect")


def test_removing_a_member_that_is_not_there_changes_nothing():
    group = GroupMetadata(GROUP_ID)
    group.add(new_member("a"))
    group.remove("gone")
    assert group.all_members() == {"a"} and group.leader_id == "a"


def test_get_of_an_unknown_member_names_it():
    group = GroupMetadata(GROUP_ID)
    group.add(new_member("a"))
    with pytest.raises(IllegalArgumentException, match=r"Group groupId has no member z \(members: \['a'\]\)"):
        group.get("z")


@pytest.mark.parametrize(
    ("member", "message"),
    [
        (new_member("x", group_id="other"), "Member x belongs to group other, not to group groupId"),
        (
            new_member("x", protocol_type="connect"),
            "Member x has protocol type 'connect', group groupId has 'consumer'",
        ),
        (
            new_member("x", [("sticky", b"")]),
            r"Member x supports none of group groupId's protocols \['range', 'roundrobin'\]: it offers \['sticky'\]",
        ),
    ],
    ids=["group id", "protocol type", "protocols"],
)
def test_a_member_the_group_cannot_take_is_refused_and_nothing_changes(member, message):
    group = GroupMetadata(GROUP_ID)
    group.add(new_member("a"))
    with pytest.raises(IllegalArgumentException, match=message):
        group.add(member)
    assert group.all_members() == {"a"}
    assert (group.leader_id, group.protocol_type) == ("a", "consumer")


def test_a_first_member_of_another_group_is_refused_before_it_sets_anything():
    group = GroupMetadata(GROUP_ID)
    with pytest.raises(IllegalArgumentException, match="belongs to group other"):
        group.add(new_member("x", group_id="other"))
    assert (group.leader_id, group.protocol_type) == (None, None)
    assert group.is_empty()


def test_not_yet_rejoined_members_are_those_without_a_parked_join():
    group = GroupMetadata(GROUP_ID)
    a, b, c = new_member("a"), new_member("b"), new_member("c")
    for m in (a, b, c):
        group.add(m)
    assert group.not_yet_rejoined_members() == [a, b, c]
    assert not group.has_all_members_joined()
    joined(b)
    assert group.not_yet_rejoined_members() == [a, c]
    joined(a)
    joined(c)
    assert group.not_yet_rejoined_members() == []
    assert group.has_all_members_joined()
    a.awaiting_join_callback = None  # its JoinGroup was answered
    assert group.not_yet_rejoined_members() == [a]


def test_the_rebalance_timeout_is_the_largest_members():
    group = GroupMetadata(GROUP_ID)
    assert group.rebalance_timeout_ms() == 0
    group.add(new_member("a", rebalance_timeout_ms=3000))
    group.add(new_member("b", rebalance_timeout_ms=300000))
    group.add(new_member("c", rebalance_timeout_ms=5000))
    assert group.rebalance_timeout_ms() == 300000
    group.remove("b")
    assert group.rebalance_timeout_ms() == 5000


def test_member_id_suffixes_are_distinct():
    group = GroupMetadata(GROUP_ID)
    suffixes = {group.generate_member_id_suffix() for _ in range(100)}
    assert len(suffixes) == 100
    assert all(len(s) == 36 for s in suffixes)  # a UUID's text form, as Kafka's


# -- protocols --------------------------------------------------------------------------------------------


def test_select_protocol_is_the_vote_of_every_member():
    group = GroupMetadata(GROUP_ID)
    group.add(new_member("a", [("range", b""), ("roundrobin", b"")]))
    assert group.select_protocol() == "range"
    group.add(new_member("b", [("roundrobin", b""), ("range", b"")]))
    # One vote each: the tie goes to the vote of the member that joined first.
    assert group.select_protocol() == "range"
    group.add(new_member("c", [("roundrobin", b""), ("range", b"")]))
    assert group.select_protocol() == "roundrobin"  # two votes to one


def test_a_tie_goes_to_the_earliest_members_vote_whatever_the_names():
    group = GroupMetadata(GROUP_ID)
    group.add(new_member("a", [("roundrobin", b""), ("range", b"")]))
    group.add(new_member("b", [("range", b""), ("roundrobin", b"")]))
    assert group.select_protocol() == "roundrobin"


def test_select_protocol_chooses_only_among_protocols_every_member_supports():
    group = GroupMetadata(GROUP_ID)
    group.add(new_member("a", [("range", b""), ("roundrobin", b"")]))
    group.add(new_member("b", [("roundrobin", b""), ("blah", b"")]))
    assert group.candidate_protocols() == {"roundrobin"}
    assert group.select_protocol() == "roundrobin"


def test_select_protocol_of_an_empty_group_raises():
    with pytest.raises(IllegalStateException, match=r"^Cannot select protocol for empty group$"):
        GroupMetadata(GROUP_ID).select_protocol()


def test_select_protocol_with_no_common_protocol_raises_the_members_error():
    group = GroupMetadata(GROUP_ID)
    a = new_member("a", [("range", b"")])
    group.add(a)
    group.add(new_member("b", [("range", b""), ("roundrobin", b"")]))
    # A rejoining member's protocols replace its own; the coordinator checks them against the group's
    # first (INCONSISTENT_GROUP_PROTOCOL), so only a skipped check leaves no common protocol.
    a.supported_protocols = [("sticky", b"")]
    assert group.candidate_protocols() == set()
    with pytest.raises(
        IllegalArgumentException, match=r"^Member does not support any of the candidate protocols"
    ):
        group.select_protocol()


def test_supports_protocols():
    group = GroupMetadata(GROUP_ID)
    assert group.supports_protocols({"roundrobin", "range"})  # an empty group takes anything
    assert group.candidate_protocols() == set()
    group.add(new_member("a", [("range", b""), ("roundrobin", b"")]))
    assert group.supports_protocols({"roundrobin", "foo"})
    assert group.supports_protocols({"range", "foo"})
    assert not group.supports_protocols({"foo", "bar"})
    group.add(new_member("b", [("roundrobin", b""), ("blah", b"")]))
    assert group.supports_protocols({"roundrobin", "foo"})
    assert not group.supports_protocols({"range", "foo"})


# -- generations ------------------------------------------------------------------------------------------


def test_init_next_generation_increments_the_generation_and_chooses_the_protocol():
    group = GroupMetadata(GROUP_ID)
    group.transition_to(G.PREPARING_REBALANCE)
    group.add(joined(new_member("a", [("roundrobin", b"")])))
    assert (group.generation_id, group.protocol) == (0, None)
    group.init_next_generation()
    assert (group.generation_id, group.protocol, group.current_state) == (1, "roundrobin", G.AWAITING_SYNC)
    # the next rebalance: the leader syncs, a member joins, everyone rejoins
    group.transition_to(G.STABLE)
    group.transition_to(G.PREPARING_REBALANCE)
    group.add(joined(new_member("b", [("roundrobin", b"")])))
    group.init_next_generation()
    assert (group.generation_id, group.protocol, group.current_state) == (2, "roundrobin", G.AWAITING_SYNC)


def test_init_next_generation_of_a_group_without_members_makes_it_empty():
    group = GroupMetadata(GROUP_ID)
    group.transition_to(G.PREPARING_REBALANCE)
    group.init_next_generation()
    assert (group.generation_id, group.protocol, group.current_state) == (1, None, G.EMPTY)


def test_init_next_generation_clears_the_protocol_when_the_last_member_has_left():
    group = GroupMetadata(GROUP_ID)
    group.transition_to(G.PREPARING_REBALANCE)
    group.add(joined(new_member("a")))
    group.init_next_generation()
    assert group.protocol == "range"
    group.transition_to(G.PREPARING_REBALANCE)
    group.remove("a")
    group.init_next_generation()
    assert (group.generation_id, group.protocol, group.current_state) == (2, None, G.EMPTY)


def test_init_next_generation_waits_for_every_member_and_changes_nothing_until_then():
    group = GroupMetadata(GROUP_ID)
    group.transition_to(G.PREPARING_REBALANCE)
    group.add(joined(new_member("a")))
    group.add(new_member("b"))
    with pytest.raises(IllegalStateException, match=r"members \['b'\] have not rejoined"):
        group.init_next_generation()
    assert (group.generation_id, group.protocol, group.current_state) == (0, None, G.PREPARING_REBALANCE)


@pytest.mark.parametrize("state", [G.STABLE, G.AWAITING_SYNC, G.DEAD])
def test_init_next_generation_outside_preparing_rebalance_is_refused_and_changes_nothing(state):
    group = GroupMetadata(GROUP_ID, initial_state=state)
    group.add(joined(new_member("a")))
    with pytest.raises(
        IllegalStateException,
        match="should be in the PreparingRebalance states before moving to AwaitingSync",
    ):
        group.init_next_generation()
    assert (group.generation_id, group.protocol, group.current_state) == (0, None, state)


def test_current_member_metadata_is_each_members_blob_for_the_groups_protocol():
    group = GroupMetadata(GROUP_ID)
    group.transition_to(G.PREPARING_REBALANCE)
    group.add(joined(new_member("a", [("range", b"A1"), ("roundrobin", b"A2")])))
    group.add(joined(new_member("b", [("roundrobin", b"B2"), ("range", b"B1")])))
    group.add(joined(new_member("c", [("roundrobin", b"C2")])))
    with pytest.raises(
        IllegalStateException, match=r"^Cannot obtain member metadata for group in state PreparingRebalance$"
    ):
        group.current_member_metadata()
    group.init_next_generation()
    assert group.protocol == "roundrobin"
    assert group.current_member_metadata() == {"a": b"A2", "b": b"B2", "c": b"C2"}
    group.transition_to(G.DEAD)
    with pytest.raises(IllegalStateException, match=r"in state Dead$"):
        group.current_member_metadata()


# -- DescribeGroups and ListGroups ------------------------------------------------------------------------


def test_summary_of_a_stable_group_shows_protocol_metadata_and_assignments():
    group = GroupMetadata(GROUP_ID)
    group.transition_to(G.PREPARING_REBALANCE)
    a = joined(new_member("a", [("range", b"meta")]))
    group.add(a)
    group.init_next_generation()
    a.assignment = b"assigned"
    group.transition_to(G.STABLE)
    assert group.summary() == GroupSummary(
        "Stable", "consumer", "range", [MemberSummary("a", "clientId", "clientHost", b"meta", b"assigned")]
    )


@pytest.mark.parametrize("state", [G.PREPARING_REBALANCE, G.AWAITING_SYNC, G.DEAD])
def test_summary_of_a_group_not_stable_shows_members_only(state):
    group = GroupMetadata(GROUP_ID, initial_state=state)
    a = new_member("a", [("range", b"meta")])
    a.assignment = b"old"
    group.add(a)
    group.protocol = "range"
    assert group.summary() == GroupSummary(
        state.value, "consumer", NO_PROTOCOL, [MemberSummary("a", "clientId", "clientHost", b"", b"")]
    )


def test_summary_and_overview_of_a_group_that_never_had_members():
    group = GroupMetadata(GROUP_ID)
    assert group.summary() == GroupSummary("Empty", "", "", [])
    assert group.overview() == GroupOverview(GROUP_ID, "")
    group.add(new_member("a"))
    assert group.overview() == GroupOverview(GROUP_ID, "consumer")


# -- offsets ----------------------------------------------------------------------------------------------

TP = ("foo", 0)


def test_offset_commit():
    group = GroupMetadata(GROUP_ID)
    offset = OffsetAndMetadata(37)
    group.prepare_offset_commit({TP: offset})
    assert group.has_offsets()
    assert group.offset(TP) is None
    group.complete_pending_offset_write(TP, offset)
    assert group.has_offsets()
    assert group.offset(TP) == offset
    assert group.all_offsets() == {TP: offset}
    assert group.num_offsets() == 1


def test_offset_commit_failure():
    group = GroupMetadata(GROUP_ID)
    offset = OffsetAndMetadata(37)
    group.prepare_offset_commit({TP: offset})
    assert group.has_offsets()
    group.fail_pending_offset_write(TP, offset)
    assert not group.has_offsets()
    assert group.offset(TP) is None


def test_offset_commit_failure_with_another_pending():
    group = GroupMetadata(GROUP_ID)
    first, second = OffsetAndMetadata(37), OffsetAndMetadata(57)
    group.prepare_offset_commit({TP: first})
    group.prepare_offset_commit({TP: second})
    group.fail_pending_offset_write(TP, first)  # not the pending one any more: nothing to drop
    assert group.has_offsets()
    assert group.offset(TP) is None
    group.complete_pending_offset_write(TP, second)
    assert group.offset(TP) == second
    group.fail_pending_offset_write(TP, second)  # already completed: the committed offset stays
    assert group.offset(TP) == second


def test_offset_commit_with_another_pending():
    group = GroupMetadata(GROUP_ID)
    first, second = OffsetAndMetadata(37), OffsetAndMetadata(57)
    group.prepare_offset_commit({TP: first})
    group.prepare_offset_commit({TP: second})
    group.complete_pending_offset_write(TP, first)
    assert group.offset(TP) == first
    assert group.has_offsets()
    # The second commit is still in flight, so the first cannot expire under it.
    assert group.remove_expired_offsets(start_ms=10**15) == {}
    assert group.offset(TP) == first
    group.complete_pending_offset_write(TP, second)
    assert group.offset(TP) == second
    group.remove_expired_offsets(start_ms=10**15)  # nothing pending now, so it can expire
    assert not group.has_offsets()


def test_offsets_are_equal_only_field_by_field():
    assert OffsetAndMetadata(37) == OffsetAndMetadata(37, "", -1, -1)
    assert OffsetAndMetadata(37, "m") != OffsetAndMetadata(37)
    assert OffsetAndMetadata(37, commit_timestamp=5) != OffsetAndMetadata(37)


def test_remove_expired_offsets_spares_those_with_a_commit_in_flight():
    group = GroupMetadata(GROUP_ID)
    old = OffsetAndMetadata(1, commit_timestamp=0, expire_timestamp=1000)
    for tp in (("t", 0), ("t", 1), ("t", 2)):
        group.complete_pending_offset_write(tp, old)
    young = OffsetAndMetadata(2, commit_timestamp=0, expire_timestamp=5000)
    group.complete_pending_offset_write(("t", 3), young)
    group.prepare_offset_commit(
        {("t", 2): OffsetAndMetadata(9, commit_timestamp=1500, expire_timestamp=9000)}
    )

    assert group.remove_expired_offsets(start_ms=1000) == {}  # expired means strictly before start_ms
    assert group.remove_expired_offsets(start_ms=2000) == {("t", 0): old, ("t", 1): old}
    assert group.all_offsets() == {("t", 2): old, ("t", 3): young}


def test_all_offsets_is_a_copy():
    group = GroupMetadata(GROUP_ID)
    group.complete_pending_offset_write(TP, OffsetAndMetadata(1))
    group.all_offsets().clear()
    assert group.num_offsets() == 1


def test_the_lock_is_reentrant():
    group = GroupMetadata(GROUP_ID)
    with group.lock, group.lock:
        group.transition_to(G.PREPARING_REBALANCE)
    assert group.is_(G.PREPARING_REBALANCE)


def test_to_string_is_kafkas_shape():
    group = GroupMetadata(GROUP_ID)
    group.add(new_member("a"))
    assert str(group) == "[groupId,consumer,Empty,[[a,clientId,clientHost,10000]]]"
