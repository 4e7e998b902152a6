"""``kafka-lite cluster up --kraft``: three combined KRaft nodes as real processes on free ports, their
status against the quorum's own answer, the active controller killed and restarted, a broker paused
until it is fenced and resumed; one controller-only node beside one broker-only node taking records;
the flags KRaft refuses."""

from __future__ import annotations

import io
import json
import re

import pytest
from kafka import KafkaProducer

from kafka_lite.cli.main import main
from tests.support.kraft_cluster import STANDARD_AUTHORIZER, controller_command_config
from tests.support.processes import alive, base_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

# Quick elections and short broker sessions, so that a killed controller is replaced and a paused
# broker fenced within a few seconds; a little slower than tests/kraft/nodes.py's, since a resumed
# voter (no pre-vote in Kafka 3.3) starts elections that a loaded machine must settle.
QUICK = [
    "controller.quorum.election.timeout.ms=500",
    "controller.quorum.fetch.timeout.ms=2000",
    "broker.session.timeout.ms=2000",
    "broker.heartbeat.interval.ms=250",
    "offsets.topic.num.partitions=2",
    "num.network.threads=1",
    "num.io.threads=2",
    *STANDARD_AUTHORIZER,
]


def _up(directory, brokers: int, *extra: str) -> dict:
    """``cluster up --kraft --detach`` on free ports (new ones if a port was taken meanwhile)."""
    for _ in range(3):
        args = ["cluster", "up", "--kraft", "--detach", "--dir", str(directory), "--brokers", str(brokers),
                "--base-port", str(base_port(brokers)), *extra]  # fmt: skip
        if main(args + [a for o in QUICK for a in ("--override", o)]) == 0:
            return json.loads((directory / "cluster.json").read_text())
    pytest.fail("kafka-lite cluster up --kraft failed three times on fresh ports (see the captured stderr)")


def _down(directory, state: dict) -> None:
    assert main(["cluster", "down", "--dir", str(directory)]) == 0
    pids = [n["pid"] for n in state["brokers"]]
    assert not [p for p in pids if alive(p)], "down leaves no process behind"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    directory = tmp_path_factory.mktemp("kraft-cluster") / "state"
    _up(directory, 3)
    try:
        yield directory
    finally:
        _down(directory, json.loads((directory / "cluster.json").read_text()))


def _status(directory, capsys) -> dict[int, str]:
    """``cluster status``: each node's row, by id."""
    capsys.readouterr()
    main(["cluster", "status", "--dir", str(directory)])
    out = capsys.readouterr().out
    return {
        int(m.group(1)): m.group(0) for m in re.finditer(r"^│ (?:broker|controller) (\d+) .*$", out, re.M)
    }


def _active(rows: dict[int, str]) -> list[int]:
    return [n for n, row in rows.items() if "active controller" in row]


def _quorum_leader(directory, capsys) -> int:
    """The leader as ``kafka-lite metadata-quorum describe --status`` has it, from the voters' addresses."""
    state = json.loads((directory / "cluster.json").read_text())
    voters = ",".join(address.split("@")[1] for address in state["kraft"]["voters"].split(","))
    capsys.readouterr()
    login = controller_command_config(directory.parent)
    assert main(["metadata-quorum", "--bootstrap-controller", voters, "--command-config", login, "describe",
                 "--status"]) == 0  # fmt: skip
    return int(re.search(r"LeaderId:\s+(\d+)", capsys.readouterr().out).group(1))


