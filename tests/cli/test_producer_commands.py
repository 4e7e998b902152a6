"""``kafka-lite console-producer`` and ``perf producer`` against the session's cluster: what they send,
kafka-python reads back; Kafka's summary line with its counts; unreachable brokers fail in one line
after ``max.block.ms``."""

from __future__ import annotations

import io
import re
import sys

import pytest
from kafka import KafkaConsumer, TopicPartition

from kafka_lite.cli.main import main
from kafka_lite.tools.dump_log_segments import dump
from kafka_lite.utils.ports import free_port
from tests.support.topics import consume_all, topic_name
from tests.tools.test_producer_performance import SUMMARY

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster")]


def _end_offsets(bootstrap: str, topic: str, partitions: int) -> list[int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        ends = consumer.end_offsets([TopicPartition(topic, p) for p in range(partitions)])
        return [ends[TopicPartition(topic, p)] for p in range(partitions)]
    finally:
        consumer.close()


def _console_producer(monkeypatch, capsys, stdin: bytes, *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(["console-producer", *args])
    out, err = capsys.readouterr()
    assert out == "", "Kafka's console producer prints nothing"
    assert "Traceback" not in err
    return code, err


def test_console_producer_sends_each_line_as_a_keyed_record(cluster, monkeypatch, capsys):
    topic = topic_name("console")
    cluster.create_topic(topic, partitions=1)
    lines = [(f"k{i}", f"value {i}: with the separator's neighbour" if i % 2 else f"v{i}") for i in range(20)]
    stdin = "".join(f"{k}|{v}\n" for k, v in lines).encode()
    code, err = _console_producer(monkeypatch, capsys, stdin, "--bootstrap-server", cluster.bootstrap_servers,
                                  "--topic", topic, "--property", "parse.key=true", "--property",
                                  "key.separator=|", "--compression-codec", "--request-required-acks", "all")  # fmt: skip
    assert (code, err) == (0, "")
    records = consume_all(cluster.bootstrap_servers, topic, 1, len(lines))
    assert [(r.key.decode(), r.value.decode()) for r in records] == lines, "in order, keys and values exact"
    # --compression-codec without a value is gzip, as in Kafka: the leader's segment holds gzip batches.
    leader = cluster.leader_of(topic, 0)
    segment = cluster.directory / f"broker-{leader}" / f"{topic}-0" / "00000000000000000000.log"
    batches = [line for line in dump(segment) if "baseOffset:" in line]
    assert batches and all("compresscodec: GZIP" in line for line in batches), batches


def test_console_producer_null_marker_writes_a_tombstone(cluster, monkeypatch, capsys):
    topic = topic_name("tombstone")
    cluster.create_topic(topic, partitions=1, cleanup_policy="compact")
    stdin = b"user-1:alice\nuser-2:bob\nuser-1:<null>\n"
    code, err = _console_producer(monkeypatch, capsys, stdin, "--bootstrap-server", cluster.bootstrap_servers,
                                  "--topic", topic, "--property", "parse.key=true", "--property",
                                  "key.separator=:", "--property", "null.marker=<null>")  # fmt: skip
    assert (code, err) == (0, "")
    records = consume_all(cluster.bootstrap_servers, topic, 1, 3)
    assert [(r.key, r.value) for r in records] == [
        (b"user-1", b"alice"),
        (b"user-2", b"bob"),
        (b"user-1", None),
    ]


def test_console_producer_sync_stops_at_the_first_failed_send(cluster, monkeypatch, capsys):
    topic = topic_name("console-sync")
    cluster.create_topic(topic, partitions=1)
    stdin = b"short\n" + b"x" * 300 + b"\nnever sent\n"
    code, err = _console_producer(monkeypatch, capsys, stdin, "--bootstrap-server", cluster.bootstrap_servers,
                                  "--topic", topic, "--sync", "--producer-property", "max.request.size=200")  # fmt: skip
    assert code == 1
    assert f"Error when sending message to topic {topic} with key: null, value: 300 bytes" in err
    assert "RecordTooLargeException" in err and "max.request.size" in err
    assert _end_offsets(cluster.bootstrap_servers, topic, 1) == [1], "the line before it, and nothing after"


def test_perf_producer_prints_kafkas_summary_line_at_the_set_rate(cluster, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # the summary is one line however narrow the terminal
    topic = topic_name("perf")
    cluster.create_topic(topic, partitions=3)
    code = main(["perf", "producer", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
                 "--num-records", "2000", "--record-size", "100", "--throughput", "1000",
                 "--producer-props", "acks=1", "linger.ms=5", "--print-metrics"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0 and err == "", "no progress bar when stderr is not a terminal"
    summary = next(line for line in out.splitlines() if " records sent, " in line)
    m = SUMMARY.match(summary)
    assert m, f"not Kafka's summary format: {summary!r}"
    count, rate, _, avg, max_latency, p50, p95, p99, p999 = (float(g) for g in m.groups())
    assert count == 2000
    assert rate <= 1000 * 1.05, "--throughput 1000 holds the rate at 1000 records/s"
    assert 0 <= p50 <= p95 <= p99 <= p999 <= max_latency and avg <= max_latency
    assert re.search(r"^producer-metrics:record-send-total\s+: 2000\.000$", out, re.MULTILINE)
    assert sum(_end_offsets(cluster.bootstrap_servers, topic, 3)) == 2000


def test_perf_producer_shows_a_progress_bar_at_a_terminal_unless_told_not_to(cluster, capsys, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich takes stdout and stderr for terminals
    topic = topic_name("perf-bar")
    cluster.create_topic(topic, partitions=1)
    perf = ["perf", "producer", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
            "--num-records", "500", "--record-size", "10", "--throughput", "-1"]  # fmt: skip
    assert main(perf) == 0
    out, err = capsys.readouterr()
    assert re.search(r"500/500\S* records sent", err), "the bar, on stderr, at its end"
    assert SUMMARY.match(out.strip()), f"stdout holds the summary line alone: {out!r}"
    assert main([*perf, "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and SUMMARY.match(out.strip())


def test_unreachable_brokers_fail_the_console_producer_after_max_block_ms(monkeypatch, capsys):
    nowhere = f"127.0.0.1:{free_port()}"
    code, err = _console_producer(monkeypatch, capsys, b"a\nb\n", "--bootstrap-server", nowhere,
                                  "--topic", "t", "--max-block-ms", "300")  # fmt: skip
    assert code == 1
    assert "TimeoutException: Failed to update metadata after 300 ms" in err and nowhere in err
    assert len(err.strip().splitlines()) == 1


def test_unreachable_brokers_fail_perf_producer_after_max_block_ms(capsys):
    nowhere = f"127.0.0.1:{free_port()}"
    code = main(["perf", "producer", "--bootstrap-server", nowhere, "--topic", "t", "--num-records", "1000",
                 "--record-size", "10", "--throughput", "-1", "--producer-props", "max.block.ms=300"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "1 of the 1 records sent failed, the first with TimeoutException: Failed to update metadata" in err
    assert "Traceback" not in err
