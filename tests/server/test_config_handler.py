"""``TopicConfigHandler``: a topic's whole new set of overrides over the broker's defaults, applied to
the topic's logs on this broker; a removed override falls back to the broker's setting."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.time import MockTime
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import LogManager
from kafka_lite.server.config_handler import TopicConfigHandler
from kafka_lite.utils.scheduler import MockScheduler

pytestmark = pytest.mark.unit


@pytest.fixture
def log_manager(tmp_path):
    time = MockTime()
    manager = LogManager([tmp_path], LogConfig(), MockScheduler(time), time=time)
    yield manager
    manager.shutdown()


def test_new_overrides_replace_the_old_ones_over_the_brokers_defaults(log_manager):
    broker = {"log.retention.ms": 3_600_000, "log.cleanup.policy": "delete"}
    handler = TopicConfigHandler(log_manager, broker)
    logs = [log_manager.create_log(("orders", p)) for p in range(2)]
    other = log_manager.create_log(("payments", 0))

    handler.process_config_changes("orders", {"retention.ms": "60000", "cleanup.policy": "compact"})
    assert all(log.config.retention_ms == 60000 and log.config.compact for log in logs)
    handler.process_config_changes("orders", {"cleanup.policy": "compact"})  # retention.ms removed
    assert all(log.config.retention_ms == 3_600_000 for log in logs)
    assert other.config.retention_ms == LogConfig().retention_ms


def test_overrides_that_do_not_parse_change_nothing(log_manager):
    handler = TopicConfigHandler(log_manager, {})
    log = log_manager.create_log(("orders", 0))
    before = log.config
    with pytest.raises(ConfigException, match=r"retention\.ms"):
        handler.process_config_changes("orders", {"retention.ms": "soon"})
    assert log.config is before
