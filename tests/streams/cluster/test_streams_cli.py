"""``kafka-lite streams wordcount`` as a process on the cluster: its counts read by an unmodified
Kafka client, a clean stop on SIGTERM, and the errors it names."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_lite.cli.main import main
from tests.streams.cluster.support import FAST, oracle_counts, produce_lines
from tests.support.topics import consume_all, topic_name

pytestmark = pytest.mark.integration

KAFKA_LITE = str(Path(sys.executable).parent / "kafka-lite")


def test_word_count_runs_until_sigterm_and_any_kafka_client_reads_its_counts(cluster, tmp_path):
    bootstrap = cluster.bootstrap_servers
    source, sink = topic_name("cli-lines"), topic_name("cli-counts")
    cluster.create_topic(source, partitions=2)
    cluster.create_topic(sink, partitions=2)
    lines = ["Hello Kafka Streams", "hello, kafka!", "Streams of streams"]
    properties = [a for k, v in FAST.items() for a in ("--property", f"{k}={v}")]
    process = subprocess.Popen(
        [KAFKA_LITE, "streams", "wordcount", "--bootstrap-server", bootstrap, "--application-id",
         topic_name("cli-wc"), "--input-topic", source, "--output-topic", sink, "--state-dir", str(tmp_path),
         *properties],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        produce_lines(bootstrap, source, lines)
        expected = oracle_counts(lines)
        # kafka-python reads the counts: UTF-8 words, 8-byte big-endian longs (Kafka's LongSerializer).
        records = consume_all(bootstrap, sink, 2, sum(expected.values()))
        latest = {r.key.decode(): int.from_bytes(r.value, "big", signed=True) for r in records}
        assert latest == dict(expected)
        assert all(len(r.value) == 8 for r in records)
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, out
    assert "state REBALANCING -> RUNNING" in out
    assert "state PENDING_SHUTDOWN -> NOT_RUNNING" in out
    assert out.rstrip().endswith("closed")
    # A clean stop checkpointed every count task's store.
    assert sorted(p.parent.name for p in tmp_path.glob("*/*/.checkpoint")) == ["1_0", "1_1"]


def test_a_missing_input_topic_is_named(cluster, capsys):
    missing = topic_name("nowhere")
    code = main(
        ["streams", "wordcount", "--bootstrap-server", cluster.bootstrap_servers, "--input-topic", missing]
    )
    _, err = capsys.readouterr()
    assert code == 1
    assert f"the input topic {missing} does not exist: create it first" in err
