"""Chapter 1's quick start (1.4.1 and 1.4.2), run as the page writes it, twice: the second time in
the same directory, on the files the first left behind, as a reader who runs a block again does.

1.4.1, a single node: the block is run whole by bash, its ZooKeeper and broker in the background
as the page's ``&`` puts them, down to its ``kill``; then every process it started must be gone.
After each server's line the test adds one of its own: the reader's wait for the ready line the
page names (ZooKeeper's "running at", the broker's "started on"), a bash loop that polls the
output for it within the run's deadline.
The second run finds ``single/`` as the first left it: the topic is kept (``--if-not-exists``), the
log holds both runs' "hello kafka", and the consumer from the beginning prints the first.

1.4.2, a cluster: each command of the block in turn, as a reader types them. After ``cluster kill
1`` the page's own ``--describe`` is repeated until the controller has moved broker 1's
leaderships to the other replicas and taken it out of every ISR: the page says that takes about
the ZooKeeper session timeout (6 s), and that the describe right after the kill still shows broker
1. Between the runs the reader's ``kafka-lite cluster down`` (the end of 1.4.3) stops the cluster and
keeps ``.kafka-lite``.

The commands are read out of the page's code blocks, and ``kafka-lite`` is the checkout's (its
``.venv/bin`` first on ``PATH``). Only addresses change, so that the test shares the machine with
others: the page's fixed ports 2181 and 9092 become free ones. 1.4.1's ``2181`` and ``9092`` are
replaced wherever they appear; in 1.4.2 ``127.0.0.1:9092`` is replaced, and ``cluster up`` is given
``--zookeeper-port`` and ``--base-port`` for the ports it takes by default."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "chapters" / "ch01_introduction" / "index.md"
SESSION_TIMEOUT_S = 6  # the brokers' zookeeper.session.timeout.ms, which the page explains


def block(heading: str) -> str:
    """The first ``sh`` block under the ``###`` heading ``heading``."""
    section = PAGE.read_text(encoding="utf-8").split(f"\n### {heading}\n", 1)[1].split("\n### ", 1)[0]
    return re.search(r"```sh\n(.*?)```", section, re.S)[1]


