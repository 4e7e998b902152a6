"""``metric.reporters`` and the request metrics topic reporter, on a real in-process broker: real
clients make requests, and kafka_lite's own consumer reads ``_request_metrics`` back."""

from __future__ import annotations

import json

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.errors import ConfigException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import MockTime
from kafka_lite.network.request_metrics import RequestMetrics
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.metrics_reporter import (
    REQUEST_METRICS_TOPIC,
    SAMPLE_FIELDS,
    RequestMetricsTopicReporter,
)
from tests.support.cluster import LiteCluster
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

REPORTER = "kafka_lite.server.metrics_reporter:RequestMetricsTopicReporter"


def samples(bootstrap: str) -> list[dict]:
    return [json.loads(r.value) for r in read_topic(bootstrap, REQUEST_METRICS_TOPIC, "metrics-reader")]


@pytest.fixture(scope="module")
def reporting_cluster(zookeeper, tmp_path_factory):
    """One broker with the reporter on, sending every 100 ms."""
    c = LiteCluster(
        zookeeper.connect_string,
        tmp_path_factory.mktemp("reporting"),
        brokers=1,
        **{"metric.reporters": REPORTER, "request.metrics.reporter.interval.ms": 100},
    )
    c.start()
    yield c
    c.stop()


def test_samples_describe_the_requests_real_clients_made(reporting_cluster):
    bootstrap = reporting_cluster.bootstrap_servers
    topic = topic_name("measured")
    reporting_cluster.create_topic(topic, partitions=1)
    with KafkaProducer(bootstrap_servers=bootstrap, client_id="measured-producer") as producer:
        for i in range(5):
            producer.send(topic, f"v{i}".encode()).get(10)
    read_topic(bootstrap, topic, "metrics-reader")  # Fetch and ListOffsets

    def produced() -> list[dict]:
        found = samples(bootstrap)
        mine = [s for s in found if s["client_id"] == "measured-producer" and s["api"] == "Produce"]
        # The reporter's own produce requests are measured like any client's (and published next time).
        own = [s for s in found if s["client_id"] == "request-metrics-reporter-0" and s["api"] == "Produce"]
        # The reader's requests may come after the producer's in a later interval's publish.
        read = {s["api"] for s in found if s["client_id"] == "metrics-reader"}
        return found if len(mine) == 5 and own and {"Metadata", "ListOffsets", "Fetch"} <= read else []

    found = wait_until(
        produced,
        what="five Produce samples from measured-producer, the reporter's own, and the reader's requests",
    )
    for sample in found:
        assert list(sample) == list(SAMPLE_FIELDS)
        assert sample["broker_id"] == 0
        assert isinstance(sample["time_ms"], int) and isinstance(sample["total_time_ms"], float)
        phases = [sample[f] for f in SAMPLE_FIELDS[7:12]]
        assert all(p >= 0 for p in phases)
        assert sample["total_time_ms"] == pytest.approx(sum(phases), abs=1e-3)
    produce = [s for s in found if s["client_id"] == "measured-producer" and s["api"] == "Produce"]
    assert {s["api_version"] for s in produce} == {ApiKeys.PRODUCE.latest_version}
    assert all(s["request_bytes"] > 0 and s["response_bytes"] > 0 for s in produce)
    by_reader = {s["api"] for s in found if s["client_id"] == "metrics-reader"}
    assert {"Metadata", "ListOffsets", "Fetch"} <= by_reader


def test_a_record_is_keyed_by_broker_and_stamped_with_the_completion_time(reporting_cluster):
    records = wait_until(
        lambda: read_topic(reporting_cluster.bootstrap_servers, REQUEST_METRICS_TOPIC),
        what="samples in the topic",
    )
    for r in records:
        value = json.loads(r.value)
        assert r.key == b"0"
        assert r.timestamp == value["time_ms"]
    assert {r.partition for r in records} == {0}, "a broker's samples go to partition broker id % partitions"


