"""The group coordinator: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, and the rebalances,
sessions and timeouts behind them; OffsetCommit and OffsetFetch.

Mirrors: kafka.coordinator.GroupCoordinator, GroupConfig and JoinGroupResult
         (core/src/main/scala/kafka/coordinator/GroupCoordinator.scala, Kafka 0.10.1), with Kafka
         0.11's ``group.initial.rebalance.delay.ms`` (GroupCoordinator.prepareRebalance and
         InitialDelayedJoin, KIP-134), its transactional offsets (handleTxnCommitOffsets,
         handleTxnCompletion, KIP-98) and its handleDeletedPartitions (KAFKA-2000, from 0.10.2)
Book:    chapter 5, 5.2.1-5.2.4 (the callbacks, the checks before a request, the responses),
         5.3 (the delayed join), 5.3.4-5.3.5 (a member rejoining a stable group, and one not yet
         stable: ``_do_join_group``), 5.4.2-5.4.7 (the state transitions, JoinGroup, SyncGroup,
         LeaveGroup, the two timeouts, the delayed heartbeat); chapter 7, 7.2.3 (``on_elected`` and
         ``on_resigned``: a partition's groups move with its leadership)
Labs:    lab 7 (on_complete_join, then _do_sync_group)
Differs: errors go by the protocol's current names (NOT_COORDINATOR for 0.10's
         NOT_COORDINATOR_FOR_GROUP, and so on). OffsetFetch without partitions answers all the
         group's offsets (Kafka 0.10.2's v2). A JoinGroup to an Empty group with no protocol type
         or no protocols gets INCONSISTENT_GROUP_PROTOCOL (Kafka 1.0), and a member dropped for not
         rejoining in time has its session expiry completed (Kafka 2.0.1).

The coordinator keeps no state of its own beyond its purgatories: its ``GroupMetadataManager``
holds the groups and knows which ``__consumer_offsets`` partitions this broker leads and which are
still loading, and every group and offset is stored through it, as in Kafka.

A JoinGroup first passes the checks of 5.2.3: is the coordinator running
(COORDINATOR_NOT_AVAILABLE), is the group id valid (INVALID_GROUP_ID), is this broker the leader of
the group's ``__consumer_offsets`` partition (NOT_COORDINATOR), is that partition still loading
(COORDINATOR_LOAD_IN_PROGRESS), is the session timeout within ``group.min.session.timeout.ms`` and
``group.max.session.timeout.ms`` (INVALID_SESSION_TIMEOUT); the other requests make the ones that
apply to them (a SyncGroup does not wait for the loading; a Heartbeat to a loading partition is
answered NONE, as in Kafka).
Then the group's state decides, under the group's lock:

- JoinGroup from a new member (no member id): the member gets an id, ``<client.id>-<uuid>``, and the
  group prepares a rebalance. From a known member: in a Stable (or AwaitingSync) group nothing has
  changed if the member's protocols match and it is a follower, so it gets the current generation;
  otherwise its protocols are updated and the group rebalances. The JoinGroup answers wait in the
  delayed join until every member has rejoined.
- SyncGroup: followers wait for the leader's; the leader's brings the assignment, which is stored,
  then handed out, and the group is Stable.
- Heartbeat: resets the member's session; during a rebalance the answer is REBALANCE_IN_PROGRESS,
  which tells the member to rejoin.
- LeaveGroup, and a session that expires: the member is removed and the group rebalances.

This module is long because it mirrors GroupCoordinator.scala, whose handlers and state
transitions the book's 5.2-5.4 walk through in one file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kafka_lite.common.errors import Errors, IllegalStateException
from kafka_lite.common.time import Time
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.coordinator.delayed_heartbeat import DelayedHeartbeat, MemberKey
from kafka_lite.coordinator.delayed_join import DelayedJoin, GroupKey, InitialDelayedJoin
from kafka_lite.coordinator.group_metadata import (
    NO_LEADER,
    NO_PROTOCOL,
    NO_PROTOCOL_TYPE,
    NO_STATE,
    GroupMetadata,
    GroupOverview,
    GroupState,
    GroupSummary,
)
from kafka_lite.coordinator.group_metadata_manager import GroupMetadataManager, OffsetMetadataAndError
from kafka_lite.coordinator.member_metadata import MemberMetadata, Protocol
from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory

log = logging.getLogger(__name__)

# A JoinGroup from a member that has no id yet (Kafka's ``JoinGroupRequest.UNKNOWN_MEMBER_ID``).
UNKNOWN_MEMBER_ID = ""

# What DescribeGroups answers without a group: an error (EMPTY_GROUP), or a group this coordinator
# does not hold (DEAD_GROUP).
EMPTY_GROUP = GroupSummary(NO_STATE, NO_PROTOCOL_TYPE, NO_PROTOCOL, [])
DEAD_GROUP = GroupSummary(GroupState.DEAD.value, NO_PROTOCOL_TYPE, NO_PROTOCOL, [])


@dataclass(frozen=True)
class GroupConfig:
    """The broker's group settings: ``group.min.session.timeout.ms`` and
    ``group.max.session.timeout.ms`` (Kafka 0.10.1's defaults), ``group.initial.rebalance.delay.ms``
    (Kafka 0.11's)."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 300000
    group_initial_rebalance_delay_ms: int = 3000

    def __post_init__(self) -> None:
        for name in (
            "group_min_session_timeout_ms",
            "group_max_session_timeout_ms",
            "group_initial_rebalance_delay_ms",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"GroupConfig: {name} must be an int >= 0 (milliseconds), not {value!r}")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                f"GroupConfig: group_min_session_timeout_ms ({self.group_min_session_timeout_ms}) is larger "
                f"than group_max_session_timeout_ms ({self.group_max_session_timeout_ms})"
            )


@dataclass(frozen=True)
class JoinGroupResult:
    """A JoinGroup answer: the leader's carries every member's metadata for the chosen protocol."""

    members: dict[str, bytes] = field(default_factory=dict)
    member_id: str = UNKNOWN_MEMBER_ID
    generation_id: int = 0
    sub_protocol: str = NO_PROTOCOL
    leader_id: str = NO_LEADER
    error: Errors = Errors.NONE


JoinCallback = Callable[[JoinGroupResult], None]
SyncCallback = Callable[[bytes, Errors], None]  # (the member's assignment, the error)
ErrorCallback = Callable[[Errors], None]
CommitCallback = Callable[[dict[TopicPartition, Errors]], None]
# (the request's error, each partition's offset and error)
FetchCallback = Callable[[Errors, dict[TopicPartition, OffsetMetadataAndError]], None]


class GroupCoordinator:
    """Group membership for the groups whose ``__consumer_offsets`` partitions this broker leads."""

    def __init__(
        self,
        broker_id: int,
        group_config: GroupConfig,
        group_manager: GroupMetadataManager,
        heartbeat_purgatory: DelayedOperationPurgatory,
        join_purgatory: DelayedOperationPurgatory,
        time: Time,
    ) -> None:
        if not isinstance(group_config, GroupConfig):
            raise TypeError(f"GroupCoordinator: group_config must be a GroupConfig, not {group_config!r}")
        if not isinstance(group_manager, GroupMetadataManager):
            raise TypeError(
                f"GroupCoordinator: group_manager must be a GroupMetadataManager, not {group_manager!r}"
            )
        self.broker_id = broker_id
        self.group_config = group_config
        self.group_manager = group_manager
        # Kafka hands one OffsetConfig to both the coordinator and its manager: here it is the manager's
        self.offset_config = group_manager.config
        self.heartbeat_purgatory = heartbeat_purgatory
        self.join_purgatory = join_purgatory
        self.time = time
        self._is_active = False

    # -- lifecycle and ownership ---------------------------------------------------------------------------

    def startup(self) -> None:
        self._is_active = True
        log.info("[GroupCoordinator %d]: Startup complete.", self.broker_id)

    def shutdown(self) -> None:
        self._is_active = False
        self.group_manager.shutdown()  # a load under way stops reading the log
        self.heartbeat_purgatory.shutdown()
        self.join_purgatory.shutdown()
        log.info("[GroupCoordinator %d]: Shutdown complete.", self.broker_id)

    @property
    def is_active(self) -> bool:
        return self._is_active

    def partition_for(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition of ``group_id``: its leader coordinates the group."""
        return self.group_manager.partition_for(group_id)

    def on_elected(self, offsets_partition: int) -> None:
        """This broker became the leader of ``__consumer_offsets`` partition ``offsets_partition``
        (Kafka's ``handleGroupImmigration``): the manager reads the partition's groups from its log
        on its scheduler, and requests for them get COORDINATOR_LOAD_IN_PROGRESS meanwhile."""
        self._check_partition(offsets_partition)
        self.group_manager.load_groups_for_partition(offsets_partition, self._on_group_loaded)

    def on_resigned(self, offsets_partition: int) -> None:
        """This broker no longer leads ``offsets_partition`` (Kafka's ``handleGroupEmigration``): the
        manager unloads its groups on its scheduler (they die here; the new leader loads them from
        the log), and their parked requests get NOT_COORDINATOR."""
        self._check_partition(offsets_partition)
        self.group_manager.remove_groups_for_partition(offsets_partition, self._on_group_unloaded)

    def _check_partition(self, offsets_partition: int) -> None:
        partitions = self.offset_config.offsets_topic_num_partitions
        if not isinstance(offsets_partition, int) or not 0 <= offsets_partition < partitions:
            raise ValueError(
                f"__consumer_offsets has partitions 0..{partitions - 1}, not {offsets_partition!r}"
            )

    def _is_coordinator_for_group(self, group_id: str) -> bool:
        return self.group_manager.is_group_local(group_id)

    def _is_coordinator_loading_in_progress(self, group_id: str) -> bool:
        return self.group_manager.is_group_loading(group_id)

    # -- JoinGroup ------------------------------------------------------------------------------------------

    # --8<-- [start:handle_join_group]
    def handle_join_group(
        self,
        group_id: str,
        member_id: str,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Sequence[Protocol],
        callback: JoinCallback,
    ) -> None:
        if not self._is_active:
            callback(_join_error(member_id, Errors.COORDINATOR_NOT_AVAILABLE))
        elif not _valid_group_id(group_id):
            callback(_join_error(member_id, Errors.INVALID_GROUP_ID))
        elif not self._is_coordinator_for_group(group_id):
            callback(_join_error(member_id, Errors.NOT_COORDINATOR))
        elif self._is_coordinator_loading_in_progress(group_id):
            callback(_join_error(member_id, Errors.COORDINATOR_LOAD_IN_PROGRESS))
        elif not (
            self.group_config.group_min_session_timeout_ms
            <= session_timeout_ms
            <= self.group_config.group_max_session_timeout_ms
        ):
            callback(_join_error(member_id, Errors.INVALID_SESSION_TIMEOUT))
        else:
            # A group is created only for a member without an id: a member id names a member of a
            # group this coordinator would hold.
            group = self.group_manager.get_group(group_id)
            if group is None:
                if member_id != UNKNOWN_MEMBER_ID:
                    callback(_join_error(member_id, Errors.UNKNOWN_MEMBER_ID))
                    return
                group = self.group_manager.add_group(GroupMetadata(group_id))
            self._do_join_group(
                group,
                member_id,
                client_id,
                client_host,
                rebalance_timeout_ms,
                session_timeout_ms,
                protocol_type,
                protocols,
                callback,
            )

    # --8<-- [end:handle_join_group]

    def _do_join_group(
        self,
        group: GroupMetadata,
        member_id: str,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Sequence[Protocol],
        callback: JoinCallback,
    ) -> None:
        with group.lock:
            if group.not_(GroupState.EMPTY) and (
                group.protocol_type != protocol_type
                or not group.supports_protocols({p for p, _ in protocols})
            ):
                # the member cannot share the group's protocol: refused, the group unchanged
                callback(_join_error(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
            elif group.is_(GroupState.EMPTY) and (not protocol_type or not protocols):
                # nothing to vote on: the rebalance could not pick a protocol
                callback(_join_error(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
            elif member_id != UNKNOWN_MEMBER_ID and not group.has(member_id):
                # an id the group does not know: the member resets its id and joins again
                callback(_join_error(member_id, Errors.UNKNOWN_MEMBER_ID))
            else:
                state = group.current_state
                if state is GroupState.DEAD:
                    # the group is being removed (its partition moved away): the member rejoins
                    # without an id, wherever the group is coordinated next
                    callback(_join_error(member_id, Errors.UNKNOWN_MEMBER_ID))
                elif member_id == UNKNOWN_MEMBER_ID:
                    self._add_member_and_rebalance(
                        rebalance_timeout_ms,
                        session_timeout_ms,
                        client_id,
                        client_host,
                        protocol_type,
                        protocols,
                        group,
                        callback,
                    )
                else:
                    member = group.get(member_id)
                    if state is GroupState.PREPARING_REBALANCE:
                        self._update_member_and_rebalance(group, member, protocols, callback)
                    elif state is GroupState.AWAITING_SYNC:
                        if member.matches(protocols):
                            # the same metadata (it missed the JoinGroup answer): the current generation
                            callback(self._join_result(group, member_id))
                        else:
                            self._update_member_and_rebalance(group, member, protocols, callback)
                    else:  # Empty or Stable
                        if member_id == group.leader_id or not member.matches(protocols):
                            # new metadata, or the leader asking for a rebalance (it sees changes the
                            # metadata does not carry, such as a topic's new partitions)
                            self._update_member_and_rebalance(group, member, protocols, callback)
                        else:
                            # a follower with nothing new: the current generation, so it can SyncGroup
                            callback(self._join_result(group, member_id, with_members=False))

                if group.is_(GroupState.PREPARING_REBALANCE):
                    self.join_purgatory.check_and_complete(GroupKey(group.group_id))

    def _join_result(
        self, group: GroupMetadata, member_id: str, with_members: bool = True
    ) -> JoinGroupResult:
        """The current generation's JoinGroup answer for ``member_id``: the leader's carries the members."""
        members = group.current_member_metadata() if with_members and member_id == group.leader_id else {}
        return JoinGroupResult(
            members=members,
            member_id=member_id,
            generation_id=group.generation_id,
            sub_protocol=group.protocol,
            leader_id=group.leader_id,
            error=Errors.NONE,
        )

    def _add_member_and_rebalance(
        self,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        client_id: str,
        client_host: str,
        protocol_type: str,
        protocols: Sequence[Protocol],
        group: GroupMetadata,
        callback: JoinCallback,
    ) -> MemberMetadata:
        member_id = f"{client_id}-{group.generate_member_id_suffix()}"
        member = MemberMetadata(
            member_id,
            group.group_id,
            client_id,
            client_host,
            rebalance_timeout_ms,
            session_timeout_ms,
            protocol_type,
            list(protocols),
        )
        member.awaiting_join_callback = callback
        group.add(member)
        self._maybe_prepare_rebalance(group, f"adding new member {member_id}")
        return member

    def _update_member_and_rebalance(
        self,
        group: GroupMetadata,
        member: MemberMetadata,
        protocols: Sequence[Protocol],
        callback: JoinCallback,
    ) -> None:
        member.supported_protocols = list(protocols)
        member.awaiting_join_callback = callback
        self._maybe_prepare_rebalance(group, f"updating metadata for member {member.member_id}")

    def _maybe_prepare_rebalance(self, group: GroupMetadata, reason: str = "") -> None:
        with group.lock:
            if group.can_rebalance():
                self._prepare_rebalance(group, reason)

    # --8<-- [start:prepare_rebalance]
    def _prepare_rebalance(self, group: GroupMetadata, reason: str = "") -> None:
        # members waiting for their assignment rejoin instead
        if group.is_(GroupState.AWAITING_SYNC):
            self._reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)

        delay_ms = self.group_config.group_initial_rebalance_delay_ms
        if group.is_(GroupState.EMPTY):
            delayed_rebalance: DelayedJoin = InitialDelayedJoin(
                self,
                self.join_purgatory,
                group,
                delay_ms,
                delay_ms,
                max(group.rebalance_timeout_ms() - delay_ms, 0),
            )
        else:
            delayed_rebalance = DelayedJoin(self, group, group.rebalance_timeout_ms())

        state = group.current_state
        group.transition_to(GroupState.PREPARING_REBALANCE)
        # The reason is Kafka 2.1's, which names the state too (always PreparingRebalance, read after
        # the transition; we name the state the group left). 0.10's line says only that one began.
        log.info(
            "[GroupCoordinator %d]: Preparing to rebalance group %s in state %s with old generation %d "
            "(__consumer_offsets-%d) (reason: %s)",
            self.broker_id,
            group.group_id,
            state.name,
            group.generation_id,
            self.partition_for(group.group_id),
            reason or "not given",
        )
        self.join_purgatory.try_complete_else_watch(delayed_rebalance, [GroupKey(group.group_id)])

    # --8<-- [end:prepare_rebalance]

    def _on_member_failure(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        log.debug("Member %s in group %s has failed", member.member_id, group.group_id)
        group.remove(member.member_id)
        state = group.current_state
        if state in (GroupState.STABLE, GroupState.AWAITING_SYNC):
            self._maybe_prepare_rebalance(group, f"removing member {member.member_id} {reason}")
        elif state is GroupState.PREPARING_REBALANCE:
            self.join_purgatory.check_and_complete(GroupKey(group.group_id))

    # -- the delayed join -----------------------------------------------------------------------------------

    def try_complete_join(self, group: GroupMetadata, force_complete: Callable[[], bool]) -> bool:
        with group.lock:
            if group.has_all_members_joined():
                return force_complete()
            return False

    def on_expire_join(self) -> None:
        """The rebalance timeout passed (Kafka counts nothing here either)."""

    # --8<-- [start:on_complete_join]
    def on_complete_join(self, group: GroupMetadata) -> None:
        """Every member rejoined, or the rebalance timed out: those that did not rejoin are removed,
        the next generation begins (AwaitingSync, or Empty when no member is left, stored as such),
        and every parked JoinGroup gets its answer, the leader's with the members' metadata; each
        member's session starts again."""
        # BEGIN SOLUTION
        delayed_store = None
        with group.lock:
            # the members that did not rejoin in time are out, and so are their session expiries
            for failed_member in group.not_yet_rejoined_members():
                self._remove_heartbeat_for_leaving_member(failed_member)
                group.remove(failed_member.member_id)

            if group.not_(GroupState.DEAD):
                group.init_next_generation()
                if group.is_(GroupState.EMPTY):
                    log.info("Group %s with generation %d is now empty", group.group_id, group.generation_id)
                    delayed_store = self.group_manager.prepare_store_group(
                        group, {}, lambda error: self._on_empty_group_stored(group, error)
                    )
                else:
                    log.info("Stabilized group %s generation %d", group.group_id, group.generation_id)
                    # every member's parked JoinGroup gets its answer; the leader's carries the members
                    for member in group.all_member_metadata():
                        join_result = self._join_result(group, member.member_id)
                        member.awaiting_join_callback(join_result)
                        member.awaiting_join_callback = None
                        self._complete_and_schedule_next_heartbeat_expiration(group, member)

        # stored without the group's lock, since the store's callback may run under other locks
        if delayed_store is not None:
            self.group_manager.store(delayed_store)
        # END SOLUTION

    # --8<-- [end:on_complete_join]

    def _on_empty_group_stored(self, group: GroupMetadata, error: Errors) -> None:
        if error is not Errors.NONE:
            # no member is active in an empty generation: if the broker fails before the next
            # rebalance, the previous generation comes back from the log and times out
            log.warning("Failed to write empty metadata for group %s: %s", group.group_id, error.description)

    # -- SyncGroup ------------------------------------------------------------------------------------------

    def handle_sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_assignment: dict[str, bytes],
        callback: SyncCallback,
    ) -> None:
        if not self._is_active:
            callback(b"", Errors.COORDINATOR_NOT_AVAILABLE)
        elif not self._is_coordinator_for_group(group_id):
            callback(b"", Errors.NOT_COORDINATOR)
        else:
            group = self.group_manager.get_group(group_id)
            if group is None:
                callback(b"", Errors.UNKNOWN_MEMBER_ID)
            else:
                self._do_sync_group(group, generation_id, member_id, group_assignment, callback)

    # --8<-- [start:do_sync_group]
    def _do_sync_group(
        self,
        group: GroupMetadata,
        generation_id: int,
        member_id: str,
        group_assignment: dict[str, bytes],
        callback: SyncCallback,
    ) -> None:
        """A SyncGroup that passed the coordinator's checks, by the group's state: a follower's
        waits while the group awaits sync, the leader's assignment (an empty one for each member it
        left out) is stored, then handed to every member and the group is Stable, or on a failed
        store every waiting member gets the error and the group rebalances; a Stable group answers
        the member's current assignment."""
        # BEGIN SOLUTION
        delayed_store = None
        with group.lock:
            if not group.has(member_id):
                callback(b"", Errors.UNKNOWN_MEMBER_ID)
            elif generation_id != group.generation_id:
                callback(b"", Errors.ILLEGAL_GENERATION)
            else:
                state = group.current_state
                if state in (GroupState.EMPTY, GroupState.DEAD):
                    callback(b"", Errors.UNKNOWN_MEMBER_ID)
                elif state is GroupState.PREPARING_REBALANCE:
                    callback(b"", Errors.REBALANCE_IN_PROGRESS)
                elif state is GroupState.AWAITING_SYNC:
                    group.get(member_id).awaiting_sync_callback = callback
                    # the leader's SyncGroup brings the assignment: store it, then hand it out
                    if member_id == group.leader_id:
                        log.info(
                            "Assignment received from leader for group %s for generation %d",
                            group.group_id,
                            group.generation_id,
                        )
                        # a member the leader left out gets an empty assignment
                        assignment = dict(group_assignment)
                        for missing in group.all_members() - group_assignment.keys():
                            assignment[missing] = b""

                        def on_stored(error: Errors) -> None:
                            with group.lock:
                                # a member may have joined while the store ran: only the same
                                # generation, still awaiting its assignment, takes it
                                if (
                                    group.is_(GroupState.AWAITING_SYNC)
                                    and generation_id == group.generation_id
                                ):
                                    if error is not Errors.NONE:
                                        self._reset_and_propagate_assignment_error(group, error)
                                        self._maybe_prepare_rebalance(
                                            group, f"storing the assignment failed: {error.name}"
                                        )
                                    else:
                                        self._set_and_propagate_assignment(group, assignment)
                                        group.transition_to(GroupState.STABLE)

                        delayed_store = self.group_manager.prepare_store_group(group, assignment, on_stored)
                else:  # Stable: the current assignment
                    member = group.get(member_id)
                    callback(member.assignment, Errors.NONE)
                    self._complete_and_schedule_next_heartbeat_expiration(group, member)

        # stored without the group's lock, since the store's callback may run under other locks
        if delayed_store is not None:
            self.group_manager.store(delayed_store)
        # END SOLUTION

    # --8<-- [end:do_sync_group]

    def _set_and_propagate_assignment(self, group: GroupMetadata, assignment: dict[str, bytes]) -> None:
        for member in group.all_member_metadata():
            member.assignment = assignment[member.member_id]
        self._propagate_assignment(group, Errors.NONE)

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Errors) -> None:
        for member in group.all_member_metadata():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: Errors) -> None:
        for member in group.all_member_metadata():
            if member.awaiting_sync_callback is not None:
                member.awaiting_sync_callback(member.assignment, error)
                member.awaiting_sync_callback = None
                # a session that expired while the member waited for the leader (or the store) was
                # ignored: its next expiry starts now
                self._complete_and_schedule_next_heartbeat_expiration(group, member)

    # -- LeaveGroup -----------------------------------------------------------------------------------------

    def handle_leave_group(self, group_id: str, member_id: str, callback: ErrorCallback) -> None:
        if not self._is_active:
            callback(Errors.COORDINATOR_NOT_AVAILABLE)
        elif not self._is_coordinator_for_group(group_id):
            callback(Errors.NOT_COORDINATOR)
        elif self._is_coordinator_loading_in_progress(group_id):
            callback(Errors.COORDINATOR_LOAD_IN_PROGRESS)
        else:
            group = self.group_manager.get_group(group_id)
            if group is None:
                callback(Errors.UNKNOWN_MEMBER_ID)
                return
            with group.lock:
                if group.is_(GroupState.DEAD) or not group.has(member_id):
                    callback(Errors.UNKNOWN_MEMBER_ID)
                else:
                    member = group.get(member_id)
                    self._remove_heartbeat_for_leaving_member(member)
                    self._on_member_failure(group, member, "on LeaveGroup")
                    callback(Errors.NONE)

    def _remove_heartbeat_for_leaving_member(self, member: MemberMetadata) -> None:
        member.is_leaving = True
        self.heartbeat_purgatory.check_and_complete(MemberKey(member.group_id, member.member_id))

    # -- Heartbeat ------------------------------------------------------------------------------------------

    def handle_heartbeat(
        self, group_id: str, member_id: str, generation_id: int, callback: ErrorCallback
    ) -> None:
        if not self._is_active:
            callback(Errors.COORDINATOR_NOT_AVAILABLE)
        elif not self._is_coordinator_for_group(group_id):
            callback(Errors.NOT_COORDINATOR)
        elif self._is_coordinator_loading_in_progress(group_id):
            callback(Errors.NONE)  # the group is still loading: Kafka answers blindly
        else:
            group = self.group_manager.get_group(group_id)
            if group is None:
                callback(Errors.UNKNOWN_MEMBER_ID)
                return
            with group.lock:
                state = group.current_state
                if state in (GroupState.DEAD, GroupState.EMPTY) or not group.has(member_id):
                    callback(Errors.UNKNOWN_MEMBER_ID)
                elif state is GroupState.AWAITING_SYNC:
                    callback(Errors.REBALANCE_IN_PROGRESS)
                elif generation_id != group.generation_id:
                    callback(Errors.ILLEGAL_GENERATION)
                else:
                    self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
                    if state is GroupState.PREPARING_REBALANCE:
                        callback(Errors.REBALANCE_IN_PROGRESS)
                    else:
                        callback(Errors.NONE)

    # --8<-- [start:heartbeat_expiration]
    def _complete_and_schedule_next_heartbeat_expiration(
        self, group: GroupMetadata, member: MemberMetadata
    ) -> None:
        """The member was heard from: its pending session expiry completes, the next one is parked."""
        member.latest_heartbeat = self.time.milliseconds()
        member_key = MemberKey(member.group_id, member.member_id)
        self.heartbeat_purgatory.check_and_complete(member_key)

        new_heartbeat_deadline = member.latest_heartbeat + member.session_timeout_ms
        delayed_heartbeat = DelayedHeartbeat(
            self, group, member, new_heartbeat_deadline, member.session_timeout_ms
        )
        self.heartbeat_purgatory.try_complete_else_watch(delayed_heartbeat, [member_key])

    def try_complete_heartbeat(
        self,
        group: GroupMetadata,
        member: MemberMetadata,
        heartbeat_deadline: int,
        force_complete: Callable[[], bool],
    ) -> bool:
        with group.lock:
            if self._should_keep_member_alive(member, heartbeat_deadline) or member.is_leaving:
                return force_complete()
            return False

    def on_expire_heartbeat(
        self, group: GroupMetadata, member: MemberMetadata, heartbeat_deadline: int
    ) -> None:
        with group.lock:
            if not self._should_keep_member_alive(member, heartbeat_deadline):
                self._on_member_failure(group, member, "on heartbeat expiration")

    def on_complete_heartbeat(self) -> None:
        """A session expiry completed without expiring (Kafka counts nothing here either)."""

    @staticmethod
    def _should_keep_member_alive(member: MemberMetadata, heartbeat_deadline: int) -> bool:
        """A member with a parked JoinGroup or SyncGroup is alive; otherwise it is alive if it was
        heard from after the session this expiry was parked for began."""
        return (
            member.awaiting_join_callback is not None
            or member.awaiting_sync_callback is not None
            or member.latest_heartbeat + member.session_timeout_ms > heartbeat_deadline
        )

    # --8<-- [end:heartbeat_expiration]

    # -- ListGroups and DescribeGroups ----------------------------------------------------------------------

    def handle_list_groups(self) -> tuple[Errors, list[GroupOverview]]:
        if not self._is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE, []
        error = Errors.COORDINATOR_LOAD_IN_PROGRESS if self.group_manager.is_loading() else Errors.NONE
        return error, [group.overview() for group in self.group_manager.current_groups()]

    def handle_describe_group(self, group_id: str) -> tuple[Errors, GroupSummary]:
        if not self._is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE, EMPTY_GROUP
        if not self._is_coordinator_for_group(group_id):
            return Errors.NOT_COORDINATOR, EMPTY_GROUP
        if self._is_coordinator_loading_in_progress(group_id):
            return Errors.COORDINATOR_LOAD_IN_PROGRESS, EMPTY_GROUP
        group = self.group_manager.get_group(group_id)
        if group is None:
            return Errors.NONE, DEAD_GROUP
        with group.lock:
            return Errors.NONE, group.summary()

    # -- OffsetCommit and OffsetFetch -----------------------------------------------------------------------

    def handle_commit_offsets(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        """Commit ``offsets`` for a member of the current generation, or for a consumer that manages
        its partitions itself (generation -1) to a group without members."""
        if not self._is_active:
            callback(dict.fromkeys(offsets, Errors.COORDINATOR_NOT_AVAILABLE))
        elif not self._is_coordinator_for_group(group_id):
            callback(dict.fromkeys(offsets, Errors.NOT_COORDINATOR))
        elif self._is_coordinator_loading_in_progress(group_id):
            callback(dict.fromkeys(offsets, Errors.COORDINATOR_LOAD_IN_PROGRESS))
        else:
            group = self.group_manager.get_group(group_id)
            if group is None:
                if generation_id < 0:
                    # the group does not use Kafka for its membership: it only stores offsets here
                    group = self.group_manager.add_group(GroupMetadata(group_id))
                else:
                    # or the request comes from an older generation: either way, refused
                    callback(dict.fromkeys(offsets, Errors.ILLEGAL_GENERATION))
                    return
            self._do_commit_offsets(group, member_id, generation_id, offsets, callback)

    # --8<-- [start:do_commit_offsets]
    def _do_commit_offsets(
        self,
        group: GroupMetadata,
        member_id: str,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        manager = self.group_manager
        delayed_store = None
        with group.lock:
            if group.is_(GroupState.DEAD):
                callback(dict.fromkeys(offsets, Errors.UNKNOWN_MEMBER_ID))
            elif generation_id < 0 and group.is_(GroupState.EMPTY):
                # the group only uses Kafka to store offsets
                delayed_store = manager.prepare_store_offsets(group, offsets, callback)
            elif group.is_(GroupState.AWAITING_SYNC):
                callback(dict.fromkeys(offsets, Errors.REBALANCE_IN_PROGRESS))
            elif not group.has(member_id):
                callback(dict.fromkeys(offsets, Errors.UNKNOWN_MEMBER_ID))
            elif generation_id != group.generation_id:
                callback(dict.fromkeys(offsets, Errors.ILLEGAL_GENERATION))
            else:
                # a commit is a sign of life, as a heartbeat is
                self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
                delayed_store = manager.prepare_store_offsets(group, offsets, callback)
        # appended without the group's lock, since the append's callback may run under other locks
        if delayed_store is not None:
            manager.store_offsets(delayed_store)

    # --8<-- [end:do_commit_offsets]

    # --8<-- [start:handle_txn_commit_offsets]
    def handle_txn_commit_offsets(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        """Offsets committed inside the producer's transaction (TxnOffsetCommit, Kafka 0.11): stored
        in a transactional batch, and the group's only once the transaction commits. No member or
        generation is checked: the producer, not a consumer, commits them. A request without a
        producer id or epoch is refused and nothing is stored (Kafka 0.11 would store it as a plain
        commit); an epoch older than the producer's is refused by ``__consumer_offsets``' log
        (INVALID_PRODUCER_EPOCH)."""
        error = None
        if not _valid_group_id(group_id):
            error = Errors.INVALID_GROUP_ID
        elif not self._is_active:
            error = Errors.COORDINATOR_NOT_AVAILABLE
        elif not self._is_coordinator_for_group(group_id):
            error = Errors.NOT_COORDINATOR
        elif self._is_coordinator_loading_in_progress(group_id):
            error = Errors.COORDINATOR_LOAD_IN_PROGRESS
        elif producer_id < 0:
            error = Errors.INVALID_PRODUCER_ID_MAPPING
        elif producer_epoch < 0:
            error = Errors.INVALID_PRODUCER_EPOCH
        if error is not None:
            callback(dict.fromkeys(offsets, error))
            return
        group = self.group_manager.get_group(group_id) or self.group_manager.add_group(
            GroupMetadata(group_id)
        )
        delayed_store = None
        with group.lock:
            if group.is_(GroupState.DEAD):
                callback(dict.fromkeys(offsets, Errors.UNKNOWN_MEMBER_ID))
            else:
                delayed_store = self.group_manager.prepare_store_offsets(
                    group, offsets, callback, producer_id, producer_epoch
                )
        if delayed_store is not None:
            self.group_manager.store_offsets(delayed_store)

    # --8<-- [end:handle_txn_commit_offsets]

    def handle_txn_completion(
        self,
        producer_id: int,
        offsets_partitions: set[int],
        is_commit: bool,
        on_complete: Callable[[], None] | None = None,
    ) -> None:
        """A transaction's marker was written to these ``__consumer_offsets`` partitions (called by
        the WriteTxnMarkers handler): its offsets become the groups' on commit, go on abort; then
        ``on_complete`` is called."""
        self.group_manager.handle_txn_completion(producer_id, offsets_partitions, is_commit, on_complete)

    def handle_fetch_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition] | None, callback: FetchCallback
    ) -> None:
        """The group's committed offsets for ``partitions`` (all of them for ``None``): -1 for a
        partition without one."""

        def failed(error: Errors) -> None:
            answer = OffsetMetadataAndError(-1, error=error)
            callback(error, {tp: answer for tp in partitions or ()})

        if not self._is_active:
            failed(Errors.COORDINATOR_NOT_AVAILABLE)
        elif not self._is_coordinator_for_group(group_id):
            failed(Errors.NOT_COORDINATOR)
        elif self._is_coordinator_loading_in_progress(group_id):
            failed(Errors.COORDINATOR_LOAD_IN_PROGRESS)
        else:
            callback(Errors.NONE, self.group_manager.get_offsets(group_id, partitions))

    def handle_deleted_partitions(self, topic_partitions: Sequence[TopicPartition]) -> None:
        """The topic of ``topic_partitions`` was deleted: every group's committed offsets for them go,
        each with a tombstone in ``__consumer_offsets`` so that the next leader does not load them
        back, and an Empty group left without offsets dies (Kafka 0.11's ``handleDeletedPartitions``;
        0.10.1 has no such step: there a deleted topic's offsets stay until they expire, and a topic
        created again under the name inherits them). A ZooKeeper broker calls it from
        UpdateMetadata, a KRaft broker from its metadata publisher."""
        self.group_manager.cleanup_group_metadata(topic_partitions)

    # -- loading and unloading -----------------------------------------------------------------------------

    def _on_group_loaded(self, group: GroupMetadata) -> None:
        """A group read from the log: its members' sessions start now (Kafka's ``onGroupLoaded``)."""
        with group.lock:
            log.info("Loading group metadata for %s with generation %d", group.group_id, group.generation_id)
            if not (group.is_(GroupState.STABLE) or group.is_(GroupState.EMPTY)):
                raise IllegalStateException(
                    f"Group {group.group_id} loaded in state {group.current_state.value}: a loaded group "
                    f"is Stable or Empty"
                )
            for member in group.all_member_metadata():
                self._complete_and_schedule_next_heartbeat_expiration(group, member)

    def _on_group_unloaded(self, group: GroupMetadata) -> None:
        """The group's partition moved away: the group dies here, and its parked requests are answered
        NOT_COORDINATOR so that the members find the new coordinator."""
        with group.lock:
            log.info(
                "Unloading group metadata for %s with generation %d", group.group_id, group.generation_id
            )
            previous_state = group.current_state
            group.transition_to(GroupState.DEAD)

            if previous_state is GroupState.PREPARING_REBALANCE:
                for member in group.all_member_metadata():
                    if member.awaiting_join_callback is not None:
                        member.awaiting_join_callback(_join_error(member.member_id, Errors.NOT_COORDINATOR))
                        member.awaiting_join_callback = None
                self.join_purgatory.check_and_complete(GroupKey(group.group_id))
            elif previous_state in (GroupState.STABLE, GroupState.AWAITING_SYNC):
                for member in group.all_member_metadata():
                    if member.awaiting_sync_callback is not None:
                        member.awaiting_sync_callback(b"", Errors.NOT_COORDINATOR)
                        member.awaiting_sync_callback = None
                    self.heartbeat_purgatory.check_and_complete(MemberKey(member.group_id, member.member_id))


def _valid_group_id(group_id: str | None) -> bool:
    return isinstance(group_id, str) and group_id != ""


def _join_error(member_id: str, error: Errors) -> JoinGroupResult:
    return JoinGroupResult(
        members={},
        member_id=member_id,
        generation_id=0,
        sub_protocol=NO_PROTOCOL,
        leader_id=NO_LEADER,
        error=error,
    )
