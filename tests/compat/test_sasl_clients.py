"""Real clients, unmodified, on a SASL_PLAINTEXT broker: kafka-python, confluent-kafka (librdkafka) and
kafka_lite's own, with PLAIN from the broker's JAAS line and SCRAM-SHA-256 from ZooKeeper.

Which framing each client here uses, as the broker counts it (``KafkaServer.authentication_stats``):

- kafka-python 3.x sends SaslHandshake v1 and carries its tokens in SaslAuthenticate, since our
  ApiVersions lists key 36; told ``api_version=(0, 10, 2)`` it uses a 0.10 broker's framing,
  SaslHandshake v0 then raw tokens;
- librdkafka 2.x likewise uses v1 + SaslAuthenticate once ApiVersions lists it;
- kafka_lite's ``SaslClientAuthenticator`` picks v1 the same way (v0 against a broker without 36,
  tested in tests/network/test_sasl_authenticators.py).

One broker, shared by the module, with inter-broker traffic (its controller to itself) on SASL/PLAIN
as the ``admin`` user of its own JAAS line.

ZooKeeper only: SCRAM credentials live in ZooKeeper until Kafka 3.5, and the tests read the
in-process broker's counts.
"""

from __future__ import annotations

import json
import logging
import random
import socket
import struct
import uuid

import kafka
import pytest
from confluent_kafka import Consumer as CkConsumer
from confluent_kafka import KafkaError
from confluent_kafka import Producer as CkProducer

from kafka_lite.admin import KafkaAdminClient, NewTopic
from kafka_lite.cli.main import main
from kafka_lite.common.errors import SaslAuthenticationException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request
from kafka_lite.consumer.kafka_consumer import KafkaConsumer as LiteConsumer
from kafka_lite.producer.kafka_producer import KafkaProducer as LiteProducer
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.cluster import LiteCluster, sasl_broker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = pytest.mark.compat

JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)
ALICE = {"sasl_mechanism": "PLAIN", "sasl_plain_username": "alice", "sasl_plain_password": "alice-secret"}
WRONG_PASSWORD = {**ALICE, "sasl_plain_password": "guess"}


@pytest.fixture(scope="module")
def secured(zookeeper, tmp_path_factory):
    cluster = LiteCluster(
        zookeeper.connect_string,
        tmp_path_factory.mktemp("sasl"),
        brokers=1,
        **sasl_broker(
            JAAS,
            **{
                "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": (
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                ),
            },
        ),
    )
    cluster.start()
    yield cluster
    cluster.stop()


def new_topic(secured) -> str:
    topic = f"sasl-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(secured.bootstrap_servers, security_protocol="SASL_PLAINTEXT", **ALICE)
    try:
        admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        admin.close()
    secured.wait_for_leaders(topic, 1)
    return topic


def stats(secured):
    return secured.servers[0].authentication_stats


def count(secured, framing: str, outcome: str = "ok") -> int:
    return stats(secured).get(framing, outcome)


# -- kafka-python ----------------------------------------------------------------------------------------


def kafka_python_round_trip(secured, topic: str, **security) -> list[bytes]:
    common = {
        "bootstrap_servers": secured.bootstrap_servers,
        "security_protocol": "SASL_PLAINTEXT",
        **security,
    }
    producer = kafka.KafkaProducer(**common)
    producer.send(topic, b"from kafka-python").get(timeout=30)
    producer.close()
    consumer = kafka.KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=20_000, **common)
    try:
        return [m.value for _, m in zip(range(1), consumer, strict=False)]  # the first record, or none
    finally:
        consumer.close()


def test_kafka_python_plain_uses_handshake_v1_and_sasl_authenticate(secured):
    topic = new_topic(secured)
    v0, v1 = count(secured, "v0"), count(secured, "v1")
    assert kafka_python_round_trip(secured, topic, **ALICE) == [b"from kafka-python"]
    assert count(secured, "v1") > v1 and count(secured, "v0") == v0