def test_the_reporter_creates_its_topic_not_compacted_with_its_retention(reporting_cluster):
    server = reporting_cluster.servers[0]
    wait_until(lambda: REQUEST_METRICS_TOPIC in server.metadata_cache.topics(), what="the topic")
    config = server.zk.get_topic_config(REQUEST_METRICS_TOPIC)
    assert config["cleanup.policy"] == "delete"
    assert config["retention.ms"] == "86400000"
    assert len(server.metadata_cache.partitions(REQUEST_METRICS_TOPIC)) == 1  # one live broker


def test_a_full_buffer_drops_and_counts_without_blocking():
    reporter = RequestMetricsTopicReporter()
    reporter.configure({"broker.id": 7, "request.metrics.reporter.buffer.size": 3})
    metrics = RequestMetrics(MockTime())
    metrics.reporters.append(reporter)  # the hook alone: no producer thread behind it
    for _ in range(5):
        metrics.record(ApiKeys.METADATA, 1, 30, 60, [10, 20, 30, 30, 40, 50], "c")
    assert reporter.dropped == 2
    assert len(reporter._buffer) == 3
    sample = reporter._buffer[0]
    assert (sample.api, sample.api_version, sample.client_id) == ("Metadata", 1, "c")
    assert sample.request_queue_time_ms == pytest.approx(10e-6)
    assert sample.total_time_ms == pytest.approx(40e-6)


@pytest.mark.parametrize(
    "value, says",
    [
        ("no_such_module:Reporter", "could not be found"),
        ("kafka_lite.server.metrics_reporter:NoSuchClass", "could not be found"),
        ("json.dumps", "is not an instance of"),
        ("Reporter", "Expected a class name"),
    ],
)
def test_a_bad_metric_reporters_value_is_a_config_error_naming_it(value, says):
    with pytest.raises(ConfigException, match=r"configuration metric\.reporters") as e:
        KafkaConfig({"zookeeper.connect": "127.0.0.1:1", "broker.id": 0, "metric.reporters": value})
    assert says in str(e.value) and value in str(e.value)


def test_the_reporters_settings_are_broker_settings_checked_by_name():
    base = {"zookeeper.connect": "127.0.0.1:1", "broker.id": 0}
    config = KafkaConfig({**base, "request.metrics.reporter.interval.ms": "250"})
    assert config["request.metrics.reporter.interval.ms"] == 250
    assert config["request.metrics.reporter.topic"] == REQUEST_METRICS_TOPIC
    with pytest.raises(ConfigException, match=r"configuration request\.metrics\.reporter\.buffer\.size"):
        KafkaConfig({**base, "request.metrics.reporter.buffer.size": "0"})
    reporter = RequestMetricsTopicReporter()
    with pytest.raises(ConfigException, match=r"broker\.id"):
        reporter.configure({"request.metrics.reporter.buffer.size": 3})


def test_the_reporter_is_off_by_default():
    config = KafkaConfig({"zookeeper.connect": "127.0.0.1:1", "broker.id": 0})
    assert config["metric.reporters"] == [] and config.metric_reporter_classes == []


def test_shutdown_flushes_what_the_reporter_holds(zookeeper, tmp_path):
    """An hour between sends: only the shutdown's flush can put the samples in the topic."""
    cluster = LiteCluster(
        zookeeper.connect_string,
        tmp_path,
        brokers=1,
        **{"metric.reporters": REPORTER, "request.metrics.reporter.interval.ms": 3_600_000},
    ).start()
    try:
        admin = KafkaAdminClient(cluster.bootstrap_servers, client_id="before-shutdown")
        admin.describe_cluster()
        admin.close()
        (reporter,) = cluster.servers[0].socket_server.metrics.reporters
        # The processor records a request once its response is written, a moment after the client has it.
        wait_until(
            lambda: any(s.client_id == "before-shutdown" for s in list(reporter._buffer)),
            what="the admin client's Metadata sample in the reporter's buffer",
        )
        cluster.stop_broker(0)
        assert reporter.sent > 0 and reporter.send_errors == 0 and not reporter._buffer
        cluster.restart_broker(0)
        found = samples(cluster.bootstrap_servers)
        assert any(s["client_id"] == "before-shutdown" and s["api"] == "Metadata" for s in found)
    finally:
        cluster.stop()
