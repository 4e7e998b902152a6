"""A Connect worker's side of the group protocol: its config offset in, its connectors and tasks out.

Mirrors: org.apache.kafka.connect.runtime.distributed.WorkerCoordinator, with its LeaderState
         (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/WorkerCoordinator.java,
         Kafka 0.10.1)
Book:    chapter 8, 8.3
Differs: no coordinator metrics (Kafka's assigned-connectors and assigned-tasks gauges).

The consumer's ``AbstractCoordinator`` does the protocol (find the coordinator, JoinGroup,
SyncGroup, heartbeats on their own thread); this subclass says what a Connect worker puts in it.
The protocol type is "connect", so a consumer group and a Connect cluster cannot share a group id.

* ``metadata``: the worker's REST URL and the offset it has read the config topic to.
* ``perform_assignment`` (the leader only): the assignment is made from the highest config offset
  any member has. A leader behind that offset first takes a fresh snapshot of its config store; if
  still behind, it answers every member with CONFIG_MISMATCH and no work, and all of them read the
  config topic and rejoin. Otherwise connectors and tasks are dealt round-robin over the members
  sorted by id: each connector, then each of its tasks, goes to the next member in turn
  (``perform_task_assignment``). A connector and its tasks are thereby spread too.
* ``on_join_prepare`` hands the previous assignment to the listener to stop (``on_revoked``), and
  ``on_join_complete`` the new one (``on_assigned``). Every rebalance stops and restarts all of a
  worker's work: 0.10.1 has no incremental protocol.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import cycle

from kafka_lite.common.time import Time
from kafka_lite.connect.runtime.distributed.cluster_config_state import ClusterConfigState
from kafka_lite.connect.runtime.distributed.connect_protocol import (
    Assignment,
    WorkerState,
    deserialize_assignment,
    deserialize_metadata,
    serialize_assignment,
    serialize_metadata,
)
from kafka_lite.connect.runtime.distributed.worker_rebalance_listener import WorkerRebalanceListener
from kafka_lite.connect.storage.config_backing_store import ConfigBackingStore
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId
from kafka_lite.consumer.internals.abstract_coordinator import UNKNOWN_MEMBER_ID, AbstractCoordinator
from kafka_lite.consumer.internals.consumer_network_client import ConsumerNetworkClient

log = logging.getLogger(__name__)

DEFAULT_SUBPROTOCOL = "default"  # one assignment strategy, so one sub-protocol


@dataclass
class LeaderState:
    """The leader's view of the last assignment: who runs what, to route requests to the owner."""

    all_members: dict[str, WorkerState]
    connector_owners: dict[str, str]
    task_owners: dict[ConnectorTaskId, str]

    def owner_url(self, id: str | ConnectorTaskId) -> str | None:
        owners = self.task_owners if isinstance(id, ConnectorTaskId) else self.connector_owners
        owner = owners.get(id)
        return None if owner is None else self.all_members[owner].url


