"""GroupMetadataManager over real replica managers on a MockTime: offsets committed and fetched
through the coordinator, the records on disk in Kafka's schemas, a group and its offsets loaded
back by a new leader from the same log, expiry writing tombstones, a deleted topic's offsets
removed with tombstones (Kafka 0.11's handleDeletedPartitions), tombstones deleting on load, and the
commit's errors (after Kafka 0.10.1's GroupMetadataManagerTest and GroupCoordinatorResponseTest)."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.coordinator.group_coordinator import UNKNOWN_MEMBER_ID, GroupConfig, GroupCoordinator
from kafka_lite.coordinator.group_metadata import GroupState
from kafka_lite.coordinator.group_metadata_manager import (
    GROUP_METADATA_TOPIC_NAME,
    GroupMetadataManager,
    OffsetConfig,
    OffsetMetadataAndError,
    partition_for,
)
from kafka_lite.coordinator.offset_and_metadata import OffsetAndMetadata
from kafka_lite.coordinator.offsets_topic_records import (
    GroupMetadataKey,
    GroupTopicPartition,
    OffsetKey,
    StoredMemberMetadata,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)
from kafka_lite.testing.in_process_replicas import in_process_brokers, leader_and_isr
from kafka_lite.testing.logs import read_all
from kafka_lite.testing.mock_timer import MockTimer
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory
from kafka_lite.utils.scheduler import MockScheduler

pytestmark = pytest.mark.unit

PARTITIONS = 4
GROUP_ID = "group"
# a group on another __consumer_offsets partition
OTHER_GROUP_ID = next(
    g
    for g in (f"other-{i}" for i in range(100))
    if partition_for(g, PARTITIONS) != partition_for(GROUP_ID, PARTITIONS)
)
TP0 = ("orders", 0)
TP1 = ("orders", 1)
TP2 = ("payments", 0)
SESSION_MS = 10_000
REBALANCE_MS = 20_000
PROTOCOLS = [("range", b"range-subscription")]
CONFIG = OffsetConfig(offsets_topic_num_partitions=PARTITIONS)


class Broker:
    """Broker 0's replica manager leading every ``__consumer_offsets`` partition (ISR [0]), and a
    coordinator with a group manager over it; ``new_coordinator`` is the next leader's."""

    def __init__(self, replica_manager, time: MockTime) -> None:
        self.replica_manager = replica_manager
        self.time = time
        replica_manager.topic_config_lookup = lambda topic: (
            CONFIG.offsets_topic_configs() if topic == GROUP_METADATA_TOPIC_NAME else {}
        )
        for p in range(PARTITIONS):
            error, errors = replica_manager.become_leader_or_follower(
                leader_and_isr((GROUP_METADATA_TOPIC_NAME, p), 0, [0], [0])
            )
            assert error is Errors.NONE and set(errors.values()) == {Errors.NONE}
        self.new_coordinator()

    def new_coordinator(self, elect: range | list[int] = range(PARTITIONS), load: bool = True) -> None:
        self.scheduler = MockScheduler(self.time)
        self.scheduler.startup()
        self.manager = GroupMetadataManager(0, CONFIG, self.replica_manager, self.time, self.scheduler)
        self.heartbeat_purgatory = DelayedOperationPurgatory(
            "Heartbeat", self.time, MockTimer(self.time), reaper_enabled=False
        )
        self.coordinator = GroupCoordinator(
            0,
            GroupConfig(100, 30_000, 0),
            self.manager,
            self.heartbeat_purgatory,
            DelayedOperationPurgatory("Rebalance", self.time, MockTimer(self.time), reaper_enabled=False),
            self.time,
        )
        self.coordinator.startup()
        for p in elect:
            self.coordinator.on_elected(p)
        if load:
            self.scheduler.tick()

    def log(self, group_id: str = GROUP_ID):
        partition = self.replica_manager.get_partition(
            (GROUP_METADATA_TOPIC_NAME, partition_for(group_id, PARTITIONS))
        )
        return partition, partition.log

    def records(self, group_id: str = GROUP_ID) -> list:
        return list(read_all(self.log(group_id)[1]))

    def commit(self, offsets, member_id: str = "", generation: int = -1, group_id: str = GROUP_ID) -> dict:
        answers: list[dict] = []
        self.coordinator.handle_commit_offsets(group_id, member_id, generation, offsets, answers.append)
        assert len(answers) == 1, (
            f"a commit with acks -1 and an ISR of one is answered at once, got {answers}"
        )
        return answers[0]

    def fetch(self, partitions, group_id: str = GROUP_ID):
        answers: list = []
        self.coordinator.handle_fetch_offsets(group_id, partitions, lambda e, o: answers.append((e, o)))
        assert len(answers) == 1
        return answers[0]

    def join(self, member_id: str = UNKNOWN_MEMBER_ID, client_id: str = "client") -> list:
        answers: list = []
        self.coordinator.handle_join_group(
            GROUP_ID, member_id, client_id, "/10.0.0.1", REBALANCE_MS, SESSION_MS, "consumer", PROTOCOLS,
            answers.append,
        )  # fmt: skip
        return answers

    def sync(self, member_id: str, generation: int, assignment=None) -> list:
        answers: list = []
        self.coordinator.handle_sync_group(
            GROUP_ID, generation, member_id, assignment or {}, lambda a, e: answers.append((a, e))
        )
        return answers