def test_kafka_python_told_of_a_0_10_broker_uses_raw_tokens(secured):
    topic = new_topic(secured)
    v0 = count(secured, "v0")
    assert kafka_python_round_trip(secured, topic, api_version=(0, 10, 2), **ALICE) == [b"from kafka-python"]
    assert count(secured, "v0") > v0


def test_kafka_python_wrong_password_gets_its_authentication_error(secured, caplog):
    failed = count(secured, "v1", "failed")
    with caplog.at_level(logging.ERROR, logger="kafka"), pytest.raises(kafka.errors.KafkaError):
        kafka.KafkaProducer(
            bootstrap_servers=secured.bootstrap_servers,
            security_protocol="SASL_PLAINTEXT",
            bootstrap_timeout_ms=3000,
            **WRONG_PASSWORD,
        )
    # kafka-python logs each refused attempt and keeps retrying until its bootstrap times out
    assert any("SaslAuthenticationFailedError" in r.getMessage() for r in caplog.records)
    assert count(secured, "v1", "failed") > failed


# -- confluent-kafka (librdkafka) --------------------------------------------------------------------------


def ck_config(secured, mechanism="PLAIN", username="alice", password="alice-secret") -> dict:
    return {
        "bootstrap.servers": secured.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": mechanism,
        "sasl.username": username,
        "sasl.password": password,
    }


