"""The Raft test server's workload report: what it counts while its node leads."""

from __future__ import annotations

import signal

import pytest

from kafka_lite.raft.raft_config import InetAddressSpec, RaftConfig
from kafka_lite.raft.tools.test_raft_server import run_test_server
from kafka_lite.utils.ports import free_ports

pytestmark = pytest.mark.integration


@pytest.fixture
def signals_put_back():
    """The server waits on ShutdownSignals, whose close leaves SIGTERM and SIGINT ignored, as the
    command's process, about to exit, wants; this worker goes on, so their actions are put back."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    yield
    for signum, action in before.items():
        signal.signal(signum, action)


def test_a_single_voter_reports_its_committed_records_and_how_many_batches_held_them(
    tmp_path, signals_put_back
):
    # linger 20 ms at 2,000 records/s: the accumulator should gather about 40 records a batch
    config = RaftConfig({1: InetAddressSpec("127.0.0.1", free_ports(1))}, 2_000, 20, 1_000, 1_000, 2_000, 20)
    report = run_test_server(1, config, tmp_path / "voter-1", 2_000, 50, 1.5).as_dict()
    assert report["error"] is None
    assert report["committed"] > 0 and report["batches"] > 0
    assert report["records_per_batch"] == round(report["committed"] / report["batches"], 1)
    # one record per batch would mean the linger gathered nothing; every record in one, no batching at all
    assert 5 <= report["records_per_batch"] < report["committed"], report
    # the process's CPU over the run: some, and no more than its two threads could spend
    assert 0 < report["cpu_s"] < 2 * 1.5 + 1, report