@pytest.fixture
def broker(tmp_path):
    time = MockTime()
    with in_process_brokers(tmp_path, time, count=1) as (replica_manager,):
        yield Broker(replica_manager, time)


def only(answers: list):
    assert len(answers) == 1, f"expected exactly one answer, got {answers}"
    return answers[0]


def stable_group_of_two(b: Broker) -> tuple[str, str, int]:
    """Two members, generation 2, Stable with their assignments: (leader, follower, generation)."""
    (first,) = b.join(client_id="a")
    assert first.error is Errors.NONE and first.generation_id == 1
    leader = first.member_id
    assert b.sync(leader, 1, {leader: b"all"}) == [(b"all", Errors.NONE)]
    second = b.join(client_id="b")
    again = b.join(leader, client_id="a")
    (second,), (again,) = second, again
    assert second.generation_id == again.generation_id == 2 and again.leader_id == leader
    follower = second.member_id
    parked = b.sync(follower, 2)
    assert b.sync(leader, 2, {leader: b"orders-0", follower: b"orders-1"}) == [(b"orders-0", Errors.NONE)]
    assert parked == [(b"orders-1", Errors.NONE)]
    return leader, follower, 2


# -- commit and fetch ----------------------------------------------------------------------------------------


def test_the_offsets_topic_is_created_compacted(broker):
    _, log_ = broker.log()
    assert log_.config.compact and log_.config.segment_size == 100 * 1024 * 1024


def test_a_simple_consumer_commits_then_fetches(broker):
    answer = broker.commit({TP0: OffsetAndMetadata(5, "meta"), TP1: OffsetAndMetadata(7)})
    assert answer == {TP0: Errors.NONE, TP1: Errors.NONE}

    error, offsets = broker.fetch([TP0, TP1, TP2])
    assert error is Errors.NONE
    assert offsets == {
        TP0: OffsetMetadataAndError(5, "meta"),
        TP1: OffsetMetadataAndError(7, ""),
        TP2: OffsetMetadataAndError(-1, ""),
    }
    assert broker.fetch(None) == (Errors.NONE, {TP0: (5, "meta", Errors.NONE), TP1: (7, "", Errors.NONE)})
    # a later commit replaces the offset
    broker.commit({TP0: OffsetAndMetadata(9)})
    assert broker.fetch([TP0])[1][TP0].offset == 9
    # a group never seen has no offsets
    assert broker.fetch([TP0], group_id=OTHER_GROUP_ID) == (Errors.NONE, {TP0: OffsetMetadataAndError(-1)})


def test_committed_offsets_are_records_in_kafkas_schemas(broker):
    now = broker.time.milliseconds()
    broker.commit({TP0: OffsetAndMetadata(5, "meta"), TP2: OffsetAndMetadata(11, "", 999_000, 2_000_000)})
    partition, log_ = broker.log()
    records = broker.records()
    assert partition.high_watermark() == log_.log_end_offset == 2, "acks -1: committed only once in the HW"
    decoded = {read_message_key(r.key): read_offset_message_value(r.value) for r in records}
    retention = CONFIG.offsets_retention_ms
    assert decoded == {
        OffsetKey(1, GroupTopicPartition(GROUP_ID, TP0)): OffsetAndMetadata(5, "meta", now, now + retention),
        OffsetKey(1, GroupTopicPartition(GROUP_ID, TP2)): OffsetAndMetadata(11, "", 999_000, 2_000_000),
    }
    assert records[0].key == offset_commit_key(GROUP_ID, TP0)
    assert records[0].value == offset_commit_value(OffsetAndMetadata(5, "meta", now, now + retention))


