"""``TopicConfigHandler``: a topic's whole new set of overrides over the broker's defaults, applied to
the topic's logs on this broker; a removed override falls back to the broker's setting. Its
throttled-replicas lists mark this broker's partitions in its quota managers; ``BrokerConfigHandler``
sets their rates. Malformed values are refused, as Kafka refuses them."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.quota import Quota
from kafka_lite.common.time import MockTime
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.server import quota_factory
from kafka_lite.server.config_handler import (
    BrokerConfigHandler,
    TopicConfigHandler,
    parse_throttled_partitions,
    validate_broker_config,
)
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.replication_quota_manager import ALL_REPLICAS
from kafka_lite.utils.scheduler import MockScheduler

pytestmark = pytest.mark.unit


_made: list[quota_factory.QuotaManagers] = []


def quotas() -> quota_factory.QuotaManagers:
    managers = quota_factory.instantiate(
        KafkaConfig({"zookeeper.connect": "127.0.0.1:2181", "broker.id": 1}), MockTime()
    )
    _made.append(managers)
    return managers


@pytest.fixture(autouse=True)
def _shutdown_quota_managers():
    yield
    while _made:
        _made.pop().shutdown()  # the client quota managers' reaper threads


@pytest.fixture
def log_manager(tmp_path):
    time = MockTime()
    manager = LogManager([tmp_path], LogConfig(), MockScheduler(time), time=time)
    yield manager
    manager.shutdown()


def test_new_overrides_replace_the_old_ones_over_the_brokers_defaults(log_manager):
    broker = {"log.retention.ms": 3_600_000, "log.cleanup.policy": "delete"}
    handler = TopicConfigHandler(log_manager, broker, 1, quotas())
    logs = [log_manager.create_log(("orders", p)) for p in range(2)]
    other = log_manager.create_log(("payments", 0))

    handler.process_config_changes("orders", {"retention.ms": "60000", "cleanup.policy": "compact"})
    assert all(log.config.retention_ms == 60000 and log.config.compact for log in logs)
    handler.process_config_changes("orders", {"cleanup.policy": "compact"})  # retention.ms removed
    assert all(log.config.retention_ms == 3_600_000 for log in logs)
    assert other.config.retention_ms == LogConfig().retention_ms


def test_overrides_that_do_not_parse_change_nothing(log_manager):
    handler = TopicConfigHandler(log_manager, {}, 1, quotas())
    log = log_manager.create_log(("orders", 0))
    before = log.config
    with pytest.raises(ConfigException, match=r"retention\.ms"):
        handler.process_config_changes("orders", {"retention.ms": "soon"})
    assert log.config is before


# -- the replication throttles (KIP-73) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "broker_id", "expected"),
    [
        ("0:1,1:2,2:1", 1, [0, 2]),
        (" 0:1 , 1:2 ", 2, [1]),
        ("0:1,1:2", 3, []),
        ("*", 3, ALL_REPLICAS),
    ],
)
def test_a_broker_throttles_the_partitions_its_id_is_paired_with(value, broker_id, expected):
    assert parse_throttled_partitions(value, broker_id, "leader.replication.throttled.replicas") == expected


@pytest.mark.parametrize("value", ["0-1", "0:1,x:2", "*,0:1", "0:1:2", "all"])
def test_a_malformed_throttled_replicas_list_is_refused_with_kafkas_message(value):
    with pytest.raises(ConfigException) as e:
        parse_throttled_partitions(value, 1, "follower.replication.throttled.replicas")
    assert "follower.replication.throttled.replicas must be the literal '*' or a list of replicas" in str(
        e.value
    )


def test_the_topic_lists_mark_and_unmark_this_brokers_partitions(log_manager):
    managers = quotas()
    handler = TopicConfigHandler(log_manager, {}, 1, managers)
    log_manager.create_log(("orders", 0))
    handler.process_config_changes(
        "orders",
        {
            "leader.replication.throttled.replicas": "0:1,1:2,2:1",
            "follower.replication.throttled.replicas": "1:1",
        },
    )
    assert [p for p in range(3) if managers.leader.is_throttled(("orders", p))] == [0, 2]
    assert [p for p in range(3) if managers.follower.is_throttled(("orders", p))] == [1]
    assert not managers.leader.is_throttled(("payments", 0)), "another topic is not throttled"

    handler.process_config_changes("orders", {"follower.replication.throttled.replicas": "*"})
    assert not any(managers.leader.is_throttled(("orders", p)) for p in range(3)), "the list was removed"
    assert all(managers.follower.is_throttled(("orders", p)) for p in range(3))


def test_a_bad_topic_list_changes_neither_the_logs_nor_the_throttles(log_manager):
    managers = quotas()
    handler = TopicConfigHandler(log_manager, {}, 1, managers)
    log_manager.create_log(("orders", 0))
    handler.process_config_changes("orders", {"leader.replication.throttled.replicas": "0:1"})
    with pytest.raises(ConfigException, match=r"leader\.replication\.throttled\.replicas"):
        handler.process_config_changes("orders", {"leader.replication.throttled.replicas": "0:one"})
    assert managers.leader.is_throttled(("orders", 0))


def test_the_broker_rates_become_each_sides_quota_on_that_broker_only():
    managers = quotas()
    handler = BrokerConfigHandler(1, managers)
    handler.process_config_changes(
        "1", {"leader.replication.throttled.rate": "1000", "follower.replication.throttled.rate": "2000"}
    )
    assert (managers.leader.quota, managers.follower.quota) == (
        Quota.upper_bound(1000),
        Quota.upper_bound(2000),
    )
    handler.process_config_changes("2", {"leader.replication.throttled.rate": "5"})
    assert managers.leader.upper_bound() == 1000, "another broker's rate is not this broker's"
    handler.process_config_changes("1", {"follower.replication.throttled.rate": "3000"})
    assert managers.leader.upper_bound() == 2**63 - 1, "a rate removed is unbounded again"
    assert managers.follower.upper_bound() == 3000


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"leader.replication.throttled.rate": "fast"}, "Expected value to be a 64-bit integer"),
        ({"follower.replication.throttled.rate": "-1"}, "Value must be at least 0"),
        ({"replication.throttled.rate": "10"}, "Unknown configuration 'replication.throttled.rate'"),
    ],
)
def test_bad_broker_rates_are_refused(props, message):
    with pytest.raises(ConfigException, match=message):
        validate_broker_config(props)
    if "Unknown" not in message:  # the handler ignores names it does not know, as Kafka's does
        managers = quotas()
        with pytest.raises(ConfigException):
            BrokerConfigHandler(1, managers).process_config_changes("1", props)
        assert managers.leader.quota is None and managers.follower.quota is None
