"""DistributedConfig reads Kafka 0.10.1's connect-distributed.properties as it is, with Kafka's defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_lite.cli import properties_file
from kafka_lite.common.errors import ConfigException
from kafka_lite.connect.runtime.distributed.distributed_config import DistributedConfig

CONFIG_DIR = Path(__file__).resolve().parents[3] / "kafka_lite" / "connect" / "config"


def test_kafkas_quick_start_file_parses_unchanged_with_kafkas_defaults():
    config = DistributedConfig(
        properties_file(CONFIG_DIR / "connect-distributed.properties", "worker config")
    )
    assert config.get("group.id") == "connect-cluster"
    assert [config.get(f"{kind}.storage.topic") for kind in ("offset", "config", "status")] == [
        "connect-offsets", "connect-configs", "connect-status"]  # fmt: skip
    defaults = {"session.timeout.ms": 10000, "heartbeat.interval.ms": 3000, "rebalance.timeout.ms": 60000,
                "worker.sync.timeout.ms": 3000, "worker.unsync.backoff.ms": 300000, "rest.port": 8083}  # fmt: skip
    assert {name: config.get(name) for name in defaults} == defaults


def test_a_missing_internal_topic_is_named():
    props = properties_file(CONFIG_DIR / "connect-distributed.properties", "worker config")
    del props["config.storage.topic"]
    with pytest.raises(ConfigException, match=r"config\.storage\.topic"):
        DistributedConfig(props)
