"""``metric.reporters`` on a KRaft broker (``BrokerServer``): the request metrics topic reporter loaded
as on a ZooKeeper broker (tests/server/test_metrics_reporter.py), its samples read back by a consumer
and by lab 10's analysis, and its last samples sent when the broker shuts down.

The KRaft node is started as ``kafka-lite cluster up --kraft`` starts it, reporter on: one combined
node, so that nothing but this module's requests and the node's own reach it. The compatibility
tier's shared KRaft cluster runs without the reporter: on it, the reporter would add a topic and a
stream of produce requests under every test that uses that cluster."""

from __future__ import annotations

import contextlib
import json
import os
import signal

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.cli import cluster_kraft
from kafka_lite.cli.cluster import _metrics_reporter_settings, start_cluster, wait_healthy
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_raft_server import KafkaRaftServer
from kafka_lite.server.metrics_reporter import CLIENT_ID_PREFIX, REQUEST_METRICS_TOPIC, SAMPLE_FIELDS
from kafka_lite.server.storage_tool import random_uuid
from kafka_lite.utils.ports import free_ports
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration

# A quick first election; the reporter sends every 100 ms, so the samples are in the topic soon after
# the requests they describe.
OVERRIDES = [
    "controller.quorum.election.timeout.ms=300",
    "broker.heartbeat.interval.ms=200",
    "num.network.threads=1",
    "num.io.threads=2",
    "offsets.topic.num.partitions=1",
    "request.metrics.reporter.interval.ms=100",
]
MEASURED = "measured-producer"
REPORTER_0 = f"{CLIENT_ID_PREFIX}0"


@pytest.fixture(scope="module")
def reporting_node(tmp_path_factory):
    """One combined node (broker 0 and the only voter), as ``cluster up --kraft --brokers 1`` writes
    and starts it; its bootstrap address. Killed at the end: nothing is read from it afterwards."""
    directory = tmp_path_factory.mktemp("kraft-reporting") / "state"
    state = start_cluster(directory, 1, 0, free_ports(1), OVERRIDES, kraft=True, metrics_reporter=True)
    try:
        wait_healthy(state)
        yield f"127.0.0.1:{state['brokers'][0]['port']}"
    finally:
        for node in state["brokers"]:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(node["pid"], signal.SIGKILL)
                os.waitpid(node["pid"], 0)


@pytest.fixture(scope="module")
def measured_records(reporting_node):
    """``_request_metrics``'s records once they hold five Produce samples of ``measured-producer``,
    the reporter's own Produce samples and a reader's requests."""
    topic = topic_name("measured")
    admin = KafkaAdminClient(reporting_node)
    try:
        admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        admin.close()
    # A KRaft broker updates its metadata cache before its replica manager makes the partition (3.3's
    # BrokerMetadataPublisher), so a send right after the topic is created may meet
    # NOT_LEADER_FOR_PARTITION: retriable, and Kafka's clients retry it.
    with KafkaProducer(bootstrap_servers=reporting_node, client_id=MEASURED, retries=5) as producer:
        for i in range(5):
            producer.send(topic, f"v{i}".encode()).get(10)
    read_topic(reporting_node, topic, "metrics-reader")  # Metadata, ListOffsets, Fetch

    def complete() -> list:
        records = read_topic(reporting_node, REQUEST_METRICS_TOPIC, "samples-reader")
        found = [json.loads(r.value) for r in records]
        mine = [s for s in found if s["client_id"] == MEASURED and s["api"] == "Produce"]
        own = [s for s in found if s["client_id"] == REPORTER_0 and s["api"] == "Produce"]
        read = {s["api"] for s in found if s["client_id"] == "metrics-reader"}
        return records if len(mine) == 5 and own and {"Metadata", "ListOffsets", "Fetch"} <= read else []

    return wait_until(
        complete,
        what=f"{REQUEST_METRICS_TOPIC} on the KRaft broker holding five Produce samples of {MEASURED}, the "
        "reporter's own and the reader's requests (a KRaft broker that loads no metric.reporters "
        "never creates the topic)",
    )


def test_a_kraft_broker_publishes_a_sample_of_every_request_a_consumer_reads(measured_records):
    samples = [json.loads(r.value) for r in measured_records]
    for record, sample in zip(measured_records, samples, strict=True):
        assert list(sample) == list(SAMPLE_FIELDS), "the fields of a ZooKeeper broker's samples, in order"
        assert sample["broker_id"] == 0 and record.key == b"0"
        assert record.timestamp == sample["time_ms"]
        phases = [sample[f] for f in SAMPLE_FIELDS[7:12]]
        assert all(p >= 0 for p in phases)
        assert sample["total_time_ms"] == pytest.approx(sum(phases), abs=1e-3)
    produce = [s for s in samples if s["client_id"] == MEASURED and s["api"] == "Produce"]
    assert all(s["request_bytes"] > 0 and s["response_bytes"] > 0 for s in produce)
    # cluster up --kraft sizes the topic for its brokers: one partition here.
    assert {r.partition for r in measured_records} == {0}


