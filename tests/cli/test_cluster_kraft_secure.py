"""``kafka-lite cluster up --kraft --secure``: a KRaft node with SASL/PLAIN on every listener and
``StandardAuthorizer``, tried with unmodified confluent-kafka and kafka-python as a user would: a
wrong password refused; alice, with no ACL, reads nothing and deletes nothing (her DeleteTopics goes
through a broker to the controller in an Envelope that names her); after an ACL she reads every
record; a connection that never logs in gets no answer; the controllers' listener lets alice log in
and refuses her every request, where admin, the super user, is answered."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import struct

import confluent_kafka
import kafka
import kafka.errors
import pytest

from kafka_lite.cli.main import main
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader, encode_request
from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

RECORDS = 20


def login(path: str) -> tuple[str, str]:
    """A user's name and password, read from the client properties file ``up --secure`` wrote."""
    text = open(path).read()
    return re.search(r'username="([^"]+)"', text)[1], re.search(r'password="([^"]+)"', text)[1]


def rdkafka(bootstrap: str, user: str, password: str, **extra) -> dict:
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN",
            "sasl.username": user, "sasl.password": password, "log_level": 0, **extra}  # fmt: skip


def python_kafka(bootstrap: str, user: str, password: str) -> dict:
    return {"bootstrap_servers": bootstrap, "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
            "sasl_plain_username": user, "sasl_plain_password": password}  # fmt: skip


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    directory = tmp_path_factory.mktemp("kraft-secure") / "state"
    for _ in range(3):  # a port found free may be taken before the node binds it: new ones then
        base = free_ports(1)
        up = ["cluster", "up", "--kraft", "--secure", "--detach", "--brokers", "1", "--base-port", str(base),
              "--no-metrics-reporter", "--dir", str(directory)]  # fmt: skip
        if main(up) == 0:
            break
    else:
        pytest.fail("kafka-lite cluster up --kraft --secure failed three times on fresh ports")
    try:
        yield json.loads((directory / "cluster.json").read_text())
    finally:
        assert main(["cluster", "down", "--dir", str(directory)]) == 0


def test_the_passwords_are_the_owners_alone_and_the_cluster_json_holds_none(secure):
    files = secure["secure"]["users"]
    node_config = os.path.join(secure["dir"], "broker-0", "server.properties")
    for path in [*files.values(), node_config]:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    cluster_json = open(os.path.join(secure["dir"], "cluster.json")).read()
    assert all(login(path)[1] not in cluster_json for path in files.values())


def test_a_wrong_password_is_refused(secure):
    bootstrap = f"127.0.0.1:{secure['brokers'][0]['port']}"
    errors = []
    producer = confluent_kafka.Producer(
        rdkafka(bootstrap, "alice", "not-her-password", error_cb=errors.append)
    )
    wait_until(
        lambda: producer.poll(0.1) >= 0 and any(
            e.code() == confluent_kafka.KafkaError._AUTHENTICATION for e in errors
        ),
        20,
        "librdkafka to report the authentication failure",
    )  # fmt: skip
    producer.flush(0)


def test_alice_reads_and_deletes_nothing_until_an_acl_then_reads_every_record(secure, tmp_path):
    node = secure["brokers"][0]
    bootstrap = f"127.0.0.1:{node['port']}"
    files = secure["secure"]["users"]
    admin, alice = login(files["admin"]), login(files["alice"])
    topic, group = "payments", "alice-group"
    assert main(["topics", "--bootstrap-server", bootstrap, "--command-config", files["admin"], "--create",
                 "--topic", topic, "--partitions", "2", "--replication-factor", "1"]) == 0  # fmt: skip
    producer = kafka.KafkaProducer(**python_kafka(bootstrap, *admin), acks="all", enable_idempotence=False)
    for i in range(RECORDS):
        producer.send(topic, f"record-{i}".encode())
    producer.flush(timeout=30)
    producer.close()

    # alice may log in, and is allowed nothing: no records, no deletion
    consumer = kafka.KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest",
                                   consumer_timeout_ms=3000, **python_kafka(bootstrap, *alice))  # fmt: skip
    with pytest.raises(
        (kafka.errors.GroupAuthorizationFailedError, kafka.errors.TopicAuthorizationFailedError)
    ):
        list(consumer)
    consumer.close()
    deleter = kafka.KafkaAdminClient(**python_kafka(bootstrap, *alice))
    with pytest.raises(kafka.errors.TopicAuthorizationFailedError):
        deleter.delete_topics([topic])
    deleter.close()
    described = kafka.KafkaAdminClient(**python_kafka(bootstrap, *admin))
    assert topic in described.list_topics(), "the controller deleted nothing for alice"
    described.close()

    # admin lets her consume (Read and Describe on the topic, Read on the group): a forwarded
    # CreateAcls, written by the controller as AccessControlEntryRecords every node replays
    assert main(["acls", "--bootstrap-server", bootstrap, "--command-config", files["admin"], "--add",
                 "--allow-principal", "User:alice", "--consumer", "--topic", topic, "--group", group]) == 0  # fmt: skip
    reader = confluent_kafka.Consumer(
        rdkafka(bootstrap, *alice, **{"group.id": group, "auto.offset.reset": "earliest"})
    )
    reader.subscribe([topic])
    seen: set[bytes] = set()

    def read_more() -> bool:
        message = reader.poll(0.5)
        if message is not None and message.error() is None:
            seen.add(message.value())
        return len(seen) == RECORDS

    try:
        wait_until(read_more, 60, "alice's confluent-kafka consumer to read every record once the ACL is in")
    finally:
        reader.close()
    assert seen == {f"record-{i}".encode() for i in range(RECORDS)}


def test_a_connection_that_never_logs_in_gets_no_answer_to_metadata(secure):
    frame = encode_request(RequestHeader(ApiKeys.METADATA, 0, 1, "no-login"), {"topics": []})
    with socket.create_connection(("127.0.0.1", secure["brokers"][0]["port"]), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        assert sock.recv(4) == b"", "the SASL listener answered a client that had not authenticated"


def test_the_controllers_listener_takes_alices_login_and_refuses_her_requests(secure, capsys):
    node = secure["brokers"][0]
    controller = f"127.0.0.1:{node['controller_port']}"
    files = secure["secure"]["users"]
    capsys.readouterr()
    code = main(["metadata-quorum", "--bootstrap-controller", controller, "--command-config", files["alice"],
                 "describe", "--status"])  # fmt: skip
    assert code != 0 and "CLUSTER_AUTHORIZATION_FAILED" in capsys.readouterr().err
    # through a broker too: the Envelope carries alice, not the broker
    code = main(["metadata-quorum", "--bootstrap-server", f"127.0.0.1:{node['port']}", "--command-config",
                 files["alice"], "describe", "--status"])  # fmt: skip
    assert code != 0 and "CLUSTER_AUTHORIZATION_FAILED" in capsys.readouterr().err
    assert main(["metadata-quorum", "--bootstrap-controller", controller, "--command-config", files["admin"],
                 "describe", "--status"]) == 0  # fmt: skip
    assert re.search(r"^LeaderId:\s+0$", capsys.readouterr().out, re.M)
