"""Clusters of real broker processes (`kafka-lite cluster up`) for tests whose failure must be a real
crash (SIGKILL), on ports found free; a command stopped as an operator stops it (SIGTERM)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from kafka_lite.cli import cluster as launcher
from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_ports


def base_port(brokers: int = 3) -> int:
    """A port with the ``brokers`` ports from it free: `cluster up` refuses a port in use."""
    return free_ports(brokers)


def cluster_up(args: list[str], overrides: list[str]) -> tuple[int, int]:
    """``cluster up`` on free ports; its ZooKeeper port and its first broker's. A port found free may
    be taken by another test's process before the broker binds it; ``cluster up`` then stops what it
    started and fails, and we pick new ports. The request metrics reporter stays off: these tests
    count requests and replicas, and its traffic is not theirs."""
    for _ in range(3):
        zk_port = free_ports(4)  # ZooKeeper's, then the three brokers'
        base = zk_port + 1
        up = ["cluster", "up", "--detach", "--zookeeper-port", str(zk_port), "--base-port", str(base),
              "--no-metrics-reporter", *args]  # fmt: skip
        if main(up + [a for o in overrides for a in ("--override", o)]) == 0:
            return zk_port, base
    pytest.fail("kafka-lite cluster up failed three times on fresh ports (see the captured stderr)")


def terminate(process: subprocess.Popen, timeout_s: float = 30) -> str:
    """SIGTERM a command started with ``stdout=PIPE`` and return its output once it exits; one that
    outlives ``timeout_s`` is killed (its exit code then says so)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out


def alive(pid: int) -> bool:
    """The process runs (a zombie, an exited child not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ", 1)[1][0] != "Z"


def processes_under(directory: Path) -> list[str]:
    """The running processes (zombies left out) whose command line names ``directory``: what a
    cluster started there and has not stopped (its nodes, its ZooKeeper JVM), as "pid: command line"."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue  # gone meanwhile
            if str(directory) in cmdline and launcher._alive(int(entry.name)):
                pids.append(f"{entry.name}: {cmdline}")
    return pids