# -- groups stored and loaded --------------------------------------------------------------------------------


def test_a_group_is_stored_at_sync_and_loaded_back_by_the_next_leader(broker):
    leader, follower, generation = stable_group_of_two(broker)
    assert broker.commit({TP0: OffsetAndMetadata(42, "m")}, leader, generation) == {TP0: Errors.NONE}

    # the group's last metadata record: generation 2, its protocol, leader, members and assignments
    group_records = [r for r in broker.records() if isinstance(read_message_key(r.key), GroupMetadataKey)]
    assert len(group_records) == 2, "one record per SyncGroup from the leader"
    stored = read_group_message_value(GROUP_ID, group_records[-1].value)
    assert (stored.protocol_type, stored.generation, stored.protocol, stored.leader) == (
        "consumer", 2, "range", leader,
    )  # fmt: skip
    assert stored.members == [
        StoredMemberMetadata(
            leader, "a", "/10.0.0.1", REBALANCE_MS, SESSION_MS, b"range-subscription", b"orders-0"
        ),
        StoredMemberMetadata(
            follower, "b", "/10.0.0.1", REBALANCE_MS, SESSION_MS, b"range-subscription", b"orders-1"
        ),
    ]

    p = partition_for(GROUP_ID, PARTITIONS)
    broker.coordinator.on_resigned(p)
    broker.scheduler.tick()
    assert broker.manager.get_group(GROUP_ID) is None
    assert broker.fetch([TP0])[0] is Errors.NOT_COORDINATOR

    broker.new_coordinator(load=False)
    assert broker.fetch([TP0])[0] is Errors.COORDINATOR_LOAD_IN_PROGRESS
    broker.scheduler.tick()
    group = broker.manager.get_group(GROUP_ID)
    assert group.current_state is GroupState.STABLE
    assert (group.protocol_type, group.generation_id, group.protocol, group.leader_id) == (
        "consumer", 2, "range", leader,
    )  # fmt: skip
    assert [
        (m.member_id, m.client_id, m.assignment, m.metadata("range")) for m in group.all_member_metadata()
    ] == [
        (leader, "a", b"orders-0", b"range-subscription"),
        (follower, "b", b"orders-1", b"range-subscription"),
    ]
    assert broker.fetch([TP0]) == (Errors.NONE, {TP0: OffsetMetadataAndError(42, "m")})
    # the members carry on in their generation with the new coordinator
    answers = []
    broker.coordinator.handle_heartbeat(GROUP_ID, follower, 2, answers.append)
    assert answers == [Errors.NONE]
    assert broker.sync(follower, 2) == [(b"orders-1", Errors.NONE)]
    assert broker.commit({TP1: OffsetAndMetadata(1)}, follower, 2) == {TP1: Errors.NONE}


def test_a_simple_consumers_offsets_load_back_without_group_metadata(broker):
    broker.commit({TP0: OffsetAndMetadata(3), TP1: OffsetAndMetadata(4, "x")})
    broker.commit({TP0: OffsetAndMetadata(8)})
    broker.new_coordinator()
    group = broker.manager.get_group(GROUP_ID)
    assert group.current_state is GroupState.EMPTY and group.generation_id == 0
    assert broker.fetch(None) == (Errors.NONE, {TP0: (8, "", Errors.NONE), TP1: (4, "x", Errors.NONE)})


def test_tombstones_delete_offsets_and_groups_on_load(broker):
    partition, _ = broker.log()
    now = broker.time.milliseconds()
    member = StoredMemberMetadata("m-1", "c", "/h", 1000, 1000, b"s", b"a")
    partition.append_records_to_leader(
        MemoryRecords.with_records(
            [
                (
                    now,
                    offset_commit_key(GROUP_ID, TP0),
                    offset_commit_value(OffsetAndMetadata(1, "", now, now + 10**9)),
                ),
                (
                    now,
                    offset_commit_key(GROUP_ID, TP1),
                    offset_commit_value(OffsetAndMetadata(2, "", now, now + 10**9)),
                ),
                (now, offset_commit_key(GROUP_ID, TP0), None),
                (
                    now,
                    group_metadata_key(GROUP_ID),
                    group_metadata_value("consumer", 3, "range", "m-1", [member]),
                ),
                (now, group_metadata_key(GROUP_ID), None),
            ]
        )
    )
    broker.new_coordinator()
    group = broker.manager.get_group(GROUP_ID)
    assert group.generation_id == 0 and group.is_empty(), "the group's metadata was deleted"
    assert broker.fetch(None) == (Errors.NONE, {TP1: (2, "", Errors.NONE)})


