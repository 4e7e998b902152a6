"""One consumer group as its coordinator holds it: its state, its members, its generation and its offsets.

Mirrors: kafka.coordinator.GroupMetadata, GroupState, GroupSummary, GroupOverview
         (core/src/main/scala/kafka/coordinator/GroupMetadata.scala, Kafka 0.10.1) and the constants
         of kafka.coordinator.GroupCoordinator's companion object
Book:    chapter 5, 5.2.2 (group metadata), 5.4.2 (the group state machine and its transitions)
Differs: a tie in the protocol vote, and the leader after one who leaves, go to the member that
         joined first (Kafka takes whichever its ``HashMap`` yields first); the group carries its
         own lock (as Kafka 1.0's does) where Kafka 0.10.1 synchronizes on the object.

The five states (Kafka 0.10.1 added ``Empty``; 0.10.0 had the other four) and what moves a group
between them, from Kafka's comments on each state and its ``GroupCoordinator``:

- ``Empty``: no members; the group lingers while it has committed offsets. A JoinGroup from a new
  member starts a rebalance; when its last offsets expire or their topics are deleted, or its
  ``__consumer_offsets`` partition moves to another broker, it dies.
- ``PreparingRebalance``: the coordinator parks every member's JoinGroup until all known members
  have rejoined or the rebalance timeout (the largest of the members') passes. Then it starts the
  next generation: ``AwaitingSync`` if any member joined, ``Empty`` if none is left.
- ``AwaitingSync``: the members have their JoinGroup answers (the leader, every member's metadata);
  their SyncGroups wait for the leader's. The leader's assignment, once stored, makes the group
  ``Stable``. A member joining, changing its metadata, leaving or failing starts over.
- ``Stable``: members heartbeat and commit offsets. A member joining, changing its metadata,
  leaving or failing, or the leader rejoining, starts a rebalance.
- ``Dead``: the group is being removed (its partition emigrated, or it expired); every request
  but OffsetFetch gets UNKNOWN_MEMBER_ID.

``GROUP_VALID_PREVIOUS_STATES`` is Kafka's ``validPreviousStates``: a transition to a target state
is legal only from the listed states. ``GROUP_TRANSITION_EVENTS`` names the event that crosses each
edge; the chapter's picture is drawn from both, so the docs cannot drift from the code.

Offsets live here too, as in Kafka 0.10.1: the committed ones, and the pending ones, whose commit
record is being appended to ``__consumer_offsets`` and which become committed when the append
succeeds (``complete_pending_offset_write``) or are dropped when it fails. Kafka 0.11 adds the
offsets of transactions (TxnOffsetCommit), kept per producer until the transaction commits or
aborts; a committed one replaces the group's offset for its partition unless a plain commit's
record came after it in the log.
"""

from __future__ import annotations

import enum
import logging
import threading
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.coordinator.member_metadata import IllegalArgumentException, MemberMetadata, MemberSummary
from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata

log = logging.getLogger(__name__)

# GroupCoordinator's constants (Kafka's ``object GroupCoordinator``): what a response carries where
# there is no state, protocol type, protocol or leader. They live here because ``summary`` uses them
# and the coordinator imports this module.
NO_STATE = ""
NO_PROTOCOL_TYPE = ""
NO_PROTOCOL = ""
NO_LEADER = ""


