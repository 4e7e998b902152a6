"""The admin APIs driven by unmodified clients: kafka-python's ``KafkaAdminClient`` and
confluent-kafka's ``AdminClient`` describe and alter a topic's configs, add partitions and delete
records on the 3-broker kafka_lite cluster, each negotiating its versions with ApiVersions."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaException as ConfluentKafkaException
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import ConfigResource as ConfluentConfigResource
from confluent_kafka.admin import NewPartitions as ConfluentNewPartitions
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.errors import InvalidPartitionsError, KafkaError

from kafka_lite.common.protocol.api_keys import ApiKeys
from tests.support.cluster import LiteCluster
from tests.support.topics import topic_name
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]


def _produce(cluster, topic: str, count: int, partition: int = 0) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for i in range(count):
        producer.send(topic, value=b"%d" % i, partition=partition)
    producer.flush()
    producer.close()


def _log_start_offset(cluster, topic: str, partition: int = 0) -> int:
    """The leader's log start offset, as a client asks for it (ListOffsets, earliest)."""
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
    try:
        tp = TopicPartition(topic, partition)
        return consumer.beginning_offsets([tp])[tp]
    finally:
        consumer.close()


def _wait_for_leader_log(cluster, topic: str, applied, what: str) -> None:
    """On the ZooKeeper cluster, until the leader's log (in process) has taken a config change. A
    KRaft cluster's brokers are processes: there the describe that follows is the check."""
    if isinstance(cluster, LiteCluster):
        leader = cluster.server(cluster.leader_of(topic, 0))
        log = leader.log_manager.get_log((topic, 0))
        wait_until(lambda: applied(log.config), what=what)


def _described_by_every_broker(cluster, topic: str, key: str) -> set[str | None]:
    """The values of the topic's config ``key`` that the brokers answer, each asked on its own (a
    client's describe goes to whichever broker it likes; a KRaft broker answers from the metadata
    log as far as it has read it)."""
    ports = [s.port for s in cluster.servers] if isinstance(cluster, LiteCluster) else cluster.ports.values()
    values = set()
    for port in ports:
        client = WireClient(port)
        try:
            body = {"resources": [{"resource_type": 2, "resource_name": topic, "config_names": [key]}]}
            [answer] = client.call(ApiKeys.DESCRIBE_CONFIGS, 0, body)["resources"]
        finally:
            client.close()
        values |= {entry["config_value"] for entry in answer["config_entries"]}
    return values


# -- kafka-python ----------------------------------------------------------------------------------------


@pytest.fixture
def kafka_python_admin(cluster):
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    yield admin
    admin.close()


def _configs_of(described) -> dict:
    """kafka-python 3's answer, {type: {name: {key: {"value": ...}}}}, for the one topic asked."""
    [by_name] = described.values()
    [configs] = by_name.values()
    return {k: (v["value"] if isinstance(v, dict) else v) for k, v in configs.items()}


def test_kafka_python_describes_and_alters_a_topics_configs(cluster, kafka_python_admin):
    topic = topic_name("kp-configs")
    cluster.create_topic(topic, partitions=1, retention_ms=3600000)
    resource = ConfigResource(ConfigResourceType.TOPIC, topic)
    assert _configs_of(kafka_python_admin.describe_configs([resource]))["retention.ms"] == "3600000"

    kafka_python_admin.alter_configs(
        [ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": "60000"})]
    )
    _wait_for_leader_log(
        cluster, topic, lambda config: config.retention_ms == 60000, "the leader's log to take retention.ms"
    )
    # A KRaft broker answers from the config records it has read of the metadata log: it may lag the
    # controller's answer to the alter by a fetch
    wait_until(
        lambda: _configs_of(kafka_python_admin.describe_configs([resource]))["retention.ms"] == "60000",
        what="the topic described with retention.ms 60000",
    )


def test_kafka_python_creates_partitions_and_deletes_records(cluster, kafka_python_admin):
    topic = topic_name("kp-grow")
    cluster.create_topic(topic, partitions=1, replication_factor=2)
    kafka_python_admin.create_partitions({topic: 3})
    cluster.wait_for_leaders(topic, 3)
    with pytest.raises(InvalidPartitionsError):
        kafka_python_admin.create_partitions({topic: 2})

    _produce(cluster, topic, 5)
    result = kafka_python_admin.delete_records({TopicPartition(topic, 0): 3})
    assert result[TopicPartition(topic, 0)]["low_watermark"] == 3
    assert _log_start_offset(cluster, topic) == 3
    with pytest.raises(KafkaError):  # beyond the high watermark: OFFSET_OUT_OF_RANGE
        kafka_python_admin.delete_records({TopicPartition(topic, 0): 50})
    assert _log_start_offset(cluster, topic) == 3


# -- confluent-kafka -----------------------------------------------------------------------------------------


@pytest.fixture
def confluent_admin(cluster):
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers})


