"""JAAS configuration as Kafka reads it: the inline ``sasl.jaas.config`` line, a JAAS file's sections,
and the broker's choice between them; every malformed text names what is wrong."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import ConfigException
from kafka_lite.common.security.jaas_config import (
    JaasConfigException,
    load_server_context,
    parse_jaas_config,
    parse_jaas_file,
)
from kafka_lite.common.security.plain.plain_sasl_server import plain_users
from kafka_lite.server.kafka_config import KafkaConfig

pytestmark = pytest.mark.unit

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
LINE = f'{PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'


def test_the_inline_line_kafkas_docs_show():
    (entry,) = parse_jaas_config(LINE)
    assert (entry.login_module_name, entry.control_flag) == (PLAIN, "required")
    assert entry.options["username"] == "admin"
    assert plain_users([entry]) == {"admin": "admin-secret", "alice": "alice-secret"}


def test_quotes_escapes_comments_and_several_entries():
    text = f"""
        // the broker's users
        {PLAIN} REQUIRED user_bob="p\\"w;}}" /* a comment */ user_eve=bare-word;
        org.apache.kafka.common.security.scram.ScramLoginModule optional username="admin" password="x";
    """
    entries = parse_jaas_config(text)
    assert [e.control_flag for e in entries] == ["required", "optional"]
    assert entries[0].options == {"user_bob": 'p"w;}', "user_eve": "bare-word"}


def test_a_jaas_file_with_sections():
    text = f"""
    KafkaServer {{
        {PLAIN} required username="admin" password="a" user_admin="a";
    }};
    sasl_plaintext.KafkaServer {{ {PLAIN} required user_listener="l"; }};
    KafkaClient {{ {PLAIN} required username="alice" password="s"; }};
    """
    sections = parse_jaas_file(text)
    assert set(sections) == {"KafkaServer", "sasl_plaintext.KafkaServer", "KafkaClient"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "login module not specified"),
        (PLAIN, "control flag not specified"),
        (f"{PLAIN} mandatory;", "invalid login module control flag 'mandatory'"),
        (f'{PLAIN} required user_a="x"', "not terminated by semi-colon"),
        (f"{PLAIN} required user_a;", "value not specified for key 'user_a'"),
        (f"{PLAIN} required user_a=;", "value not specified for key 'user_a'"),
        (f'{PLAIN} required user_a="x;', "quoted value is not closed"),
        (f"{PLAIN} required /* oops", "comment is not closed"),
        (f'{PLAIN} required = "x";', "expected an option key"),
    ],
)
def test_malformed_inline_config_names_the_problem(text, says):
    with pytest.raises(JaasConfigException, match=says) as e:
        parse_jaas_config(text, "listener.name.sasl_plaintext.plain.sasl.jaas.config")
    assert "listener.name.sasl_plaintext.plain.sasl.jaas.config" in str(e.value)
    assert isinstance(e.value, ConfigException)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (f"KafkaServer {PLAIN} required;", "expected '{' after section name KafkaServer"),
        (f"KafkaServer {{ {PLAIN} required; ", "not closed by '}'"),
        (f"KafkaServer {{ {PLAIN} required; }}", "must end with '};'"),
        ("KafkaServer { };", "has no login module"),
        ("{ };", "expected a section name"),
    ],
)
def test_malformed_jaas_file_names_the_problem(text, says):
    with pytest.raises(JaasConfigException, match=says):
        parse_jaas_file(text, "/etc/kafka/jaas.conf")


def test_server_context_prefers_the_listener_setting_then_the_listener_section_then_kafka_server(tmp_path):
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(
        f'KafkaServer {{ {PLAIN} required user_from_file="1"; }};\n'
        f'sasl_plaintext.KafkaServer {{ {PLAIN} required user_from_listener_section="2"; }};\n'
    )
    file_only = {"java.security.auth.login.config": str(jaas)}
    assert plain_users(load_server_context("SASL_PLAINTEXT", "PLAIN", file_only)) == {
        "from_listener_section": "2"
    }
    assert plain_users(load_server_context("OTHER", "PLAIN", file_only)) == {"from_file": "1"}
    inline = {
        **file_only,
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": f'{PLAIN} required user_inline="3";',
    }
    assert plain_users(load_server_context("SASL_PLAINTEXT", "PLAIN", inline)) == {"inline": "3"}


def test_server_context_missing_everywhere_says_where_to_put_it(tmp_path):
    with pytest.raises(
        JaasConfigException, match=r"listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config"
    ):
        load_server_context("SASL_PLAINTEXT", "PLAIN", {})
    with pytest.raises(JaasConfigException, match="cannot read JAAS file"):
        load_server_context(
            "SASL_PLAINTEXT", "PLAIN", {"java.security.auth.login.config": str(tmp_path / "none")}
        )
    (tmp_path / "j.conf").write_text(f'KafkaClient {{ {PLAIN} required username="a" password="b"; }};')
    with pytest.raises(JaasConfigException, match=r"no section .*KafkaServer \(found: KafkaClient\)"):
        load_server_context(
            "SASL_PLAINTEXT", "PLAIN", {"java.security.auth.login.config": str(tmp_path / "j.conf")}
        )


# -- the broker's security settings ----------------------------------------------------------------------


SASL_BETWEEN_BROKERS = {"security.inter.broker.protocol": "SASL_PLAINTEXT"}


def broker(**props) -> KafkaConfig:
    return KafkaConfig({"broker.id": 0, "zookeeper.connect": "localhost:2181", **props})


def test_defaults_stay_plaintext():
    config = broker()
    assert config.security_protocol == "PLAINTEXT" and config.sasl_jaas_entries == {}
    assert config["sasl.enabled.mechanisms"] == ["PLAIN"]


def test_a_sasl_listener_reads_its_jaas_line_and_the_inter_broker_credentials():
    config = broker(**{
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        "security.inter.broker.protocol": "SASL_PLAINTEXT",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": LINE,
    })  # fmt: skip
    assert config.security_protocol == "SASL_PLAINTEXT"
    assert plain_users(config.sasl_jaas_entries["PLAIN"])["alice"] == "alice-secret"
    assert config.inter_broker_channel_builder() is not None


@pytest.mark.parametrize(
    ("props", "says"),
    [
        ({"listeners": "SSL://127.0.0.1:9093"}, "PLAINTEXT://host:port or SASL_PLAINTEXT://host:port"),
        ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}, "must be the protocol of a listener"),
        (
            {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", **SASL_BETWEEN_BROKERS},
            "listener.name.sasl_plaintext.plain.sasl",
        ),
        ({"security.inter.broker.protocol": "SASL_PLAINTEXT"}, "must be the protocol of a listener"),
        (
            {
                "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                **SASL_BETWEEN_BROKERS,
                "sasl.enabled.mechanisms": "PLAIN,GSSAPI",
            },
            "SASL mechanisms are PLAIN, SCRAM-SHA-256",
        ),
        (
            {
                "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                **SASL_BETWEEN_BROKERS,
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": f"{PLAIN} required user_a=",
            },
            "value not specified for key 'user_a'",
        ),
        (
            {
                "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                "security.inter.broker.protocol": "SASL_PLAINTEXT",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": f'{PLAIN} required user_a="x";',
            },
            "needs the broker's own username",
        ),
        (
            {
                "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                **SASL_BETWEEN_BROKERS,
                "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": LINE,
            },
            "must be included in sasl.enabled.mechanisms",
        ),
    ],
)
def test_bad_security_settings_stop_the_broker_with_a_message(props, says):
    with pytest.raises(ConfigException, match=says):
        broker(**props)


def test_a_clients_login_comes_from_its_jaas_line_when_no_username_is_set():
    from kafka_lite.clients.client_utils import create_channel_builder
    from kafka_lite.common.security.jaas_config import client_credentials
    from kafka_lite.network.channel_builders import SaslChannelBuilder

    client_line = f'{PLAIN} required username="alice" password="alice-secret";'
    assert client_credentials(client_line) == ("alice", "alice-secret")
    with pytest.raises(
        ConfigException, match=r'sasl.jaas.config: the login needs username="..." and password'
    ):
        client_credentials(f'{PLAIN} required username="alice";')
    config = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
              "sasl.plain.username": None, "sasl.plain.password": None, "sasl.jaas.config": client_line}  # fmt: skip
    assert isinstance(create_channel_builder(config, "c-1"), SaslChannelBuilder)
    with pytest.raises(ConfigException, match="sasl_plain_username"):  # neither login: named
        create_channel_builder({**config, "sasl.jaas.config": None}, "c-1")
