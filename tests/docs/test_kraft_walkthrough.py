"""Chapter 12's quorum of processes, run as the page writes it, twice: its three ``raft test-server``
commands each in a process of its own (the reader's three terminals), ``raft describe`` until a
leader commits, the leader killed with ``kill -9`` and restarted with the same command, the quorum
healed, the voters stopped, then ``raft check``. The second round runs the same commands on the
directories the first left behind, as a reader who tries again without ``rm -rf /tmp/raft`` does:
the voters carry on from their old epochs and logs.

The commands are read out of the page's code blocks. Two things change: ``/tmp/raft`` becomes a
directory of the test's, and the page's ports 9990-9992 become free ones, so that the test shares
the machine with others."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "chapters" / "ch12_kraft" / "index.md"
PAGE_PORTS = ("9990", "9991", "9992")
DESCRIBED = re.compile(r"^leader (\d+) in epoch (\d+), high watermark (-?\d+)$", re.M)


def page_commands() -> tuple[list[str], str, str]:
    """The quorum section's commands, continuation lines joined: the three test-servers, the
    describe, the check (each block's first line; the lines after it are its output)."""
    section = GUIDE.read_text(encoding="utf-8").split("\n## A quorum of processes", 1)[1]
    section = section.split("\n## ", 1)[0]
    blocks = [b.replace("\\\n", " ") for b in re.findall(r"```sh\n(.*?)```", section, re.S)]
    commands = [" ".join(b.splitlines()[0].split()) for b in blocks]
    servers = [c for c in commands if c.startswith("kafka-lite raft test-server ")]
    (describe,) = [c for c in commands if c.startswith("kafka-lite raft describe ")]
    (check,) = [c for c in commands if c.startswith("kafka-lite raft check ")]
    assert len(servers) == 3, commands
    return servers, describe, check


class Walkthrough:
    def __init__(self, root: Path) -> None:
        port = free_ports(3)
        here = {"/tmp/raft": str(root / "raft"), "kafka-lite ": f"{ROOT / '.venv' / 'bin' / 'kafka-lite'} "}
        here.update({page: str(port + i) for i, page in enumerate(PAGE_PORTS)})
        servers, describe, check = page_commands()
        self.servers = {int(re.search(r"--node-id (\d+)", c)[1]): self._here(c, here) for c in servers}
        self.describe_command, self.check_command = self._here(describe, here), self._here(check, here)
        (root / "raft").mkdir(exist_ok=True)
        self.root = root
        self.processes: dict[int, subprocess.Popen] = {}

    @staticmethod
    def _here(command: str, here: dict[str, str]) -> str:
        for page, ours in here.items():
            command = command.replace(page, ours)
        return command

    def start(self, node_id: int) -> None:
        out = open(self.root / f"voter-{node_id}.out", "a")
        self.processes[node_id] = subprocess.Popen(["bash", "-c", "exec " + self.servers[node_id]],
                                                   stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        out.close()

    def described(self) -> tuple[int, int, int, list[int]] | None:
        """``raft describe`` as the page runs it: (leader, epoch, high watermark, log end offsets)."""
        done = subprocess.run(
            ["bash", "-c", self.describe_command], capture_output=True, text=True, timeout=30
        )
        match = DESCRIBED.search(done.stdout)
        if done.returncode != 0 or match is None:
            return None
        ends = [int(e) for e in re.findall(r"voter \d+: log end offset (-?\d+)", done.stdout)]
        return int(match[1]), int(match[2]), int(match[3]), ends

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()  # the reader's Ctrl-C
        for process in self.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def round(self) -> str:
        """Start the three, kill the leader and restart it, heal, stop; what ``raft check`` printed."""
        for node_id in self.servers:
            self.start(node_id)
        try:
            leader, epoch, _, _ = wait_until(
                lambda: (d := self.described()) and d[2] > 50 and d, 60, "a leader committing records"
            )
            os.kill(self.processes[leader].pid, signal.SIGKILL)  # kill -9
            self.processes[leader].wait(timeout=10)
            wait_until(
                lambda: (d := self.described()) and d[0] != leader and d[1] > epoch and d[2] > 0 and d,
                60, f"another voter to lead after voter {leader} was killed",
            )  # fmt: skip
            self.start(leader)  # the same command
            wait_until(
                lambda: (d := self.described()) and min(d[3]) >= d[2] > 0 and d,
                60, "every voter caught up with the high watermark",
            )  # fmt: skip
        finally:
            self.stop_all()
        done = subprocess.run(["bash", "-c", self.check_command], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout


def test_the_quorum_walkthrough_runs_as_written_twice(tmp_path):
    walkthrough = Walkthrough(tmp_path)
    for attempt in ("first", "second, on the first's directories"):
        said = walkthrough.round()
        assert "lost: 0" in said.splitlines(), f"{attempt} round: {said}"
        assert re.search(r"^committed: [1-9]\d* records", said, re.M), f"{attempt} round: {said}"
