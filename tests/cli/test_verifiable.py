"""``kafka-lite verifiable``: produce, read back, and the verdict, on the session's cluster."""

from __future__ import annotations

import pytest

from kafka_lite.cli.main import main
from kafka_lite.tools import verifiable_client
from tests.support.topics import topic_name

pytestmark = pytest.mark.integration


def test_a_healthy_cluster_loses_nothing(cluster, capsys):
    topic = topic_name("verifiable")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    args = ["verifiable", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic]
    assert main([*args, "--max-messages", "20", "--prefix", "a"]) == 0
    out = capsys.readouterr().out
    assert "produced 20 values (a-0 ...)" in out and "with acks=all" in out
    assert "acknowledged 20, failed 0" in out
    assert "read back 20 of them: found 20, lost 0, duplicated 0" in out
    # A second run on the same topic judges only its own values.
    assert main([*args, "--max-messages", "5", "--acks", "1"]) == 0
    assert "read back 5 of them: found 5, lost 0" in capsys.readouterr().out


def test_a_refused_value_is_a_failure_not_a_loss(cluster, capsys):
    topic = topic_name("verifiable-min-isr")
    cluster.create_topic(topic, partitions=1, replication_factor=2, min_insync_replicas=3)
    args = ["verifiable", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic]
    assert main([*args, "--max-messages", "4"]) == 0
    out = capsys.readouterr().out
    assert "acknowledged 0, failed 4 {'NotEnoughReplicasException': 4}" in out
    assert "found 0, lost 0" in out


def test_an_acknowledged_value_not_read_back_is_lost_and_fails_the_run(cluster, capsys, monkeypatch):
    topic = topic_name("verifiable-lost")
    cluster.create_topic(topic, partitions=1, replication_factor=1)
    read = verifiable_client.consume
    # The consumer misses the first record, as if an election had cut it from the log.
    monkeypatch.setattr(verifiable_client, "consume", lambda *a, **k: read(*a, **k)[1:])
    args = ["verifiable", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic]
    assert main([*args, "--max-messages", "3", "--prefix", "x"]) == 1
    out = capsys.readouterr().out
    assert "found 2, lost 1" in out and "lost x-0 (acknowledged at partition 0, offset 0)" in out
