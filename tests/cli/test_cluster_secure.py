"""``kafka-lite cluster up --secure``: a real one-broker cluster with SASL and ACLs, its users' files,
and ``acls --command-config`` granting what the authorizer refused."""

from __future__ import annotations

import io
import json
import os
import re
import stat

import kafka
import kafka.errors
import pytest

from kafka_lite.cli import CliError
from kafka_lite.cli.main import main
from kafka_lite.cli.security import client_login
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.errors import TimeoutException
from kafka_lite.producer.kafka_producer import KafkaProducer as LiteProducer
from kafka_lite.utils.ports import free_port
from tests.support.processes import base_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def login(path: str, mechanism: str = "PLAIN") -> dict:
    """A user's credentials as the written file has them, read here without the CLI's parser."""
    text = open(path).read()
    assert "security.protocol=SASL_PLAINTEXT" in text and "sasl.mechanism=PLAIN" in text
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": mechanism,
            "sasl_plain_username": re.search(r'username="([^"]+)"', text)[1],
            "sasl_plain_password": re.search(r'password="([^"]+)"', text)[1]}  # fmt: skip


def produce(bootstrap: str, topic: str, credentials: dict) -> int:
    """One record with kafka-python, as the given user; its offset. Idempotence is off: it would need
    IdempotentWrite on the cluster, which no ACL here grants."""
    configs = {"enable_idempotence": False, "max_block_ms": 10_000, **credentials}
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, **configs)
    try:
        return producer.send(topic, b"hello").get(timeout=20).offset
    finally:
        producer.close()


def topics_seen_by(bootstrap: str, credentials: dict) -> list[str]:
    admin = KafkaAdminClient(bootstrap, **{"request_timeout_ms": 10_000, **credentials})
    try:
        return admin.list_topics()
    finally:
        admin.close()