def test_a_group_record_loads_with_its_leader_and_its_members_sessions_start(broker):
    partition, _ = broker.log()
    now = broker.time.milliseconds()
    members = [
        StoredMemberMetadata("m-1", "c1", "/h1", 2000, 1000, b"s1", b"a1"),
        StoredMemberMetadata("m-2", "c2", "/h2", 2000, 1000, b"s2", b"a2"),
    ]
    value = group_metadata_value("consumer", 7, "range", "m-2", members)
    partition.append_records_to_leader(
        MemoryRecords.with_records([(now, group_metadata_key(GROUP_ID), value)])
    )
    broker.new_coordinator()
    group = broker.manager.get_group(GROUP_ID)
    assert group.current_state is GroupState.STABLE
    assert (group.generation_id, group.leader_id) == (7, "m-2"), (
        "the leader is the record's, not the first member"
    )
    assert [
        (m.member_id, m.session_timeout_ms, m.rebalance_timeout_ms) for m in group.all_member_metadata()
    ] == [
        ("m-1", 1000, 2000),
        ("m-2", 1000, 2000),
    ]
    # the loaded members' sessions run from the load: without heartbeats both expire, and the
    # rebalance that follows leaves an empty generation
    for _ in range(1001):
        broker.time.sleep(1)
        broker.heartbeat_purgatory.advance_clock(0)
    assert group.is_empty() and group.current_state is GroupState.EMPTY and group.generation_id == 8


def test_loading_reads_to_the_log_end_past_the_high_watermark(broker):
    """A new leader's HW can lag a commit the old leader acknowledged (the fetch answer that would
    have moved it never came): the load reads to the log's end, as Kafka 0.11's does, so the commit
    is found. (Kafka 0.10 stopped at the HW, and lost it.)"""
    partition, _ = broker.log()
    now = broker.time.milliseconds()
    record = (
        now,
        offset_commit_key(GROUP_ID, TP0),
        offset_commit_value(OffsetAndMetadata(1, "", now, now + 10**9)),
    )
    partition.append_records_to_leader(MemoryRecords.with_records([record]))
    replica = partition.get_replica()
    replica.high_watermark = 0  # as a follower made leader knows it: the record above its HW
    broker.new_coordinator()
    assert broker.fetch([TP0])[1][TP0].offset == 1


# -- expiry --------------------------------------------------------------------------------------------------


def test_expired_offsets_are_removed_and_tombstoned(broker):
    broker.commit({TP0: OffsetAndMetadata(5), TP1: OffsetAndMetadata(6, "", -1, 10**15)})
    before = len(broker.records())
    # the check runs every offsets.retention.check.interval.ms; at the expiry itself, it keeps the offset
    broker.scheduler.advance(CONFIG.offsets_retention_ms)
    assert broker.fetch([TP0])[1][TP0].offset == 5, "not expired before offsets.retention.minutes"

    broker.scheduler.advance(CONFIG.offsets_retention_check_interval_ms)
    assert broker.fetch([TP0, TP1])[1] == {TP0: (-1, "", Errors.NONE), TP1: (6, "", Errors.NONE)}
    tombstones = broker.records()[before:]
    assert [(read_message_key(r.key), r.value) for r in tombstones] == [
        (OffsetKey(1, GroupTopicPartition(GROUP_ID, TP0)), None)
    ]

    # the tombstone deletes the offset for the next leader too
    broker.new_coordinator()
    assert broker.fetch([TP0, TP1])[1] == {TP0: (-1, "", Errors.NONE), TP1: (6, "", Errors.NONE)}


def test_an_empty_group_whose_offsets_all_expire_dies_with_a_group_tombstone(broker):
    leader, _, generation = stable_group_of_two(broker)
    broker.commit({TP0: OffsetAndMetadata(5)}, leader, generation)
    group = broker.manager.get_group(GROUP_ID)
    for member_id in list(group.all_members()):
        answers = []
        broker.coordinator.handle_leave_group(GROUP_ID, member_id, answers.append)
    assert group.current_state is GroupState.EMPTY
    before = len(broker.records())
    broker.scheduler.advance(CONFIG.offsets_retention_ms + CONFIG.offsets_retention_check_interval_ms)
    assert group.current_state is GroupState.DEAD and broker.manager.get_group(GROUP_ID) is None
    written = [(read_message_key(r.key), r.value) for r in broker.records()[before:]]
    assert written == [
        (OffsetKey(1, GroupTopicPartition(GROUP_ID, TP0)), None),
        (GroupMetadataKey(2, GROUP_ID), None),
    ]
    broker.new_coordinator()
    assert broker.manager.get_group(GROUP_ID) is None, "the tombstones leave nothing to load"


