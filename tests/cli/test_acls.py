"""``kafka-lite acls`` on ZooKeeper (Kafka 0.11's ``--authorizer-properties``): add, list, remove, the
``--producer``/``--consumer`` conveniences, and bad input refused with exit 2 and nothing written.
Its ``--bootstrap-server`` side runs against the secured cluster in tests/security."""

from __future__ import annotations

import json
import uuid

import pytest

from kafka_lite.cli.main import main
from kafka_lite.zk.zk_utils import ZkUtils

pytestmark = pytest.mark.integration


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["acls", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def zk_connect(zookeeper):
    return f"{zookeeper.connect_string}/acls-cli-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def zk(zk_connect):
    z = ZkUtils(zk_connect)
    yield z
    z.close()


def stored(zk: ZkUtils, path: str) -> set[tuple[str, str, str, str]]:
    data, _, _ = zk.read_data_maybe_null(f"/kafka-acl/{path}")
    if data is None:
        return set()
    return {
        (a["principal"], a["permissionType"], a["operation"], a["host"]) for a in json.loads(data)["acls"]
    }


def test_add_list_and_remove_in_zookeeper(zk_connect, zk, capsys):
    where = ["--authorizer-properties", f"zookeeper.connect={zk_connect}"]
    code, out, _ = _run(capsys, *where, "--add", "--allow-principal", "User:alice", "--allow-principal",
                        "User:bob", "--operation", "Read", "--operation", "Write", "--topic", "orders")  # fmt: skip
    assert code == 0
    assert "Adding ACLs for resource `Topic:orders`" in out
    assert stored(zk, "Topic/orders") == {
        (p, "Allow", op, "*") for p in ("User:alice", "User:bob") for op in ("Read", "Write")
    }
    code, out, _ = _run(capsys, *where, "--add", "--deny-principal", "User:bob", "--deny-host", "10.0.0.9",
                        "--operation", "Write", "--topic", "orders")  # fmt: skip
    assert code == 0 and ("User:bob", "Deny", "Write", "10.0.0.9") in stored(zk, "Topic/orders")
    code, out, _ = _run(capsys, *where, "--list", "--topic", "orders")
    assert code == 0
    assert "User:bob has Deny permission for operations: Write from hosts: 10.0.0.9" in out
    code, _, _ = _run(capsys, *where, "--remove", "--allow-principal", "User:bob", "--operation", "Read",
                      "--topic", "orders")  # fmt: skip
    assert code == 0 and ("User:bob", "Allow", "Read", "*") not in stored(zk, "Topic/orders")
    code, _, _ = _run(capsys, *where, "--remove", "--topic", "orders")  # every ACL of the topic
    assert code == 0 and stored(zk, "Topic/orders") == set()


def test_producer_and_consumer_conveniences(zk_connect, zk, capsys):
    where = ["--authorizer-properties", f"zookeeper.connect={zk_connect}"]
    code, _, _ = _run(capsys, *where, "--add", "--allow-principal", "User:carol", "--consumer", "--topic", "clicks",
                      "--group", "counters")  # fmt: skip
    assert code == 0
    assert stored(zk, "Topic/clicks") == {("User:carol", "Allow", op, "*") for op in ("Read", "Describe")}
    assert stored(zk, "Group/counters") == {("User:carol", "Allow", "Read", "*")}
    code, _, _ = _run(
        capsys, *where, "--add", "--allow-principal", "User:dave", "--producer", "--topic", "clicks"
    )
    assert code == 0
    assert {("User:dave", "Allow", op, "*") for op in ("Write", "Describe")} <= stored(zk, "Topic/clicks")
    assert ("User:dave", "Allow", "Create", "*") in stored(zk, "Cluster/kafka-cluster")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--add", "--allow-principal", "User:eve", "--operation", "Frob", "--topic", "t"], "'Frob' is not a valid operation"),
        (["--add", "--allow-principal", "User:eve", "--operation", "Read", "--cluster"], "ResourceType Cluster only supports"),
        (["--add", "--allow-principal", "User:eve", "--operation", "Create", "--group", "g"], "ResourceType Group only supports"),
        (["--add", "--allow-principal", "eve", "--topic", "t"], "--allow-principal"),
        (["--add", "--operation", "Read", "--topic", "t"], "--add needs --allow-principal"),
        (["--add", "--allow-principal", "User:eve"], "need a resource"),
        (["--add", "--allow-principal", "User:eve", "--consumer", "--topic", "t"], "--consumer needs --group"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_naming_the_problem_and_writes_nothing(zk_connect, zk, capsys, args, message):
    code, _, err = _run(capsys, "--authorizer-properties", f"zookeeper.connect={zk_connect}", *args)
    assert code == 2
    assert message in err.replace("\n", " ")
    assert all("User:eve" not in str(stored(zk, f"{t}/{n}")) for t, n in [("Topic", "t"), ("Group", "g")])
    assert "User:eve" not in str(stored(zk, "Cluster/kafka-cluster"))


def test_authorizer_properties_need_zookeeper_connect(capsys):
    code, _, err = _run(capsys, "--authorizer-properties", "super.users=User:x", "--list")
    assert code == 2 and "zookeeper.connect" in err
