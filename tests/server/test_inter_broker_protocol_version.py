"""``inter.broker.protocol.version``: Kafka 0.11's values, their order, and the leader-epoch switch."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.server.api_version import (
    KAFKA_0_10_1_IV2,
    KAFKA_0_11_0_IV1,
    KAFKA_0_11_0_IV2,
    LATEST_VERSION,
    VERSION_NAMES,
    api_version,
    uses_leader_epochs_for_truncation,
)
from kafka_lite.server.kafka_config import KafkaConfig

pytestmark = pytest.mark.unit
BASE = {"broker.id": 1, "zookeeper.connect": "127.0.0.1:2181"}


def test_the_default_is_the_latest_version_which_truncates_by_leader_epoch():
    config = KafkaConfig(BASE)
    assert config["inter.broker.protocol.version"] == "0.11.0-IV2"
    assert config.inter_broker_protocol_version is LATEST_VERSION is KAFKA_0_11_0_IV2
    assert config.uses_leader_epochs_for_truncation


@pytest.mark.parametrize(
    "value, version, epochs",
    [
        ("0.11.0-IV2", KAFKA_0_11_0_IV2, True),
        ("0.11.0", KAFKA_0_11_0_IV2, True),  # a release's short name: its last internal version
        ("0.11.0.0", KAFKA_0_11_0_IV2, True),  # only three parts count
        ("0.11.0-IV1", KAFKA_0_11_0_IV1, False),  # record batches v2, but no leader epochs yet
        ("0.10.1", KAFKA_0_10_1_IV2, False),
        ("0.10.1.1", KAFKA_0_10_1_IV2, False),
    ],
)
def test_kafkas_names_and_short_forms(value, version, epochs):
    config = KafkaConfig({**BASE, "inter.broker.protocol.version": value})
    assert config.inter_broker_protocol_version is version
    assert config.uses_leader_epochs_for_truncation is epochs


def test_versions_compare_by_their_place_not_as_strings():
    # as strings "0.9.0" > "0.10.0"; as protocol versions it is older
    assert api_version("0.9.0") < api_version("0.10.0") < api_version("0.10.2") < api_version("0.11.0")
    ordered = sorted(set(VERSION_NAMES.values()))
    assert [v.id for v in ordered] == list(range(13))
    assert [uses_leader_epochs_for_truncation(v) for v in ordered] == [False] * 12 + [True]


@pytest.mark.parametrize("value", ["1.0", "0.11.1", "0.10", "latest", ""])
def test_an_unknown_version_is_refused_naming_the_setting_and_the_accepted_values(value):
    with pytest.raises(ConfigException) as e:
        KafkaConfig({**BASE, "inter.broker.protocol.version": value})
    message = str(e.value)
    assert "inter.broker.protocol.version" in message
    assert f"Version `{value}` is not a valid version" in message
    assert "0.10.1-IV2" in message and "0.11.0-IV2" in message and "0.11.0]" in message
