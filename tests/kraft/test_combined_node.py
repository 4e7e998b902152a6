"""One combined KRaft node (``process.roles=broker,controller``) as a process, formatted with
``kafka-lite storage format`` and started with ``kafka-lite broker start``, and unmodified clients
against it. kafka-python: a topic created (CreateTopics forwarded to the controller), records
produced with acks=all, read back in a consumer group (its ``__consumer_offsets`` auto-created
through the controller) and the group's offsets committed and read back; partitions added, configs
altered (a bad value refused by the controller) and the topic deleted, each decided by the
controller. confluent-kafka's idempotent producer (its producer id from a block the controller
allocated) and its transactions (committed read, aborted skipped, ``__transaction_state``
auto-created through the controller). kcat's and aiokafka's round trips on KRaft are the
compatibility tier's (tests/compat, its ``[kraft]`` cases), not run a second time here."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewPartitions, NewTopic

from kafka_lite.cli.main import main
from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from tests.kraft.nodes import CombinedNodes
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("kraft_combined_node")]

TOPIC = "kraft-orders"
RECORDS = [f"order-{i}".encode() for i in range(20)]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    nodes = CombinedNodes(tmp_path_factory.mktemp("kraft-combined-node"), (1,))
    try:
        nodes.start_all()
        yield nodes
    finally:
        nodes.stop_all()


def test_kafka_python_creates_produces_and_consumes_in_a_group(node):
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap(1), request_timeout_ms=10_000)
    try:
        response = admin.create_topics([NewTopic(TOPIC, num_partitions=2, replication_factor=1)])
        assert [(t["name"], t["error_code"]) for t in response["topics"]] == [(TOPIC, 0)]
    finally:
        admin.close()
    led = wait_until(lambda: node.partition(1, TOPIC, 1), 10, "the new topic's partitions led")
    assert led["leader"] == 1 and led["isr"] == [1]

    producer = KafkaProducer(bootstrap_servers=node.bootstrap(1), acks="all", linger_ms=0)
    try:
        offsets = [
            producer.send(TOPIC, value, partition=i % 2).get(timeout=10).offset
            for i, value in enumerate(RECORDS)
        ]
    finally:
        producer.close()
    assert offsets == [i // 2 for i in range(len(RECORDS))]

    consumer = KafkaConsumer(
        TOPIC, bootstrap_servers=node.bootstrap(1), group_id="kraft-readers", auto_offset_reset="earliest",
        enable_auto_commit=False, consumer_timeout_ms=15_000,
    )  # fmt: skip
    try:
        seen = []
        for message in consumer:
            seen.append(message.value)
            if len(seen) == len(RECORDS):
                break
        consumer.commit()
        committed = {p: consumer.committed(TopicPartition(TOPIC, p)) for p in (0, 1)}
    finally:
        consumer.close()
    assert sorted(seen) == sorted(RECORDS)
    assert committed == {0: 10, 1: 10}
    assert node.partition(1, "__consumer_offsets") is not None, "created through the controller"


def alter_retention(node: CombinedNodes, value: str) -> list[tuple[int, str]]:
    client = WireClient(node.broker_ports[1])
    try:
        entry = {"config_name": "retention.ms", "config_value": value}
        body = {
            "resources": [{"resource_type": 2, "resource_name": "kraft-admin", "config_entries": [entry]}],
            "validate_only": False,
        }
        answer = client.call(ApiKeys.ALTER_CONFIGS, 0, body)
    finally:
        client.close()
    return [(r["error_code"], r["resource_name"]) for r in answer["resources"]]


def test_admin_requests_are_decided_by_the_controller(node):
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap(1), request_timeout_ms=10_000)
    try:
        admin.create_topics([NewTopic("kraft-admin", num_partitions=1, replication_factor=1)])
        wait_until(lambda: node.partition(1, "kraft-admin", 0), 10, "the topic led")
        grown = admin.create_partitions({"kraft-admin": NewPartitions(total_count=3)})
        assert [(t.name, t.error_code) for t in grown.results] == [("kraft-admin", 0)]
        wait_until(lambda: node.partition(1, "kraft-admin", 2), 10, "the new partitions led")
        # AlterConfigs over the wire (kafka-python reads the configs back with DescribeConfigs first)
        assert alter_retention(node, "60000") == [(Errors.NONE.code, "kraft-admin")]
        assert alter_retention(node, "soon") == [(Errors.INVALID_CONFIG.code, "kraft-admin")]
        deleted = admin.delete_topics(["kraft-admin"])
        assert [(t["name"], t["error_code"]) for t in deleted["topics"]] == [("kraft-admin", 0)]
    finally:
        admin.close()
    wait_until(lambda: node.partition(1, "kraft-admin", 0) is None, 10, "the topic gone from the cache")


def test_confluent_kafka_idempotent_producer_gets_its_id_from_the_controllers_block(node, capsys):
    from confluent_kafka import Consumer, Producer

    producer = Producer({"bootstrap.servers": node.bootstrap(1), "enable.idempotence": True, "acks": "all"})
    delivered = []
    for i in range(5):
        producer.produce(
            "kraft-idempotent",
            f"ck-{i}".encode(),
            partition=0,
            on_delivery=lambda e, m: delivered.append((e, m.offset())),
        )
    assert producer.flush(15) == 0
    assert delivered == [(None, i) for i in range(5)]
    consumer = Consumer(
        {"bootstrap.servers": node.bootstrap(1), "group.id": "ck-readers", "auto.offset.reset": "earliest"}
    )
    try:
        consumer.subscribe(["kraft-idempotent"])
        values = read_values(consumer, 5)
    finally:
        consumer.close()
    assert values == [f"ck-{i}".encode() for i in range(5)]
    # the block the producer's id came from: a ProducerIdsRecord in the metadata log, for broker 1
    capsys.readouterr()
    segment = node.root / "node-1" / "metadata" / "__cluster_metadata-0" / "00000000000000000000.log"
    assert main(["dump-log", "--cluster-metadata-decoder", str(segment)]) == 0
    assert '"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1' in capsys.readouterr().out


def read_values(consumer, count: int) -> list[bytes]:
    """The next ``count`` record values a confluent-kafka consumer polls."""
    values: list[bytes] = []

    def poll_once() -> bool:
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            values.append(message.value())
        return len(values) >= count

    wait_until(poll_once, 15, f"{count} records", interval_s=0)
    return values


def test_confluent_kafka_transactions_commit_and_abort(node):
    from confluent_kafka import Consumer, Producer

    producer = Producer({"bootstrap.servers": node.bootstrap(1), "transactional.id": "kraft-tx"})
    producer.init_transactions(15)  # __transaction_state auto-created through the controller
    producer.begin_transaction()
    for value in (b"kept-1", b"kept-2"):
        producer.produce("kraft-tx", value, partition=0)
    producer.commit_transaction(15)
    producer.begin_transaction()
    producer.produce("kraft-tx", b"dropped", partition=0)
    producer.abort_transaction(15)
    producer.begin_transaction()
    producer.produce("kraft-tx", b"kept-3", partition=0)
    producer.commit_transaction(15)
    consumer = Consumer(
        {"bootstrap.servers": node.bootstrap(1), "group.id": "kraft-tx-readers", "auto.offset.reset": "earliest",
         "isolation.level": "read_committed"}
    )  # fmt: skip
    try:
        consumer.subscribe(["kraft-tx"])
        values = read_values(consumer, 3)
    finally:
        consumer.close()
    assert values == [b"kept-1", b"kept-2", b"kept-3"]
    assert node.partition(1, "__transaction_state") is not None


def describe_configs_error(node: CombinedNodes, resource_type: int, name: str) -> tuple[int, str | None]:
    client = WireClient(node.broker_ports[1])
    try:
        resource = {"resource_type": resource_type, "resource_name": name, "config_names": None}
        body = {"resources": [resource], "include_synonyms": False}
        [answer] = client.call(ApiKeys.DESCRIBE_CONFIGS, 1, body)["resources"]
    finally:
        client.close()
    return answer["error_code"], answer["error_message"]


def test_kafka_python_describes_configs_from_the_image(node):
    """DescribeConfigs is the broker's own answer, from the ConfigRecords it has replayed; the
    AlterConfigs between the two descriptions is the controller's."""
    topic = ConfigResource(ConfigResourceType.TOPIC, "kraft-configs")
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap(1), request_timeout_ms=10_000)
    try:
        admin.create_topics([NewTopic("kraft-configs", 1, 1, topic_configs={"retention.ms": "12345"})])
        wait_until(lambda: node.partition(1, "kraft-configs", 0), 10, "the topic led")
        described = admin.describe_configs([topic], config_filter="all")["topic"]["kraft-configs"]
        assert described["retention.ms"]["value"] == "12345"
        assert described["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"  # TOPIC_CONFIG, 1
        assert described["cleanup.policy"]["config_source"] == "DEFAULT_CONFIG"

        admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, "kraft-configs", {"retention.ms": "54321"})]
        )

        def retention() -> str | None:
            found = admin.describe_configs([topic])["topic"]["kraft-configs"].get("retention.ms")
            return found and found["value"]

        # the broker answers once it has replayed the controller's ConfigRecord
        wait_until(lambda: retention() == "54321", 10, "the altered retention.ms described")
        broker = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")], config_filter="all")
        node_id = broker["broker"]["1"]["node.id"]
        assert (node_id["value"], node_id["config_source"], node_id["read_only"]) == (
            "1",
            "STATIC_BROKER_CONFIG",
            True,
        )
    finally:
        admin.close()
    assert describe_configs_error(node, 2, "no-such-topic") == (
        Errors.UNKNOWN_TOPIC_OR_PARTITION.code,
        "Topic 'no-such-topic' does not exist.",
    )


def test_metadata_quorum_status_names_the_cluster_the_controller_answers_for(node, capsys):
    """--bootstrap-controller asks the controller itself: DescribeCluster for the id (Kafka 3.7)."""
    address = f"127.0.0.1:{node.controller_ports[1]}"
    assert main(["metadata-quorum", "--bootstrap-controller", address, "describe", "--status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [f"ClusterId:              {node.cluster_id}", "LeaderId:               1"]
