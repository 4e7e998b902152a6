"""Streams, Connect, MirrorMaker and the request metrics reporter on ``kafka-lite cluster up --secure``,
on the KRaft cluster a user runs today (``--kraft``): its brokers' listeners are the ZooKeeper
cluster's (tests/cli/test_cluster_secure.py runs that one), and every admin request a tool sends goes
on to the controller in an Envelope that names the tool's user.

Each tool logs in with the user's client properties as the CLI wrote them, and the ACLs are granted
with ``kafka-lite acls`` as chapter 11's guide lists them. With its ACLs a tool runs and loses
nothing (what went in is counted against what came out); without one it stops with Kafka's
authorization error named where its user looks (the command's last line, the herder's failure),
never a hang. One secure cluster serves the module; MirrorMaker copies from it to the session's
plain ``cluster``, and from that one into it.

ACLs only add up, so a test that needs one missing gives its tool names of its own (an application
id, a group); the one ACL that has no name, Create on the cluster, the Streams test without it
takes away first.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import struct
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_lite.cli import properties_file
from kafka_lite.cli.main import main
from kafka_lite.cli.security import command_config
from kafka_lite.clients.client_utils import admin_client_login
from kafka_lite.common.errors import ConfigException, KafkaException
from kafka_lite.common.security.jaas_config import JAVA_LOGIN_CONFIG_PARAM
from kafka_lite.connect.runtime.distributed.connect_distributed import connect_distributed
from kafka_lite.connect.runtime.distributed.distributed_config import DistributedConfig
from kafka_lite.connect.util.kafka_based_log import client_configs
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.server.metrics_reporter import REQUEST_METRICS_TOPIC, inter_broker_login
from kafka_lite.streams.streams_config import StreamsConfig
from tests.support.herder import call
from tests.support.processes import base_port, terminate
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

KAFKA_LITE = str(Path(sys.executable).parent / "kafka-lite")
ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "chapters" / "ch11_security" / "authorization.md"
CONNECT_CONFIG = ROOT / "kafka_lite" / "connect" / "config" / "connect-distributed.properties"
JSON = "org.apache.kafka.connect.json.JsonConverter"
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="{}" password="{}";'


@dataclass
class SecureCluster:
    bootstrap: str  # the clients' SASL listener, as `cluster up` printed it
    admin: str  # the users' client properties files
    alice: str

    def login(self, user: str) -> dict[str, str]:
        """A user's login as kafka_lite's clients take it, read from the user's file."""
        return command_config(getattr(self, user))

    def properties(self, user: str) -> dict[str, str]:
        """A user's file as Kafka's settings (security.protocol, sasl.mechanism, sasl.jaas.config)."""
        lines = Path(getattr(self, user)).read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    directory = tmp_path_factory.mktemp("secure-tools") / "state"
    where = ["--dir", str(directory)]
    # No initial rebalance delay: each tool's group forms as soon as its one member joins.
    up = ["cluster", "up", "--kraft", "--secure", "--detach", "--brokers", "1", "--base-port", str(base_port(1)),
          "--override", "group.initial.rebalance.delay.ms=0", *where]  # fmt: skip
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        started = main(up)
    try:
        assert started == 0, printed.getvalue()
        bootstrap = re.search(r"bootstrap servers: (\S+)", printed.getvalue())[1]
        files = json.loads((directory / "cluster.json").read_text())["secure"]["users"]
        yield SecureCluster(bootstrap, files["admin"], files["alice"])
    finally:
        main(["cluster", "down", *where])


def on_the_secure_cluster(test):
    """An integration test on the module's secure cluster: on one xdist worker, which starts it once."""
    return pytest.mark.integration(pytest.mark.xdist_group("secure-tools")(test))


# -- helpers: what a learner types, and an independent reader ------------------------------------------


def grant(secure: SecureCluster, *acl: str) -> None:
    """``kafka-lite acls --add`` for User:alice, as admin (the super user)."""
    add = ["acls", "--bootstrap-server", secure.bootstrap, "--command-config", secure.admin, "--add",
           "--allow-principal", "User:alice", *acl]  # fmt: skip
    assert main(add) == 0


def create_topic(secure: SecureCluster, topic: str, partitions: int = 1) -> None:
    create = ["topics", "--bootstrap-server", secure.bootstrap, "--command-config", secure.admin, "--create",
              "--topic", topic, "--partitions", str(partitions), "--replication-factor", "1"]  # fmt: skip
    assert main(create) == 0


