"""``kafka-lite demo --layers``: the record and storage layers at work, without a cluster; and
``kafka-lite demo``: a cluster of processes, records in and out through kcat and kafka_lite's console tools."""

from __future__ import annotations

import re

import pytest

from kafka_lite.cli import cluster_demo
from kafka_lite.cli.cluster_demo import RECORDS
from kafka_lite.cli.main import main


@pytest.mark.unit
def test_demo_writes_checks_corrupts_and_converts(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps long lines at the terminal width otherwise
    assert main(["demo", "--layers", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "5 batches, 1000 records, offsets 0..999: all CRCs valid" in out
    assert "CorruptRecordException" in out
    assert "message set v0" in out and "record layer OK" in out
    assert (tmp_path / "00000000000000000000.log").stat().st_size > 0


@pytest.mark.unit
def test_demo_without_free_ports_fails_in_one_line(tmp_path, capsys, monkeypatch):
    def no_ports(count):
        raise OSError(f"found no {count} free consecutive loopback ports between 10000 and 32767")

    monkeypatch.setattr(cluster_demo, "free_ports", no_ports)
    assert main(["demo", "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no ports for the demo's cluster: found no 4 free consecutive loopback ports" in err
    assert "Traceback" not in err


@pytest.mark.integration
def test_demo_produces_reads_back_with_kcat_and_the_console_consumer_in_a_group(
    tmp_path, capsys, monkeypatch
):
    """``kafka-lite demo``: ZooKeeper and three broker processes; kafka_lite's console producer
    writes, kcat reads back, and kafka_lite's console consumer reads the same records in a group,
    whose committed offsets and lag ``consumer-groups --describe`` then shows."""
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["demo", "--dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "$ kafka-lite console-producer --bootstrap-server" in out
    assert "sent 12 records through kafka_lite's KafkaProducer" in out
    assert out.count("│ user-") == 12, "kcat's table: every record the console producer wrote"
    assert "--group page-readers --from-beginning --max-messages 12" in out
    printed = re.findall(r"^  Partition:(\d)\|(user-\d)\|(\{.*\})$", out, re.MULTILINE)
    assert sorted((k, v) for _, k, v in printed) == sorted(RECORDS), "the console consumer's lines"
    assert "(stderr) Processed a total of 12 messages" in out
    # consumer-groups --describe: the group committed, for every partition, the offset it read up to
    assert (
        "$ kafka-lite consumer-groups --bootstrap-server" in out and "--describe --group page-readers" in out
    )
    assert "Consumer group 'page-readers' has no active members." in err, (
        "its note on the group's state, on stderr as Kafka prints it"
    )
    rows = re.findall(r"^page-readers page-views (\d)\s+(\d+)\s+(\d+)\s+(\d+)\s+- ", out, re.MULTILINE)
    read = {p: sum(1 for q, _, _ in printed if q == p) for p in "012"}
    assert sorted(rows) == [(p, str(read[p]), str(read[p]), "0") for p in "012"], rows
    assert "cluster OK" in out
    assert "source .venv/bin/activate" in out  # how to put kafka-lite on PATH after make run
