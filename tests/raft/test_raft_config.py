"""RaftConfig: Kafka's controller.quorum.* names and 3.3 defaults, the voters string and its errors."""

from __future__ import annotations

import pytest

from kafka_lite.common.config import AbstractConfig, ConfigDef, Type
from kafka_lite.common.errors import ConfigException
from kafka_lite.raft.raft_config import (
    CONFIG_DEF,
    UNKNOWN_ADDRESS_SPEC,
    InetAddressSpec,
    RaftConfig,
    parse_voter_connections,
    quorum_voter_strings_to_nodes,
)

pytestmark = pytest.mark.unit


def test_defaults_are_kafka_3_3s():
    config = RaftConfig.from_config({})
    assert config.election_timeout_ms() == 1000
    assert config.fetch_timeout_ms() == 2000
    assert config.election_backoff_max_ms() == 1000
    assert config.request_timeout_ms() == 2000
    assert config.retry_backoff_ms() == 20
    assert config.append_linger_ms() == 25
    assert config.quorum_voter_ids() == set()
    assert set(CONFIG_DEF.names()) == {
        "controller.quorum.voters",
        "controller.quorum.election.timeout.ms",
        "controller.quorum.fetch.timeout.ms",
        "controller.quorum.election.backoff.max.ms",
        "controller.quorum.append.linger.ms",
        "controller.quorum.request.timeout.ms",
        "controller.quorum.retry.backoff.ms",
    }


def test_voters_parse():
    config = RaftConfig.from_config(
        {
            "controller.quorum.voters": "1@localhost:9093, 2@[::1]:9094,3@0.0.0.0:0",
            "controller.quorum.fetch.timeout.ms": "50",
        }
    )
    assert config.quorum_voter_connections() == {
        1: InetAddressSpec("localhost", 9093),
        2: InetAddressSpec("::1", 9094),
        3: UNKNOWN_ADDRESS_SPEC,
    }
    assert config.quorum_voter_ids() == {1, 2, 3}
    assert config.fetch_timeout_ms() == 50
    # Only voters with a known address become bootstrap nodes.
    assert quorum_voter_strings_to_nodes(["1@a:1", "2@0.0.0.0:0"]) == [(1, "a", 1)]


@pytest.mark.parametrize(
    ("voters", "message"),
    [
        ("1localhost:9093", "Invalid configuration value for controller.quorum.voters. Each entry should be"),
        ("1@a@b:1", "Invalid configuration value for controller.quorum.voters"),
        ("x@localhost:9093", "Failed to parse voter ID as an integer from x"),
        (
            "1@localhost",
            "Failed to parse host name from entry 1@localhost for the configuration controller.quorum.voters",
        ),
    ],
)
def test_bad_voters_are_refused_with_kafkas_message(voters, message):
    with pytest.raises(ConfigException) as error:
        RaftConfig.from_config({"controller.quorum.voters": voters})
    assert message in str(error.value)
    with pytest.raises(ConfigException):
        parse_voter_connections([voters])


@pytest.mark.parametrize(
    "name",
    [
        "controller.quorum.election.timeout.ms",
        "controller.quorum.fetch.timeout.ms",
        "controller.quorum.election.backoff.max.ms",
        "controller.quorum.append.linger.ms",
        "controller.quorum.request.timeout.ms",
        "controller.quorum.retry.backoff.ms",
    ],
)
@pytest.mark.parametrize("value", [-1, "soon"])
def test_bad_timeouts_name_the_setting(name, value):
    with pytest.raises(ConfigException, match=f"Invalid value .* for configuration {name}"):
        RaftConfig.from_config({name: value})


def test_from_an_abstract_config_with_other_settings():
    # A broker's config carries many other settings; RaftConfig takes the quorum's.
    definition = ConfigDef().define("node.id", Type.INT, -1)
    broker = AbstractConfig(
        definition,
        {"node.id": 1, "controller.quorum.voters": "1@h:9093", "controller.quorum.append.linger.ms": 5},
    )
    config = RaftConfig.from_config(broker)
    assert config.quorum_voter_ids() == {1} and config.append_linger_ms() == 5


def test_python_keyword_names_work_too():
    assert RaftConfig.from_config({"controller_quorum_election_timeout_ms": 300}).election_timeout_ms() == 300
