"""Chapter 12's KRaft brokers page, its blocks run as the page writes them, twice, the second time on
the state the first left behind, as a reader who runs a block again does.

The combined node: the page's ``node.properties`` written as it stands, formatted and started with
the page's two commands, then the page's ``metadata-quorum`` pair of "Reading the metadata log",
which the page runs against that node, then the node stopped (Ctrl-C). The second round's
``storage format`` refuses the formatted directory in one line, and the node carries on from it in
the quorum's next epoch.

``cluster up --kraft``: the block's commands in turn (up, ``cluster kill 1``, ``status``,
``down``); after the kill, ``status`` until the quorum has a leader other than node 1, in a later
epoch if node 1 was the leader; the second round's ``up`` starts all three nodes again and carries
on from ``.kafka-lite`` with the same cluster id.

The commands are read out of the page's code blocks, and ``kafka-lite`` is the checkout's (its
``.venv/bin`` first on ``PATH``). Only addresses and directories change, so that the test shares the
machine with others: ``/tmp/kraft`` becomes a directory of the test's, the combined node's ports
9092 and 9093 free ones, and ``cluster up`` is given ``--base-port`` for the brokers' 9092-9094."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kafka_lite.utils.ports import free_ports
from tests.support.processes import terminate
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "chapters" / "ch12_kraft" / "kraft_brokers.md"


def section(heading: str) -> str:
    return PAGE.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def commands(block: str) -> list[str]:
    """A block's commands, the comments after them left out."""
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def environment() -> dict[str, str]:
    env = dict(os.environ, COLUMNS="200")  # the status table's rows on one line each
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def bash(command: str, cwd: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def test_the_combined_node_and_the_metadata_quorum_pair_run_as_written_twice(tmp_path):
    brokers = section("A broker without ZooKeeper: `BrokerServer`")
    combined = brokers.split("A single combined node", 1)[1]
    (properties,) = fenced(combined.split("```sh", 1)[0], "properties")
    format_, start = commands(fenced(combined, "sh")[0])
    status, replication = commands(fenced(section("Reading the metadata log"), "sh")[1])
    assert (
        format_.startswith("kafka-lite storage format ")
        and start == "kafka-lite broker start node.properties"
    )
    assert (
        "127.0.0.1:9092" in status
        and "127.0.0.1:9093" in replication
        and "describe --replication" in replication
    )

    port = free_ports(2)
    here = {"/tmp/kraft": str(tmp_path / "kraft"), "127.0.0.1:9092": f"127.0.0.1:{port}",
            "127.0.0.1:9093": f"127.0.0.1:{port + 1}"}  # fmt: skip

    def ours(text: str) -> str:
        for page, mine in here.items():
            text = text.replace(page, mine)
        return text

    assert all(page in properties for page in here), properties
    (tmp_path / "node.properties").write_text(ours(properties))
    env = environment()
    epochs = []
    for attempt in ("first", "second"):
        formatted = bash(ours(format_), tmp_path, env)
        said = formatted.stdout + formatted.stderr
        if attempt == "first":
            assert formatted.returncode == 0, said
        else:
            assert formatted.returncode != 0 and "is already formatted" in said, said
            assert "--ignore-formatted" in said and len(said.strip().splitlines()) == 1, said
        node = subprocess.Popen(["bash", "-c", "exec " + start], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        try:
            described = wait_until(
                lambda: (done := bash(ours(status), tmp_path, env, 30)).returncode == 0 and done.stdout,
                60, f"the combined node to answer describe --status ({attempt} round)",
            )  # fmt: skip
            assert re.search(r"^LeaderId:\s+1$", described, re.M), described
            assert re.search(r"^CurrentVoters:\s+\[1\]$", described, re.M), described
            epochs.append(int(re.search(r"^LeaderEpoch:\s+(\d+)$", described, re.M)[1]))
            rows = bash(ours(replication), tmp_path, env, 30)
            assert rows.returncode == 0, rows.stdout + rows.stderr
            assert re.search(r"^1\s+\d+\s+0\s+.*\bLeader\b", rows.stdout, re.M), rows.stdout
        finally:
            node.send_signal(signal.SIGINT)  # Ctrl-C
            out = terminate(node)
        assert node.returncode == 0, f"{attempt} round: the node exited {node.returncode}:\n{out[-4000:]}"
    assert epochs[1] > epochs[0], f"the second start carries on from the first's log: epochs {epochs}"


QUORUM = re.compile(r"quorum: leader (\d+), epoch (\d+)")


def test_the_kraft_cluster_block_runs_as_written_twice(tmp_path):
    block = fenced(section("A KRaft cluster from one command"), "sh")[0]
    up, kill, status, down = commands(block)
    assert up == "kafka-lite cluster up --kraft --detach" and kill == "kafka-lite cluster kill 1"
    assert (status, down) == ("kafka-lite cluster status", "kafka-lite cluster down")
    up = f"{up} --base-port {free_ports(3)}"
    env = environment()

    def run(command: str) -> str:
        done = bash(command, tmp_path, env)
        assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
        return done.stdout

    cluster_ids = []
    try:
        for attempt in ("first", "second"):
            leader, epoch = (int(n) for n in QUORUM.search(run(up)).groups())
            meta = (tmp_path / ".kafka-lite" / "broker-0" / "metadata" / "meta.properties").read_text()
            cluster_ids.append(re.search(r"^cluster\.id=(\S+)$", meta, re.M)[1])
            run(kill)
            killed = time.monotonic()

            def quorum_without_node_1():
                done = bash(status, tmp_path, env)
                assert done.returncode == 1, done.stdout + done.stderr  # a stopped node: not healthy
                said = done.stdout
                row = re.search(r"^│ broker 1 .*$", said, re.M)[0]
                now = QUORUM.search(said)
                return "stopped" in row and now and int(now[1]) != 1 and (int(now[1]), int(now[2]))

            new_leader, new_epoch = wait_until(
                quorum_without_node_1, 30, f"a leader other than node 1 ({attempt})"
            )
            if leader == 1:  # another voter took over, in a new epoch, within the page's seconds
                assert new_epoch > epoch and time.monotonic() - killed < 10, (epoch, new_epoch)
            else:
                assert (new_leader, new_epoch) == (leader, epoch)
            run(down)
        assert cluster_ids[0] == cluster_ids[1], "the second up carries on with the first's cluster"
    finally:
        bash("kafka-lite cluster down", tmp_path, env, 180)