# -- deleted topics ------------------------------------------------------------------------------------------


def test_a_deleted_topics_offsets_are_removed_and_tombstoned(broker):
    leader, _, generation = stable_group_of_two(broker)
    broker.commit(
        {TP0: OffsetAndMetadata(5), TP1: OffsetAndMetadata(6), TP2: OffsetAndMetadata(7)}, leader, generation
    )
    before = len(broker.records())

    broker.coordinator.handle_deleted_partitions([TP0, TP1])
    # Kafka answers a partition without an offset -1, no metadata, no error (OffsetFetch v1+)
    assert broker.fetch([TP0, TP1, TP2])[1] == {
        TP0: (-1, "", Errors.NONE),
        TP1: (-1, "", Errors.NONE),
        TP2: (7, "", Errors.NONE),
    }
    assert broker.fetch(None)[1] == {TP2: (7, "", Errors.NONE)}, "all the group's offsets: the deleted go"
    tombstones = [(read_message_key(r.key), r.value) for r in broker.records()[before:]]
    assert tombstones == [
        (OffsetKey(1, GroupTopicPartition(GROUP_ID, TP0)), None),
        (OffsetKey(1, GroupTopicPartition(GROUP_ID, TP1)), None),
    ]
    assert broker.manager.get_group(GROUP_ID).current_state is GroupState.STABLE, "members keep the group"

    broker.new_coordinator()
    assert broker.fetch([TP0, TP2])[1] == {TP0: (-1, "", Errors.NONE), TP2: (7, "", Errors.NONE)}, (
        "the tombstones delete the offsets for the next leader too"
    )


def test_a_simple_consumer_group_left_without_offsets_by_a_deletion_dies(broker):
    broker.commit({TP0: OffsetAndMetadata(5)})
    broker.commit({TP0: OffsetAndMetadata(3)}, group_id=OTHER_GROUP_ID)
    before = len(broker.records())

    broker.coordinator.handle_deleted_partitions([TP0])
    assert broker.manager.get_group(GROUP_ID) is None and broker.manager.get_group(OTHER_GROUP_ID) is None
    # generation 0 never wrote a group record, so only the offset's tombstone is written
    assert [(read_message_key(r.key), r.value) for r in broker.records()[before:]] == [
        (OffsetKey(1, GroupTopicPartition(GROUP_ID, TP0)), None)
    ]
    assert broker.fetch([TP0])[1] == {TP0: (-1, "", Errors.NONE)}


# -- errors --------------------------------------------------------------------------------------------------


def test_commits_from_a_stale_generation_or_an_unknown_member_are_refused(broker):
    leader, _, generation = stable_group_of_two(broker)
    assert broker.commit({TP0: OffsetAndMetadata(1)}, leader, generation - 1) == {
        TP0: Errors.ILLEGAL_GENERATION
    }
    assert broker.commit({TP0: OffsetAndMetadata(1)}, "stranger", generation) == {
        TP0: Errors.UNKNOWN_MEMBER_ID
    }
    # generation -1 is a simple consumer's: a group with members is not one
    assert broker.commit({TP0: OffsetAndMetadata(1)}, "", -1) == {TP0: Errors.UNKNOWN_MEMBER_ID}
    # a generation to a group the coordinator does not have comes from an older coordinator's group
    assert broker.commit({TP0: OffsetAndMetadata(1)}, "m", 3, group_id=OTHER_GROUP_ID) == {
        TP0: Errors.ILLEGAL_GENERATION
    }
    assert broker.fetch([TP0])[1][TP0].offset == -1, "nothing refused was committed"
    assert broker.fetch([TP0], group_id=OTHER_GROUP_ID)[1][TP0].offset == -1


def test_a_commit_during_a_rebalance_is_refused(broker):
    (first,) = broker.join(client_id="a")  # generation 1, awaiting the leader's SyncGroup
    answer = broker.commit({TP0: OffsetAndMetadata(1)}, first.member_id, first.generation_id)
    assert answer == {TP0: Errors.REBALANCE_IN_PROGRESS}