def ck_round_trip(config: dict, topic: str) -> list[bytes]:
    producer = CkProducer(config)
    producer.produce(topic, b"from librdkafka")
    assert producer.flush(30) == 0
    consumer = CkConsumer(
        {**config, "group.id": f"g-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    try:
        got = wait_until(lambda: consumer.poll(0.5), timeout_s=30, what="librdkafka to consume the record")
        assert got.error() is None, got.error()
        return [got.value()]
    finally:
        consumer.close()


def test_confluent_kafka_plain_uses_handshake_v1(secured):
    topic = new_topic(secured)
    v0, v1 = count(secured, "v0"), count(secured, "v1")
    assert ck_round_trip(ck_config(secured), topic) == [b"from librdkafka"]
    assert count(secured, "v1") > v1 and count(secured, "v0") == v0


def test_confluent_kafka_wrong_password_gets_its_authentication_error(secured):
    errors: list[KafkaError] = []
    producer = CkProducer({**ck_config(secured, password="guess"), "error_cb": errors.append})
    wait_until(
        lambda: (
            producer.poll(0.2) is not None and any(e.code() == KafkaError._AUTHENTICATION for e in errors)
        ),
        what="librdkafka's _AUTHENTICATION error",
    )
    assert any("Invalid username or password" in e.str() for e in errors), [e.str() for e in errors]


# -- kafka_lite's own clients ----------------------------------------------------------------------------


def lite_round_trip(secured, topic: str, **security) -> list[bytes]:
    common = {
        "bootstrap_servers": secured.bootstrap_servers,
        "security_protocol": "SASL_PLAINTEXT",
        **security,
    }
    producer = LiteProducer(**common)
    try:
        producer.send(topic, value=b"from kafka_lite").get(timeout=30)
    finally:
        producer.close()
    consumer = LiteConsumer(
        topic,
        group_id=f"g-{uuid.uuid4().hex[:6]}",
        auto_offset_reset="earliest",
        consumer_timeout_ms=20_000,
        **common,
    )
    try:
        return [r.value for _, r in zip(range(1), consumer, strict=False)]
    finally:
        consumer.close()


def test_kafka_lite_clients_plain(secured):
    topic = new_topic(secured)
    assert lite_round_trip(secured, topic, **ALICE) == [b"from kafka_lite"]


def test_kafka_lite_producer_wrong_password_raises_the_authentication_error(secured):
    producer = LiteProducer(
        bootstrap_servers=secured.bootstrap_servers,
        security_protocol="SASL_PLAINTEXT",
        max_block_ms=10_000,
        **WRONG_PASSWORD,
    )
    try:
        future = producer.send("anything", value=b"x")  # send fails the future, as Kafka's doSend does
        with pytest.raises(SaslAuthenticationException, match="Invalid username or password"):
            future.get(timeout=15)
    finally:
        producer.close()


def test_kafka_lite_consumer_and_admin_wrong_password_raise_the_authentication_error(secured):
    security = {"security_protocol": "SASL_PLAINTEXT", **WRONG_PASSWORD}
    consumer = LiteConsumer("anything", group_id="g", bootstrap_servers=secured.bootstrap_servers, **security)
    try:
        with pytest.raises(SaslAuthenticationException):
            consumer.poll(timeout_ms=10_000)
    finally:
        consumer.close()
    admin = KafkaAdminClient(secured.bootstrap_servers, request_timeout_ms=10_000, **security)
    try:
        with pytest.raises(SaslAuthenticationException):
            admin.list_topics()
    finally:
        admin.close()


def test_a_plaintext_client_cannot_talk_to_a_sasl_listener(secured):
    """Its first request is refused by the authenticator: no request is served unauthenticated."""
    client = WireClient(secured.servers[0].port)
    try:
        client.send(ApiKeys.METADATA, 1, {"topics": None})
        assert client.closed_by_peer()
    finally:
        client.close()


def test_requests_carry_the_authenticated_principal_and_a_late_handshake_is_illegal(secured, monkeypatch):
    server = secured.servers[0]
    seen = []
    handle = server.apis.handle
    monkeypatch.setattr(
        server.apis, "handle", lambda request: (seen.append(request.session), handle(request))
    )
    client = WireClient(server.port)
    try:
        assert client.call(ApiKeys.SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"})["error_code"] == 0
        client.send_raw(b"\x00alice\x00alice-secret")
        assert client.read_frame() == b""
        assert client.call(ApiKeys.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 34
        assert client.call(ApiKeys.METADATA, 1, {"topics": []})["brokers"]
    finally:
        client.close()
    assert {str(s.principal) for s in seen} == {"User:alice"} and len(seen) == 2
    assert seen[0].client_address == "127.0.0.1"


# -- SCRAM-SHA-256, with credentials set through kafka-lite configs --------------------------------------


def configs(secured, capsys, *args: str) -> str:
    code = main(["configs", "--zookeeper", secured.zk_connect, "--entity-type", "users", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_scram_credentials_from_zookeeper_for_every_client(secured, capsys):
    server = secured.servers[0]
    out = configs(
        secured, capsys, "--entity-name", "carol", "--alter",
        "--add-config", "SCRAM-SHA-256=[iterations=4096,password=carol-secret]",
    )  # fmt: skip
    assert "Completed Updating config for entity: user-principal 'carol'." in out
    stored = ZkUtils(secured.zk_connect)
    try:
        text = stored.fetch_entity_config("users", "carol")["SCRAM-SHA-256"]
    finally:
        stored.close()
    assert text.startswith("salt=") and "iterations=4096" in text and "carol-secret" not in text
    described = configs(secured, capsys, "--entity-name", "carol", "--describe")
    assert "SCRAM-SHA-256=[iterations=4096]" in described and "salt" not in described
    wait_until(lambda: server.credential_cache.get("carol"), what="the broker to cache carol's credential")

    carol = {
        "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_plain_username": "carol",
        "sasl_plain_password": "carol-secret",
    }
    assert kafka_python_round_trip(secured, new_topic(secured), **carol) == [b"from kafka-python"]
    ck = ck_config(secured, "SCRAM-SHA-256", "carol", "carol-secret")
    assert ck_round_trip(ck, new_topic(secured)) == [b"from librdkafka"]
    assert lite_round_trip(secured, new_topic(secured), **carol) == [b"from kafka_lite"]

    configs(secured, capsys, "--entity-name", "carol", "--alter", "--delete-config", "SCRAM-SHA-256")
    wait_until(
        lambda: server.credential_cache.get("carol") is None, what="the broker to drop carol's credential"
    )
    errors: list[KafkaError] = []
    producer = CkProducer(
        {**ck_config(secured, "SCRAM-SHA-256", "carol", "carol-secret"), "error_cb": errors.append}
    )
    wait_until(
        lambda: (
            producer.poll(0.2) is not None and any(e.code() == KafkaError._AUTHENTICATION for e in errors)
        ),
        what="carol to be refused once her credential is deleted",
    )


def test_bad_scram_add_config_is_a_usage_error(secured, capsys):
    base = [
        "configs",
        "--zookeeper",
        secured.zk_connect,
        "--entity-type",
        "users",
        "--entity-name",
        "dave",
        "--alter",
    ]
    assert main([*base, "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]"]) == 2
    assert "at least 4096" in capsys.readouterr().err
    assert main([*base, "--add-config", "SCRAM-SHA-256=[iterations=4096]"]) == 2
    assert main([*base, "--add-config", "producer_byte_rate=10"]) == 2
    assert "Unknown user config" in capsys.readouterr().err


# -- fuzz: hostile bytes at each authentication step never hurt the broker -------------------------------


def test_fuzzed_authentication_never_crashes_the_broker_and_it_keeps_serving(secured, caplog):
    port = secured.servers[0].port
    rng = random.Random(20261126)
    handshake_v1 = encode_request(RequestHeader(ApiKeys.SASL_HANDSHAKE, 1, 1, "f"), {"mechanism": "PLAIN"})
    handshake_v0 = encode_request(RequestHeader(ApiKeys.SASL_HANDSHAKE, 0, 1, "f"), {"mechanism": "PLAIN"})
    token = encode_request(
        RequestHeader(ApiKeys.SASL_AUTHENTICATE, 0, 2, "f"), {"sasl_auth_bytes": b"\x00alice\x00alice-secret"}
    )

    def noise(frame: bytes) -> bytes:
        data = bytearray(frame)
        for _ in range(rng.randint(1, 4)):
            if data:
                data[rng.randrange(len(data))] ^= rng.randint(1, 255)
        return bytes(data) if rng.random() < 0.7 else rng.randbytes(rng.randint(0, 40))

    def attack(i: int) -> WireClient | None:
        """Bring a connection to the authentication step ``i % 3`` names, then send it noise."""
        client = WireClient(port, timeout_s=5)
        try:
            step = i % 3
            if step >= 1:  # a good handshake (v0 or v1), then noise where the token goes
                client.call(ApiKeys.SASL_HANDSHAKE, step - 1, {"mechanism": "PLAIN"})
                client.send_raw(noise(token if step == 2 else b"\x00alice\x00alice-secret"))
            else:
                client.send_raw(noise(rng.choice([handshake_v0, handshake_v1])))
            if rng.random() < 0.3:  # a size prefix that lies
                client.sock.sendall(struct.pack(">i", rng.choice([-1, 0, 1 << 30])))
            client.sock.shutdown(socket.SHUT_WR)  # the broker sees the end, whatever it waits for
            return client
        except (EOFError, ConnectionResetError, BrokenPipeError, TimeoutError):
            client.close()
            return None

    refused = count(secured, "v0", "failed") + count(secured, "v1", "failed")
    with caplog.at_level(logging.WARNING):
        # In waves of 60 open connections: a refused login is closed 100 ms after its answer, and
        # the waves let those delays overlap.
        for wave in range(4):
            clients = [c for i in range(60) if (c := attack(wave * 60 + i)) is not None]
            for client in clients:
                try:
                    while True:
                        client.read_frame()  # answers, until the broker closes
                except (EOFError, ConnectionResetError, TimeoutError):
                    pass
                finally:
                    client.close()
        topic = new_topic(secured)
        assert lite_round_trip(secured, topic, **ALICE) == [b"from kafka_lite"]
    assert count(secured, "v0", "failed") + count(secured, "v1", "failed") > refused + 20, (
        "noise reached the tokens"
    )
    assert not [r for r in caplog.records if r.exc_info], "no tracebacks"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("kafka_lite")]


def test_the_broker_registers_its_sasl_endpoint(secured):
    zk = ZkUtils(secured.zk_connect)
    try:
        data, _ = zk.client.get("/brokers/ids/0")
    finally:
        zk.close()
    assert json.loads(data)["endpoints"] == [f"SASL_PLAINTEXT://127.0.0.1:{secured.servers[0].port}"]
