"""A group coordinator in one process, on one ``MockTime``, storing its groups and offsets in memory.

No Kafka twin: Kafka's ``GroupCoordinatorResponseTest`` and ``GroupMetadataManagerTest`` build the
same thing, a real ``GroupCoordinator`` and ``GroupMetadataManager`` whose ``ReplicaManager`` is a
mock answering ``appendMessages`` as each test says. ``InMemoryReplicaManager`` is that mock: the
manager's own ``prepare_store_group``, ``prepare_store_offsets`` and ``store`` run, and the records
they append land in an in-memory log instead of ``__consumer_offsets`` on disk. Lab 7 and the
coordinator's unit tests step the coordinator with ``CoordinatorHarness``, so the two cannot drift.

An append is answered at once with NONE, or, with ``answer_appends=False``, waits until the test
calls ``Append.answer(error)``: what a slow ISR, or one that fails, looks like to the coordinator. An
append answered NONE is in its partition's log, which a new leader's load reads back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kafka_lite.common.errors import Errors, IllegalStateException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.coordinator.group_coordinator import (
    UNKNOWN_MEMBER_ID,
    GroupConfig,
    GroupCoordinator,
    JoinGroupResult,
)
from kafka_lite.coordinator.group_metadata import GroupMetadata, GroupState
from kafka_lite.coordinator.group_metadata_manager import GroupMetadataManager, OffsetConfig
from kafka_lite.coordinator.member_metadata import Protocol
from kafka_lite.coordinator.offsets_topic_records import (
    GroupMetadataKey,
    read_group_message_value,
    read_message_key,
)
from kafka_lite.log.log_segment import FetchDataInfo, LogOffsetMetadata
from kafka_lite.server.replica_manager import PartitionResponse
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory
from kafka_lite.utils.scheduler import MockScheduler

# The harness's defaults: a consumer offering two assignors, a 1 s session, a 2 s rebalance timeout.
PROTOCOLS: list[Protocol] = [("range", b"range-metadata"), ("roundrobin", b"roundrobin-metadata")]
SESSION_MS = 1000
REBALANCE_MS = 2000


class InMemoryLog:
    """A partition's records as a list, the offset of each its index: what the manager's load reads
    (``log_start_offset``, ``read``)."""

    log_start_offset = 0

    def __init__(self) -> None:
        self.records: list[tuple[int, bytes | None, bytes | None]] = []  # (timestamp, key, value)

    @property
    def log_end_offset(self) -> int:
        return len(self.records)

    def append(self, records: MemoryRecords) -> None:
        for record in records.records():
            self.records.append((record.timestamp, record.key, record.value))

    def read(
        self, start_offset: int, max_length: int, max_offset: int | None = None, min_one_message: bool = False
    ) -> FetchDataInfo:
        """The records from ``start_offset`` to ``max_offset`` as one batch (``max_length`` is not
        needed: the log is small)."""
        end = self.log_end_offset if max_offset is None else min(max_offset, self.log_end_offset)
        chosen = self.records[start_offset:end]
        records = (
            MemoryRecords.with_records(chosen, base_offset=start_offset) if chosen else MemoryRecords(b"")
        )
        return FetchDataInfo(LogOffsetMetadata(start_offset), records)


class InMemoryPartition:
    """A ``__consumer_offsets`` partition this broker leads, alone in its ISR: its high watermark is
    its log end."""

    def __init__(self) -> None:
        self.log = InMemoryLog()

    def high_watermark(self) -> int:
        return self.log.log_end_offset

    def append_records_to_leader(self, records: MemoryRecords) -> None:
        """The expiry's tombstones, appended with acks=1 as Kafka's cleanup appends them."""
        self.log.append(records)


@dataclass
class Append:
    """One ``append_records`` the manager made: its records per partition, and its answer."""

    entries: dict[TopicPartition, MemoryRecords]
    callback: Callable[[dict[TopicPartition, PartitionResponse]], None] = field(repr=False)
    replica_manager: InMemoryReplicaManager = field(repr=False)
    error: Errors | None = None  # the answer, once given

    def answer(self, error: Errors = Errors.NONE) -> None:
        """Answer the append: with NONE its records are in the log; with an error, nothing is."""
        if self.error is not None:
            raise IllegalStateException(f"this append was answered {self.error.name} already")
        self.error = error
        if error is Errors.NONE:
            for tp, records in self.entries.items():
                self.replica_manager.get_partition(tp).log.append(records)
        self.callback({tp: PartitionResponse(error) for tp in self.entries})

    def group_assignment(self) -> dict[str, bytes] | None:
        """The assignment a group metadata record of this append stores, member by member (``None``
        when it stores no group)."""
        for records in self.entries.values():
            for record in records.records():
                key = read_message_key(record.key)
                if isinstance(key, GroupMetadataKey):
                    stored = read_group_message_value(key.key, record.value)
                    return {} if stored is None else {m.member_id: m.assignment for m in stored.members}
        return None


@dataclass
class InMemoryReplicaManager:
    """What ``GroupMetadataManager`` uses of a ``ReplicaManager`` (``append_records``,
    ``get_partition``), over in-memory logs. Every append is kept in ``appends``, in order."""

    answer_appends: bool = True
    appends: list[Append] = field(default_factory=list)
    partitions: dict[TopicPartition, InMemoryPartition] = field(default_factory=dict)

    def append_records(
        self,
        timeout_ms: int,
        required_acks: int,
        internal_topics_allowed: bool,
        entries: dict[TopicPartition, MemoryRecords],
        response_callback: Callable[[dict[TopicPartition, PartitionResponse]], None],
        is_from_client: bool = True,
    ) -> None:
        append = Append(dict(entries), response_callback, self)
        self.appends.append(append)
        if self.answer_appends:
            append.answer(Errors.NONE)

    def get_partition(self, tp: TopicPartition) -> InMemoryPartition:
        """This broker leads every partition: one is made, with an empty log, when first asked for."""
        return self.partitions.setdefault(tp, InMemoryPartition())


class CoordinatorHarness:
    """A started coordinator leading ``group_id``'s ``__consumer_offsets`` partition, as the broker
    builds it (``KafkaServer._group_coordinator``) but on one ``MockTime``: its two purgatories on
    ``MockTimer``s, its group manager on a ``MockScheduler`` over ``replica_manager`` (an
    ``InMemoryReplicaManager`` unless one is given). Requests go in through the ``handle_*``
    methods, as ``KafkaApis`` sends them; ``advance`` lets time pass a millisecond at a time."""

    def __init__(
        self,
        group_config: GroupConfig,
        group_id: str,
        offsets_partitions: int = 4,
        answer_appends: bool = True,
        replica_manager: object | None = None,
        time: MockTime | None = None,
        broker_id: int = 1,
    ) -> None:
        self.time = MockTime() if time is None else time
        self.group_id = group_id
        self.replica_manager = (
            InMemoryReplicaManager(answer_appends) if replica_manager is None else replica_manager
        )
        self.scheduler = MockScheduler(self.time)
        self.scheduler.startup()
        self.group_manager = GroupMetadataManager(
            broker_id,
            OffsetConfig(offsets_topic_num_partitions=offsets_partitions),
            self.replica_manager,
            self.time,
            self.scheduler,
        )
        self.heartbeat_purgatory = DelayedOperationPurgatory(
            "Heartbeat", self.time, MockTimer(self.time), reaper_enabled=False
        )
        self.join_purgatory = DelayedOperationPurgatory(
            "Rebalance", self.time, MockTimer(self.time), reaper_enabled=False
        )
        self.coordinator = GroupCoordinator(
            broker_id,
            group_config,
            self.group_manager,
            self.heartbeat_purgatory,
            self.join_purgatory,
            self.time,
        )
        self.coordinator.startup()
        self.partition = self.coordinator.partition_for(group_id)
        self.elect(self.partition)

    def elect(self, offsets_partition: int) -> None:
        """This broker leads ``offsets_partition`` now, and has loaded its groups from the log."""
        self.coordinator.on_elected(offsets_partition)
        self.scheduler.tick()

    def resign(self, offsets_partition: int) -> None:
        """This broker no longer leads ``offsets_partition``: its groups are unloaded."""
        self.coordinator.on_resigned(offsets_partition)
        self.scheduler.tick()

    def advance(self, ms: int) -> None:
        """Let ``ms`` pass a millisecond at a time, expiring what comes due in both purgatories and
        running the manager's scheduled tasks."""
        for _ in range(ms):
            self.time.sleep(1)
            self.heartbeat_purgatory.advance_clock(0)
            self.join_purgatory.advance_clock(0)
            self.scheduler.tick()

    # -- requests ----------------------------------------------------------------------------------------

    def join(
        self,
        member_id: str = UNKNOWN_MEMBER_ID,
        client_id: str = "client",
        protocols: Sequence[Protocol] = PROTOCOLS,
        protocol_type: str = "consumer",
        session_timeout_ms: int = SESSION_MS,
        rebalance_timeout_ms: int = REBALANCE_MS,
        group_id: str | None = None,
    ) -> list[JoinGroupResult]:
        """Send a JoinGroup; the returned list gets the answer when it comes."""
        answers: list[JoinGroupResult] = []
        self.coordinator.handle_join_group(
            self.group_id if group_id is None else group_id,
            member_id,
            client_id,
            "/127.0.0.1",
            rebalance_timeout_ms,
            session_timeout_ms,
            protocol_type,
            protocols,
            answers.append,
        )
        return answers

    def sync(
        self,
        member_id: str,
        generation_id: int,
        assignment: dict[str, bytes] | None = None,
        group_id: str | None = None,
    ) -> list[tuple[bytes, Errors]]:
        """Send a SyncGroup; the returned list gets ``(assignment, error)`` when it comes."""
        answers: list[tuple[bytes, Errors]] = []
        self.coordinator.handle_sync_group(
            self.group_id if group_id is None else group_id,
            generation_id,
            member_id,
            assignment or {},
            lambda a, e: answers.append((a, e)),
        )
        return answers

    def heartbeat(self, member_id: str, generation_id: int, group_id: str | None = None) -> Errors:
        answers: list[Errors] = []
        group_id = self.group_id if group_id is None else group_id
        self.coordinator.handle_heartbeat(group_id, member_id, generation_id, answers.append)
        assert len(answers) == 1, f"a Heartbeat is answered at once, got {answers}"
        return answers[0]

    def leave(self, member_id: str, group_id: str | None = None) -> Errors:
        answers: list[Errors] = []
        self.coordinator.handle_leave_group(
            self.group_id if group_id is None else group_id, member_id, answers.append
        )
        assert len(answers) == 1, f"a LeaveGroup is answered at once, got {answers}"
        return answers[0]

    # -- what the coordinator holds and stored -----------------------------------------------------------

    def group(self) -> GroupMetadata:
        group = self.group_manager.get_group(self.group_id)
        assert group is not None, "the group is gone from the coordinator"
        return group

    def state(self) -> GroupState:
        return self.group().current_state

    @property
    def stores(self) -> list[tuple[dict[str, bytes], Callable[[Errors], None]]]:
        """Each group metadata record appended so far: the assignment it stores, and how to answer
        its append (``answer(Errors.NOT_LEADER_FOR_PARTITION)``, say, when appends wait)."""
        return [
            (assignment, append.answer)
            for append in self.replica_manager.appends
            if (assignment := append.group_assignment()) is not None
        ]

    def picture(self) -> str:
        """The group as the coordinator holds it: its state, generation, protocol and leader, and
        each member with what it waits for and its assignment."""
        group = self.group_manager.get_group(self.group_id)
        if group is None:
            return "  the coordinator holds no group"
        lines = [
            f"  the group now: {group.current_state.value}, generation {group.generation_id}, "
            f"protocol {group.protocol!r}, leader {group.leader_id!r}"
        ]
        for m in group.all_member_metadata():
            waits = [
                name
                for name, cb in (
                    ("JoinGroup", m.awaiting_join_callback),
                    ("SyncGroup", m.awaiting_sync_callback),
                )
                if cb is not None
            ]
            lines.append(
                f"    member {m.member_id}: parked {' and '.join(waits) or 'nothing'}, "
                f"assignment {m.assignment!r}"
            )
        if not group.all_member_metadata():
            lines.append("    (no members)")
        return "\n".join(lines)

    def expect_state(self, state: GroupState, why: str) -> None:
        assert self.group().current_state is state, f"{why}: expected {state.value}\n{self.picture()}"
