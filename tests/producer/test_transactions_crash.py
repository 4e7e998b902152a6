"""Exactly once through crashes: a consume-transform-produce loop (tests/producer/txn_copier.py)
SIGKILLed in the middle of a transaction five times, restarted each time with the same
transactional id and group, then left to finish. Each restart's ``init_transactions`` aborts the
transaction the dead process left open, and its consumer starts from the offsets the last committed
transaction committed: a read_committed reader of the output finds every input record exactly once."""

from __future__ import annotations

import selectors
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from kafka_lite import KafkaProducer
from tests.producer.test_transactions_integration import read
from tests.support.topics import topic_name

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]
REPO = Path(__file__).resolve().parents[2]
RECORDS = 120
PARTITIONS = 2
LINE_DEADLINE_S = 30


class Copier:
    """One run of the worker, its output read a line at a time with a deadline."""

    def __init__(self, args: list[str], pause: bool, log: Path) -> None:
        self.log = log
        command = [sys.executable, "-m", "tests.producer.txn_copier", *args] + (["--pause"] if pause else [])
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("w"),
            text=True,
        )
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def expect(self, prefix: str) -> str:
        deadline = time.monotonic() + LINE_DEADLINE_S
        while (left := deadline - time.monotonic()) > 0:
            if self.selector.select(left):
                line = self.process.stdout.readline()
                assert line, (
                    f"the worker exited (code {self.process.wait()}) before printing {prefix!r}:\n"
                    + self.log.read_text()[-3000:]
                )
                if line.startswith(prefix):
                    return line
        pytest.fail(f"the worker printed no {prefix!r} within {LINE_DEADLINE_S} s")

    def commit(self) -> None:
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        self.expect("committed")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(LINE_DEADLINE_S)
        self.selector.close()
        assert self.process.returncode == -signal.SIGKILL, (
            f"the worker had exited (code {self.process.returncode}):\n" + self.log.read_text()[-3000:]
        )


def test_a_copier_killed_mid_transaction_five_times_writes_every_record_exactly_once(cluster, tmp_path):
    source, sink = topic_name("ctp-in"), topic_name("ctp-out")
    cluster.create_topic(source, partitions=PARTITIONS)
    cluster.create_topic(sink, partitions=PARTITIONS)
    with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, linger_ms=5) as producer:
        for i in range(RECORDS):
            producer.send(source, f"r{i}".encode(), key=str(i).encode(), partition=i % PARTITIONS)
    args = [
        cluster.bootstrap_servers,
        source,
        sink,
        str(PARTITIONS),
        topic_name("ctp-group"),
        topic_name("ctp-tid"),
    ]

    for run in range(5):
        copier = Copier(args, pause=True, log=tmp_path / f"copier-{run}.log")
        copier.expect("ready")
        copier.expect("in-transaction")
        copier.commit()  # one transaction committed in each run ...
        copier.expect("in-transaction")
        copier.kill()  # ... and the next killed open, its records written but never committed

    final = Copier(args, pause=False, log=tmp_path / "copier-final.log")
    try:
        seen = read(cluster, sink, PARTITIONS, "read_committed", at_least=RECORDS)
    finally:
        final.kill()
    counts = Counter(value for _, value in seen)
    expected = {f"R{i}".encode() for i in range(RECORDS)}
    assert set(counts) == expected, (
        f"missing {sorted(expected - set(counts))[:5]}, unexpected {sorted(set(counts) - expected)[:5]}"
    )
    duplicated = {v: n for v, n in counts.items() if n > 1}
    assert not duplicated, f"records written more than once: {duplicated}"
    # The killed transactions' records are in the log: a read_uncommitted reader sees them.
    assert len(read(cluster, sink, PARTITIONS, "read_uncommitted", at_least=RECORDS)) > RECORDS
