"""``kafka-lite zookeeper-shell`` (zookeeper-shell.sh) on a real ZooKeeper: ``ls``, ``get`` and ``stat``
as ZooKeeper prints them, under a chroot too, several commands read from standard input, and every
mistake (a bad path, a missing znode, an unknown command, nothing listening) as one line."""

from __future__ import annotations

import io
import json

import pytest
from kazoo.client import KazooClient

from kafka_lite.cli import zookeeper_shell
from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port
from tests.support.topics import topic_name

pytestmark = pytest.mark.integration


@pytest.fixture
def tree(zookeeper):
    """A chroot of its own with a broker registration (ephemeral, as a broker's is) and a topic."""
    chroot = "/" + topic_name("zkshell")
    client = KazooClient(hosts=zookeeper.connect_string)
    client.start(timeout=10)
    client.create(
        f"{chroot}/brokers/topics/orders",
        json.dumps({"version": 1, "partitions": {"0": [1, 2]}}).encode(),
        makepath=True,
    )
    for broker_id in (2, 0, 1):
        client.create(f"{chroot}/brokers/ids/{broker_id}", b'{"version":4}', ephemeral=True, makepath=True)
    yield zookeeper.connect_string, chroot, client
    client.delete(chroot, recursive=True)
    client.stop()
    client.close()


def _run(capsys, *argv: str) -> tuple[int, list[str], str]:
    capsys.readouterr()
    code = main(["zookeeper-shell", *argv])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_ls_get_and_stat_print_as_zookeeper_does(tree, capsys):
    server, chroot, client = tree
    assert _run(capsys, server, "ls", f"{chroot}/brokers/ids") == (0, ["[0, 1, 2]"], "")

    code, lines, _ = _run(capsys, server, "get", f"{chroot}/brokers/topics/orders")
    assert code == 0
    assert json.loads(lines[0]) == {"version": 1, "partitions": {"0": [1, 2]}}
    fields = dict(line.split(" = ", 1) for line in lines[1:])
    assert list(fields) == [
        "cZxid", "ctime", "mZxid", "mtime", "pZxid", "cversion",
        "dataVersion", "aclVersion", "ephemeralOwner", "dataLength", "numChildren",
    ]  # fmt: skip
    assert fields["dataLength"] == str(len(client.get(f"{chroot}/brokers/topics/orders")[0]))
    assert fields["ephemeralOwner"] == "0x0", "a topic's znode is persistent"

    code, lines, _ = _run(capsys, server, "stat", f"{chroot}/brokers/ids/1")
    stat = dict(line.split(" = ", 1) for line in lines)
    assert code == 0 and stat["ephemeralOwner"] == hex(client.client_id[0]), (
        "a broker's registration is ephemeral: owned by the session that made it"
    )
    assert _run(capsys, server, "stat", f"{chroot}/brokers/ids")[1][-1] == "numChildren = 3"


def test_a_chroot_in_the_connect_string_roots_the_paths(tree, capsys):
    server, chroot, _ = tree
    assert _run(capsys, server + chroot, "ls", "/brokers") == (0, ["[ids, topics]"], "")


def test_commands_read_from_standard_input_share_one_connection(tree, capsys, monkeypatch):
    server, chroot, _ = tree
    commands = (
        f"ls {chroot}/brokers\n\nget {chroot}/nothing\nrm {chroot}\nls {chroot}/brokers/ids\nquit\nls /\n"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(commands))
    code, lines, _ = _run(capsys, server)
    assert lines == [
        "[ids, topics]",
        f"Node does not exist: {chroot}/nothing",
        "usage: ls path | get path | stat path | quit",
        "[0, 1, 2]",
    ], "each line runs in turn, a bad one is reported and the shell goes on; quit ends it"
    assert code == 1, "a shell in which a command failed exits 1"


@pytest.mark.parametrize(
    ("argv", "message", "exit_code"),
    [
        (["ls", "brokers"], "Path must start with / character", 2),
        (["get", "/brokers/"], "Path must start with / character", 2),
        (["stat"], "a path is required", 2),
        (["get", "/no/such/znode"], "Node does not exist: /no/such/znode", 1),
    ],
)
def test_a_bad_path_or_a_missing_znode_is_one_line(zookeeper, capsys, argv, message, exit_code):
    code, lines, err = _run(capsys, zookeeper.connect_string, *argv)
    assert (code, lines) == (exit_code, [])
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_unknown_command_is_refused_before_connecting(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["zookeeper-shell", "127.0.0.1:1", "rmr", "/brokers"])
    assert exit_info.value.code == 2 and "invalid choice: 'rmr'" in capsys.readouterr().err


def test_nothing_listening_is_named(capsys, monkeypatch):
    monkeypatch.setattr(zookeeper_shell, "CONNECT_TIMEOUT_S", 1)
    server = f"127.0.0.1:{free_port()}"
    code, _, err = _run(capsys, server, "ls", "/")
    assert code == 1 and f"cannot connect to ZooKeeper at {server}" in err
