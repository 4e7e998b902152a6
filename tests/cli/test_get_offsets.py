"""``kafka-lite get-offsets`` (Kafka's GetOffsetShell): the latest, the earliest and by timestamp, on the
session's real cluster; and the arguments and topics it cannot work with, in one line each."""

from __future__ import annotations

import time

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.cli import get_offsets
from kafka_lite.cli.main import main
from kafka_lite.utils.ports import free_port
from tests.support.topics import topic_name

# The records' timestamps: T0, T0 + 10, T0 + 20, ... per partition. An hour ago: older records would
# fall to the brokers' time retention (retention.ms), which the session's cluster checks every few minutes.
T0 = int(time.time() * 1000) - 3_600_000


@pytest.mark.integration
def test_latest_earliest_and_by_timestamp(cluster, capsys):
    topic = topic_name("offsets")
    cluster.create_topic(topic, partitions=2, replication_factor=1)
    with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1) as producer:
        for i in range(5):
            producer.send(topic, b"p0-%d" % i, partition=0, timestamp_ms=T0 + 10 * i)
        for i in range(3):
            producer.send(topic, b"p1-%d" % i, partition=1, timestamp_ms=T0 + 10 * i)
        producer.flush()

    def offsets(*args: str) -> list[str]:
        capsys.readouterr()
        assert main(["get-offsets", "--broker-list", cluster.bootstrap_servers, "--topic", topic, *args]) == 0
        return capsys.readouterr().out.splitlines()

    assert offsets() == [f"{topic}:0:5", f"{topic}:1:3"], "the latest offsets: one past the last record"
    assert offsets("--time", "-2") == [f"{topic}:0:0", f"{topic}:1:0"]
    # the first record at or after T0 + 25 is the fourth of partition 0 (T0 + 30); partition 1's last is T0 + 20
    assert offsets("--time", str(T0 + 25)) == [f"{topic}:0:3", f"{topic}:1:"]
    assert offsets("--time", str(T0 + 20), "--partitions", "1") == [f"{topic}:1:2"]
    # a partition the topic does not have is an error line; the others' offsets still come
    capsys.readouterr()
    assert main(["get-offsets", "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic,
                 "--partitions", "0,7"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    assert (out, err) == (f"{topic}:0:5\n", "Error: partition 7 does not exist\n")
    assert (
        main(
            ["get-offsets", "--broker-list", cluster.bootstrap_servers, "--topic", topic, "--partitions", "7"]
        )
        == 1
    )
    assert f"Topic {topic} does not have any of the requested partitions 7" in capsys.readouterr().err
    assert main(["get-offsets", "--broker-list", cluster.bootstrap_servers, "--topic", "no-such-topic"]) == 1
    assert "Topic no-such-topic does not exist" in capsys.readouterr().err


@pytest.mark.unit
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--partitions", "0,x"], "--partitions: expects a comma separated list of numeric partition ids, but received: 0,x"),
        (["--time", "-5"], "--time: -5: give -1 (latest), -2 (earliest) or a timestamp in ms"),
    ],
)  # fmt: skip
def test_bad_arguments_are_usage_errors(capsys, args, message):
    with pytest.raises(SystemExit) as e:
        main(["get-offsets", "--broker-list", "127.0.0.1:9", "--topic", "t", *args])
    assert e.value.code == 2
    assert message in " ".join(capsys.readouterr().err.split())


@pytest.mark.unit
def test_a_bad_broker_list_and_brokers_that_do_not_answer_are_named(capsys, monkeypatch):
    assert main(["get-offsets", "--broker-list", "localhost", "--topic", "t"]) == 2
    assert "--broker-list 'localhost': Invalid bootstrap server 'localhost'" in capsys.readouterr().err
    nowhere = f"127.0.0.1:{free_port()}"
    monkeypatch.setattr(get_offsets, "REQUEST_TIMEOUT_MS", 200)
    assert main(["get-offsets", "--broker-list", nowhere, "--topic", "t"]) == 1
    assert f"(from --bootstrap-server {nowhere}: are the brokers up?)" in capsys.readouterr().err