class GroupState(enum.Enum):
    """A group's state; the value is Kafka's name for it, as DescribeGroups reports it."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    AWAITING_SYNC = "AwaitingSync"
    STABLE = "Stable"
    DEAD = "Dead"


G = GroupState

# --8<-- [start:table]
GROUP_VALID_PREVIOUS_STATES: dict[GroupState, set[GroupState]] = {
    G.EMPTY: {G.PREPARING_REBALANCE},
    G.PREPARING_REBALANCE: {G.STABLE, G.AWAITING_SYNC, G.EMPTY},
    G.AWAITING_SYNC: {G.PREPARING_REBALANCE},
    G.STABLE: {G.AWAITING_SYNC},
    G.DEAD: {G.STABLE, G.PREPARING_REBALANCE, G.AWAITING_SYNC, G.EMPTY, G.DEAD},
}
# --8<-- [end:table]

# The event that crosses each edge of the table, from Kafka 0.10.1's comments on the states and its
# GroupCoordinator (doJoinGroup, doSyncGroup, handleLeaveGroup, onExpireHeartbeat, onCompleteJoin,
# onGroupUnloaded) and GroupMetadataManager (cleanupGroupMetadata). The picture labels its edges
# with these; a transition without an event is an error there.
# --8<-- [start:events]
GROUP_TRANSITION_EVENTS: dict[tuple[GroupState, GroupState], str] = {
    (G.EMPTY, G.PREPARING_REBALANCE): "JoinGroup from\na new member",
    (G.PREPARING_REBALANCE, G.AWAITING_SYNC): "all members rejoined,\nor rebalance timeout:\nnext generation",
    (G.PREPARING_REBALANCE, G.EMPTY): "join completes with\nno member left",
    (G.AWAITING_SYNC, G.STABLE): "SyncGroup from the leader:\nassignment stored",
    (G.AWAITING_SYNC, G.PREPARING_REBALANCE): (
        "JoinGroup (new member or\nnew metadata), LeaveGroup,\nsession expiry, store failed"
    ),
    (G.STABLE, G.PREPARING_REBALANCE): (
        "JoinGroup (new member,\nnew metadata, or the leader),\nLeaveGroup, session expiry"
    ),
    (G.STABLE, G.DEAD): "partition\nemigration",
    (G.PREPARING_REBALANCE, G.DEAD): "partition\nemigration",
    (G.AWAITING_SYNC, G.DEAD): "partition\nemigration",
    (G.EMPTY, G.DEAD): "offsets expired, or\npartition emigration",
    (G.DEAD, G.DEAD): "emigration of a\ngroup already dead",
}
# --8<-- [end:events]


@dataclass(frozen=True)
class GroupOverview:
    """A group as ListGroups shows it."""

    group_id: str
    protocol_type: str


@dataclass(frozen=True)
class GroupSummary:
    """A group as DescribeGroups shows it."""

    state: str
    protocol_type: str
    protocol: str
    members: list[MemberSummary]


class GroupMetadata:
    """A group's membership (its members, the protocol chosen for them, each one's metadata) and its
    state (the state machine's state, the generation, the leader), plus its offsets.

    Not thread-safe by itself, as Kafka's (``@nonthreadsafe``): the coordinator holds ``lock`` around
    everything it does to a group. The lock is reentrant, as Java's monitor is, because Kafka's
    coordinator takes it again inside methods that already hold it (``maybePrepareRebalance``).
    """

    def __init__(self, group_id: str, initial_state: GroupState = GroupState.EMPTY) -> None:
        if not isinstance(initial_state, GroupState):
            raise TypeError(f"Group {group_id}: initial_state must be a GroupState, not {initial_state!r}")
        self.group_id = group_id
        self.lock = threading.RLock()
        self._state = initial_state
        # Members in the order they joined: the first becomes the leader, and the vote's ties go
        # to the earliest (Python's dict keeps insertion order; Kafka's HashMap does not).
        self._members: dict[str, MemberMetadata] = {}
        self._offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self._pending_offset_commits: dict[TopicPartition, OffsetAndMetadata] = {}
        # Kafka 0.11: offsets committed inside a transaction (TxnOffsetCommit), per producer id, with
        # whether their record is in the log yet; they become the group's when the transaction
        # commits (its marker lands on __consumer_offsets) and are dropped when it aborts.
        # (its offset, the log offset of its record's batch: -1 until it is appended)
        self._pending_transactional_offset_commits: dict[
            int, dict[TopicPartition, tuple[OffsetAndMetadata, int]]
        ] = {}
        # where each committed offset's record is in the log, when known: a transaction's offset
        # replaces a committed one only if its record came later (Kafka 0.11's ``olderThan``)
        self._offset_append_positions: dict[TopicPartition, int] = {}

        self.protocol_type: str | None = None  # the first member's; every member must share it
        self.generation_id = 0
        self.leader_id: str | None = None
        self.protocol: str | None = None  # chosen at each generation; None while the group is empty

    # -- state --------------------------------------------------------------------------------------------

    @property
    def current_state(self) -> GroupState:
        return self._state

    # Kafka's ``is`` and ``not``, with PEP 8's trailing underscore: both are Python keywords.
    def is_(self, state: GroupState) -> bool:
        return self._state is state

    def not_(self, state: GroupState) -> bool:
        return self._state is not state

    def can_rebalance(self) -> bool:
        """Whether the group may move to PreparingRebalance now (from Stable, AwaitingSync or Empty)."""
        return self._state in GROUP_VALID_PREVIOUS_STATES[GroupState.PREPARING_REBALANCE]

    # --8<-- [start:transition_to]
    def transition_to(self, group_state: GroupState) -> None:
        """Move the group to ``group_state``, if the table allows it from the current state."""
        self._assert_valid_transition(group_state)
        log.debug("Group %s transitions from %s to %s", self.group_id, self._state.value, group_state.value)
        self._state = group_state

    def _assert_valid_transition(self, target_state: GroupState) -> None:
        valid_previous = GROUP_VALID_PREVIOUS_STATES[target_state]
        if self._state not in valid_previous:
            states = ",".join(s.value for s in GroupState if s in valid_previous)
            raise IllegalStateException(
                f"Group {self.group_id} should be in the {states} states before moving to "
                f"{target_state.value} state. Instead it is in {self._state.value} state"
            )

    # --8<-- [end:transition_to]

    # -- members ------------------------------------------------------------------------------------------

    def has(self, member_id: str) -> bool:
        return member_id in self._members

    def get(self, member_id: str) -> MemberMetadata:
        """The member ``member_id``; the caller checks ``has`` first, as Kafka's coordinator does."""
        try:
            return self._members[member_id]
        except KeyError:
            raise IllegalArgumentException(
                f"Group {self.group_id} has no member {member_id} (members: {list(self._members)})"
            ) from None

    # --8<-- [start:add_remove]
    def add(self, member: MemberMetadata) -> None:
        """Add ``member``; the first member of a group sets its protocol type and becomes its leader.

        The coordinator has already refused a member whose protocol type or protocols the group
        cannot take (INCONSISTENT_GROUP_PROTOCOL); here that would be a bug, so it raises."""
        protocol_type = member.protocol_type if not self._members else self.protocol_type
        if member.group_id != self.group_id:
            raise IllegalArgumentException(
                f"Member {member.member_id} belongs to group {member.group_id}, not to group {self.group_id}"
            )
        if member.protocol_type != protocol_type:
            raise IllegalArgumentException(
                f"Member {member.member_id} has protocol type {member.protocol_type!r}, "
                f"group {self.group_id} has {protocol_type!r}"
            )
        if not self.supports_protocols(member.protocols()):
            raise IllegalArgumentException(
                f"Member {member.member_id} supports none of group {self.group_id}'s protocols "
                f"{sorted(self.candidate_protocols())}: it offers {sorted(member.protocols())}"
            )
        self.protocol_type = protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self._members[member.member_id] = member

    def remove(self, member_id: str) -> None:
        """Remove ``member_id`` (nothing happens if it is not a member, as in Kafka: a member's
        session may expire after a rebalance has already dropped it). If it led the group, the
        member that joined first among those left leads now."""
        self._members.pop(member_id, None)
        if member_id == self.leader_id:
            self.leader_id = next(iter(self._members), None)

    # --8<-- [end:add_remove]

    def is_empty(self) -> bool:
        return not self._members

    def all_members(self) -> set[str]:
        return set(self._members)

    def all_member_metadata(self) -> list[MemberMetadata]:
        """The members, in the order they joined."""
        return list(self._members.values())

    def not_yet_rejoined_members(self) -> list[MemberMetadata]:
        """The members whose JoinGroup is not parked yet: while any is left, the delayed join waits
        for them (until the rebalance timeout, which drops them)."""
        return [m for m in self._members.values() if m.awaiting_join_callback is None]

    def has_all_members_joined(self) -> bool:
        """Whether every member has rejoined: the test Kafka's ``tryCompleteJoin`` makes (later Kafka
        names it ``hasAllMembersJoined``)."""
        return not self.not_yet_rejoined_members()

    def rebalance_timeout_ms(self) -> int:
        """How long a rebalance may wait for members to rejoin: the largest of the members' own."""
        return max((m.rebalance_timeout_ms for m in self._members.values()), default=0)

    def generate_member_id_suffix(self) -> str:
        """The random part of a new member's id (``<client.id>-<uuid>``)."""
        return str(uuid.uuid4())

    # -- protocols and generations ------------------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        """The protocols every member supports (none for a group without members)."""
        members = list(self._members.values())
        if not members:
            return set()
        common = members[0].protocols()
        for member in members[1:]:
            common &= member.protocols()
        return common

    def supports_protocols(self, member_protocols: set[str]) -> bool:
        """Whether a member offering ``member_protocols`` could join: a group without members takes
        anything; otherwise the member must share at least one protocol with every member."""
        return self.is_empty() or bool(set(member_protocols) & self.candidate_protocols())

    # --8<-- [start:select_protocol]
    def select_protocol(self) -> str:
        """The protocol for the next generation: every member votes for its most preferred protocol
        among those all members support, and the one with the most votes wins."""
        if not self._members:
            raise IllegalStateException("Cannot select protocol for empty group")
        candidates = self.candidate_protocols()
        votes = Counter(member.vote(candidates) for member in self._members.values())
        # most_common keeps the first-counted of equal counts first: the earliest member's vote.
        return votes.most_common(1)[0][0]

    # --8<-- [end:select_protocol]

    def init_next_generation(self) -> None:
        """Start the next generation once every member has rejoined: a new generation id, and the
        protocol chosen by vote, then AwaitingSync; or, if no member is left, no protocol and Empty."""
        if not_rejoined := self.not_yet_rejoined_members():
            raise IllegalStateException(
                f"Group {self.group_id} cannot start a new generation: members "
                f"{[m.member_id for m in not_rejoined]} have not rejoined"
            )
        target = GroupState.AWAITING_SYNC if self._members else GroupState.EMPTY
        self._assert_valid_transition(target)
        protocol = self.select_protocol() if self._members else None
        self.generation_id += 1
        self.protocol = protocol
        self.transition_to(target)

    def current_member_metadata(self) -> dict[str, bytes]:
        """Each member's metadata for the group's protocol: what the leader's JoinGroup answer carries."""
        if self._state in (GroupState.DEAD, GroupState.PREPARING_REBALANCE):
            raise IllegalStateException(
                f"Cannot obtain member metadata for group in state {self._state.value}"
            )
        return {member_id: member.metadata(self.protocol) for member_id, member in self._members.items()}

    # -- ListGroups and DescribeGroups --------------------------------------------------------------------

    def summary(self) -> GroupSummary:
        """The group for DescribeGroups: a stable group shows its protocol and each member's metadata
        and assignment; any other shows its members only."""
        protocol_type = self.protocol_type or NO_PROTOCOL_TYPE
        if self._state is GroupState.STABLE:
            members = [m.summary(self.protocol) for m in self._members.values()]
            return GroupSummary(self._state.value, protocol_type, self.protocol, members)
        members = [m.summary_no_metadata() for m in self._members.values()]
        return GroupSummary(self._state.value, protocol_type, NO_PROTOCOL, members)

    def overview(self) -> GroupOverview:
        return GroupOverview(self.group_id, self.protocol_type or NO_PROTOCOL_TYPE)

    # -- offsets ------------------------------------------------------------------------------------------

    def prepare_offset_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Stage ``offsets`` while their commit record is appended to ``__consumer_offsets``."""
        self._pending_offset_commits.update(offsets)

    def complete_pending_offset_write(
        self, topic_partition: TopicPartition, offset: OffsetAndMetadata, append_offset: int = -1
    ) -> None:
        """The commit record for ``offset`` is in the log: it is the committed offset now. The pending
        entry goes only if it is this same commit (a later one for the partition may still be in flight).
        Loading a partition's groups uses this too, with nothing pending."""
        self._offsets[topic_partition] = offset
        self._offset_append_positions[topic_partition] = append_offset
        if self._pending_offset_commits.get(topic_partition) == offset:
            del self._pending_offset_commits[topic_partition]

    def fail_pending_offset_write(self, topic_partition: TopicPartition, offset: OffsetAndMetadata) -> None:
        """The commit record for ``offset`` could not be appended: drop it, if it is still the pending one."""
        if self._pending_offset_commits.get(topic_partition) == offset:
            del self._pending_offset_commits[topic_partition]

    # --8<-- [start:txn_offsets]
    def prepare_txn_offset_commit(
        self, producer_id: int, offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> None:
        """Stage a transaction's offsets while their record is appended (not yet in the log)."""
        pending = self._pending_transactional_offset_commits.setdefault(producer_id, {})
        pending.update({tp: (offset, -1) for tp, offset in offsets.items()})

    def on_txn_offset_commit_append(
        self, producer_id: int, topic_partition: TopicPartition, offset: OffsetAndMetadata, append_offset: int
    ) -> None:
        """The record of a transaction's offset is in the log at ``append_offset``: a commit marker
        may now apply it."""
        pending = self._pending_transactional_offset_commits.get(producer_id)
        if pending is not None and topic_partition in pending:
            pending[topic_partition] = (offset, append_offset)

    def fail_pending_txn_offset_commit(self, producer_id: int, topic_partition: TopicPartition) -> None:
        pending = self._pending_transactional_offset_commits.get(producer_id)
        if pending is not None:
            pending.pop(topic_partition, None)
            if not pending:
                del self._pending_transactional_offset_commits[producer_id]

    def complete_pending_txn_offset_commit(self, producer_id: int, is_commit: bool) -> None:
        """The producer's transaction ended: on commit its offsets (those in the log) are the
        group's now; on abort they are dropped."""
        pending = self._pending_transactional_offset_commits.pop(producer_id, {})
        if not is_commit:
            return
        for tp, (offset, append_offset) in pending.items():
            if append_offset < 0:
                log.warning("Group %s: producer %d's offset for %s-%d was not in the log when its transaction "
                            "committed; ignored", self.group_id, producer_id, *tp)  # fmt: skip
            elif self._offset_append_positions.get(tp, -1) < append_offset:
                self._offsets[tp] = offset
                self._offset_append_positions[tp] = append_offset

    def has_pending_offset_commits_from_producer(self, producer_id: int) -> bool:
        return producer_id in self._pending_transactional_offset_commits

    def pending_txn_offsets(self, producer_id: int) -> dict[TopicPartition, OffsetAndMetadata]:
        return {
            tp: o for tp, (o, _) in self._pending_transactional_offset_commits.get(producer_id, {}).items()
        }

    # --8<-- [end:txn_offsets]

    def remove_expired_offsets(self, start_ms: int) -> dict[TopicPartition, OffsetAndMetadata]:
        """Remove and return the committed offsets that expired before ``start_ms`` (the time the
        expiration task started, from the coordinator's Time), except those with a commit in flight."""
        expired = {
            tp: offset
            for tp, offset in self._offsets.items()
            if offset.expire_timestamp < start_ms and tp not in self._pending_offset_commits
        }
        for tp in expired:
            del self._offsets[tp]
            self._offset_append_positions.pop(tp, None)
        return expired

    def remove_offsets(
        self, topic_partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Remove and return the committed offsets of ``topic_partitions`` (their topic was
        deleted), dropping any commit of them still pending, plain or transactional (Kafka 0.11's
        ``removeOffsets``, which came with KAFKA-2000 in 0.10.2)."""
        removed = {}
        for tp in topic_partitions:
            self._pending_offset_commits.pop(tp, None)
            for pending in self._pending_transactional_offset_commits.values():
                pending.pop(tp, None)
            offset = self._offsets.pop(tp, None)
            self._offset_append_positions.pop(tp, None)
            if offset is not None:
                removed[tp] = offset
        return removed

    def all_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return dict(self._offsets)

    def offset(self, topic_partition: TopicPartition) -> OffsetAndMetadata | None:
        return self._offsets.get(topic_partition)

    def num_offsets(self) -> int:
        return len(self._offsets)

    def has_offsets(self) -> bool:
        """Whether the group has offsets, committed or pending: an Empty group without any may die."""
        return bool(
            self._offsets or self._pending_offset_commits or self._pending_transactional_offset_commits
        )

    def __str__(self) -> str:
        # Kafka's toString: [groupId,protocolType,currentState,members]
        return f"[{self.group_id},{self.protocol_type},{self._state.value},{list(self._members.values())}]"

    __repr__ = __str__