@pytest.mark.spark
def test_lab_10s_analysis_runs_on_a_kraft_brokers_samples(spark, measured_records):
    """Lab 10's reference (kafka_lite.spark.labs.request_latency) on the KRaft broker's records, as
    the lab's grader hands them over: a DataFrame with the Kafka source's columns."""
    from pyspark.sql import functions as F

    from kafka_lite.spark.labs import request_latency as rl

    rows = [
        (r.key, r.value, REQUEST_METRICS_TOPIC, r.partition, r.offset, r.timestamp * 1000, 0)
        for r in measured_records
    ]
    schema = (
        "key binary, value binary, topic string, partition int, offset long, ts_us long, timestampType int"
    )
    records = spark.createDataFrame(rows, schema).select(
        "key", "value", "topic", "partition", "offset",
        F.timestamp_micros("ts_us").alias("timestamp"), "timestampType",
    )  # fmt: skip
    metrics = rl.parse_request_metrics(records)
    parsed = metrics.collect()
    expected = [json.loads(r.value) for r in measured_records]
    expected = [s for s in expected if not s["client_id"].startswith(rl.REPORTER_CLIENT_PREFIX)]
    assert len(parsed) == len(expected) and all(None not in tuple(row) for row in parsed), (
        "every sample parsed, each field typed as the lab's schema has it (a mistyped field is null)"
    )
    percentiles = {(r.broker_id, r.api): r.requests for r in rl.latency_percentiles(metrics).collect()}
    produced = sum(1 for s in expected if s["api"] == "Produce")
    assert percentiles[(0, "Produce")] == produced and produced >= 5


def test_a_kraft_broker_sends_what_its_reporter_holds_when_it_shuts_down(tmp_path):
    """An hour between sends: only the shutdown's flush can put the samples in the topic. The node
    runs in this process, so that the test sees the reporter's buffer before the shutdown."""
    port = free_ports(2)  # the first of two free ports in a row
    controller_port = port + 1
    node = {"id": 0, "roles": ["broker", "controller"], "port": port, "controller_port": controller_port}
    config_file = tmp_path / "server.properties"
    config_file.write_text(
        cluster_kraft.node_properties(
            node, f"0@127.0.0.1:{controller_port}", tmp_path, _metrics_reporter_settings(1)
        )
        + "\n".join([*OVERRIDES, "request.metrics.reporter.interval.ms=3600000"])
        + "\n"
    )
    assert main(["storage", "format", "-t", random_uuid(), "-c", str(config_file)]) == 0
    bootstrap = f"127.0.0.1:{port}"
    server = KafkaRaftServer(KafkaConfig.from_file(config_file))
    server.startup()
    try:
        admin = KafkaAdminClient(bootstrap, client_id="before-shutdown")
        admin.describe_cluster()
        admin.close()
        (reporter,) = server.broker.socket_server.metrics.reporters
        # The processor records a request once its response is written, a moment after the client has it.
        wait_until(
            lambda: any(s.client_id == "before-shutdown" for s in list(reporter._buffer)),
            what="the admin client's Metadata sample in the reporter's buffer",
        )
    finally:
        server.shutdown()
    assert reporter.sent > 0 and reporter.send_errors == 0 and not reporter._buffer, (
        f"the broker's shutdown closes its reporter, which sends what it holds: sent {reporter.sent}, "
        f"failed {reporter.send_errors}, still held {len(reporter._buffer)}"
    )
    server = KafkaRaftServer(KafkaConfig.from_file(config_file))
    server.startup()
    try:
        found = [json.loads(r.value) for r in read_topic(bootstrap, REQUEST_METRICS_TOPIC)]
    finally:
        server.shutdown()
    assert any(s["client_id"] == "before-shutdown" and s["api"] == "Metadata" for s in found)


def test_cluster_up_kraft_gives_the_reporter_to_broker_role_nodes_only(tmp_path):
    """``cluster up --kraft``'s settings: the reporter on every node that serves clients, its topic
    sized for the brokers; none on a controller-only node, and none with ``--no-metrics-reporter``."""
    reporter = _metrics_reporter_settings(2)
    layouts = [  # (node, its voters): a combined node; a broker-only node and its controller-only voter
        (
            {"id": 0, "roles": ["broker", "controller"], "port": 9092, "controller_port": 9093},
            "0@127.0.0.1:9093",
        ),
        ({"id": 1, "roles": ["broker"], "port": 9094}, "1000@127.0.0.1:9095"),
        ({"id": 1000, "roles": ["controller"], "controller_port": 9095}, "1000@127.0.0.1:9095"),
    ]

    def config(node: dict, voters: str, settings=reporter) -> KafkaConfig:
        path = tmp_path / f"node-{node['id']}.properties"
        path.write_text(cluster_kraft.node_properties(node, voters, tmp_path, settings))
        return KafkaConfig.from_file(path)

    configs = {node["id"]: config(node, voters) for node, voters in layouts}
    for broker in (0, 1):
        assert [c.__name__ for c in configs[broker].metric_reporter_classes] == [
            "RequestMetricsTopicReporter"
        ]
        assert configs[broker]["request.metrics.reporter.topic.num.partitions"] == 2
    assert configs[1000].metric_reporter_classes == []
    assert config(*layouts[0], settings=()).metric_reporter_classes == []