def test_a_non_coordinator_and_a_loading_coordinator_refuse(broker):
    mine = partition_for(GROUP_ID, PARTITIONS)
    broker.new_coordinator(elect=[mine], load=False)
    assert broker.commit({TP0: OffsetAndMetadata(1)}) == {TP0: Errors.COORDINATOR_LOAD_IN_PROGRESS}
    assert broker.fetch([TP0]) == (
        Errors.COORDINATOR_LOAD_IN_PROGRESS,
        {TP0: OffsetMetadataAndError(-1, "", Errors.COORDINATOR_LOAD_IN_PROGRESS)},
    )
    broker.scheduler.tick()
    assert broker.commit({TP0: OffsetAndMetadata(1)}) == {TP0: Errors.NONE}
    assert broker.commit({TP0: OffsetAndMetadata(1)}, group_id=OTHER_GROUP_ID) == {
        TP0: Errors.NOT_COORDINATOR
    }
    assert broker.fetch([TP0], group_id=OTHER_GROUP_ID)[0] is Errors.NOT_COORDINATOR


def test_metadata_over_the_limit_is_refused_and_not_written(broker):
    too_long = "x" * (CONFIG.max_metadata_size + 1)
    answer = broker.commit(
        {TP0: OffsetAndMetadata(1, too_long), TP1: OffsetAndMetadata(2, "x" * CONFIG.max_metadata_size)}
    )
    assert answer == {TP0: Errors.OFFSET_METADATA_TOO_LARGE, TP1: Errors.NONE}
    assert [read_message_key(r.key).key.topic_partition for r in broker.records()] == [TP1]
    assert broker.fetch([TP0])[1][TP0].offset == -1
    assert broker.commit({TP0: OffsetAndMetadata(1, too_long)}) == {TP0: Errors.OFFSET_METADATA_TOO_LARGE}
    assert len(broker.records()) == 1


def test_a_coordinator_is_built_with_its_group_manager():
    """As Kafka's: the groups and offsets are always the manager's, so there is no coordinator
    without one."""
    time = MockTime()
    with pytest.raises(TypeError, match="group_manager must be a GroupMetadataManager, not None"):
        GroupCoordinator(
            0,
            GroupConfig(),
            None,
            DelayedOperationPurgatory("Heartbeat", time, MockTimer(time), reaper_enabled=False),
            DelayedOperationPurgatory("Rebalance", time, MockTimer(time), reaper_enabled=False),
            time,
        )


def test_bad_offset_config_is_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match="offset_commit_required_acks must be -1 or 1, not 0"):
        OffsetConfig(offset_commit_required_acks=0)
    with pytest.raises(ValueError, match="offsets_topic_num_partitions must be at least 1"):
        OffsetConfig(offsets_topic_num_partitions=0)


def test_a_failed_append_answers_not_coordinator_and_commits_nothing(broker):
    leader, follower, generation = stable_group_of_two(broker)
    # the partition moves to broker 1 before the coordinator hears of it: the appends fail
    tp = (GROUP_METADATA_TOPIC_NAME, partition_for(GROUP_ID, PARTITIONS))
    error, errors = broker.replica_manager.become_leader_or_follower(
        leader_and_isr(tp, 1, [1], [0, 1], leader_epoch=2)
    )
    assert error is Errors.NONE and errors[tp] is Errors.NONE
    before = len(broker.records())

    assert broker.commit({TP0: OffsetAndMetadata(5)}, leader, generation) == {TP0: Errors.NOT_COORDINATOR}
    group = broker.manager.get_group(GROUP_ID)
    assert group.offset(TP0) is None and not group.has_offsets(), "the pending commit is dropped"
    assert broker.fetch([TP0])[1][TP0].offset == -1

    # the group's record fails the same way: the members are told, and the group rebalances
    second = broker.join(leader, client_id="a")
    third = broker.join(follower, client_id="b")
    assert only(second).generation_id == only(third).generation_id == 3
    parked = broker.sync(follower, 3)
    assert broker.sync(leader, 3, {leader: b"x", follower: b"y"}) == [(b"", Errors.NOT_COORDINATOR)]
    assert parked == [(b"", Errors.NOT_COORDINATOR)]
    assert group.current_state is GroupState.PREPARING_REBALANCE
    assert len(broker.records()) == before, "nothing was appended"
