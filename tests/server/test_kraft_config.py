"""KafkaConfig's KRaft settings (Kafka 3.3.0, chapter 12): ``process.roles``, ``node.id``,
``controller.listener.names``, ``controller.quorum.*`` and the broker's lease, with one test per rule
of Kafka 3.3's ``validateValues``, each refused with a message naming the setting; and ZooKeeper mode,
the default, as it was."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.raft import raft_config
from kafka_lite.raft.raft_config import RaftConfig
from kafka_lite.server.kafka_config import CONFIG_DEF, KafkaConfig
from kafka_lite.zk.zk_utils import EndPoint

pytestmark = pytest.mark.unit

VOTERS = "1@localhost:9093,2@localhost:9094,3@localhost:9095"
# One node of each kind, as Kafka 3.3's config/kraft/*.properties have them.
COMBINED = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": VOTERS,
    "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
    "controller.listener.names": "CONTROLLER",
}
CONTROLLER = {**COMBINED, "process.roles": "controller", "listeners": "CONTROLLER://127.0.0.1:9093"}
BROKER = {**COMBINED, "process.roles": "broker", "node.id": "4", "listeners": "PLAINTEXT://127.0.0.1:9092"}
ZOOKEEPER = {"broker.id": "0", "zookeeper.connect": "127.0.0.1:2181"}


def refused(props: dict, match: str) -> str:
    with pytest.raises(ConfigException, match=match) as caught:
        KafkaConfig(props)
    return str(caught.value)


# -- the settings, with Kafka 3.3's names and defaults ---------------------------------------------------------


def test_the_kraft_settings_have_kafka_3_3s_defaults():
    values = CONFIG_DEF.parse(ZOOKEEPER)
    assert values["process.roles"] == []
    assert values["node.id"] == -1
    assert values["controller.listener.names"] is None
    assert values["broker.heartbeat.interval.ms"] == 2000
    assert values["broker.session.timeout.ms"] == 9000
    assert values["initial.broker.registration.timeout.ms"] == 60000
    assert values["metadata.log.dir"] is None
    assert values["metadata.log.max.record.bytes.between.snapshots"] == 20 * 1024 * 1024
    assert values["metadata.max.idle.interval.ms"] == 500


def test_the_quorum_settings_are_raft_configs_own_definitions():
    for name, key in raft_config.CONFIG_DEF.keys.items():
        assert CONFIG_DEF.keys[name] == key, name
    config = KafkaConfig({**COMBINED, "controller.quorum.election.timeout.ms": "1500"})
    assert config.quorum_voters == VOTERS.split(",")
    assert RaftConfig.from_config(config.originals).election_timeout_ms() == 1500


def test_a_combined_node_has_both_roles_and_advertises_only_its_broker_listener():
    config = KafkaConfig(COMBINED)
    assert config.process_roles == {"broker", "controller"}
    assert config.uses_self_managed_quorum and not config.requires_zookeeper
    assert config.is_kraft_co_resident_mode
    assert (config.node_id, config.broker_id, config.zk_connect) == (1, 1, None)
    assert config.controller_listeners == [EndPoint("127.0.0.1", 9093, "CONTROLLER", "PLAINTEXT")]
    assert config.advertised_listeners == [EndPoint("127.0.0.1", 9092, "PLAINTEXT", "PLAINTEXT")]


def test_the_broker_lease_and_snapshot_settings_are_read():
    config = KafkaConfig(
        {
            **BROKER,
            "broker.heartbeat.interval.ms": "500",
            "broker.session.timeout.ms": "3000",
            "initial.broker.registration.timeout.ms": "10000",
            "metadata.log.max.record.bytes.between.snapshots": "4096",
            "metadata.max.idle.interval.ms": "0",
        }
    )
    assert (config.broker_heartbeat_interval_ms, config.broker_session_timeout_ms) == (500, 3000)
    assert config.initial_registration_timeout_ms == 10000
    assert (config.metadata_snapshot_max_new_record_bytes, config.metadata_max_idle_interval_ms) == (4096, 0)


def test_the_metadata_log_dir_defaults_to_the_first_log_dir(tmp_path):
    config = KafkaConfig({**BROKER, "log.dirs": f"{tmp_path / 'a'},{tmp_path / 'b'}"})
    assert config.metadata_log_dir == tmp_path / "a"
    config = KafkaConfig({**BROKER, "log.dirs": str(tmp_path / "a"), "metadata.log.dir": str(tmp_path / "m")})
    assert config.metadata_log_dir == tmp_path / "m"


# -- process.roles, node.id and broker.id ---------------------------------------------------------------------


def test_an_unknown_role_is_refused():
    refused({**COMBINED, "process.roles": "broker,leader"}, r"process\.roles.*broker, controller")


def test_a_role_named_twice_is_refused():
    refused(
        {**CONTROLLER, "process.roles": "controller,controller"},
        r"Duplicate role names found in `process\.roles`",
    )


def test_kraft_mode_requires_node_id():
    props = {k: v for k, v in COMBINED.items() if k != "node.id"}
    refused(props, r"Missing configuration `node\.id` which is required when `process\.roles` is defined")


def test_broker_id_follows_node_id_and_must_not_differ():
    assert KafkaConfig(BROKER).broker_id == 4
    refused({**BROKER, "broker.id": "5"}, r"You must set `node\.id` to the same value as `broker\.id`")


def test_node_id_follows_broker_id_in_zookeeper_mode():
    config = KafkaConfig(ZOOKEEPER)
    assert (config.broker_id, config.node_id) == (0, 0)
    # a node.id of its own, given in ZooKeeper mode, must agree as well
    refused({**ZOOKEEPER, "node.id": "7"}, r"You must set `node\.id` to the same value as `broker\.id`")


# -- ZooKeeper mode: unchanged ----------------------------------------------------------------------------


def test_zookeeper_mode_is_the_default_and_needs_zookeeper_connect():
    config = KafkaConfig(ZOOKEEPER)
    assert config.requires_zookeeper and not config.uses_self_managed_quorum
    assert config.process_roles == frozenset()
    assert config.zk_connect == "127.0.0.1:2181"
    assert config.advertised_listeners == config.listeners
    refused({"broker.id": "0"}, r"Missing required configuration 'zookeeper\.connect'")
    refused({"zookeeper.connect": "127.0.0.1:2181"}, r"Missing required configuration 'broker\.id'")


def test_kraft_mode_does_not_need_zookeeper_connect():
    assert "zookeeper.connect" not in COMBINED
    assert KafkaConfig(COMBINED).zk_connect is None


def test_zookeeper_mode_refuses_controller_listener_names():
    refused(
        {**ZOOKEEPER, "controller.listener.names": "CONTROLLER"},
        r"controller\.listener\.names must be empty when not running in KRaft mode",
    )


# -- controller.quorum.voters ---------------------------------------------------------------------------------


def test_kraft_mode_requires_voters():
    refused(
        {**COMBINED, "controller.quorum.voters": ""},
        r"If using process\.roles, controller\.quorum\.voters must contain a parseable set of voters",
    )


def test_a_voter_list_that_does_not_parse_is_refused():
    refused({**COMBINED, "controller.quorum.voters": "1@localhost"}, r"controller\.quorum\.voters")


def test_a_controllers_node_id_must_be_a_voter():
    for props in (CONTROLLER, COMBINED):
        message = refused(
            {**props, "node.id": "9"},
            r"If process\.roles contains the 'controller' role, the node id 9 must be included in the set of "
            r"voters controller\.quorum\.voters",
        )
        assert "{1, 2, 3}" in message


def test_a_broker_only_nodes_id_must_not_be_a_voter():
    refused(
        {**BROKER, "node.id": "2"},
        r"If process\.roles contains just the 'broker' role, the node id 2 must not be included in the set "
        r"of voters controller\.quorum\.voters",
    )


# -- controller.listener.names and listeners ------------------------------------------------------------------


def test_a_broker_only_node_needs_controller_listener_names():
    props = {k: v for k, v in BROKER.items() if k != "controller.listener.names"}
    refused(
        props,
        r"controller\.listener\.names must contain at least one value when running KRaft with just the broker role",
    )


def test_a_broker_only_node_does_not_listen_on_a_controller_listener():
    refused(
        {**BROKER, "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"},
        r"controller\.listener\.names must not contain a value appearing in the 'listeners' configuration "
        r"when running KRaft with just the broker role",
    )


def test_a_broker_only_nodes_controller_listener_needs_a_protocol_when_the_map_is_set():
    refused(
        {**BROKER, "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"},
        r"Controller listener with name CONTROLLER defined in controller\.listener\.names not found in "
        r"listener\.security\.protocol\.map",
    )
    mapped = KafkaConfig(
        {**BROKER, "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"}
    )
    assert mapped.listener_security_protocol_map["CONTROLLER"] == "PLAINTEXT"


def test_an_unset_map_gives_controller_listeners_plaintext_only_without_sasl():
    assert KafkaConfig(CONTROLLER).listener_security_protocol_map["CONTROLLER"] == "PLAINTEXT"
    # with a SASL listener in use, Kafka adds no mapping: the controller listener's must be explicit
    refused(
        {
            **BROKER,
            "listeners": "SASL_PLAINTEXT://127.0.0.1:9092",
            "security.inter.broker.protocol": "SASL_PLAINTEXT",
        },
        r"Controller listener with name CONTROLLER defined in controller\.listener\.names not found",
    )


PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SECURE_COMBINED = {
    **COMBINED,
    "listeners": "SASL_PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
    "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
    "inter.broker.listener.name": "SASL_PLAINTEXT",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config":
        f'{PLAIN_MODULE} required username="admin" password="a" user_admin="a" user_alice="b";',
    "listener.name.controller.plain.sasl.jaas.config":
        f'{PLAIN_MODULE} required username="admin" password="a" user_admin="a";',
}  # fmt: skip


def test_a_kraft_node_takes_sasl_plain_listeners_and_logs_in_to_the_controllers_with_their_jaas():
    config = KafkaConfig(SECURE_COMBINED)
    assert {e.listener_name: e.security_protocol for e in config.listeners} == {
        "SASL_PLAINTEXT": "SASL_PLAINTEXT", "CONTROLLER": "SASL_PLAINTEXT",
    }  # fmt: skip
    assert config.controller_login() == ("PLAIN", "admin", "a")
    # a broker-only node does not listen on CONTROLLER, and still reads how to log in to it
    broker = {**SECURE_COMBINED, "process.roles": "broker", "node.id": "4",
              "listeners": "SASL_PLAINTEXT://127.0.0.1:9092"}  # fmt: skip
    assert KafkaConfig(broker).controller_login() == ("PLAIN", "admin", "a")
    assert KafkaConfig(COMBINED).controller_login() is None  # PLAINTEXT: no login


def test_a_controller_login_without_a_username_is_refused_naming_the_jaas_setting():
    no_login = {
        **SECURE_COMBINED,
        "listener.name.controller.plain.sasl.jaas.config": f'{PLAIN_MODULE} required user_admin="a";',
    }
    with pytest.raises(
        ConfigException, match=r"listener\.name\.controller\.plain\.sasl\.jaas\.config.*username"
    ):
        KafkaConfig(no_login).controller_login()


def test_scram_on_a_kraft_node_is_refused_with_the_reason():
    # Kafka 3.3 would start and refuse every SCRAM login: its credentials live in ZooKeeper only
    refused(
        {**SECURE_COMBINED, "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
         "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
             "org.apache.kafka.common.security.scram.ScramLoginModule required;",
         "listener.name.controller.scram-sha-256.sasl.jaas.config":
             "org.apache.kafka.common.security.scram.ScramLoginModule required;"},
        r"SCRAM-SHA-256 on a KRaft node: Kafka 3\.3 keeps SCRAM credentials in ZooKeeper only",
    )  # fmt: skip
    config = KafkaConfig({**SECURE_COMBINED, "sasl.mechanism.controller.protocol": "SCRAM-SHA-256"})
    with pytest.raises(ConfigException, match=r"no SCRAM credentials before Kafka 3\.5"):
        config.controller_login()


def test_a_kraft_node_refuses_the_zookeeper_authorizer_and_takes_the_standard_one():
    refused(
        {**COMBINED, "authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer"},
        r"a KRaft node has no ZooKeeper to keep ACLs in: its ACLs are metadata records",
    )
    name = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert (
        KafkaConfig({**COMBINED, "authorizer.class.name": name}).authorizer_class.__name__
        == "StandardAuthorizer"
    )


def test_a_controller_only_node_listens_on_controller_listeners_only():
    refused(
        {**CONTROLLER, "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"},
        r"The listeners config must only contain KRaft controller listeners from controller\.listener\.names "
        r"when process\.roles=controller",
    )
    refused(
        {**CONTROLLER, "advertised.listeners": "CONTROLLER://127.0.0.1:9093"},
        r"The advertised\.listeners config must only contain KRaft controller listeners",
    )


def test_a_controller_only_node_needs_no_inter_broker_listener():
    config = KafkaConfig(CONTROLLER)
    assert config.advertised_listeners == [] and [e.listener_name for e in config.listeners] == ["CONTROLLER"]


def test_a_controller_needs_a_controller_listener_in_listeners():
    refused(
        {
            **COMBINED,
            "controller.listener.names": "OTHER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        },
        r"controller\.listener\.names must contain at least one value appearing in the 'listeners' "
        r"configuration when running the KRaft controller role",
    )


def test_every_controller_listener_name_must_be_a_listener():
    refused(
        {**COMBINED, "controller.listener.names": "CONTROLLER,OTHER"},
        r"controller\.listener\.names must only contain values appearing in the 'listeners' configuration "
        r"when running the KRaft controller role",
    )


def test_a_broker_never_advertises_a_controller_listener():
    refused(
        {**COMBINED, "advertised.listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"},
        r"The advertised\.listeners config must not contain KRaft controller listeners from "
        r"controller\.listener\.names when process\.roles contains the broker role",
    )


def test_a_broker_must_advertise_some_listener():
    refused(
        {**COMBINED, "listeners": "CONTROLLER://127.0.0.1:9093"},
        r"There must be at least one advertised listener\. Perhaps all listeners appear in "
        r"controller\.listener\.names\?",
    )


def test_a_kraft_brokers_inter_broker_listener_must_be_advertised():
    refused(
        {**COMBINED, "inter.broker.listener.name": "CONTROLLER"},
        r"inter\.broker\.listener\.name must be a listener name defined in advertised\.listeners",
    )