def produce(bootstrap: str, topic: str, values: list[bytes], login: dict) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, max_block_ms=10_000, **login)
    try:
        for value in values:
            producer.send(topic, value)
        producer.flush(20)
    finally:
        producer.close()


def records(bootstrap: str, topic: str, login: dict) -> list:
    """Every record of ``topic`` up to its end now, read with no group as the given user."""
    return read_topic(bootstrap, topic, "secure-reader", **login)


def cli(*args: str, cwd: Path | None = None) -> subprocess.Popen:
    """A kafka-lite command in its own process (it sets signal handlers), output and errors merged."""
    return subprocess.Popen([KAFKA_LITE, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)  # fmt: skip


def exits_by_itself(process: subprocess.Popen, timeout_s: float = 60) -> tuple[int, str]:
    """The exit code and output of a command expected to stop on its own: a hang fails the test."""
    try:
        out, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        out = terminate(process)
        pytest.fail(f"still running after {timeout_s} s instead of stopping on its error:\n{out}")
    return process.returncode, out


# -- the plumbing, without a cluster ------------------------------------------------------------------------


@pytest.mark.unit
def test_streams_hands_its_login_to_every_client_and_a_prefixed_setting_wins():
    alice = JAAS.format("alice", "pw-a")
    config = StreamsConfig({
        "application.id": "app", "bootstrap.servers": "127.0.0.1:1",
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": alice,
        "producer.sasl.jaas.config": JAAS.format("bob", "pw-b"),
    })  # fmt: skip
    for client in (config.get_consumer_configs("c"), config.get_restore_consumer_configs("c")):
        assert (client["security.protocol"], client["sasl.jaas.config"]) == ("SASL_PLAINTEXT", alice)
    assert config.get_producer_configs("c")["sasl.jaas.config"] == JAAS.format("bob", "pw-b")
    assert config.get_admin_configs("c") == {
        "client_id": "c-admin", "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_plain_username": "alice", "sasl_plain_password": "pw-a",
    }  # fmt: skip
    assert "sasl.jaas.config" not in config.task_config()  # the password stays with the clients
    with pytest.raises(ConfigException, match=r"security\.protocol"):
        StreamsConfig({"application.id": "app", "bootstrap.servers": "h:1", "security.protocol": "SSL"})


@pytest.mark.unit
def test_a_connect_worker_logs_in_its_internal_clients_and_leaves_the_tasks_to_the_prefixes():
    props = {
        "bootstrap.servers": "127.0.0.1:1", "group.id": "g", "key.converter": JSON, "value.converter": JSON,
        "internal.key.converter": JSON, "internal.value.converter": JSON, "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
        "security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": JAAS.format("worker", "pw-w"),
        "producer.sasl.jaas.config": JAAS.format("task", "pw-t"),
    }  # fmt: skip
    config = DistributedConfig(props)
    producer, consumer = client_configs(config.values, "connect-offsets")
    for client in (producer, consumer):
        assert client["security.protocol"] == "SASL_PLAINTEXT"
        assert client["sasl.jaas.config"] == JAAS.format("worker", "pw-w")
    assert admin_client_login(producer)["sasl_plain_username"] == "worker"
    assert config.originals_with_prefix("producer.") == {"sasl.jaas.config": JAAS.format("task", "pw-t")}
    plain, _ = client_configs(DistributedConfig({**props, "security.protocol": "PLAINTEXT"}).values, "x")
    assert admin_client_login(plain)["security_protocol"] == "PLAINTEXT"


@pytest.mark.unit
def test_the_metrics_reporter_logs_in_as_the_brokers_own_connections_do():
    broker = JAAS.format("admin", "pw-admin").replace(";", ' user_admin="pw-admin";')
    one_listener = {
        "security.inter.broker.protocol": "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": broker,
    }  # fmt: skip
    assert inter_broker_login(one_listener) == {
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "admin", "sasl_plain_password": "pw-admin",
    }  # fmt: skip
    # Kafka 0.10.2's named listeners: the inter-broker one's protocol comes from the map
    named = {"listener.security.protocol.map": "CLIENT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
             "listener.name.client.plain.sasl.jaas.config": broker}  # fmt: skip
    assert inter_broker_login({**named, "inter.broker.listener.name": "internal"}) == {}
    sasl_internal = {**named, "inter.broker.listener.name": "CLIENT"}
    assert inter_broker_login(sasl_internal)["sasl_plain_username"] == "admin"
    assert inter_broker_login({}) == {}  # a PLAINTEXT broker: nothing to log in with
    with pytest.raises(KafkaException, match=re.escape(JAVA_LOGIN_CONFIG_PARAM)):
        inter_broker_login({"security.inter.broker.protocol": "SASL_PLAINTEXT"})


# -- on the secure cluster ------------------------------------------------------------------------------


@on_the_secure_cluster
def test_the_metrics_reporter_writes_its_topic_logged_in_as_the_broker(secure):
    admin = secure.login("admin")

    def own_produce_requests() -> list[dict]:
        samples = [json.loads(r.value) for r in records(secure.bootstrap, REQUEST_METRICS_TOPIC, admin)]
        return [s for s in samples if (s["client_id"], s["api"]) == ("request-metrics-reporter-0", "Produce")]

    # The reporter's own Produce requests are sampled too, once the broker has taken them: one in
    # the topic proves it logged in, created the topic and wrote to it.
    samples = wait_until(own_produce_requests, timeout_s=20, what="the reporter's own writes in its topic")
    assert {s["broker_id"] for s in samples} == {0}


def long_value(record) -> int:
    return struct.unpack(">q", record.value)[0]  # Serdes.Long: 8 bytes, big-endian


# -- the guide's commands ------------------------------------------------------------------------------


def guide_commands(tool: str) -> list[str]:
    """The commands of the guide's ``sh`` blocks under ``### <tool>``, a continued line as one."""
    section = GUIDE.read_text(encoding="utf-8").split(f"\n### {tool}\n", 1)[1].split("\n#", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return [
        line.strip() for block in blocks for line in block.replace("\\\n", " ").splitlines() if line.strip()
    ]


def here(command: str, secure: SecureCluster, names: dict[str, str]) -> str:
    """A guide command for this cluster: its address and users' files, and names of this test's own
    for the guide's (ACLs only add up: a name another test granted would make a denial pass)."""
    command = command.replace("127.0.0.1:9092", secure.bootstrap)
    command = command.replace(".kafka-lite/admin.properties", secure.admin)
    command = command.replace(".kafka-lite/alice.properties", secure.alice)
    for guide_name, name in names.items():  # longest first where one name contains another
        command = command.replace(guide_name, name)
    return command


def run_acls(commands: list[str]) -> None:
    for command in commands:
        argv = shlex.split(command)
        assert argv[:2] == ["kafka-lite", "acls"], command
        assert main(argv[1:]) == 0, command


def run_shell(command: str, cwd: Path) -> None:
    subprocess.run(["sh", "-c", command], cwd=cwd, check=True, timeout=30)


# -- Streams --------------------------------------------------------------------------------------------


def wordcount_commands(
    secure: SecureCluster, app: str, source: str, sink: str
) -> tuple[list[str], list[str]]:
    """The guide's ACLs for word count, and the command that runs it with this test's names."""
    create_topic(secure, source, 2)
    create_topic(secure, sink)
    names = {"streams-wordcount-output": sink, "streams-plaintext-input": source, "streams-wordcount": app}
    *grants, run = [here(c, secure, names) for c in guide_commands("Streams")]
    argv = shlex.split(run)
    assert argv[:3] == ["kafka-lite", "streams", "wordcount"], run
    # The guide's run leaves the names to their defaults; a test names its own.
    return grants, [*argv[1:], "--application-id", app, "--input-topic", source, "--output-topic", sink]


@on_the_secure_cluster
def test_streams_without_create_stops_with_the_topic_authorization_failure_kafka_3_3_answers(
    secure, tmp_path
):
    app = topic_name("wc-denied")
    grants, wordcount = wordcount_commands(secure, app, topic_name("lines"), topic_name("counts"))
    # All but Create on the cluster, which another test may have granted: taken away first.
    revoke = ["acls", "--bootstrap-server", secure.bootstrap, "--command-config", secure.admin, "--remove",
              "--allow-principal", "User:alice", "--operation", "Create", "--cluster"]  # fmt: skip
    assert main(revoke) == 0
    run_acls([grant for grant in grants if "--cluster" not in grant])
    code, out = exits_by_itself(cli(*wordcount, "--state-dir", str(tmp_path)))
    assert code == 1, out
    # the command's last line: the thread's error, named as Kafka's would be. A KRaft controller asks
    # CREATE on the cluster or on the topic, and refuses the topic (Kafka 3.3's ControllerApis),
    # where a 0.11 broker asked the cluster alone and answered CLUSTER_AUTHORIZATION_FAILED.
    assert re.search(rf"StreamThread-1 stopped on an error: TopicAuthorizationException: {app}-Counts-"
                     r"(repartition|changelog): Not authorized to access the topic", out), out  # fmt: skip


@on_the_secure_cluster
def test_streams_word_count_with_its_acls_counts_every_word(secure, tmp_path, capsys):
    app, source, sink = topic_name("wc"), topic_name("lines"), topic_name("counts")
    grants, wordcount = wordcount_commands(secure, app, source, sink)
    run_acls(grants)
    lines = [f"the {word} and the {i}" for i, word in enumerate(["cat", "dog", "cat", "owl"] * 5)]
    produce(secure.bootstrap, source, [line.encode() for line in lines], secure.login("admin"))
    expected = Counter(word for line in lines for word in line.split())

    def counts() -> dict[str, int]:  # the last count written for each word
        return {r.key.decode(): long_value(r) for r in records(secure.bootstrap, sink, secure.login("admin"))}

    process = cli(*wordcount, "--state-dir", str(tmp_path), "--property", "commit.interval.ms=200")
    try:
        wait_until(
            lambda: counts() == expected, timeout_s=40, what=f"the counts of {sum(expected.values())} words"
        )
    finally:
        out = terminate(process)
    assert process.returncode == 0 and "closed" in out, out
    assert sum(counts().values()) == len(lines) * 5  # five words a line, none lost

    # The reset tool logs in with the same kind of file (as admin: it deletes the internal topics).
    reset = ["streams", "reset", "--application-id", app, "--bootstrap-server", secure.bootstrap,
             "--command-config", secure.admin, "--input-topics", source]  # fmt: skip
    assert main(reset) == 0
    assert f"{app}-Counts-changelog" in capsys.readouterr().out  # named as it is deleted
    listed = ["topics", "--bootstrap-server", secure.bootstrap, "--command-config", secure.admin, "--list"]
    assert wait_until(lambda: main(listed) == 0 and f"{app}-Counts" not in capsys.readouterr().out,
                      what="the internal topics deleted")  # fmt: skip


# -- Connect distributed ------------------------------------------------------------------------------


@dataclass
class ConnectRun:
    group: str
    topic: str  # the connectors' topic
    sink: str  # the sink connector's name
    grants: list[str]  # the guide's ACL commands, with this test's names
    worker: dict[str, str]  # the guide's worker.properties, made fast and named for this test


def connect_run(secure: SecureCluster, tmp_path: Path) -> ConnectRun:
    group, topic = topic_name("connect"), topic_name("connect-data")
    sink = f"{group}-sink"
    create_topic(secure, topic)
    names = {"connect-cluster": group, "connect-configs": f"{group}-configs",
             "connect-offsets": f"{group}-offsets", "connect-status": f"{group}-status",
             "connect-test": topic, "connect-local-file-sink": f"connect-{sink}"}  # fmt: skip
    commands = guide_commands("Connect")
    # the guide's two lines that write worker.properties, where they find Kafka's file and alice's
    (tmp_path / ".kafka-lite").mkdir()
    (tmp_path / ".kafka-lite" / "alice.properties").write_text(Path(secure.alice).read_text())
    config_dir = tmp_path / "kafka_lite" / "connect" / "config"
    config_dir.mkdir(parents=True)
    (config_dir / "connect-distributed.properties").write_text(CONNECT_CONFIG.read_text())
    for command in commands[:2]:
        run_shell(command, tmp_path)
    worker = properties_file(tmp_path / "worker.properties", "worker.properties")
    for prefix in ("", "producer.", "consumer."):  # the login, three times over
        assert worker[f"{prefix}security.protocol"] == "SASL_PLAINTEXT", worker
        assert worker[f"{prefix}sasl.jaas.config"] == secure.properties("alice")["sasl.jaas.config"]
    worker.update({
        "bootstrap.servers": secure.bootstrap, "group.id": group, "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets", "status.storage.topic": f"{group}-status",
        "offset.storage.partitions": "1", "status.storage.partitions": "1",
        "config.storage.replication.factor": "1", "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1", "rest.host.name": "127.0.0.1", "rest.port": "0",
        "offset.flush.interval.ms": "100", "session.timeout.ms": "6000", "heartbeat.interval.ms": "500",
    })  # fmt: skip
    return ConnectRun(group, topic, sink, [here(c, secure, names) for c in commands[2:]], worker)


@on_the_secure_cluster
def test_connect_distributed_without_read_on_its_group_exits_with_group_authorization_failed(
    secure, tmp_path
):
    run = connect_run(secure, tmp_path)
    run_acls(
        [grant for grant in run.grants if f"--group {run.group}" not in grant]
    )  # all but the workers' group
    worker = tmp_path / "denied.properties"
    worker.write_text("".join(f"{k}={v}\n" for k, v in run.worker.items()))
    code, out = exits_by_itself(cli("connect", "distributed", str(worker)))
    assert code == 1, out
    assert ("the herder stopped on an error: GroupAuthorizationException: Not authorized to access group: "
            f"{run.group}") in out  # fmt: skip


@on_the_secure_cluster
def test_connect_distributed_with_its_acls_copies_a_file_through_a_topic(secure, tmp_path):
    run = connect_run(secure, tmp_path)
    run_acls(run.grants)
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = [f"line {i}" for i in range(25)]
    source.write_text("".join(f"{line}\n" for line in lines))

    connect = connect_distributed(run.worker)
    connect.start()
    try:
        call(connect.herder.put_connector_config, f"{run.group}-source", {
            "name": f"{run.group}-source", "connector.class": "FileStreamSource", "tasks.max": "1",
            "file": str(source), "topic": run.topic}, False)  # fmt: skip
        call(connect.herder.put_connector_config, run.sink, {
            "name": run.sink, "connector.class": "FileStreamSink", "tasks.max": "1", "file": str(sink),
            "topics": run.topic}, False)  # fmt: skip
        wait_until(lambda: sink.exists() and len(sink.read_text().splitlines()) >= len(lines), timeout_s=30,
                   what=f"{len(lines)} lines in the sink's file")  # fmt: skip
        assert connect.herder.failure is None
    finally:
        connect.stop()
    assert sink.read_text().splitlines() == lines
    assert len(records(secure.bootstrap, run.topic, secure.login("admin"))) == len(lines)


# -- MirrorMaker, between the secure cluster and the session's plain one ------------------------------------


def write_properties(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


@on_the_secure_cluster
def test_mirror_maker_copies_from_the_secure_cluster_with_read_on_topic_and_group(secure, cluster, tmp_path):
    topic = topic_name("mirrored")
    create_topic(secure, topic, 2)
    cluster.create_topic(topic, partitions=2)
    values = [f"record {i}".encode() for i in range(30)]
    produce(secure.bootstrap, topic, values, secure.login("admin"))
    names = {"127.0.0.1:9192": cluster.bootstrap_servers, "mirror-orders": topic_name("mirroring"),
             "orders": topic}  # fmt: skip
    *setup, run = [here(c, secure, names) for c in guide_commands("MirrorMaker")]
    run_acls(setup[:1])
    for command in setup[1:]:  # the two files, as the guide writes them
        run_shell(command, tmp_path)
    argv = shlex.split(run)
    assert argv[:2] == ["kafka-lite", "mirror-maker"], run
    mirror = cli(*argv[1:], cwd=tmp_path)
    try:
        wait_until(lambda: len(read_topic(cluster.bootstrap_servers, topic)) >= len(values), timeout_s=30,
                   what=f"{len(values)} records mirrored")  # fmt: skip
    finally:
        out = terminate(mirror)
    assert mirror.returncode == 128 + 15, out  # stopped by SIGTERM, cleanly
    assert sorted(r.value for r in read_topic(cluster.bootstrap_servers, topic)) == sorted(values)


@on_the_secure_cluster
def test_mirror_maker_into_the_secure_cluster_without_write_stops_with_topic_authorization_failed(
    secure, cluster, tmp_path
):
    topic = topic_name("mirrored-in")
    cluster.create_topic(topic, partitions=1)
    produce(cluster.bootstrap_servers, topic, [b"one", b"two"], {})
    create_topic(secure, topic)
    grant(secure, "--operation", "Describe", "--topic", topic)  # alice sees the topic, may not write it
    consumer = write_properties(tmp_path / "source.properties", {
        "bootstrap.servers": cluster.bootstrap_servers, "group.id": topic_name("mirror-maker"),
        "auto.offset.reset": "earliest"})  # fmt: skip
    producer = write_properties(tmp_path / "target.properties",
                                {**secure.properties("alice"), "bootstrap.servers": secure.bootstrap})  # fmt: skip
    code, out = exits_by_itself(cli("mirror-maker", "--consumer.config", str(consumer), "--producer.config",
                                    str(producer), "--whitelist", topic))  # fmt: skip
    assert code == 1, out
    assert (
        f"MirrorMaker stopped: TopicAuthorizationException: {topic}-0: Not authorized to access the topic"
        in out
    )
    assert records(secure.bootstrap, topic, secure.login("admin")) == []
