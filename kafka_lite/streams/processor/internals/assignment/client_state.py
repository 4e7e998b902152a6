"""One Streams instance as the task assignor sees it: its capacity, what it had, what it gets.

Mirrors: org.apache.kafka.streams.processor.internals.assignment.ClientState
         (streams/src/main/java/.../processor/internals/assignment/ClientState.java, Kafka 0.10.1)
Book:    chapter 9, 9.1.3 (threads and tasks)
Differs: no ``cost`` (our task assignor balances by counted targets, not by Kafka's cost sums, see
         ``task_assignor``); capacity is an int, the instance's number of stream threads.

The "client" is an *instance* (a process id), not a consumer: its threads each join the group as a
consumer, and the leader adds one to the instance's capacity per thread. ``prev_active_tasks`` are
the tasks its threads ran before the rebalance; ``prev_assigned_tasks`` those plus the ones it has
state for (its standby tasks), the tasks it can restart cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_lite.streams.processor.task_id import TaskId


@dataclass
class ClientState:
    """Kafka's ``ClientState<TaskId>``."""

    capacity: int = 0
    active_tasks: set[TaskId] = field(default_factory=set)
    assigned_tasks: set[TaskId] = field(default_factory=set)  # active and standby
    prev_active_tasks: set[TaskId] = field(default_factory=set)
    prev_assigned_tasks: set[TaskId] = field(default_factory=set)

    def assign(self, task_id: TaskId, active: bool) -> None:
        """Give the client ``task_id``, as its active copy or as a standby."""
        if active:
            self.active_tasks.add(task_id)
        self.assigned_tasks.add(task_id)

    def standby_tasks(self) -> set[TaskId]:
        return self.assigned_tasks - self.active_tasks

    def load(self) -> float:
        """Tasks per thread, what "least loaded" compares."""
        return len(self.assigned_tasks) / self.capacity