def test_a_secure_cluster_refuses_alice_until_an_acl_lets_her_write(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    d, base = tmp_path / "state", base_port(1)
    args = ["--dir", str(d)]
    up = ["cluster", "up", "--secure", "--detach", "--brokers", "1",
          "--zookeeper-port", str(free_port()), "--base-port", str(base), *args]  # fmt: skip
    started = main(up)
    try:  # from here on, whatever fails, the cluster is taken down
        assert started == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        state = json.loads((d / "cluster.json").read_text())
        files = state["secure"]["users"]
        assert set(files) == {"admin", "alice"}
        for path in [*files.values(), str(d / "broker-0" / "server.properties")]:
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
        admin, alice = login(files["admin"]), login(files["alice"])
        assert admin["sasl_plain_password"] != alice["sasl_plain_password"]
        assert alice["sasl_plain_password"] not in (d / "cluster.json").read_text()
        bootstrap = f"127.0.0.1:{base}"
        assert f"bootstrap servers: {bootstrap}" in out and files["alice"] in out
        # the brokers' own listener: PLAINTEXT on a loopback port of its own, named in the caption
        internal = state["brokers"][0]["internal_port"]
        assert internal != base
        settings = (d / "broker-0" / "server.properties").read_text()
        assert f"listeners=SASL_PLAINTEXT://127.0.0.1:{base},INTERNAL://127.0.0.1:{internal}\n" in settings
        assert "inter.broker.listener.name=INTERNAL\n" in settings
        caption = " ".join(out.split())  # the table's caption wraps to the table's width
        assert f"PLAINTEXT listener INTERNAL, broker 0 at 127.0.0.1:{internal}" in caption
        assert f"--command-config {files['admin']}" in out and "KafkaConsumer(" in out

        # the listener is SASL only: a client that does not log in gets no metadata at all
        with pytest.raises(TimeoutException):
            topics_seen_by(bootstrap, {"request_timeout_ms": 2000})
        assert produce(bootstrap, "orders", admin) == 0  # the super user may do anything, create too
        # alice without an ACL: the topic is hidden from her (Kafka 0.11 answers a topic one may not
        # Describe as unknown), so her producer never finds a partition to send to
        assert "orders" in topics_seen_by(bootstrap, admin)
        assert "orders" not in topics_seen_by(bootstrap, alice)
        # the tools log in with the same files: --command-config, as Kafka's tools take it
        for user, sees in (("admin", True), ("alice", False)):
            listed = ["topics", "--bootstrap-server", bootstrap, "--command-config", files[user], "--list"]
            assert main(listed) == 0
            assert ("orders" in capsys.readouterr().out.split()) is sees, user
        with pytest.raises(kafka.errors.KafkaTimeoutError):
            produce(bootstrap, "orders", {**alice, "max_block_ms": 3000})

        grant = ["acls", "--bootstrap-server", bootstrap, "--add", "--allow-principal", "User:alice",
                 "--operation", "Write", "--topic", "orders"]  # fmt: skip
        assert main([*grant, "--command-config", files["alice"]]) == 1, "alice may not grant herself"
        assert "CreateAcls needs Alter on the cluster" in capsys.readouterr().err
        assert main([*grant, "--command-config", files["admin"]]) == 0
        assert "User:alice has Allow permission for operations: Write" in capsys.readouterr().out
        assert wait_until(lambda: produce(bootstrap, "orders", alice), what="alice's produce") >= 1
        # kafka_lite's clients read the login from the file's sasl.jaas.config, as Java clients do
        to_console = ["console-producer", "--bootstrap-server", bootstrap, "--topic", "orders",
                      "--producer.config", files["alice"], "--request-required-acks", "all"]  # fmt: skip
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"from the console\n")))
        assert main(to_console) == 0, capsys.readouterr().err
        offsets = ["get-offsets", "--bootstrap-server", bootstrap, "--topic", "orders"]
        assert main([*offsets, "--command-config", files["alice"]]) == 0
        ((topic, partition, end),) = [line.split(":") for line in capsys.readouterr().out.split()]
        assert (topic, partition) == ("orders", "0") and int(end) >= 3  # Write implies Describe

        # the same users log in with SCRAM-SHA-256, from the credentials written to ZooKeeper
        scram = LiteProducer(bootstrap_servers=bootstrap, max_block_ms=10_000,
                             **login(files["alice"], "SCRAM-SHA-256"))  # fmt: skip
        try:
            assert scram.send("orders", b"scram").get(20).offset >= 2
        finally:
            scram.close()

        assert main(["cluster", "status", *args]) == 0  # logged in as admin, it sees the broker and topic
        status = capsys.readouterr().out
        assert "registered (controller)" in status and "orders" in status
    finally:
        downed = main(["cluster", "down", *args])
    assert downed == 0
    assert not (d / "cluster.json").exists()


def test_secure_does_not_go_with_lab(tmp_path, capsys):
    code = main(["cluster", "up", "--secure", "--lab", "4", "--detach", "--dir", str(tmp_path)])
    assert code == 2
    assert "--secure does not go with --lab" in capsys.readouterr().err
    assert not (tmp_path / "cluster.json").exists()


def test_command_config_reads_kafkas_client_properties(tmp_path):
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="pw";'
    assert client_login({"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": jaas}) == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "bob",
        "sasl_plain_password": "pw",
    }
    assert client_login({}) == {}  # PLAINTEXT: nothing to log in with
    for props, what in (
        ({"security.protocol": "SSL"}, "security.protocol 'SSL'"),
        ({"security.protocol": "SASL_PLAINTEXT"}, "needs sasl.jaas.config"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": jaas}, "GSSAPI"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": jaas.replace(' password="pw"', "")},
         'password="..."'),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": "PlainLoginModule required"}, "sasl.jaas.config"),
    ):  # fmt: skip
        with pytest.raises(CliError, match=re.escape(what)) as raised:
            client_login(props)
        assert raised.value.exit_code == 2
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\n")
    assert main(["acls", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(config), "--list"]) == 2