def environment() -> dict[str, str]:
    env = dict(os.environ, COLUMNS="200")  # the describe table on one line per partition
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def processes_in_session(sid: int) -> list[int]:
    """The pids of the live processes of session ``sid`` (zombies left out)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if stat[0] != "Z" and int(stat[3]) == sid:  # state, ppid, pgrp, session
            pids.append(int(entry.name))
    return pids


# What the reader waits to see before the next line (the page says so): each server's "ready" line.
READY = {
    "zookeeper start": ("ZooKeeper running at 127.0.0.1:{port}", "2181"),
    "broker start": ("Broker 0 started on PLAINTEXT://127.0.0.1:{port}", "9092"),
}


def waited_for(ready: tuple[str, str], output: Path, zk_port: int, broker_port: int) -> str:
    """A line of bash after a server's ``&``: the reader watching for its ready line, and stopping
    if the server has exited instead (the outer wait is the deadline)."""
    line, page = ready
    seen = line.replace("{port}", str(zk_port if page == "2181" else broker_port))
    return f'\nuntil grep -qF "{seen}" {output}; do kill -0 $! || exit 1; sleep 0.05; done'


def test_the_single_node_quick_start_runs_as_written_twice(tmp_path):
    zk_port, broker_port = (port := free_ports(2)), port + 1
    script = block("1.4.1 A single node")
    assert "2181" in script and "9092" in script, script
    script = script.replace("2181", str(zk_port)).replace("9092", str(broker_port))
    text = PAGE.read_text(encoding="utf-8")
    assert all(f"`{ready.replace('{port}', page)}" in text for ready, page in READY.values()), READY
    env = environment()

    printed = []
    for attempt in ("first", "second"):
        # A session of its own: every process the block starts is in it, so the test can tell that
        # the block's `kill` stopped them all, and can stop what it left (by that session's group).
        # The output goes to a file: the background processes would hold a pipe open after bash exits.
        output = tmp_path / f"{attempt}.out"
        ours = "\n".join(line + "".join(waited_for(ready, output, zk_port, broker_port) for command, ready
                                      in READY.items() if f"kafka-lite {command} " in line)
                          for line in script.splitlines())  # fmt: skip
        with open(output, "w") as out:
            run = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", ours], cwd=tmp_path, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        sid = run.pid
        try:
            run.wait(timeout=120)
            assert run.returncode == 0, f"{attempt} run:\n{output.read_text()[-6000:]}"
            wait_until(lambda sid=sid: not processes_in_session(sid), 30,
                       f"the {attempt} run's broker and ZooKeeper to exit after its kill")  # fmt: skip
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
            if processes_in_session(sid):
                os.killpg(sid, signal.SIGKILL)
        said = output.read_text()
        lines = said.splitlines()
        assert lines.count("hello kafka") == 1, f"{attempt} run:\n{said[-6000:]}"
        assert ('Created topic "test".' in lines) == (attempt == "first"), said[-6000:]
        dumped = subprocess.run(
            ["kafka-lite", "dump-log", "--print-data-log", "single/data/test-0/00000000000000000000.log"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert dumped.returncode == 0, dumped.stderr
        printed.append(re.findall(r"payload: (.*)$", dumped.stdout, re.M))
    assert printed == [["hello kafka"], ["hello kafka", "hello kafka"]], printed
    assert (tmp_path / "single" / "zookeeper").is_dir()


def describe(command: str, cwd: Path, env: dict[str, str]) -> dict[int, tuple[int, list[int], list[int]]]:
    """The page's ``--describe --topic t``: each partition's leader, replicas and ISR."""
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {}
    for line in done.stdout.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 5 and cells[0] == "t" and cells[1].isdigit():
            replicas = [int(r) for r in cells[3].split(",") if r]
            isr = [int(r) for r in cells[4].split(",") if r]
            rows[int(cells[1])] = (int(cells[2]) if cells[2].lstrip("-").isdigit() else -1, replicas, isr)
    assert len(rows) == 3, done.stdout
    return rows


def test_the_cluster_quick_start_moves_leadership_on_a_kill_as_written_twice(tmp_path):
    zk_port = free_ports(4)  # ZooKeeper's, then the three brokers'
    base = zk_port + 1
    commands = [line for line in block("1.4.2 A distributed cluster").splitlines() if line.strip()]
    up, create, described, kill, described_again, restart = commands
    assert up.startswith("kafka-lite cluster up --detach --brokers 3 ") and kill.startswith(
        "kafka-lite cluster kill 1 "
    )
    assert restart == "kafka-lite cluster restart 1" and "--if-not-exists" in create
    assert described_again.split("#")[0].strip() == described.strip(), (described, described_again)
    ports = f"--zookeeper-port {zk_port} --base-port {base}"
    commands = [c.replace("127.0.0.1:9092", f"127.0.0.1:{base}") for c in commands]
    commands[0] = up.replace("--brokers 3", f"--brokers 3 {ports}")
    up, create, described, kill, described_again, restart = commands
    env = environment()

    def run(command: str) -> str:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
        return done.stdout

    try:
        for attempt in ("first", "second"):
            run(up)
            assert ('Created topic "t".' in run(create)) == (attempt == "first")
            before = describe(described, tmp_path, env)
            led_by_1 = {p for p, (leader, _, _) in before.items() if leader == 1}
            if attempt == "first":  # a new topic: every ISR holds both replicas, and broker 1 leads one
                assert all(isr == replicas for _, replicas, isr in before.values()), before
                assert led_by_1, before
            run(kill)
            killed = time.monotonic()
            right_after = describe(described_again, tmp_path, env)
            if time.monotonic() - killed < SESSION_TIMEOUT_S - 1:  # the page: broker 1 still shown
                assert all(right_after[p][0] == 1 for p in led_by_1), right_after

            def moved():
                rows = describe(described_again, tmp_path, env)
                done = all(leader != 1 and 1 not in isr for leader, _, isr in rows.values())
                return done and rows

            after = wait_until(moved, 30, f"broker 1's leaderships moved ({attempt} run)")
            seconds = time.monotonic() - killed
            for p in led_by_1:  # to the other replica
                assert after[p][0] == next(r for r in before[p][1] if r != 1), (before, after)
            if led_by_1 or any(1 in isr for _, _, isr in before.values()):
                # not before ZooKeeper has let broker 1's session expire
                assert seconds > SESSION_TIMEOUT_S - 1.5, f"moved {seconds:.1f} s after the kill"
            run(restart)
            run("kafka-lite cluster down")  # 1.4.3's last command; .kafka-lite stays
        assert (tmp_path / ".kafka-lite" / "logs").is_dir(), "down keeps the cluster's directory"
    finally:
        subprocess.run(["bash", "-c", "kafka-lite cluster down"], cwd=tmp_path, env=env, capture_output=True,
                       timeout=180)  # fmt: skip
