"""Three Raft voters as processes on loopback (``kafka-lite raft test-server``), the leader SIGKILLed
and restarted ten times while its workload runs; then every record a leader reported committed by the
time the quorum healed must be in every voter's log, at its offset (``kafka-lite raft check``), and
every one committed later in a majority's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_lite.cli.main import main as kafka_lite_main
from kafka_lite.raft.tools.quorum_client import find_leader
from kafka_lite.raft.tools.raft_checker import COMMITTED_FILE_NAME, check, read_committed
from kafka_lite.utils.ports import free_ports
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

VOTERS = (1, 2, 3)
KILLS = 10
# The test profile: a short election and fetch timeout so a dead leader is replaced quickly, and a
# short linger so records commit within a few milliseconds.
PROFILE = ["--election-timeout-ms", "150", "--fetch-timeout-ms", "300", "--linger-ms", "5",
           "--throughput", "300", "--record-size", "64"]  # fmt: skip


class Quorum:
    def __init__(self, root: Path) -> None:
        self.root = root
        port = free_ports(len(VOTERS))
        self.addresses = {v: ("127.0.0.1", port + i) for i, v in enumerate(VOTERS)}
        self.voters_arg = ",".join(f"{v}@{h}:{p}" for v, (h, p) in self.addresses.items())
        self.processes: dict[int, subprocess.Popen] = {}
        self.starts = dict.fromkeys(VOTERS, 0)

    def data_dir(self, node_id: int) -> Path:
        return self.root / f"voter-{node_id}"

    def start(self, node_id: int) -> None:
        data_dir = self.data_dir(node_id)
        data_dir.mkdir(parents=True, exist_ok=True)
        self.starts[node_id] += 1
        out = open(data_dir / f"out-{self.starts[node_id]}.txt", "w")
        self.processes[node_id] = subprocess.Popen(
            [sys.executable, "-m", "kafka_lite.cli.main", "raft", "test-server", "--node-id", str(node_id),
             "--voters", self.voters_arg, "--data-dir", str(data_dir),
             "--committed-file", str(data_dir / COMMITTED_FILE_NAME), *PROFILE],
            stdout=out, stderr=subprocess.STDOUT, cwd=Path(__file__).resolve().parents[2],
        )  # fmt: skip
        out.close()

    def kill(self, node_id: int) -> None:
        process = self.processes[node_id]
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def committed(self) -> dict[int, bytes]:
        files = [self.data_dir(v) / COMMITTED_FILE_NAME for v in VOTERS]
        return read_committed([f for f in files if f.exists()])[0]


def test_no_committed_record_is_lost_when_the_leader_is_killed_ten_times(tmp_path):
    quorum = Quorum(tmp_path)
    for node_id in VOTERS:
        quorum.start(node_id)
    try:
        last_epoch, last_high_watermark = -1, 0
        leaders = []
        for _ in range(KILLS):
            # The next leader: a higher epoch than the one just killed, with some of its own
            # workload committed (the high watermark past where it stood at the last kill).
            leader = wait_until(
                lambda epoch=last_epoch, hw=last_high_watermark: (answer := find_leader(quorum.addresses))
                is not None and answer["leader_epoch"] > epoch and answer["high_watermark"] > hw + 20 and answer,
                15, "a new leader committing records",
            )  # fmt: skip
            last_epoch, last_high_watermark = leader["leader_epoch"], leader["high_watermark"]
            leaders.append(leader["leader_id"])
            quorum.kill(leader["leader_id"])
            quorum.start(leader["leader_id"])

        # Heal: a leader whose high watermark covers every record reported committed, held by all.
        healed_file = tmp_path / "committed-at-heal.txt"

        def healed():
            answer = find_leader(quorum.addresses)
            committed = quorum.committed()
            if answer is None or not committed:
                return False
            high_watermark = answer["high_watermark"]
            ends = [v["log_end_offset"] for v in answer["current_voters"]]
            if high_watermark > max(committed) and min(ends) >= high_watermark:
                healed_file.write_text("".join(f"{o} {k.decode()}\n" for o, k in sorted(committed.items())))
                return True
            return False

        wait_until(healed, 15, "every voter to hold every committed record")
    finally:
        quorum.stop_all()

    assert len(leaders) == KILLS
    # Every record committed by the heal is in every voter's log, at its offset.
    report = check([quorum.data_dir(v) for v in VOTERS], [healed_file])
    assert report.committed > 0
    assert report.lost_count == 0, report.lines()
    assert not report.conflicts, report.conflicts
    # The leader's workload goes on committing until the voters stop, and a voter stopped first misses
    # what the other two commit after it: Raft promises a committed record to a majority (and so to
    # every later leader), never to every voter. The checker counts such a record as behind on the
    # voter that ends before it, not lost.
    everything = check([quorum.data_dir(v) for v in VOTERS])
    assert everything.ok, everything.lines()
    assert kafka_lite_main(["raft", "check", *(str(quorum.data_dir(v)) for v in VOTERS),
                            "--committed-file", str(healed_file)]) == 0  # fmt: skip
