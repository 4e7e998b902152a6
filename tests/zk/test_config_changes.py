"""A topic's config change through ZooKeeper, as Kafka 0.11 writes and reads it: the overrides znode,
the ``config_change_`` notification, every broker's ``DynamicConfigManager`` handing the new set to
its handler, the purge of old notifications; and the ``AdminManager``'s checks before it writes."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.time import MockTime
from kafka_lite.server.admin_manager import (
    AdminManager,
    ConfigSource,
    NewPartitionsDetails,
    ResourceType,
    add_partitions_assignment,
)
from kafka_lite.server.dynamic_config_manager import CHANGE_EXPIRATION_MS, DynamicConfigManager
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metadata_cache import MetadataCache
from tests.support.waiting import wait_until

from .test_zk_utils import raw

pytestmark = pytest.mark.integration


class RecordingHandler:
    def __init__(self) -> None:
        self.changes: list[tuple[str, dict]] = []

    def process_config_changes(self, entity: str, configs) -> None:
        self.changes.append((entity, dict(configs)))


def test_change_topic_config_writes_kafkas_znodes(zk_utils):
    zk_utils.create_topic("orders", {0: [0]}, {"retention.ms": "1000"})
    path = zk_utils.change_topic_config("orders", {"cleanup.policy": "compact", "segment.ms": "60000"})
    assert path == "/config/changes/config_change_0000000000"
    assert raw(zk_utils, path) == b'{"version":2,"entity_path":"topics/orders"}'
    # the whole new set: retention.ms, left out, is no longer overridden
    assert raw(zk_utils, "/config/topics/orders") == (
        b'{"version":1,"config":{"cleanup.policy":"compact","segment.ms":"60000"}}'
    )
    with pytest.raises(Exception, match="does not exist"):
        zk_utils.change_topic_config("missing", {})
    assert zk_utils.get_config_change_notifications() == ["config_change_0000000000"]


def test_update_partition_assignment_rewrites_the_topic(zk_utils):
    zk_utils.create_topic("orders", {0: [1, 2]})
    zk_utils.update_partition_assignment("orders", {0: [1, 2], 1: [2, 0], 2: [0, 1]})
    assert (
        raw(zk_utils, "/brokers/topics/orders")
        == b'{"version":1,"partitions":{"1":[2,0],"2":[0,1],"0":[1,2]}}'
    )
    assert zk_utils.get_topic_config("orders") == {}


def test_the_manager_hands_each_new_notification_to_its_handler_once(zk_utils):
    zk_utils.create_topic("orders", {0: [0]})
    zk_utils.create_topic("payments", {0: [0]})
    handler = RecordingHandler()
    manager = DynamicConfigManager(zk_utils, {"topics": handler}, MockTime(start_ms=0))
    zk_utils.change_topic_config("orders", {"retention.ms": "5"})
    zk_utils.change_topic_config("payments", {"retention.ms": "6"})
    manager.process_all_notifications()
    assert handler.changes == [("orders", {"retention.ms": "5"}), ("payments", {"retention.ms": "6"})]
    manager.process_all_notifications()
    assert len(handler.changes) == 2, "a notification already processed is not processed again"
    assert manager.last_executed_change == 1

    # Kafka 0.10's version 1 notification still reads; a malformed one is skipped, not fatal
    zk_utils.client.create("/config/changes/config_change_", b"not json", sequence=True)
    zk_utils.client.create(
        "/config/changes/config_change_",
        b'{"version":1,"entity_type":"topics","entity_name":"orders"}',
        sequence=True,
    )
    manager.process_all_notifications()
    assert handler.changes[-1] == ("orders", {"retention.ms": "5"})
    assert manager.last_executed_change == 3


def test_notifications_older_than_fifteen_minutes_are_purged_once_processed(zk_utils):
    zk_utils.create_topic("orders", {0: [0]})
    zk_utils.change_topic_config("orders", {"retention.ms": "5"})
    _, ctime = zk_utils.get_config_change_notification("config_change_0000000000")
    time = MockTime(start_ms=ctime)
    manager = DynamicConfigManager(zk_utils, {"topics": RecordingHandler()}, time)
    manager.process_all_notifications()
    assert zk_utils.get_config_change_notifications() == ["config_change_0000000000"]
    time.sleep(CHANGE_EXPIRATION_MS + 1)
    manager.process_all_notifications()
    assert zk_utils.get_config_change_notifications() == []


def test_a_started_manager_follows_the_watch(zk_utils, make_zk_utils):
    zk_utils.create_topic("orders", {0: [0]})
    handler = RecordingHandler()
    manager = DynamicConfigManager(make_zk_utils(), {"topics": handler})
    manager.startup()
    try:
        assert handler.changes == [("orders", {})], "startup hands over every topic's configs as they are"
        zk_utils.change_topic_config("orders", {"cleanup.policy": "compact"})
        wait_until(
            lambda: handler.changes[1:] == [("orders", {"cleanup.policy": "compact"})], what="the change"
        )
    finally:
        manager.shutdown()


def test_change_broker_config_writes_each_brokers_znode_and_a_notification(zk_utils):
    zk_utils.change_broker_config([1, 2], {"leader.replication.throttled.rate": "1000"})
    assert (
        raw(zk_utils, "/config/brokers/1")
        == b'{"version":1,"config":{"leader.replication.throttled.rate":"1000"}}'
    )
    assert zk_utils.fetch_all_entity_configs("brokers") == {
        "1": {"leader.replication.throttled.rate": "1000"},
        "2": {"leader.replication.throttled.rate": "1000"},
    }
    [first, second] = zk_utils.get_config_change_notifications()
    assert raw(zk_utils, f"/config/changes/{first}") == b'{"version":2,"entity_path":"brokers/1"}'
    assert raw(zk_utils, f"/config/changes/{second}") == b'{"version":2,"entity_path":"brokers/2"}'
    zk_utils.change_broker_config([1], {})
    assert zk_utils.fetch_entity_config("brokers", "1") == {}


def test_a_starting_manager_applies_the_brokers_configs_then_their_changes(zk_utils, make_zk_utils):
    zk_utils.change_broker_config([1], {"follower.replication.throttled.rate": "500"})
    brokers, topics = RecordingHandler(), RecordingHandler()
    manager = DynamicConfigManager(make_zk_utils(), {"brokers": brokers, "topics": topics})
    manager.startup()
    try:
        assert brokers.changes == [("1", {"follower.replication.throttled.rate": "500"})]
        assert topics.changes == []
        zk_utils.change_broker_config([1], {})
        wait_until(lambda: brokers.changes[-1] == ("1", {}), what="the rate removed")
    finally:
        manager.shutdown()


# -- the AdminManager, on ZooKeeper and a broker's config (no broker running) ----------------------------------


@pytest.fixture
def admin_manager(zk_utils, zk_connect):
    config = KafkaConfig(
        {"broker.id": 1, "zookeeper.connect": zk_connect, "log.dirs": "/unused", "log.retention.hours": 24}
    )
    manager = AdminManager(config, MetadataCache(1), zk_utils, MockTime())
    yield manager
    manager.shutdown()


def test_alter_configs_refuses_bad_input_with_kafkas_errors_and_writes_nothing(admin_manager, zk_utils):
    zk_utils.create_topic("orders", {0: [1]}, {"retention.ms": "1000"})
    topic = (ResourceType.TOPIC, "orders")
    cases = {
        "unknown key": ({"retention.ms": "5", "retension.ms": "5"}, Errors.INVALID_CONFIG, "Unknown topic config name: retension.ms"),
        "not a number": ({"retention.ms": "soon"}, Errors.INVALID_REQUEST, "Invalid config value for resource Resource(type=TOPIC, name='orders'): Invalid value 'soon' for configuration retention.ms: Expected value to be a 64-bit integer"),
        "out of range": ({"segment.bytes": "1"}, Errors.INVALID_REQUEST, "segment.bytes"),
        "null value": ({"retention.ms": None}, Errors.INVALID_REQUEST, "Null value not supported for topic config: retention.ms"),
    }  # fmt: skip
    for what, (configs, error, message) in cases.items():
        [(got, text)] = admin_manager.alter_configs({topic: configs}, validate_only=False).values()
        assert got is error, what
        assert message in text, what
    broker = (ResourceType.BROKER, "1")
    assert admin_manager.alter_configs({broker: {"log.retention.ms": "5"}}, False)[broker] == (
        Errors.INVALID_REQUEST,
        "AlterConfigs is only supported for topics, but resource type is BROKER",
    )
    missing = (ResourceType.TOPIC, "missing")
    # Kafka 0.11's answer for a topic that does not exist (validateTopicConfig's AdminOperationException)
    assert admin_manager.alter_configs({missing: {}}, False)[missing] == (
        Errors.UNKNOWN,
        'Topic "missing" does not exist.',
    )
    assert admin_manager.alter_configs({topic: {"retention.ms": "5"}}, validate_only=True)[topic] == (
        Errors.NONE,
        None,
    )
    assert zk_utils.get_topic_config("orders") == {"retention.ms": "1000"}
    assert zk_utils.get_config_change_notifications() == []

    assert admin_manager.alter_configs({topic: {"retention.ms": "5"}}, validate_only=False)[topic] == (
        Errors.NONE,
        None,
    )
    assert zk_utils.get_topic_config("orders") == {"retention.ms": "5"}
    assert len(zk_utils.get_config_change_notifications()) == 1


def test_the_throttled_replicas_lists_are_topic_configs_checked_before_they_are_written(
    admin_manager, zk_utils
):
    zk_utils.create_topic("orders", {0: [1]})
    topic = (ResourceType.TOPIC, "orders")
    [(error, message)] = admin_manager.alter_configs(
        {topic: {"leader.replication.throttled.replicas": "0:1,1-2"}}, validate_only=False
    ).values()
    assert error is Errors.INVALID_REQUEST
    assert "leader.replication.throttled.replicas must be the literal '*' or a list of replicas" in message
    assert zk_utils.get_topic_config("orders") == {}

    throttles = {
        "leader.replication.throttled.replicas": "0:1",
        "follower.replication.throttled.replicas": "*",
    }
    assert admin_manager.alter_configs({topic: throttles}, validate_only=False)[topic] == (Errors.NONE, None)
    [result] = admin_manager.describe_configs({topic: None}, include_synonyms=True).values()
    entries = {e.name: e for e in result.entries}
    leader = entries["leader.replication.throttled.replicas"]
    assert (leader.value, leader.source) == ("0:1", ConfigSource.TOPIC_CONFIG)
    assert [(s.name, s.value, s.source) for s in leader.synonyms] == [
        ("leader.replication.throttled.replicas", "0:1", ConfigSource.TOPIC_CONFIG),
        ("leader.replication.throttled.replicas", "", ConfigSource.DEFAULT_CONFIG),
    ]
    assert entries["follower.replication.throttled.replicas"].value == "*"


def test_describe_configs_says_where_each_value_comes_from(admin_manager, zk_utils):
    zk_utils.create_topic("orders", {0: [1]}, {"cleanup.policy": "compact"})
    topic = (ResourceType.TOPIC, "orders")
    [result] = admin_manager.describe_configs({topic: None}, include_synonyms=True).values()
    entries = {e.name: e for e in result.entries}
    assert (entries["cleanup.policy"].value, entries["cleanup.policy"].source) == (
        "compact",
        ConfigSource.TOPIC_CONFIG,
    )
    # retention.ms from the broker file's log.retention.hours: its synonyms in order of precedence
    retention = entries["retention.ms"]
    assert (retention.value, retention.source, retention.is_default) == (
        "86400000",
        ConfigSource.STATIC_BROKER_CONFIG,
        False,
    )
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("log.retention.hours", "24", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.ms", "604800000", ConfigSource.DEFAULT_CONFIG),
    ]
    assert entries["segment.ms"].is_default and not entries["segment.ms"].read_only
    [only] = admin_manager.describe_configs({topic: ["segment.ms"]}).values()
    assert [e.name for e in only.entries] == ["segment.ms"] and only.entries[0].synonyms == []

    broker = (ResourceType.BROKER, "1")
    [result] = admin_manager.describe_configs({broker: ["broker.id", "num.io.threads"]}).values()
    by_name = {e.name: e for e in result.entries}
    assert (
        by_name["broker.id"].value == "1" and by_name["broker.id"].source is ConfigSource.STATIC_BROKER_CONFIG
    )
    assert by_name["num.io.threads"].is_default and by_name["num.io.threads"].read_only
    bad = (ResourceType.BROKER, "one")
    assert (
        admin_manager.describe_configs({bad: None})[bad].message
        == "Broker id must be an integer, but it is: one"
    )


def test_create_partitions_validates_before_it_writes(admin_manager, zk_utils):
    zk_utils.client.ensure_path("/brokers/ids/0")
    zk_utils.client.ensure_path("/brokers/ids/1")
    zk_utils.client.ensure_path("/brokers/ids/2")
    zk_utils.create_topic("orders", {0: [1, 2], 1: [2, 0]})
    results = {}
    admin_manager.create_partitions(
        0,
        {
            "orders": NewPartitionsDetails(4),
            "missing": NewPartitionsDetails(2),
        },
        False,
        results.update,
    )
    assert results["orders"] == (Errors.NONE, None)
    assert results["missing"][0] is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assignment = zk_utils.get_partition_assignment("orders")
    # Kafka's assignment from broker 1 (partition 0's leader) on, its start index fixing the follower shift
    assert assignment == {0: [1, 2], 1: [2, 0], 2: [0, 2], 3: [1, 2]}

    admin_manager.create_partitions(0, {"orders": NewPartitionsDetails(5, [[0, 5]])}, False, results.update)
    assert results["orders"] == (
        Errors.INVALID_REPLICA_ASSIGNMENT,
        "Unknown broker(s) in replica assignment: 5.",
    )
    admin_manager.create_partitions(0, {"orders": NewPartitionsDetails(4)}, False, results.update)
    assert results["orders"] == (Errors.INVALID_PARTITIONS, "Topic already has 4 partitions.")
    assert len(zk_utils.get_partition_assignment("orders")) == 4


def test_add_partitions_assignment_checks_the_given_replicas():
    existing = {0: [0, 1]}
    with pytest.raises(
        Exception, match=r"Increasing the number of partitions by 2 but 1 assignments provided\."
    ):
        add_partitions_assignment("t", existing, [0, 1, 2], 3, [[1, 2]])
    with pytest.raises(Exception, match="Duplicate brokers not allowed"):
        add_partitions_assignment("t", existing, [0, 1, 2], 2, [[1, 1]])
    with pytest.raises(Exception, match="partition 0 has 2 while partition 1 has replication factor 1"):
        add_partitions_assignment("t", existing, [0, 1, 2], 2, [[2]])
    assert add_partitions_assignment("t", existing, [0, 1, 2], 2, [[2, 0]]) == {1: [2, 0]}


def test_more_partitions_than_a_znode_holds_are_refused_before_any_work():
    from kafka_lite.common.errors import InvalidPartitionsException
    from kafka_lite.zk.admin_utils import MAX_PARTITIONS

    with pytest.raises(InvalidPartitionsException, match=f"at most {MAX_PARTITIONS}"):
        add_partitions_assignment("t", {0: [0]}, [0, 1], 2**31 - 1)
