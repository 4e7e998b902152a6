"""ReplicationControlManager: CreateTopics and its refusals, DeleteTopics, CreatePartitions,
AlterPartition's checks, and brokers coming and going through heartbeats (unfenced once caught up,
fenced after the session timeout with their partitions re-elected from the ISR, controlled
shutdown moving leaders first) (Kafka's ReplicationControlManagerTest). Each operation's records
are replayed by the context as the quorum controller replays them."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import (
    ConfigRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_lite.metadata.config_resource import ConfigResource, ConfigResourceType
from kafka_lite.metadata.controller.brokers_to_isrs import TopicIdPartition
from kafka_lite.metadata.leader_constants import NO_LEADER
from kafka_lite.metadata.leader_recovery_state import LeaderRecoveryState
from tests.metadata.controller.replication_control_test_context import (
    SESSION_TIMEOUT_MS,
    ReplicationControlTestContext,
    heartbeat_request,
)

pytestmark = pytest.mark.unit


@pytest.fixture
def ctx():
    c = ReplicationControlTestContext()
    c.register_brokers(0, 1, 2, 3)
    c.unfence_brokers(0, 1, 2, 3)
    return c


def topic_request(name, num_partitions=-1, replication_factor=-1, assignments=(), configs=None):
    return {
        "topic": name,
        "num_partitions": num_partitions,
        "replication_factor": replication_factor,
        "replica_assignment": [{"partition_id": p, "replicas": list(r)} for p, r in enumerate(assignments)],
        "config_entries": [{"config_name": k, "config_value": v} for k, v in (configs or {}).items()],
    }


def create(ctx, *topics, validate_only=False):
    result = ctx.replication_control.create_topics(
        {"create_topic_requests": list(topics), "timeout": 30_000, "validate_only": validate_only}
    )
    errors = {
        t["topic"]: (Errors.for_code(t["error_code"]), t["error_message"])
        for t in result.response["topic_errors"]
    }
    return result, errors


def kinds(result):
    return [type(r.message).__name__ for r in result.records]


def leader_isr(ctx, topic_id, partition_id=0):
    p = ctx.partition(topic_id, partition_id)
    return p.leader, list(p.isr)


# --- CreateTopics ---------------------------------------------------------------------------------


def test_create_topics_writes_the_topic_its_configs_and_its_partitions_atomically(ctx):
    result, errors = create(ctx, topic_request("foo", 3, 3, configs={"retention.ms": "1000"}))
    assert errors == {"foo": (Errors.NONE, None)}
    assert result.is_atomic
    assert kinds(result) == [
        "TopicRecord",
        "ConfigRecord",
        "PartitionRecord",
        "PartitionRecord",
        "PartitionRecord",
    ]
    topic_id = result.records[0].message.topic_id
    parts = [r.message for r in result.records[2:]]
    # The striped placer's lists (Kafka's MockRandom), each led by its first replica, all in sync.
    assert [p.replicas for p in parts] == [[2, 3, 0], [3, 0, 1], [0, 1, 2]]
    assert all(p.isr == p.replicas and p.leader == p.replicas[0] and p.topic_id == topic_id for p in parts)
    assert result.records[1].message == ConfigRecord(
        resource_type=2, resource_name="foo", name="retention.ms", value="1000"
    )
    ctx.replay(result.records)
    assert ctx.replication_control.get_topic_id("foo") == topic_id
    assert leader_isr(ctx, topic_id, 1) == (3, [3, 0, 1])
    assert ctx.configuration_control.config_properties(ConfigResource(ConfigResourceType.TOPIC, "foo")) == {
        "retention.ms": "1000"
    }
    assert set(ctx.replication_control.brokers_to_isrs.partitions_led_by_broker(0)) == {
        TopicIdPartition(topic_id, 2)
    }


def test_create_topics_uses_the_defaults_for_minus_one(ctx):
    result, errors = create(ctx, topic_request("foo"))
    assert errors["foo"][0] is Errors.NONE
    (part,) = [r.message for r in result.records if isinstance(r.message, PartitionRecord)]
    assert len(part.replicas) == 3  # default_replication_factor, one partition


@pytest.mark.parametrize(
    ("topic", "error", "message"),
    [
        (topic_request("bad/name", 1, 1), Errors.INVALID_TOPIC_EXCEPTION, "illegal"),
        (topic_request("foo", 1, 5), Errors.INVALID_REPLICATION_FACTOR, "only 4 broker(s) are registered"),
        (topic_request("foo", 1, 0), Errors.INVALID_REPLICATION_FACTOR, "must be larger than 0"),
        (topic_request("foo", 0, 1), Errors.INVALID_PARTITIONS, "non-positive"),
        (topic_request("foo", 1, 1, configs={"retention.ms": None}), Errors.INVALID_CONFIG, "Null value"),
        (topic_request("foo", 1, 1, configs={"retention.ms": "soon"}), Errors.INVALID_CONFIG, "retention.ms"),
        (
            topic_request("foo", 1, 1, configs={"no.such.config": "1"}),
            Errors.INVALID_CONFIG,
            "no.such.config",
        ),
        (topic_request("foo", 1, -1, assignments=[[1, 2]]), Errors.INVALID_REQUEST, "numPartitions"),
        (topic_request("foo", assignments=[[1, 9]]), Errors.INVALID_REPLICA_ASSIGNMENT, "no such broker"),
        (topic_request("foo", assignments=[[1, 1]]), Errors.INVALID_REPLICA_ASSIGNMENT, "more than once"),
        (
            topic_request("foo", assignments=[[1, 2], [3]]),
            Errors.INVALID_REPLICA_ASSIGNMENT,
            "not consistent",
        ),
        (topic_request("foo", assignments=[[]]), Errors.INVALID_REPLICA_ASSIGNMENT, "empty replica list"),
    ],
)
def test_a_bad_create_topics_is_refused_and_writes_nothing(ctx, topic, error, message):
    result, errors = create(ctx, topic)
    assert errors[topic["topic"]][0] is error
    assert message in errors[topic["topic"]][1]
    assert result.records == []


def test_an_existing_or_colliding_topic_is_refused_while_the_others_are_created(ctx):
    ctx.create_test_topic("foo.bar", [[0, 1]])
    result, errors = create(
        ctx, topic_request("foo.bar", 1, 1), topic_request("foo_bar", 1, 1), topic_request("baz", 1, 1)
    )
    assert errors["foo.bar"] == (Errors.TOPIC_ALREADY_EXISTS, "Topic 'foo.bar' already exists.")
    assert errors["foo_bar"] == (
        Errors.INVALID_TOPIC_EXCEPTION,
        "Topic 'foo_bar' collides with existing topic: foo.bar",
    )
    assert errors["baz"][0] is Errors.NONE
    assert {r.message.name for r in result.records if isinstance(r.message, TopicRecord)} == {"baz"}


def test_a_refused_topic_writes_none_of_its_configs(ctx):
    result, errors = create(
        ctx, topic_request("foo", 1, 9, configs={"retention.ms": "1000"}), topic_request("bar", 1, 1)
    )
    assert errors["foo"][0] is Errors.INVALID_REPLICATION_FACTOR
    assert not any(isinstance(r.message, ConfigRecord) for r in result.records)
    assert kinds(result) == ["TopicRecord", "PartitionRecord"]


def test_validate_only_answers_but_writes_nothing(ctx):
    result, errors = create(ctx, topic_request("foo", 2, 2), validate_only=True)
    assert errors["foo"][0] is Errors.NONE and result.records == []


def test_with_every_broker_fenced_no_topic_can_be_created(ctx):
    ctx.fence_brokers(0, 1, 2, 3)
    result, errors = create(ctx, topic_request("foo", 1, 1))
    assert errors["foo"] == (
        Errors.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 1 time(s): All brokers are currently fenced.",
    )
    assert result.records == []


def test_a_manual_assignment_leads_with_its_first_active_replica(ctx):
    ctx.fence_brokers(1)
    topic_id = ctx.create_test_topic("foo", [[1, 2, 3], [3, 1, 2]])
    assert leader_isr(ctx, topic_id, 0) == (2, [2, 3])
    assert leader_isr(ctx, topic_id, 1) == (3, [3, 2])
    assert list(ctx.partition(topic_id, 0).replicas) == [1, 2, 3]


# --- DeleteTopics and CreatePartitions -------------------------------------------------------------


def test_delete_topics_removes_the_topic_its_partitions_and_configs(ctx):
    ctx.create_topic("foo", [[0, 1], [1, 2]], configs={"retention.ms": "1000"})
    topic_id = ctx.replication_control.get_topic_id("foo")
    result = ctx.replication_control.delete_topics(["foo", "nope"])
    assert [r.message for r in result.records] == [RemoveTopicRecord(topic_id=topic_id)]
    assert result.response["nope"].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert result.response["foo"].error is Errors.NONE
    ctx.replay(result.records)
    rc = ctx.replication_control
    assert rc.get_topic_id("foo") is None and rc.get_partition(topic_id, 0) is None
    # Fencing or moving a broker must find nothing of the topic: the ISR index forgets it too.
    for broker_id in (0, 1, 2):
        assert list(rc.brokers_to_isrs.partitions_with_broker_in_isr(broker_id)) == []
    assert list(rc.brokers_to_isrs.partitions_with_broker_in_isr(1)) == []
    assert ctx.configuration_control.config_properties(ConfigResource(ConfigResourceType.TOPIC, "foo")) == {}
    # The name is free again.
    assert create(ctx, topic_request("foo", 1, 1))[1]["foo"][0] is Errors.NONE


def test_create_partitions_adds_partitions_or_says_why_not(ctx):
    topic_id = ctx.create_test_topic("foo", [[0, 1]])
    rc = ctx.replication_control
    result = rc.create_partitions(
        [
            {"topic": "foo", "new_partitions": {"count": 3, "assignment": None}},
            {"topic": "nope", "new_partitions": {"count": 3, "assignment": None}},
        ]
    )
    codes = {t["topic"]: Errors.for_code(t["error_code"]) for t in result.response}
    assert codes == {"foo": Errors.NONE, "nope": Errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert [(r.message.partition_id, len(r.message.replicas)) for r in result.records] == [(1, 2), (2, 2)]
    ctx.replay(result.records)
    assert rc.get_partition(topic_id, 2) is not None
    refused = rc.create_partitions(
        [
            {"topic": "foo", "new_partitions": {"count": 2, "assignment": None}},
            {"topic": "foo", "new_partitions": {"count": 5, "assignment": [[0, 1]]}},
            {"topic": "foo", "new_partitions": {"count": 4, "assignment": [[0, 0]]}},
        ]
    )
    assert [Errors.for_code(t["error_code"]) for t in refused.response] == [
        Errors.INVALID_PARTITIONS,
        Errors.INVALID_REPLICA_ASSIGNMENT,
        Errors.INVALID_REPLICA_ASSIGNMENT,
    ]
    assert refused.records == []
    manual = rc.create_partitions([{"topic": "foo", "new_partitions": {"count": 4, "assignment": [[3, 2]]}}])
    assert [(r.message.partition_id, r.message.replicas, r.message.leader) for r in manual.records] == [
        (3, [3, 2], 3)
    ]


# --- AlterPartition --------------------------------------------------------------------------------


def alter(
    ctx,
    broker_id,
    topic_id,
    new_isr,
    leader_epoch=0,
    partition_epoch=0,
    broker_epoch=None,
    version=2,
    partition=0,
):
    topic = (
        {"topic_id": topic_id}
        if version > 1
        else {"topic_name": ctx.replication_control.get_topic(topic_id).name}
    )
    topic["partitions"] = [
        {
            "partition_index": partition,
            "leader_epoch": leader_epoch,
            "new_isr": list(new_isr),
            "leader_recovery_state": 0,
            "partition_epoch": partition_epoch,
        }
    ]
    request = {
        "broker_id": broker_id,
        "broker_epoch": ctx.epoch(broker_id) if broker_epoch is None else broker_epoch,
        "topics": [topic],
    }
    result = ctx.replication_control.alter_partition(request, version)
    (p,) = result.response["topics"][0]["partitions"]
    return result, p


def test_alter_partition_shrinks_and_expands_the_isr(ctx):
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2]])
    result, p = alter(ctx, 0, topic_id, [0, 1])
    assert [r.message for r in result.records] == [
        PartitionChangeRecord(topic_id=topic_id, partition_id=0, isr=[0, 1], leader=0)
    ]
    # The answer is the partition as it will be: a shrink bumps the leader epoch too.
    assert (p["error_code"], p["leader_id"], p["isr"], p["leader_epoch"], p["partition_epoch"]) == (
        0,
        0,
        [0, 1],
        1,
        1,
    )
    ctx.replay(result.records)
    result, p = alter(ctx, 0, topic_id, [0, 1, 2], leader_epoch=1, partition_epoch=1)
    assert [r.message for r in result.records] == [
        PartitionChangeRecord(topic_id=topic_id, partition_id=0, isr=[0, 1, 2])
    ]
    assert (p["error_code"], p["isr"], p["leader_epoch"], p["partition_epoch"]) == (0, [0, 1, 2], 1, 2)


@pytest.mark.parametrize(
    ("sender", "new_isr", "leader_epoch", "partition_epoch", "version", "error"),
    [
        (0, [0, 1], 1, 0, 2, Errors.NOT_CONTROLLER),  # epochs newer than the controller's
        (0, [0, 1], 0, 1, 2, Errors.NOT_CONTROLLER),
        (1, [0, 1], 0, 0, 2, Errors.INVALID_REQUEST),  # not the leader
        (0, [0, 1, 3], 0, 0, 2, Errors.INVALID_REQUEST),  # 3 is not a replica
        (0, [1, 2], 0, 0, 2, Errors.INVALID_REQUEST),  # the ISR must hold its leader
        (0, [0, 0], 0, 0, 2, Errors.INVALID_REQUEST),
    ],
)
def test_alter_partition_refusals(ctx, sender, new_isr, leader_epoch, partition_epoch, version, error):
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2]])
    result, p = alter(ctx, sender, topic_id, new_isr, leader_epoch, partition_epoch, version=version)
    assert Errors.for_code(p["error_code"]) is error
    assert result.records == []


def test_alter_partition_from_a_deposed_leader_or_on_an_older_partition_epoch(ctx):
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2]])
    ctx.replay(alter(ctx, 0, topic_id, [0, 1])[0].records)  # leader epoch 1, partition epoch 1
    result, p = alter(ctx, 0, topic_id, [0, 1, 2], leader_epoch=0, partition_epoch=1)
    assert Errors.for_code(p["error_code"]) is Errors.FENCED_LEADER_EPOCH and result.records == []
    ctx.replay(
        alter(ctx, 0, topic_id, [0, 1, 2], leader_epoch=1, partition_epoch=1)[0].records
    )  # partition epoch 2
    result, p = alter(ctx, 0, topic_id, [0, 1], leader_epoch=1, partition_epoch=1)
    assert Errors.for_code(p["error_code"]) is Errors.INVALID_UPDATE_VERSION and result.records == []


def test_alter_partition_refuses_a_fenced_replica_in_the_new_isr(ctx):
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2]])
    ctx.replay(alter(ctx, 0, topic_id, [0, 1])[0].records)
    ctx.fence_brokers(2)
    result, p = alter(ctx, 0, topic_id, [0, 1, 2], leader_epoch=1, partition_epoch=1)
    assert Errors.for_code(p["error_code"]) is Errors.INELIGIBLE_REPLICA and result.records == []
    result, p = alter(ctx, 0, topic_id, [0, 1, 2], leader_epoch=1, partition_epoch=1, version=1)
    assert Errors.for_code(p["error_code"]) is Errors.OPERATION_NOT_ATTEMPTED


def test_alter_partition_for_an_unknown_topic_or_from_a_stale_broker_epoch(ctx):
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2]])
    result, p = alter(ctx, 0, uuid.UUID(int=12345), [0, 1])
    assert Errors.for_code(p["error_code"]) is Errors.UNKNOWN_TOPIC_ID and result.records == []
    result, p = alter(ctx, 0, topic_id, [0, 1], partition=7)
    assert Errors.for_code(p["error_code"]) is Errors.UNKNOWN_TOPIC_OR_PARTITION
    with pytest.raises(Errors.STALE_BROKER_EPOCH.exception_class):
        alter(ctx, 0, topic_id, [0, 1], broker_epoch=ctx.epoch(0) + 1)


# --- brokers: heartbeats, fencing, controlled shutdown ---------------------------------------------


def test_a_broker_is_unfenced_only_once_it_has_caught_up_with_its_registration():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1)
    registered_at = ctx.cluster_control.register_broker_record_offset(1)
    behind = ctx.heartbeat(1, offset=registered_at - 1)
    assert behind.records == []
    assert (behind.response.is_caught_up, behind.response.is_fenced) == (False, True)
    caught_up = ctx.heartbeat(1, offset=registered_at)
    assert [r.message for r in caught_up.records] == [UnfenceBrokerRecord(id=1, epoch=ctx.epoch(1))]
    assert (caught_up.response.is_caught_up, caught_up.response.is_fenced) == (True, False)
    assert ctx.cluster_control.unfenced(1) and not ctx.cluster_control.unfenced(0)


def test_heartbeats_from_an_unknown_or_older_registration_are_refused_and_write_nothing(ctx):
    with pytest.raises(Errors.STALE_BROKER_EPOCH.exception_class, match="before registration"):
        ctx.replication_control.process_broker_heartbeat(heartbeat_request(7, 0, 100))
    with pytest.raises(Errors.STALE_BROKER_EPOCH.exception_class, match="Expected broker epoch"):
        ctx.replication_control.process_broker_heartbeat(heartbeat_request(1, ctx.epoch(1) - 1, 100))
    # A fenced broker asking to stay fenced changes nothing.
    ctx.fence_brokers(2)
    before = len(ctx.replayed)
    result = ctx.heartbeat(2, want_fence=True)
    assert result.records == [] and result.response.is_fenced and len(ctx.replayed) == before


def test_a_silent_broker_is_fenced_after_its_session_and_its_partitions_reelected_from_the_isr(ctx):
    foo = ctx.create_test_topic("foo", [[1, 2, 3], [2, 1, 3], [0, 1, 2]])
    ctx.time.sleep(SESSION_TIMEOUT_MS // 2)
    ctx.unfence_brokers(0, 2, 3)  # everyone but broker 1 heartbeats
    ctx.time.sleep(SESSION_TIMEOUT_MS // 2)
    assert ctx.replication_control.maybe_fence_one_stale_broker().records == []  # not yet
    ctx.time.sleep(1)
    result = ctx.replication_control.maybe_fence_one_stale_broker()
    assert [r.message for r in result.records] == [
        PartitionChangeRecord(topic_id=foo, partition_id=0, isr=[2, 3], leader=2),
        PartitionChangeRecord(topic_id=foo, partition_id=1, isr=[2, 3], leader=2),
        PartitionChangeRecord(topic_id=foo, partition_id=2, isr=[0, 2], leader=0),
        FenceBrokerRecord(id=1, epoch=ctx.epoch(1)),
    ]
    ctx.replay(result.records)
    assert [leader_isr(ctx, foo, p) for p in range(3)] == [(2, [2, 3]), (2, [2, 3]), (0, [0, 2])]
    assert not ctx.cluster_control.unfenced(1)
    assert list(ctx.replication_control.brokers_to_isrs.partitions_with_broker_in_isr(1)) == []
    assert ctx.replication_control.maybe_fence_one_stale_broker().records == []


def test_the_last_isr_member_keeps_its_place_and_leads_again_when_it_returns(ctx):
    foo = ctx.create_test_topic("foo", [[1, 2]])
    ctx.fence_brokers(2)
    ctx.fence_brokers(1)
    p = ctx.partition(foo)
    assert (p.leader, p.isr) == (NO_LEADER, (1,))
    assert ctx.replication_control.brokers_to_isrs.offline_partition_count() == 1
    # Broker 2 comes back first: not in the ISR, so it cannot lead (no unclean election).
    ctx.unfence_brokers(2)
    assert leader_isr(ctx, foo) == (NO_LEADER, [1])
    ctx.unfence_brokers(1)
    assert leader_isr(ctx, foo) == (1, [1])
    assert ctx.replication_control.brokers_to_isrs.offline_partition_count() == 0


def test_a_topic_that_allows_unclean_election_elects_outside_the_isr(ctx):
    ctx.create_topic("foo", [[1, 2]], configs={"unclean.leader.election.enable": "true"})
    foo = ctx.replication_control.get_topic_id("foo")
    ctx.fence_brokers(2)
    ctx.fence_brokers(1)
    ctx.unfence_brokers(2)
    p = ctx.partition(foo)
    assert (p.leader, p.isr, p.leader_recovery_state) == (2, (2,), LeaderRecoveryState.RECOVERING)


def test_controlled_shutdown_moves_the_leaders_away_before_shutdown_now(ctx):
    foo = ctx.create_test_topic("foo", [[1, 2, 3], [2, 1, 3], [1, 3, 0]])
    first = ctx.heartbeat(1, want_shut_down=True)
    assert first.response.in_controlled_shutdown and not first.response.should_shut_down
    assert not first.response.is_fenced
    assert [r.message for r in first.records] == [
        PartitionChangeRecord(topic_id=foo, partition_id=0, isr=[2, 3], leader=2),
        PartitionChangeRecord(topic_id=foo, partition_id=1, isr=[2, 3], leader=2),
        PartitionChangeRecord(topic_id=foo, partition_id=2, isr=[3, 0], leader=3),
    ]
    assert not ctx.replication_control.brokers_to_isrs.has_leaderships(1)
    # It may not join an ISR or lead while shutting down.
    assert not ctx.cluster_control.active(1)
    # It leads nothing now, but the other brokers have not yet seen that: it waits.
    waiting = ctx.heartbeat(1, want_shut_down=True)
    assert waiting.records == [] and waiting.response.in_controlled_shutdown
    for broker in (0, 2, 3):
        ctx.heartbeat(broker)
    done = ctx.heartbeat(1, want_shut_down=True)
    assert done.response.should_shut_down and done.response.is_fenced
    assert [r.message for r in done.records] == [FenceBrokerRecord(id=1, epoch=ctx.epoch(1))]


def test_a_broker_that_leads_nothing_shuts_down_at_once(ctx):
    ctx.create_test_topic("foo", [[2, 1]])
    result = ctx.heartbeat(1, want_shut_down=True)
    assert result.response.should_shut_down and not result.response.in_controlled_shutdown
    assert [type(r.message).__name__ for r in result.records] == [
        "PartitionChangeRecord",
        "FenceBrokerRecord",
    ]


def test_unregister_broker_takes_it_out_of_every_isr(ctx):
    foo = ctx.create_test_topic("foo", [[1, 2]])
    result = ctx.replication_control.unregister_broker(1)
    assert [r.message for r in result.records] == [
        PartitionChangeRecord(topic_id=foo, partition_id=0, isr=[2], leader=2),
        UnregisterBrokerRecord(broker_id=1, broker_epoch=ctx.epoch(1)),
    ]
    ctx.replay(result.records)
    assert ctx.cluster_control.registration(1) is None
    with pytest.raises(Errors.BROKER_ID_NOT_REGISTERED.exception_class):
        ctx.replication_control.unregister_broker(1)


def test_a_reverted_snapshot_undoes_a_topic_and_a_leader_change(ctx):
    foo = ctx.create_test_topic("foo", [[1, 2]])
    ctx.registry.get_or_create_snapshot(ctx.next_offset - 1)
    ctx.fence_brokers(1)
    ctx.create_test_topic("bar", [[2]])
    assert leader_isr(ctx, foo) == (2, [2])
    ctx.registry.revert_to_snapshot(ctx.registry.latest_epoch())
    assert leader_isr(ctx, foo) == (1, [1, 2])
    assert ctx.replication_control.get_topic_id("bar") is None
    assert set(ctx.replication_control.brokers_to_isrs.partitions_led_by_broker(1)) == {
        TopicIdPartition(foo, 0)
    }


def test_reads_see_the_state_as_of_a_committed_offset(ctx):
    committed = ctx.next_offset - 1
    ctx.registry.get_or_create_snapshot(committed)
    foo = ctx.create_test_topic("foo", [[0, 1]])
    rc = ctx.replication_control
    assert rc.find_topic_ids(committed, ["foo"])["foo"].error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert rc.find_topic_names(committed, [foo])[foo].error is Errors.UNKNOWN_TOPIC_ID
    now = ctx.next_offset - 1
    ctx.registry.get_or_create_snapshot(now)
    assert rc.find_topic_ids(now, ["foo"]) == {"foo": foo}
    assert rc.find_topic_names(now, [foo]) == {foo: "foo"}
    assert rc.find_all_topic_ids(now) == {"foo": foo}