def test_status_names_the_quorums_leader_as_the_active_controller(cluster, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    state = json.loads((cluster / "cluster.json").read_text())
    assert "zookeeper" not in state and state["kraft"]["cluster_id"]
    assert [n["roles"] for n in state["brokers"]] == [["broker", "controller"]] * 3
    rows = _status(cluster, capsys)
    assert sorted(rows) == [0, 1, 2] and all("unfenced" in row for row in rows.values())
    assert _active(rows) == [_quorum_leader(cluster, capsys)]


def test_killing_the_active_controller_elects_another_and_restart_brings_it_back(
    cluster, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")
    [killed] = _active(_status(cluster, capsys))
    # An ACL, created before the kill: it is metadata, so the restarted node has it again.
    acl_filter = _create_acl(cluster)
    assert main(["cluster", "kill", str(killed), "--dir", str(cluster)]) == 0
    rows = wait_until(
        lambda: (rows := _status(cluster, capsys)) and _active(rows) not in ([], [killed]) and rows,
        15,
        "another node named the active controller",
    )
    assert "stopped" in rows[killed]
    assert main(["cluster", "restart", str(killed), "--dir", str(cluster)]) == 0
    # restart returns once the node is back: registered anew (unfenced) and its voter caught up
    rows = _status(cluster, capsys)
    assert "unfenced" in rows[killed] and "stopped" not in rows[killed]
    assert _described_acls(cluster, killed, acl_filter) == ["User:alice"], (
        "the ACL the restarted node replayed"
    )


def _create_acl(directory) -> object:
    """An ACL for alice on a topic of this test, created with kafka-python; the filter that finds it."""
    from kafka.admin import ACL, ACLFilter, ACLOperation, ACLPermissionType, KafkaAdminClient, ResourcePattern
    from kafka.admin import ResourceType as KResourceType

    state = json.loads((directory / "cluster.json").read_text())
    pattern = ResourcePattern(KResourceType.TOPIC, "kraft-cluster-acl")
    admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{state['brokers'][0]['port']}")
    try:
        acl = ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW, pattern)
        assert admin.create_acls([acl])["failed"] == []
    finally:
        admin.close()
    return ACLFilter("User:alice", None, ACLOperation.ANY, ACLPermissionType.ANY, pattern)


def _described_acls(directory, node_id: int, acl_filter) -> list[str]:
    """The principals of the ACLs node ``node_id`` itself answers DescribeAcls with (asked on its own
    port, not whichever broker a client picks), for the topic of ``acl_filter``."""
    from kafka_lite.common.protocol.api_keys import ApiKeys
    from tests.support.wire import WireClient

    state = json.loads((directory / "cluster.json").read_text())
    (node,) = [n for n in state["brokers"] if n["id"] == node_id]
    client = WireClient(node["port"])
    try:
        answer = client.call(ApiKeys.DESCRIBE_ACLS, 0, {
            "resource_type": 2, "resource_name": acl_filter.resource_pattern.resource_name, "principal": None,
            "host": None, "operation": 1, "permission_type": 1,
        })  # fmt: skip
    finally:
        client.close()
    assert answer["error_code"] == 0, answer
    return [acl["principal"] for resource in answer["resources"] for acl in resource["acls"]]


def test_a_paused_broker_is_fenced_after_its_session_and_unfenced_once_resumed(cluster, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    rows = _status(cluster, capsys)
    paused = next(n for n in rows if n not in _active(rows))  # the quorum keeps its leader
    assert main(["cluster", "pause", str(paused), "--dir", str(cluster)]) == 0
    try:
        row = wait_until(
            lambda: "fenced" in (row := _status(cluster, capsys)[paused]) and "unfenced" not in row and row,
            15,
            f"node {paused} shown fenced once its session expired",
        )
        assert "paused" in row
    finally:
        assert main(["cluster", "resume", str(paused), "--dir", str(cluster)]) == 0
    wait_until(lambda: "unfenced" in _status(cluster, capsys)[paused], 30, f"node {paused} unfenced again")


def test_a_controller_only_node_and_a_broker_only_node_take_records_and_again_after_a_second_up(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "200")
    directory = tmp_path / "state"
    state = _up(directory, 1, "--controllers", "1")
    try:
        assert [(n["id"], n["roles"]) for n in state["brokers"]] == [(1000, ["controller"]), (0, ["broker"])]
        assert "port" not in state["brokers"][0] and "controller_port" not in state["brokers"][1]
        rows = _status(directory, capsys)
        assert "active controller" in rows[1000] and "unfenced" in rows[0]
        bootstrap = f"127.0.0.1:{state['brokers'][1]['port']}"
        assert main(["topics", "--bootstrap-server", bootstrap, "--create", "--topic", "t", "--partitions", "1",
                     "--replication-factor", "1"]) == 0  # fmt: skip
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0, retries=5)
        try:
            assert producer.send("t", b"v").get(timeout=15).offset == 0
        finally:
            producer.close()
    finally:
        _down(directory, state)

    # Up again on the same directory, as a reader who runs the quick start a second time: the nodes
    # carry on from their metadata logs and data, so the topic and its record are still there.
    state = _up(directory, 1, "--controllers", "1")
    try:
        bootstrap = f"127.0.0.1:{state['brokers'][1]['port']}"
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0, retries=5)
        try:
            assert producer.send("t", b"w").get(timeout=15).offset == 1, "the first up's record is gone"
        finally:
            producer.close()
    finally:
        _down(directory, state)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--controllers", "1"], "--controllers needs --kraft"),
        (["--kraft", "--zookeeper-port", "2181"], "a KRaft cluster has no ZooKeeper"),
        (["--kraft", "--controllers", "-1"], "--controllers must be at least 0"),
    ],
)
def test_flags_kraft_refuses_exit_with_code_2_and_say_why(tmp_path, capsys, flags, message):
    assert main(["cluster", "up", "--dir", str(tmp_path / "state"), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "state" / "cluster.json").exists()


@pytest.mark.unit
@pytest.mark.parametrize("width", [80, 120])
def test_the_status_table_keeps_every_address_whole_in_a_narrow_terminal(width):
    """A controller's port is random and the next command needs it: at 80 columns the columns
    around the address wrap, and each address shows whole (as rich would print it to a terminal)."""
    from rich.console import Console

    from kafka_lite.cli.cluster_kraft import status_table

    nodes = [{"id": i, "pid": 4_000_000 + i, "port": 19092 + i, "controller_port": 40123 + i,
              "roles": ["broker", "controller"]} for i in range(3)]  # fmt: skip
    state = {"dir": "/home/learner/.kafka-lite/cluster-kraft", "brokers": nodes}
    health = {"brokers_alive": {0: True, 1: True, 2: False}, "leaders": {0: 2, 1: 1, 2: 0},
              "registered": [0, 1], "controller": 0, "quorum": None, "topics": ["orders"],
              "under_replicated": 0, "offline": 0}  # fmt: skip
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(status_table(state, health))
    shown = console.export_text()
    assert max(len(line) for line in shown.splitlines()) <= width, shown
    for node in nodes:
        for port in (node["port"], node["controller_port"]):
            assert re.search(rf"│ 127\.0\.0\.1:{port}\s+│", shown), (port, shown)


@pytest.mark.unit
def test_a_second_up_keeps_the_cluster_id_of_the_same_nodes_and_refuses_another_layout(tmp_path):
    from kafka_lite.cli import CliError
    from kafka_lite.cli.cluster_kraft import kept_cluster_id, plan_nodes

    state = {"dir": str(tmp_path)}
    combined = plan_nodes(3, 0, 19092, set())
    assert kept_cluster_id(state, combined) is None, "an empty directory holds no cluster"
    for name in ("broker-0", "broker-1", "broker-2"):
        (tmp_path / name / "metadata").mkdir(parents=True)
        (tmp_path / name / "metadata" / "meta.properties").write_text(
            "cluster.id=MkU3OEVBNTcwNTJENDM2Qg\nnode.id=0\nversion=1\n"
        )
    assert kept_cluster_id(state, combined) == "MkU3OEVBNTcwNTJENDM2Qg"
    with pytest.raises(
        CliError, match=r"holds a KRaft cluster of nodes broker-0, broker-1, broker-2 .* remove"
    ):
        kept_cluster_id(state, plan_nodes(1, 1, 19092, set()))


@pytest.mark.unit
@pytest.mark.parametrize(
    "left, flags, message",
    [
        ("broker-0/data/meta.properties", ["--kraft"], "holds the data of a ZooKeeper cluster (broker-0) from an "
         "earlier `cluster up`: remove it"),
        ("broker-0/metadata/meta.properties", [], "holds the data of a KRaft cluster (broker-0) from an earlier "
         "`cluster up --kraft`: remove it"),
    ],
)  # fmt: skip
def test_up_on_the_other_modes_data_says_what_to_remove(tmp_path, capsys, left, flags, message):
    (tmp_path / left).parent.mkdir(parents=True)
    (tmp_path / left).write_text("version=0\nbroker.id=0\n")
    assert main(["cluster", "up", "--dir", str(tmp_path), *flags]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert message in err, err
