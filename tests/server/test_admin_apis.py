"""The admin APIs on the session's 3-broker cluster with its real ZooKeeper: DescribeConfigs and
AlterConfigs (Kafka 0.11), changes applied live through ``/config/changes``; CreatePartitions (Kafka
1.0); DeleteRecords (Kafka 0.11, KIP-107). Requests go over the wire as the bytes a client sends."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaProducer

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.zk.zk_utils import ZkUtils
from tests.support.cluster import LiteCluster
from tests.support.topics import topic_name
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("cluster")]

TOPIC, BROKER = 2, 4  # ConfigResource.Type
HOUR_MS = 3_600_000


def _alter(client: WireClient, topic: str, configs: dict, resource_type: int = TOPIC, validate_only=False):
    body = {
        "resources": [
            {
                "resource_type": resource_type,
                "resource_name": topic,
                "config_entries": [{"config_name": k, "config_value": v} for k, v in configs.items()],
            }
        ],
        "validate_only": validate_only,
    }
    [result] = client.call(ApiKeys.ALTER_CONFIGS, 0, body)["resources"]
    return Errors.for_code(result["error_code"]), result["error_message"]


def _describe(client: WireClient, resource_type: int, name: str, version: int = 1, names=None) -> dict:
    body = {"resources": [{"resource_type": resource_type, "resource_name": name, "config_names": names}]}
    if version >= 1:
        body["include_synonyms"] = True
    [result] = client.call(ApiKeys.DESCRIBE_CONFIGS, version, body)["resources"]
    return result


def _replica_logs(cluster, topic: str, partition: int = 0) -> list:
    return [
        s.replica_manager.get_partition((topic, partition)).log
        for s in cluster.servers
        if s.replica_manager.get_partition((topic, partition)) is not None
    ]


def _produce_old_records(cluster, topic: str, count: int, partition: int = 0) -> None:
    """``count`` records stamped an hour ago: old enough for a retention.ms of a minute."""
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=0)
    then = int(time.time() * 1000) - HOUR_MS
    for i in range(count):
        producer.send(topic, value=b"x" * 200, key=b"k%d" % i, partition=partition, timestamp_ms=then)
        producer.flush()  # one batch per record: small segments roll often
    producer.close()


@pytest.fixture
def zk(cluster):
    zk = ZkUtils(cluster.zk_connect)
    yield zk
    zk.close()


def test_retention_ms_and_cleanup_policy_altered_live_take_effect_without_a_restart(cluster):
    topic = topic_name("live-config")
    cluster.create_topic(topic, partitions=1, replication_factor=2, segment_bytes=1024)
    _produce_old_records(cluster, topic, 20)
    logs = _replica_logs(cluster, topic)
    assert len(logs) == 2 and all(log.number_of_segments > 3 for log in logs)
    client = WireClient(cluster.servers[0].port)

    # compact: a retention pass leaves the log alone, even with a short retention.ms
    assert _alter(
        client, topic, {"segment.bytes": "1024", "retention.ms": "60000", "cleanup.policy": "compact"}
    ) == (
        Errors.NONE,
        None,
    )
    wait_until(
        lambda: all(log.config.compact and log.config.retention_ms == 60000 for log in logs),
        what="every replica's log to take the new config",
    )
    segments = [log.number_of_segments for log in logs]
    for server in cluster.servers:
        server.log_manager.cleanup_logs()  # the scheduler's retention pass, run now
    assert [log.number_of_segments for log in logs] == segments
    assert all(log.log_start_offset == 0 for log in logs)

    # back to delete: the same pass now deletes every segment older than a minute
    assert _alter(client, topic, {"segment.bytes": "1024", "retention.ms": "60000"}) == (Errors.NONE, None)
    wait_until(lambda: all(log.config.delete for log in logs), what="every replica's log to be delete again")
    for server in cluster.servers:
        server.log_manager.cleanup_logs()
    assert all(log.log_start_offset == 20 and log.size_in_bytes() == 0 for log in logs)

    # described as an override, with the broker's default as its synonym
    entries = {e["config_name"]: e for e in _describe(client, TOPIC, topic)["config_entries"]}
    assert entries["retention.ms"]["config_value"] == "60000"
    assert entries["retention.ms"]["config_source"] == 1  # TOPIC_CONFIG
    assert [s["config_source"] for s in entries["retention.ms"]["config_synonyms"]] == [1, 5]
    assert (
        entries["cleanup.policy"]["config_value"] == "delete"
        and entries["cleanup.policy"]["config_source"] == 5
    )
    client.close()


def test_the_retention_task_deletes_by_a_retention_ms_altered_live(zookeeper, tmp_path):
    """The same, with nothing called by hand: a cluster of its own whose retention task runs every
    100 ms from the start, so the segments go by themselves once the new retention.ms is applied."""
    fast = {"log.initial.task.delay.ms": 0, "log.retention.check.interval.ms": 100}
    own = LiteCluster(zookeeper.connect_string, tmp_path, brokers=3, **fast).start()
    try:
        topic = topic_name("retention-task")
        own.create_topic(topic, partitions=1, replication_factor=3, segment_bytes=1024)
        _produce_old_records(own, topic, 20)
        logs = _replica_logs(own, topic)
        assert len(logs) == 3 and all(
            log.number_of_segments > 3 and log.log_start_offset == 0 for log in logs
        )
        client = WireClient(own.servers[0].port)
        assert _alter(client, topic, {"segment.bytes": "1024", "retention.ms": "60000"}) == (
            Errors.NONE,
            None,
        )
        client.close()
        wait_until(
            lambda: all(log.log_start_offset == 20 and log.size_in_bytes() == 0 for log in logs),
            what="every replica's retention task to delete the records older than a minute",
        )
    finally:
        own.stop()


def test_bad_alter_configs_answer_kafkas_errors_and_change_nothing(cluster, zk):
    topic = topic_name("bad-config")
    cluster.create_topic(topic, partitions=1, retention_ms=123456)
    client = WireClient(cluster.servers[1].port)
    notifications = zk.get_config_change_notifications()

    error, message = _alter(client, topic, {"retention.ms": "5", "no.such.config": "1"})
    assert error is Errors.INVALID_CONFIG and "no.such.config" in message
    # a value that does not parse: INVALID_REQUEST naming the key, as Kafka 0.11 to 2.x answer
    error, message = _alter(client, topic, {"retention.ms": "soon"})
    assert error is Errors.INVALID_REQUEST and "retention.ms" in message
    error, message = _alter(client, topic, {"cleanup.policy": "archive"})
    assert error is Errors.INVALID_REQUEST and "cleanup.policy" in message
    error, message = _alter(client, "0", {"log.retention.ms": "5"}, resource_type=BROKER)
    assert error is Errors.INVALID_REQUEST
    assert message == "AlterConfigs is only supported for topics, but resource type is BROKER"
    missing = topic_name("missing")  # Kafka 0.11's answer, validateTopicConfig's AdminOperationException
    assert _alter(client, missing, {"retention.ms": "5"}) == (
        Errors.UNKNOWN,
        f'Topic "{missing}" does not exist.',
    )
    # validate_only: checked, not written
    assert _alter(client, topic, {"retention.ms": "5"}, validate_only=True) == (Errors.NONE, None)

    assert zk.get_topic_config(topic) == {"retention.ms": "123456"}
    assert zk.get_config_change_notifications() == notifications
    assert all(log.config.retention_ms == 123456 for log in _replica_logs(cluster, topic))
    client.close()


def test_describe_configs_of_a_topic_and_a_broker(cluster):
    topic = topic_name("describe")
    cluster.create_topic(topic, partitions=1, max_message_bytes=4096)
    client = WireClient(cluster.servers[2].port)
    v0 = {e["config_name"]: e for e in _describe(client, TOPIC, topic, version=0)["config_entries"]}
    assert v0["max.message.bytes"] == {
        "config_name": "max.message.bytes",
        "config_value": "4096",
        "read_only": False,
        "is_default": False,
        "is_sensitive": False,
    }
    assert v0["cleanup.policy"]["config_value"] == "delete" and v0["cleanup.policy"]["is_default"]
    only = _describe(client, TOPIC, topic, names=["segment.ms"])["config_entries"]
    assert [e["config_name"] for e in only] == ["segment.ms"]

    broker = {e["config_name"]: e for e in _describe(client, BROKER, "2")["config_entries"]}
    assert broker["broker.id"]["config_value"] == "2" and broker["broker.id"]["read_only"]
    assert broker["broker.id"]["config_source"] == 4  # STATIC_BROKER_CONFIG
    other = _describe(client, BROKER, "0")
    assert Errors.for_code(other["error_code"]) is Errors.INVALID_REQUEST
    assert other["error_message"] == "Unexpected broker id, expected 2, but received 0"
    # Kafka 0.11 reads a missing topic's (absent) config znode: the broker's defaults, no error
    missing = _describe(client, TOPIC, topic_name("missing"))
    assert Errors.for_code(missing["error_code"]) is Errors.NONE
    assert len(missing["config_entries"]) == len(v0), "every topic config, as for a topic that exists"
    assert {e["config_name"]: e["config_source"] for e in missing["config_entries"]}["cleanup.policy"] == 5
    client.close()


def _create_partitions(client: WireClient, topic: str, count: int, assignment=None, validate_only=False):
    body = {
        "topic_partitions": [{"topic": topic, "new_partitions": {"count": count, "assignment": assignment}}],
        "timeout": 10_000,
        "validate_only": validate_only,
    }
    [result] = client.call(ApiKeys.CREATE_PARTITIONS, 1, body)["topic_errors"]
    return Errors.for_code(result["error_code"]), result["error_message"]


def test_create_partitions_through_the_controller(cluster, zk):
    topic = topic_name("grow")
    cluster.create_topic(topic, partitions=2, replication_factor=2)
    controller = cluster.controller().broker_id
    client = WireClient(cluster.server(controller).port)

    assert _create_partitions(client, topic, 4) == (Errors.NONE, None)
    cluster.wait_for_leaders(topic, 4)  # the controller saw the new partitions and elected leaders
    assignment = zk.get_partition_assignment(topic)
    assert sorted(assignment) == [0, 1, 2, 3] and all(len(r) == 2 for r in assignment.values())

    assert _create_partitions(client, topic, 5, assignment=[[0, 1]]) == (Errors.NONE, None)
    cluster.wait_for_leaders(topic, 5)
    assert zk.get_partition_assignment(topic)[4] == [0, 1]

    error, message = _create_partitions(client, topic, 3)
    assert error is Errors.INVALID_PARTITIONS
    assert message == "Topic currently has 5 partitions, which is higher than the requested 3."
    assert _create_partitions(client, topic, 6, assignment=[[0]])[0] is Errors.INVALID_REPLICA_ASSIGNMENT
    assert _create_partitions(client, topic, 6, validate_only=True) == (Errors.NONE, None)
    assert _create_partitions(client, topic_name("missing"), 2)[0] is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert len(zk.get_partition_assignment(topic)) == 5  # nothing written by the refused ones
    client.close()

    other = WireClient(cluster.server((controller + 1) % 3).port)
    assert _create_partitions(other, topic, 6)[0] is Errors.NOT_CONTROLLER
    other.close()


def _delete_records(client: WireClient, topic: str, offset: int, partition: int = 0) -> dict:
    body = {
        "topics": [{"topic": topic, "partitions": [{"partition": partition, "offset": offset}]}],
        "timeout": 10_000,
    }
    [t] = client.call(ApiKeys.DELETE_RECORDS, 0, body)["topics"]
    return t["partitions"][0]


def test_delete_records_moves_every_replicas_log_start_offset(cluster):
    topic = topic_name("delete-records")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for i in range(10):
        producer.send(topic, value=b"v%d" % i, partition=0)
    producer.flush()
    producer.close()
    leader = cluster.leader_of(topic, 0)
    client = WireClient(cluster.server(leader).port)
    logs = _replica_logs(cluster, topic)

    beyond = _delete_records(client, topic, 11)
    assert Errors.for_code(beyond["error_code"]) is Errors.OFFSET_OUT_OF_RANGE
    assert all(log.log_start_offset == 0 for log in logs)

    # answered once every replica has moved its log start offset: the low watermark
    done = _delete_records(client, topic, 4)
    assert (Errors.for_code(done["error_code"]), done["low_watermark"]) == (Errors.NONE, 4)
    assert [log.log_start_offset for log in logs] == [4, 4, 4]
    earliest = client.call(
        ApiKeys.LIST_OFFSETS, 1,
        {"replica_id": -1, "topics": [{"topic": topic, "partitions": [{"partition": 0, "timestamp": -2}]}]},
    )["responses"][0]["partition_responses"][0]  # fmt: skip
    assert earliest["offset"] == 4
    hw = _delete_records(client, topic, -1)  # -1: up to the high watermark
    assert hw["low_watermark"] == 10
    unknown = _delete_records(client, topic_name("missing"), 1)
    assert Errors.for_code(unknown["error_code"]) is Errors.UNKNOWN_TOPIC_OR_PARTITION
    client.close()


def test_a_broker_starting_reads_every_topics_overrides(cluster):
    topic = topic_name("restart-config")
    cluster.create_topic(topic, partitions=3, replication_factor=1, retention_ms=777000)
    victim = next(
        s.broker_id for s in cluster.servers if s.replica_manager.get_partition((topic, 0)) is not None
    )
    cluster.stop_broker(victim)
    server = cluster.restart_broker(victim)
    log = server.log_manager.get_log((topic, 0))
    assert log is not None and log.config.retention_ms == 777000


def test_api_versions_advertises_the_admin_apis(cluster):
    client = WireClient(cluster.servers[0].port)
    versions = {
        v["api_key"]: (v["min_version"], v["max_version"])
        for v in client.call(ApiKeys.API_VERSIONS, 1, {})["api_versions"]
    }
    client.close()
    assert versions[ApiKeys.DELETE_RECORDS] == (0, 0)
    assert versions[ApiKeys.DESCRIBE_CONFIGS] == (0, 1)
    assert versions[ApiKeys.ALTER_CONFIGS] == (0, 0)
    assert versions[ApiKeys.CREATE_PARTITIONS] == (0, 1)
