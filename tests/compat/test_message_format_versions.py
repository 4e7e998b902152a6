"""A topic whose ``message.format.version`` goes 0.11.0 -> 0.10.0 -> 0.11.0 while a producer writes
(Kafka 0.11): its log holds v2, then v1, then v2 entries, and a consumer at every Fetch version reads
every record in order. Fetch v0-1 get magic 0, v2-3 magic 1 (each newer batch down-converted),
v4+ the log as it is, v1 and v2 side by side. kafka_lite's consumer, kafka-python (at 0.10.0's
protocol and at its default) and confluent-kafka read it too; an idempotent producer is refused
while the topic is at 0.10.0, written at the wire level."""

from __future__ import annotations

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.cli.main import main
from kafka_lite.clients.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka_lite.common.errors import Errors, KafkaException
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.record import FileRecords, MemoryRecords
from kafka_lite.common.record.memory_records import iter_batches
from tests.compat.test_confluent_kafka import consume
from tests.support.kraft_cluster import zookeeper_only
from tests.support.topics import consume_all, read_topic, topic_name
from tests.support.waiting import wait_until
from tests.support.wire import WireClient, fetch_body, fetched, partition_response, produce_body

# ZooKeeper only: under a KRaft cluster's inter.broker.protocol.version 3.x, Kafka writes no old
# message format (message.format.version is ignored), and these tests read the leader's log in process
pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster"), zookeeper_only]

VALUES = [b"v2-a", b"v2-b", b"v1-c", b"v1-d", b"v2-e", b"v2-f"]


def _set_format(cluster, topic: str, version: str, magic: int) -> None:
    admin = KafkaAdminClient(cluster.bootstrap_servers)
    try:
        admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, {"message.format.version": version})]
        )
    finally:
        admin.close()
    log = _leader_log(cluster, topic)
    wait_until(
        lambda: log.config.message_format_version.message_format_version == magic,
        what=f"the leader's log of {topic} to take message.format.version={version}",
    )


def _leader_log(cluster, topic: str):
    return cluster.server(cluster.leader_of(topic, 0)).replica_manager.get_partition((topic, 0)).log


@pytest.fixture(scope="module")
def mixed_topic(cluster) -> str:
    topic = topic_name("formats")
    cluster.create_topic(topic, partitions=1)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, compression_type="gzip")
    try:
        for i, version, magic in ((0, "0.11.0", 2), (2, "0.10.0", 1), (4, "0.11.0", 2)):
            _set_format(cluster, topic, version, magic)
            for value in VALUES[i : i + 2]:
                producer.send(topic, value, key=b"k", partition=0).get(10)  # one batch per record
    finally:
        producer.close()
    return topic


def test_the_log_holds_v2_v1_v2_and_the_format_is_described(cluster, mixed_topic, capsys):
    log = _leader_log(cluster, mixed_topic)
    (segment,) = log.log_segments()
    records = FileRecords.open(segment.log.path, mutable=False)
    try:
        assert [(b.magic, b.last_offset) for _, b in records.batches()] == [
            (2, 0),
            (2, 1),
            (1, 2),
            (1, 3),
            (2, 4),
            (2, 5),
        ]
    finally:
        records.close()
    admin = KafkaAdminClient(cluster.bootstrap_servers)
    try:
        (entries,) = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, mixed_topic)]).values()
    finally:
        admin.close()
    assert entries["message.format.version"].value == "0.11.0"
    args = [
        "configs",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "--describe",
        "--entity-type",
        "topics",
    ]
    assert main([*args, "--entity-name", mixed_topic]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if "message.format.version" in line]
    assert "0.11.0" in row and "topic override" in row


def test_every_fetch_version_reads_every_record_in_a_magic_it_knows(cluster, mixed_topic):
    client = WireClient(cluster.server(cluster.leader_of(mixed_topic, 0)).port)
    try:
        for version in range(ApiKeys.FETCH.oldest_version, ApiKeys.FETCH.latest_version + 1):
            body = fetch_body(mixed_topic)
            if version < 5:
                for p in body["topics"][0]["partitions"]:
                    del p["log_start_offset"]
            header, data = fetched(client.call(ApiKeys.FETCH, version, body))
            assert header["error_code"] == 0, (version, header)
            batches = list(iter_batches(data))
            magics = [b.magic for b in batches]
            if version < 2:
                assert set(magics) == {0}, (version, magics)
            elif version < 4:
                assert set(magics) == {1}, (version, magics)
            else:  # the log as it is
                assert magics == [2, 2, 1, 1, 2, 2], (version, magics)
            assert [(r.offset, r.value) for b in batches for r in b] == list(enumerate(VALUES)), version
    finally:
        client.close()


def test_kafka_lite_kafka_python_and_confluent_kafka_read_it_in_order(cluster, mixed_topic):
    assert [r.value for r in read_topic(cluster.bootstrap_servers, mixed_topic)] == VALUES
    old = consume_all(cluster.bootstrap_servers, mixed_topic, 1, 6, api_version=(0, 10, 0))  # Fetch v2
    assert [(r.offset, r.value) for r in old] == list(enumerate(VALUES))
    assert [r.value for r in consume_all(cluster.bootstrap_servers, mixed_topic, 1, 6)] == VALUES
    assert [m.value() for m in consume(cluster.bootstrap_servers, mixed_topic, [0], 6)] == VALUES


def test_an_idempotent_write_to_a_v1_topic_is_refused(cluster):
    topic = topic_name("formats-idem")
    cluster.create_topic(topic, partitions=1, message_format_version="0.10.0")
    client = WireClient(cluster.server(cluster.leader_of(topic, 0)).port)
    try:
        for transactional in (False, True):
            records = MemoryRecords.with_records(
                [(0, b"k", b"v")],
                producer_id=1,
                producer_epoch=0,
                base_sequence=0,
                is_transactional=transactional,
            )
            response = client.call(ApiKeys.PRODUCE, 3, produce_body(topic, 0, bytes(records.buffer())))
            assert partition_response(response)["error_code"] == Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT.code
    finally:
        client.close()
    assert _leader_log(cluster, topic).log_end_offset == 0


def test_a_bad_message_format_version_is_refused_by_create_topics_and_alter_configs(cluster):
    admin = KafkaAdminClient(cluster.bootstrap_servers)
    expected = r"configuration message\.format\.version: Version `0\.12\.0` is not a valid version"
    try:
        refused = topic_name("formats-bad")
        with pytest.raises(KafkaException, match=expected):
            admin.create_topics([NewTopic(refused, 1, 1, {}, {"message.format.version": "0.12.0"})])
        assert refused not in admin.list_topics()
        topic = topic_name("formats-alter")
        cluster.create_topic(topic, partitions=1)
        with pytest.raises(KafkaException, match=expected):
            admin.alter_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic, {"message.format.version": "0.12.0"})]
            )
    finally:
        admin.close()
