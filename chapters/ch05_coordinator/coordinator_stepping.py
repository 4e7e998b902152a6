"""What the notebook ``group_coordinator.ipynb`` steps: broker 0 leading a small ``__consumer_offsets``
on disk, and one consumer group's requests to its ``GroupCoordinator`` (JoinGroup, SyncGroup,
Heartbeat), sent as the broker's request handler would send them, with a table of the group as the
coordinator holds it.

No Kafka twin: notebook tooling over ``kafka_lite.coordinator.group_coordinator`` (Kafka's
``GroupCoordinator``, whose ``handle_*`` methods ``KafkaApis`` calls; its ``GroupCoordinatorTest``
drives it the same way, with a mock timer). Book: chapter 5, 5.3-5.4 (the delayed join, the
rebalance and its requests).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kafka_lite.common.errors import Errors
from kafka_lite.common.time import MockTime
from kafka_lite.consumer.internals.consumer_protocol import (
    Subscription,
    deserialize_assignment,
    serialize_subscription,
)
from kafka_lite.coordinator.group_coordinator import UNKNOWN_MEMBER_ID, GroupCoordinator
from kafka_lite.coordinator.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, OffsetConfig
from kafka_lite.diagrams import group_state_machine
from kafka_lite.server.replica_manager import ReplicaManager
from kafka_lite.testing.in_process_replicas import in_process_brokers, leader_and_isr

console = Console(width=100, force_jupyter=False, force_terminal=True, color_system="standard")

COORDINATOR_LOGGERS = (
    "kafka_lite.coordinator.group_coordinator",
    "kafka_lite.coordinator.group_metadata_manager",
)


def show_coordinator_log() -> None:
    """Print the coordinator's log lines under the cells, as Kafka's logs them ("Preparing to
    rebalance group ...", "Stabilized group ...")."""
    for name in COORDINATOR_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO)
    logging.basicConfig(format="  log: %(message)s", level=logging.WARNING, force=True)


@contextmanager
def offsets_topic_leader(
    directory: Path, time: MockTime, offset_config: OffsetConfig
) -> Iterator[ReplicaManager]:
    """Broker 0's ``ReplicaManager`` on ``directory``, leader of every partition of
    ``__consumer_offsets`` with the ISR [0] (what the controller's LeaderAndIsr would make it), the
    topic created compacted, with the group manager's topic configs. Shut down on leaving."""
    with in_process_brokers(directory, time, count=1) as (replica_manager,):
        replica_manager.topic_config_lookup = lambda topic: (
            offset_config.offsets_topic_configs() if topic == GROUP_METADATA_TOPIC_NAME else {}
        )
        for p in range(offset_config.offsets_topic_num_partitions):
            replica_manager.become_leader_or_follower(
                leader_and_isr((GROUP_METADATA_TOPIC_NAME, p), 0, [0], [0])
            )
        yield replica_manager


class GroupSteps:
    """One group's requests to the coordinator ``current()`` returns (the notebook replaces its
    coordinator when it restarts one), from consumers subscribed to every topic of ``topics``, and
    the clock the coordinator's purgatories run on."""

    def __init__(
        self,
        current: Callable[[], GroupCoordinator],
        time: MockTime,
        group: str,
        topics: dict[str, int],
        session_ms: int,
        rebalance_ms: int,
    ) -> None:
        self.current, self.time, self.group_id, self.topics = current, time, group, topics
        self.session_ms, self.rebalance_ms = session_ms, rebalance_ms

    def advance(self, ms: int) -> None:
        """Let ``ms`` pass, a millisecond at a time, expiring what comes due in both purgatories."""
        coordinator = self.current()
        for _ in range(ms):
            self.time.sleep(1)
            coordinator.heartbeat_purgatory.advance_clock(0)
            coordinator.join_purgatory.advance_clock(0)

    def join(self, member_id: str = UNKNOWN_MEMBER_ID, client_id: str = "consumer") -> list:
        """A JoinGroup from a consumer subscribed to both topics, offering the range assignor; the
        returned list gets the answer when the coordinator sends it."""
        answers = []
        metadata = serialize_subscription(Subscription(sorted(self.topics)))
        self.current().handle_join_group(
            self.group_id, member_id, client_id, "/10.0.0.1", self.rebalance_ms, self.session_ms, "consumer",
            [("range", metadata)], answers.append,
        )  # fmt: skip
        return answers

    def sync(self, member_id: str, generation: int, assignment: dict[str, bytes] | None = None) -> list:
        """A SyncGroup (the leader's carries the assignment); the returned list gets the answer,
        (assignment, error), when the coordinator sends it."""
        answers = []
        self.current().handle_sync_group(
            self.group_id, generation, member_id, assignment or {}, lambda a, e: answers.append((a, e))
        )
        return answers

    def heartbeat(self, member_id: str, generation: int) -> Errors:
        """A Heartbeat, and the coordinator's answer (it answers at once)."""
        answers = []
        self.current().handle_heartbeat(self.group_id, member_id, generation, answers.append)
        return answers[0]

    def group(self):
        """The group's ``GroupMetadata``, as the coordinator holds it."""
        return self.current().group_manager.get_group(self.group_id)

    def show(self, title: str):
        """The group as the coordinator holds it, and its state on the state machine."""
        g = self.group()
        table = Table("member", "client", "parked", "session ends in ms", "assignment", title=title)
        for m in g.all_member_metadata():
            parked = [
                n
                for n, cb in (
                    ("JoinGroup", m.awaiting_join_callback),
                    ("SyncGroup", m.awaiting_sync_callback),
                )
                if cb
            ]
            # a member's session starts when its join completes
            started = m.latest_heartbeat > 0
            ends = m.latest_heartbeat + m.session_timeout_ms - self.time.milliseconds() if started else "-"
            parts = deserialize_assignment(m.assignment).partitions if m.assignment else []
            table.add_row(m.member_id[:14] + "...", m.client_id, ", ".join(parked) or "-", str(ends),
                          ", ".join(f"{t}-{p}" for t, p in parts) or "-")  # fmt: skip
        console.print(
            f"state [bold]{g.current_state.value}[/bold], generation {g.generation_id}, "
            f"protocol {g.protocol}, leader {(g.leader_id or '-')[:14]}"
        )
        console.print(table)
        return group_state_machine(g.current_state)
