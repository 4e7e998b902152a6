"""kafka_lite's own tools against a KRaft cluster as ``kafka-lite cluster up --kraft`` starts it (three
combined nodes, no ZooKeeper): ``topics --create`` and ``--describe`` (the controller creates the
topic, every partition on the three nodes, all in sync), ``console-producer`` with acks=all,
``console-consumer --group`` reading everything and committing it, and ``consumer-groups
--describe`` showing the group's committed offsets with no lag. The same commands run on the
ZooKeeper cluster in the other tests of tests/cli."""

from __future__ import annotations

import io
import sys

import pytest

from kafka_lite.cli.main import main
from tests.support.kraft_cluster import controller_command_config
from tests.support.topics import topic_name

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]

LINES = [f"k{i}|v{i}" for i in range(12)]


def run(capsys, *args: str) -> str:
    """The command's stdout; it must exit 0 and print no traceback."""
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err, f"{args[0]} exited {code}: {err}"
    return out


def table(out: str) -> list[list[str]]:
    """A rich table's body rows as lists of cells."""
    return [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]


def test_topics_console_producer_and_consumer_and_consumer_groups(kraft_cluster, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # a row stays one line however narrow the terminal
    bootstrap = ["--bootstrap-server", kraft_cluster.bootstrap_servers]
    topic, group = topic_name("kraft-tools"), topic_name("g-kraft-tools")

    run(capsys, "topics", *bootstrap, "--create", "--topic", topic, "--partitions", "3",
        "--replication-factor", "3")  # fmt: skip
    kraft_cluster.wait_for_leaders(topic, 3)
    rows = table(run(capsys, "topics", *bootstrap, "--describe", "--topic", topic))
    assert [r[1] for r in rows] == ["0", "1", "2"], rows
    for row in rows:
        assert row[2] in {"0", "1", "2"}, f"a leader among the nodes: {row}"
        assert sorted(row[3].split(",")) == sorted(row[4].split(",")) == ["0", "1", "2"], row

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("".join(f"{x}\n" for x in LINES).encode())))
    assert run(capsys, "console-producer", *bootstrap, "--topic", topic, "--property", "parse.key=true",
               "--property", "key.separator=|", "--request-required-acks", "all") == ""  # fmt: skip

    out = run(capsys, "console-consumer", *bootstrap, "--topic", topic, "--group", group, "--from-beginning",
              "--max-messages", str(len(LINES)), "--property", "print.key=true", "--property",
              "key.separator=|", "--timeout-ms", "20000")  # fmt: skip
    assert sorted(out.splitlines()) == sorted(LINES)

    described = run(capsys, "consumer-groups", *bootstrap, "--describe", "--group", group)
    header, *lines = described.splitlines()
    cells = [dict(zip(header.split(), line.split(), strict=False)) for line in lines]
    assert sorted(c["PARTITION"] for c in cells) == ["0", "1", "2"], described
    assert sum(int(c["CURRENT-OFFSET"]) for c in cells) == len(LINES), described
    assert all(c["LAG"] == "0" and c["CURRENT-OFFSET"] == c["LOG-END-OFFSET"] for c in cells), described


def _status(out: str) -> dict[str, str]:
    """``describe --status``'s ``Name: value`` lines."""
    return {name: value.strip() for name, _, value in (line.partition(":") for line in out.splitlines())}


@pytest.fixture
def controller_login(tmp_path) -> str:
    """A ``--command-config`` file logging in to the test cluster's SASL_PLAINTEXT CONTROLLER listener."""
    return controller_command_config(tmp_path)


def test_metadata_quorum_through_any_one_controller_finds_the_leader(kraft_cluster, capsys, controller_login):
    """``--bootstrap-controller`` with one controller's address, as chapter 12's page writes it: a
    follower's DescribeCluster names the active controller, which is asked (Kafka 3.7's Admin). The
    controllers' listener takes only a client that logs in."""
    addresses = [a.split("@")[1] for a in kraft_cluster.state["kraft"]["voters"].split(",")]
    leaders = {
        _status(run(capsys, "metadata-quorum", "--bootstrap-controller", address,
                    "--command-config", controller_login, "describe", "--status"))["LeaderId"]
        for address in addresses
    }  # fmt: skip
    assert len(leaders) == 1 and leaders != {"-1"}, leaders
    code = main(["metadata-quorum", "--bootstrap-controller", addresses[0], "describe", "--status"])
    assert code != 0 and "closed the connection" in capsys.readouterr().err


def test_metadata_quorum_through_each_broker_as_kafka_3_3s_tool_asks(kraft_cluster, capsys, controller_login):
    """``kafka-metadata-quorum.sh --bootstrap-server <a broker> describe --status``: each broker on
    its own forwards DescribeQuorum to the active controller, and the answer is the one the voters
    give (a broker that did not forward would close the connection: the tool would fail)."""
    voters = ",".join(a.split("@")[1] for a in kraft_cluster.state["kraft"]["voters"].split(","))
    from_voters = _status(
        run(
            capsys,
            "metadata-quorum",
            "--bootstrap-controller",
            voters,
            "--command-config",
            controller_login,
            "describe",
            "--status",
        )
    )
    for port in kraft_cluster.ports.values():
        status = _status(
            run(capsys, "metadata-quorum", "--bootstrap-server", f"127.0.0.1:{port}", "describe", "--status")
        )
        assert status["ClusterId"] == kraft_cluster.state["kraft"]["cluster_id"], status
        assert (status["LeaderId"], status["CurrentVoters"]) == (from_voters["LeaderId"], "[0,1,2]"), status
        assert int(status["HighWatermark"]) >= int(from_voters["HighWatermark"]) > 0, status
