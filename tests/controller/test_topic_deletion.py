"""Topic deletion on a 3-broker cluster: DeleteTopics through the controller, the replicas' files
deleted by StopReplica on every broker, and a deletion that waits for a broker that is down."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_lite import KafkaProducer
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.errors import Errors, UnknownTopicOrPartitionException
from kafka_lite.common.protocol.api_keys import ApiKeys
from tests.support.cluster import LiteCluster
from tests.support.topics import read_topic, topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("topic_deletion")]


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    c = LiteCluster(zookeeper.connect_string, tmp_path_factory.mktemp("deletion"), brokers=3).start()
    yield c
    c.stop()


def _partition_dirs(cluster: LiteCluster, topic: str) -> list[Path]:
    return sorted(
        p for b in range(cluster.size) for p in (cluster.directory / f"broker-{b}").glob(f"{topic}-*")
    )


def _gone_everywhere(cluster: LiteCluster, topic: str) -> bool:
    zk = cluster.controller().zk
    return (
        not _partition_dirs(cluster, topic)
        and not zk.client.exists(f"/brokers/topics/{topic}")
        and not zk.client.exists(f"/admin/delete_topics/{topic}")
        and all(not s.metadata_cache.contains(topic) for s in cluster.servers if s.running)
    )


def _delete(cluster: LiteCluster, topic: str) -> None:
    admin = KafkaAdminClient(cluster.bootstrap_servers)
    try:
        admin.delete_topics([topic], timeout_ms=10_000)
    finally:
        admin.close()


def test_a_healthy_topic_is_deleted_from_every_broker(cluster):
    topic = topic_name("deleted")
    cluster.create_topic(topic, partitions=3, replication_factor=2)
    wait_until(lambda: len(_partition_dirs(cluster, topic)) == 6, what="the six replicas' directories")

    _delete(cluster, topic)
    # DeleteTopics answers once the controller's metadata has dropped the topic
    assert not cluster.server(cluster.controller().broker_id).metadata_cache.contains(topic)
    wait_until(
        lambda: _gone_everywhere(cluster, topic), what=f"{topic} gone from disks, ZooKeeper and caches"
    )
    assert all(s.replica_manager.get_partition((topic, p)) is None for s in cluster.servers for p in range(3))


def test_a_topic_deleted_while_one_of_its_brokers_is_down_finishes_when_it_returns(cluster):
    topic = topic_name("waits")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    wait_until(lambda: len(_partition_dirs(cluster, topic)) == 6, what="the six replicas' directories")
    down = next(b for b in range(cluster.size) if b != cluster.controller().broker_id)
    cluster.stop_broker(down)
    wait_until(
        lambda: down not in cluster.controller().context.live_broker_ids(),
        what=f"the controller to see {down} go",
    )

    _delete(cluster, topic)
    controller = cluster.controller()
    wait_until(
        lambda: not [p for p in _partition_dirs(cluster, topic) if p.parent.name != f"broker-{down}"],
        what="the live brokers' replicas deleted",
    )
    # the down broker's replicas are still on its disk, and the deletion waits for them
    assert len(_partition_dirs(cluster, topic)) == 2
    assert controller.zk.client.exists(f"/brokers/topics/{topic}")
    assert controller.topic_deletion_manager.is_topic_ineligible_for_deletion(topic)

    cluster.restart_broker(down)
    wait_until(lambda: _gone_everywhere(cluster, topic), what=f"{topic} gone once broker {down} returned")
    assert not controller.is_topic_queued_up_for_deletion(topic)


def test_deleting_a_topic_that_does_not_exist_changes_nothing(cluster):
    topic = topic_name("never")
    zk = cluster.controller().zk
    before = (zk.get_all_topics(), zk.get_topics_to_be_deleted())
    with pytest.raises(UnknownTopicOrPartitionException, match=topic):
        _delete(cluster, topic)
    assert (zk.get_all_topics(), zk.get_topics_to_be_deleted()) == before
    assert not zk.client.exists(f"/admin/delete_topics/{topic}")


def test_a_broker_that_is_not_the_controller_refuses_and_a_zero_timeout_does_not_wait(cluster):
    """DeleteTopics goes to the controller (NOT_CONTROLLER elsewhere, nothing written); with timeout 0
    the mark is written and the answer is REQUEST_TIMED_OUT at once, as in Kafka: "not waited for"."""
    topic = topic_name("unwaited")
    cluster.create_topic(topic, partitions=1)
    admin = KafkaAdminClient(cluster.bootstrap_servers)
    try:
        described = admin.describe_cluster()
        other = next(n for n in described.nodes.values() if n.id != described.controller.id)
        answer = admin._call(other, ApiKeys.DELETE_TOPICS, 1, {"topics": [topic], "timeout": 1000})
        assert answer["topic_error_codes"] == [{"topic": topic, "error_code": Errors.NOT_CONTROLLER.code}]
        assert cluster.controller().zk.get_topics_to_be_deleted() == []

        answer = admin._call(
            described.controller, ApiKeys.DELETE_TOPICS, 1, {"topics": [topic], "timeout": 0}
        )
        assert answer["topic_error_codes"] == [{"topic": topic, "error_code": Errors.REQUEST_TIMED_OUT.code}]
    finally:
        admin.close()
    wait_until(lambda: _gone_everywhere(cluster, topic), what=f"{topic} deleted all the same")


def test_a_deleted_topic_can_be_created_again_empty(cluster):
    """After the deletion completes nothing of the old topic is left: a new topic of the same name
    starts from offset 0 with only its own records."""
    topic = topic_name("reborn")

    def produce(values: list[bytes]) -> None:
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
        try:
            for v in values:
                producer.send(topic, value=v, partition=0)
            producer.flush()
        finally:
            producer.close()

    cluster.create_topic(topic, partitions=1, replication_factor=3)
    produce([b"old-1", b"old-2"])
    _delete(cluster, topic)
    wait_until(lambda: _gone_everywhere(cluster, topic), what=f"{topic} deleted")

    cluster.create_topic(topic, partitions=1, replication_factor=3)
    produce([b"new"])
    records = read_topic(cluster.bootstrap_servers, topic)
    assert [(r.offset, r.value) for r in records] == [(0, b"new")]
