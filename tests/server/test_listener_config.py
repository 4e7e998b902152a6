"""The listener settings of KafkaConfig (KIP-103, Kafka 0.10.2): ``listeners`` as named end points,
``listener.security.protocol.map``, ``advertised.listeners`` and the inter-broker listener, each
refused with a message naming the setting."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.zk.zk_utils import EndPoint

pytestmark = pytest.mark.unit

JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret";'
)
TWO = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093",
    "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
}


def broker(**props) -> KafkaConfig:
    return KafkaConfig({"broker.id": 0, "zookeeper.connect": "localhost:2181", **props})


def test_one_plaintext_listener_by_default():
    config = broker()
    assert config.listeners == [EndPoint("127.0.0.1", 9092, "PLAINTEXT", "PLAINTEXT")]
    assert config.advertised_listeners == config.listeners
    assert (config.inter_broker_listener_name, config.inter_broker_security_protocol) == (
        "PLAINTEXT",
        "PLAINTEXT",
    )
    assert (config.security_protocol, config.host, config.port) == ("PLAINTEXT", "127.0.0.1", 9092)


def test_a_sasl_listener_beside_an_internal_one():
    config = broker(**TWO)
    assert config.listeners == [
        EndPoint("127.0.0.1", 9092, "SASL_PLAINTEXT", "SASL_PLAINTEXT"),
        EndPoint("127.0.0.1", 9093, "INTERNAL", "PLAINTEXT"),
    ]
    assert (config.inter_broker_listener_name, config.inter_broker_security_protocol) == (
        "INTERNAL",
        "PLAINTEXT",
    )
    # the SASL listener reads its own JAAS line; the brokers' own connections are plain
    assert list(config.sasl_jaas_entries_by_listener) == ["SASL_PLAINTEXT"]
    assert config.inter_broker_channel_builder().__class__.__name__ == "PlaintextChannelBuilder"


def test_names_are_normalised_and_an_empty_host_binds_every_interface():
    config = broker(
        listeners="internal://:0", **{"listener.security.protocol.map": "INTERNAL:PLAINTEXT"},
        **{"inter.broker.listener.name": "internal"},
    )  # fmt: skip
    assert config.listeners == [EndPoint("0.0.0.0", 0, "INTERNAL", "PLAINTEXT")]
    assert config.inter_broker_listener_name == "INTERNAL"


def test_advertised_listeners_keep_their_names():
    config = broker(
        **TWO, **{"advertised.listeners": "SASL_PLAINTEXT://kafka.example:19092,INTERNAL://10.0.0.1:9093"}
    )
    assert [(e.listener_name, e.host, e.port) for e in config.advertised_listeners] == [
        ("SASL_PLAINTEXT", "kafka.example", 19092),
        ("INTERNAL", "10.0.0.1", 9093),
    ]


@pytest.mark.parametrize(
    ("props", "says"),
    [
        (
            {"listeners": "PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9093"},
            "Each listener must have a different name, listeners: PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9093",
        ),
        (
            {"listeners": "PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9092"},
            "Each listener must have a different port, listeners",
        ),
        (
            {"listeners": "PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093"},
            r"Error creating broker listeners from .* \(listeners\): No security protocol defined for listener INTERNAL",
        ),
        ({"listeners": "PLAINTEXT:/127.0.0.1:9092"}, r"\(listeners\): Unable to parse PLAINTEXT:/127.0.0.1:9092"),
        (
            {"listener.security.protocol.map": "INTERNAL:PLAINTEXT,INTERNAL:SASL_PLAINTEXT"},
            "listener.security.protocol.map: listener name INTERNAL appears more than once",
        ),
        (
            {"listener.security.protocol.map": "INTERNAL:TLS"},
            "Invalid security protocol `TLS` defined in listener.security.protocol.map",
        ),
        (
            {"listeners": "CLIENT://127.0.0.1:9093", "listener.security.protocol.map": "CLIENT:SSL"},
            "configuration listeners: CLIENT is SSL",
        ),
        (
            {**TWO, "inter.broker.listener.name": "REPLICATION"},
            "Listener with name REPLICATION defined in inter.broker.listener.name not found in "
            "listener.security.protocol.map",
        ),
        (
            {**TWO, "listener.security.protocol.map": TWO["listener.security.protocol.map"] + ",REPLICATION:PLAINTEXT",
             "inter.broker.listener.name": "REPLICATION"},
            "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid "
            "options based on currently configured listeners are SASL_PLAINTEXT,INTERNAL",
        ),
        (
            {**TWO, "security.inter.broker.protocol": "PLAINTEXT"},
            "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.",
        ),
        (
            {**TWO, "listener.security.protocol.map": TWO["listener.security.protocol.map"] + ",OTHER:PLAINTEXT",
             "advertised.listeners": "SASL_PLAINTEXT://h:1,INTERNAL://h:2,OTHER://h:3"},
            "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners",
        ),
        (
            {**TWO, "inter.broker.listener.name": None},
            r"security.inter.broker.protocol \(PLAINTEXT\) must be the protocol of a listener",
        ),
    ],
)  # fmt: skip
def test_bad_listener_settings_are_refused_naming_the_setting(props, says):
    with pytest.raises(ConfigException, match=says):
        broker(**props)