class WorkerCoordinator(AbstractCoordinator):
    """The group membership a Connect worker needs: the consumer's coordinator protocol, with
    connectors and tasks where a consumer has partitions."""

    def __init__(
        self,
        client: ConsumerNetworkClient,
        group_id: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        time: Time,
        retry_backoff_ms: int,
        rest_url: str,
        config_storage: ConfigBackingStore,
        listener: WorkerRebalanceListener,
    ) -> None:
        super().__init__(client, group_id, rebalance_timeout_ms, session_timeout_ms, heartbeat_interval_ms,
                         time, retry_backoff_ms)  # fmt: skip
        self.rest_url = rest_url
        self.config_storage = config_storage
        self.listener = listener
        self.assignment_snapshot: Assignment | None = None
        # Taken in metadata(): the config offset this worker advertises is the one of the snapshot
        # it would assign from, were it chosen leader.
        self.config_snapshot: ClusterConfigState | None = None
        self.leader_state: LeaderState | None = None
        # Set by the herder when the work changed (a connector added or removed, new task configs):
        # the only way to deal work again is a rebalance of the whole group.
        self.rejoin_requested = False

    def request_rejoin(self) -> None:
        self.rejoin_requested = True

    def protocol_type(self) -> str:
        # The coordinator refuses a member whose protocol type differs from the group's, so a consumer
        # given a Connect cluster's group id by mistake fails to join instead of taking its work.
        return "connect"

    def poll(self, timeout_ms: int) -> None:
        """Do the group's work (find the coordinator, rejoin if needed) and network I/O for
        ``timeout_ms``; a rebalance runs inside, calling the listener on this thread."""
        start = now = self.time.milliseconds()
        while True:
            if self.coordinator_unknown():
                self.ensure_coordinator_ready()
                now = self.time.milliseconds()
            if self.need_rejoin():
                self.ensure_active_group()
                now = self.time.milliseconds()
            self.poll_heartbeat(now)
            remaining = timeout_ms - (now - start)
            # The network client is shared with the heartbeat thread: never block past the next heartbeat.
            self.client.poll(min(max(0, remaining), self.time_to_next_heartbeat(now)))
            now = self.time.milliseconds()
            if timeout_ms - (now - start) <= 0:
                return

    def metadata(self) -> list[tuple[str, bytes]]:
        self.config_snapshot = self.config_storage.snapshot()
        worker_state = WorkerState(self.rest_url, self.config_snapshot.offset)
        return [(DEFAULT_SUBPROTOCOL, serialize_metadata(worker_state))]

    def on_join_complete(
        self, generation: int, member_id: str, protocol: str, member_assignment: bytes
    ) -> None:
        self.assignment_snapshot = deserialize_assignment(member_assignment)
        # A member of the group now, even with an error or a config it has not read yet: the
        # herder decides what to do about those (read the config topic, rejoin).
        self.rejoin_requested = False
        self.listener.on_assigned(self.assignment_snapshot, generation)

    def perform_assignment(
        self, leader_id: str, protocol: str, all_member_metadata: dict[str, bytes]
    ) -> dict[str, bytes]:
        log.debug("Performing task assignment")
        all_configs = {
            member: deserialize_metadata(metadata) for member, metadata in all_member_metadata.items()
        }
        # The highest offset any member has read: assigning from less could leave out a connector
        # some member already knows of, which would then run nowhere until the next rebalance.
        max_offset = max(state.offset for state in all_configs.values())
        leader_offset = self._ensure_leader_config(max_offset)
        if leader_offset is None:
            return self._fill_assignments_and_serialize(all_configs, Assignment.CONFIG_MISMATCH, leader_id,
                                                        all_configs[leader_id].url, max_offset, {}, {})  # fmt: skip
        return self.perform_task_assignment(leader_id, leader_offset, all_configs)

    def _ensure_leader_config(self, max_offset: int) -> int | None:
        """The offset to assign from, or None if this leader is behind a member and cannot catch up."""
        if self.config_snapshot.offset < max_offset:
            # The store may have read further since metadata() took the snapshot.
            updated_snapshot = self.config_storage.snapshot()
            if updated_snapshot.offset < max_offset:
                log.info("Was selected to perform assignments, but do not have latest config found in sync "
                         "request. Returning an empty configuration to trigger re-sync.")  # fmt: skip
                return None
            self.config_snapshot = updated_snapshot
            return updated_snapshot.offset
        return max_offset

    # --8<-- [start:perform_task_assignment]
    def perform_task_assignment(
        self, leader_id: str, max_offset: int, all_configs: dict[str, WorkerState]
    ) -> dict[str, bytes]:
        connector_assignments: dict[str, list[str]] = {}
        task_assignments: dict[str, list[ConnectorTaskId]] = {}
        # Round robin over the members in id order: a connector, then each of its tasks, each to the next.
        # Sorted, so that the same members and configs always give the same assignment, on any leader.
        members = cycle(sorted(all_configs))
        for connector_id in sorted(self.config_snapshot.connectors()):
            connector_assigned_to = next(members)
            connector_assignments.setdefault(connector_assigned_to, []).append(connector_id)
            for task_id in self.config_snapshot.tasks(connector_id):
                task_assignments.setdefault(next(members), []).append(task_id)
        self.leader_state = LeaderState(
            all_configs,
            {c: member for member, connectors in connector_assignments.items() for c in connectors},
            {t: member for member, tasks in task_assignments.items() for t in tasks},
        )
        return self._fill_assignments_and_serialize(all_configs, Assignment.NO_ERROR, leader_id,
                                                    all_configs[leader_id].url, max_offset,
                                                    connector_assignments, task_assignments)  # fmt: skip

    # --8<-- [end:perform_task_assignment]

    @staticmethod
    def _fill_assignments_and_serialize(
        members: dict[str, WorkerState],
        error: int,
        leader_id: str,
        leader_url: str,
        max_offset: int,
        connector_assignments: dict[str, list[str]],
        task_assignments: dict[str, list[ConnectorTaskId]],
    ) -> dict[str, bytes]:
        group_assignment = {}
        for member in members:
            assignment = Assignment(error, leader_id, leader_url, max_offset,
                                    connector_assignments.get(member, []), task_assignments.get(member, []))  # fmt: skip
            log.debug("Assignment: %s -> %s", member, assignment)
            group_assignment[member] = serialize_assignment(assignment)
        return group_assignment

    def on_join_prepare(self, generation: int, member_id: str) -> None:
        # Before JoinGroup is sent: the listener stops this worker's work now, so that by the time the
        # new assignment exists, no worker still runs what it gives to another.
        self.leader_state = None
        log.debug("Revoking previous assignment %s", self.assignment_snapshot)
        # A failed assignment started nothing, so there is nothing to revoke.
        if self.assignment_snapshot is not None and not self.assignment_snapshot.failed():
            snapshot = self.assignment_snapshot
            self.listener.on_revoked(snapshot.leader, snapshot.connectors, snapshot.tasks)

    def need_rejoin(self) -> bool:
        return (
            super().need_rejoin()
            or self.assignment_snapshot is None
            or self.assignment_snapshot.failed()
            or self.rejoin_requested
        )

    def member_id(self) -> str:
        generation = self.generation()
        return generation.member_id if generation is not None else UNKNOWN_MEMBER_ID

    def is_leader(self) -> bool:
        return self.assignment_snapshot is not None and self.member_id() == self.assignment_snapshot.leader

    def owner_url(self, id: str | ConnectorTaskId) -> str | None:
        """The REST URL of the worker running a connector or task; known to the leader only."""
        if self.need_rejoin() or not self.is_leader() or self.leader_state is None:
            return None
        return self.leader_state.owner_url(id)