def _cleanup_policy(confluent_admin, resource):
    [described] = confluent_admin.describe_configs([resource]).values()
    return described.result(15)["cleanup.policy"]


# confluent-kafka deprecates AlterConfigs for IncrementalAlterConfigs (Kafka 2.3), which Kafka 0.11 has not
@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning")
def test_confluent_kafka_describes_and_alters_a_topics_configs(cluster, confluent_admin):
    topic = topic_name("ck-configs")
    cluster.create_topic(topic, partitions=1)
    resource = ConfluentConfigResource("topic", topic)
    policy = _cleanup_policy(confluent_admin, resource)
    assert policy.value == "delete" and policy.is_default

    altered = ConfluentConfigResource(
        "topic", topic, set_config={"cleanup.policy": "compact", "retention.ms": "60000"}
    )
    [future] = confluent_admin.alter_configs([altered]).values()
    future.result(15)
    _wait_for_leader_log(
        cluster,
        topic,
        lambda config: config.compact and not config.delete,
        "the leader's log to be compacted",
    )
    # as above: a KRaft broker's answer may lag the alter by a fetch of the metadata log
    policy = wait_until(
        lambda: (p := _cleanup_policy(confluent_admin, resource)).value == "compact" and p,
        what="the topic described with cleanup.policy compact",
    )
    assert not policy.is_default
    wait_until(
        lambda: _described_by_every_broker(cluster, topic, "cleanup.policy") == {"compact"},
        what="every broker to describe cleanup.policy compact",
    )

    bad = ConfluentConfigResource("topic", topic, set_config={"no.such.config": "1"})
    [future] = confluent_admin.alter_configs([bad]).values()
    with pytest.raises(ConfluentKafkaException, match=r"no\.such\.config"):
        future.result(15)
    # the refused request changed nothing, on any broker
    assert _cleanup_policy(confluent_admin, resource).value == "compact"
    assert _described_by_every_broker(cluster, topic, "cleanup.policy") == {"compact"}


def test_confluent_kafka_creates_partitions_and_deletes_records(cluster, confluent_admin):
    topic = topic_name("ck-grow")
    cluster.create_topic(topic, partitions=1, replication_factor=2)
    [future] = confluent_admin.create_partitions([ConfluentNewPartitions(topic, 2)]).values()
    future.result(15)
    cluster.wait_for_leaders(topic, 2)

    _produce(cluster, topic, 4, partition=1)
    [future] = confluent_admin.delete_records([ConfluentTopicPartition(topic, 1, 2)]).values()
    deleted = future.result(15)
    assert deleted.low_watermark == 2
    assert _log_start_offset(cluster, topic, 1) == 2


def test_confluent_kafka_describes_a_topic_that_does_not_exist_as_each_mode_answers(cluster, confluent_admin):
    """ZooKeeper mode answers as Kafka 0.11: the missing topic's (absent) config znode read, the
    broker's defaults described, no error. KRaft mode answers as Kafka 3.3: UNKNOWN_TOPIC_OR_PARTITION."""
    # The brokers learned first: librdkafka drops its bootstrap connections once it knows them, and a
    # request in flight on one fails with _DESTROY_BROKER.
    confluent_admin.list_topics(timeout=15)
    [described] = confluent_admin.describe_configs(
        [ConfluentConfigResource("topic", topic_name("nowhere"))]
    ).values()
    if isinstance(cluster, LiteCluster):
        configs = described.result(15)
        assert configs["cleanup.policy"].value == "delete" and configs["cleanup.policy"].is_default
        assert "retention.ms" in configs and "max.message.bytes" in configs
    else:
        with pytest.raises(ConfluentKafkaException) as refused:
            described.result(15)
        assert refused.value.args[0].name() == "UNKNOWN_TOPIC_OR_PART", refused.value
