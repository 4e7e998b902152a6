"""Spreading tasks over a Streams application's instances: balanced, sticky, standbys apart.

Mirrors: org.apache.kafka.streams.processor.internals.assignment.TaskAssignor (Kafka 0.10.1), in
         the shape of 0.11's StickyTaskAssignor (streams/src/main/java/.../assignment/, Kafka 0.11.0)
Book:    chapter 9, 9.1.3 (threads and tasks)
Differs: 0.10.1 shuffles the tasks with a seeded ``Random`` and picks clients by summed costs
         (0.1 for a task the client ran, 0.2 for one it had as standby, 0.5 for a new one); 0.11
         keeps tasks where they were up to a per-thread quota. We follow 0.11's three passes, with
         each client's quota counted exactly (below), so the result is balanced and the same on
         every run: tasks in sorted order, ties broken by client id.

Active tasks (``assign_active``): a target per client, then three passes over the tasks in order:

1. each client gets a *target*: its share of the tasks by capacity (threads), rounded down, the
   left-over tasks going one each to the clients with the largest fractions, then to those that
   ran the most tasks before (so they lose fewest), then by client id;
2. a task goes back to the client that ran it, if that client is under its target (sticky: a
   rebalance with the same members gives each its tasks back; a member joining takes only its share
   from the others);
3. then to a client that has its state as a standby, under target (restoring is cheaper);
4. the rest go to the client furthest below its target.

Standby tasks (``num.standby.replicas``): for each task and replica, the least loaded client that
does not hold the task already, so never beside its active copy; preferring one that had it before.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping, Set

from kafka_lite.streams.errors import TaskAssignmentException
from kafka_lite.streams.processor.internals.assignment.client_state import ClientState
from kafka_lite.streams.processor.task_id import TaskId

log = logging.getLogger(__name__)


class TaskAssignor:
    """Assigns ``tasks`` over ``clients`` (client id -> ``ClientState``), changing the states."""

    def __init__(self, clients: Mapping[Hashable, ClientState], tasks: Set[TaskId]) -> None:
        # Client ids sort (process ids are UUIDs), so every order below is deterministic.
        self.clients = dict(sorted(clients.items()))
        self.tasks = sorted(tasks)

    @classmethod
    def assign(
        cls, clients: Mapping[Hashable, ClientState], tasks: Set[TaskId], num_standby_replicas: int
    ) -> Mapping[Hashable, ClientState]:
        """Kafka's static ``TaskAssignor.assign``: active tasks, then ``num_standby_replicas`` standbys."""
        if not clients:
            raise TaskAssignmentException("failed to find an assignable client")
        assignor = cls(clients, tasks)
        assignor.assign_active()
        assignor.assign_standby(num_standby_replicas)
        log.info("Assigned tasks %s to clients %s", assignor.tasks, assignor.clients)
        return assignor.clients

    def targets(self) -> dict[Hashable, int]:
        """How many active tasks each client should end with (step 1 above)."""
        total_capacity = sum(state.capacity for state in self.clients.values())
        shares = {
            cid: len(self.tasks) * state.capacity / total_capacity for cid, state in self.clients.items()
        }
        targets = {cid: int(share) for cid, share in shares.items()}
        left_over = len(self.tasks) - sum(targets.values())
        by_claim = sorted(
            self.clients,
            key=lambda cid: (-(shares[cid] - targets[cid]), -len(self.clients[cid].prev_active_tasks), cid),
        )
        for cid in by_claim[:left_over]:
            targets[cid] += 1
        return targets

    def assign_active(self) -> None:
        targets = self.targets()

        def under_target(cid: Hashable) -> bool:
            return len(self.clients[cid].active_tasks) < targets[cid]

        unassigned = list(self.tasks)
        # Steps 2 and 3: back to the client that ran the task, then to one with its state.
        for previous in ("prev_active_tasks", "prev_assigned_tasks"):
            still_unassigned = []
            for task_id in unassigned:
                owner = next(
                    (
                        cid
                        for cid, state in self.clients.items()
                        if task_id in getattr(state, previous) and under_target(cid)
                    ),
                    None,
                )
                if owner is None:
                    still_unassigned.append(task_id)
                else:
                    self.clients[owner].assign(task_id, active=True)
            unassigned = still_unassigned
        # Step 4: the client furthest below its target; among equals, the first by id.
        for task_id in unassigned:
            cid = min(self.clients, key=lambda c: (len(self.clients[c].active_tasks) - targets[c], c))
            self.clients[cid].assign(task_id, active=True)

    def assign_standby(self, num_standby_replicas: int) -> None:
        for task_id in self.tasks:
            for replica in range(num_standby_replicas):
                candidates = [
                    cid for cid, state in self.clients.items() if task_id not in state.assigned_tasks
                ]
                if not candidates:
                    log.warning(
                        "Unable to assign %d of %d standby tasks for task [%s]. There is not enough "
                        "available capacity. You should increase the number of threads and/or application "
                        "instances to maintain the requested number of standby replicas.",
                        num_standby_replicas - replica,
                        num_standby_replicas,
                        task_id,
                    )
                    break
                cid = min(
                    candidates,
                    key=lambda c: (
                        self.clients[c].load(),
                        task_id not in self.clients[c].prev_assigned_tasks,
                        c,
                    ),
                )
                self.clients[cid].assign(task_id, active=False)
