"""Reassignment, preferred replica election and the auto leader rebalance on an in-process 3-broker
cluster: the controller, the brokers' replication and kafka_lite's clients together."""

from __future__ import annotations

import logging
import threading

import pytest

from kafka_lite import KafkaConsumer, KafkaProducer, TopicPartition
from kafka_lite.clients.admin import NewTopic
from kafka_lite.zk.zk_utils import PREFERRED_REPLICA_ELECTION_PATH, REASSIGN_PARTITIONS_PATH
from tests.support.cluster import LiteCluster
from tests.support.topics import topic_name
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("controller_reassignment_cluster")]


@pytest.fixture(scope="module")
def cluster3(zookeeper, tmp_path_factory):
    c = LiteCluster(zookeeper.connect_string, tmp_path_factory.mktemp("reassignment"), brokers=3).start()
    yield c
    c.stop()


def create(cluster: LiteCluster, topic: str, assignment: dict[int, list[int]]) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(topic, -1, -1, assignment, {})])
    finally:
        admin.close()
    cluster.wait_for_leaders(topic, len(assignment))


def zk(cluster: LiteCluster):
    return next(s for s in cluster.servers if s.running).zk


def read_back(cluster: LiteCluster, topic: str, n: int) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        values: list[bytes] = []

        def all_read() -> bool:
            for records in consumer.poll(timeout_ms=200).values():
                values.extend(r.value for r in records)
            return len(values) >= n

        wait_until(all_read, what=f"{n} records read back")
        return values
    finally:
        consumer.close()


def every_broker_knows_leader(cluster: LiteCluster, topic: str, partition: int, leader: int) -> bool:
    return all(
        s.metadata_cache.partition_state(topic, partition).leader == leader
        for s in cluster.servers
        if s.running
    )


def test_a_reassignment_completes_under_acks_all_load_and_loses_nothing(cluster3):
    """[0, 1] -> [1, 2] while an idempotent acks=all producer keeps sending: the reassignment
    completes (the path is deleted, the assignment and ISR are the new replicas, broker 0 drops its
    replica), and every acknowledged record is read back once, in the order sent."""
    topic = topic_name("moved")
    create(cluster3, topic, {0: [0, 1]})
    acknowledged: list[bytes] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    with KafkaProducer(
        bootstrap_servers=cluster3.bootstrap_servers, acks="all", linger_ms=5, enable_idempotence=True
    ) as producer:

        def load() -> None:
            i = 0
            try:
                while not stop.is_set():
                    values = [f"v{i + j}".encode() for j in range(20)]
                    futures = [producer.send(topic, v) for v in values]
                    for f in futures:
                        f.get(30)
                    acknowledged.extend(values)
                    i += 20
            except BaseException as e:  # the test asserts there is none
                errors.append(e)

        loader = threading.Thread(target=load, name="acks-all-load")
        loader.start()
        try:
            wait_until(lambda: len(acknowledged) >= 100 or errors, what="the load to start")
            zk(cluster3).create_partition_reassignment_data({(topic, 0): [1, 2]})

            def completed() -> bool:
                z = zk(cluster3)
                state = z.get_partition_state(topic, 0).leader_and_isr
                return (
                    not z.client.exists(REASSIGN_PARTITIONS_PATH)
                    and z.get_partition_assignment(topic) == {0: [1, 2]}
                    and sorted(state.isr) == [1, 2]
                )

            wait_until(completed, timeout_s=30, what="the reassignment to complete")
            at_completion = len(acknowledged)
            wait_until(
                lambda: len(acknowledged) >= at_completion + 100 or errors, what="more records after it"
            )
        finally:
            stop.set()
            loader.join(60)
    assert errors == []
    assert zk(cluster3).get_partition_state(topic, 0).leader_and_isr.leader in (1, 2)
    wait_until(
        lambda: cluster3.server(0).replica_manager.get_partition((topic, 0)) is None,
        what="broker 0 to drop its replica",
    )
    assert read_back(cluster3, topic, len(acknowledged)) == acknowledged


def test_a_preferred_replica_election_restores_the_preferred_leaders(cluster3):
    """A bounce moves broker 0's leadership to broker 1; broker 0 returns as a follower; the election
    (the path the tool writes) gives it back, and the path is deleted."""
    topic = topic_name("preferred")
    create(cluster3, topic, {0: [0, 1], 1: [1, 0]})
    cluster3.stop_broker(0)
    wait_until(lambda: every_broker_knows_leader(cluster3, topic, 0, 1), what="broker 1 to lead partition 0")
    cluster3.restart_broker(0)
    z = zk(cluster3)
    wait_until(
        lambda: 0 in z.get_partition_state(topic, 0).leader_and_isr.isr, what="broker 0 back in the ISR"
    )
    assert cluster3.leader_of(topic, 0) == 1  # the bounce left it there

    z.create_preferred_replica_election_data({(topic, 0), (topic, 1)})
    wait_until(
        lambda: every_broker_knows_leader(cluster3, topic, 0, 0), what="broker 0 to lead partition 0 again"
    )
    wait_until(lambda: not z.client.exists(PREFERRED_REPLICA_ELECTION_PATH), what="the path to be deleted")
    assert cluster3.leader_of(topic, 1) == 1


def test_a_reassignment_to_an_unknown_broker_or_malformed_json_changes_nothing(cluster3, caplog):
    topic = topic_name("refused")
    create(cluster3, topic, {0: [0, 1]})
    z = zk(cluster3)
    before = z.get_partition_state(topic, 0).leader_and_isr

    z.create_partition_reassignment_data({(topic, 0): [1, 9]})
    wait_until(lambda: not z.client.exists(REASSIGN_PARTITIONS_PATH), what="the controller to drop it")
    assert z.get_partition_assignment(topic) == {0: [0, 1]}
    assert z.get_partition_state(topic, 0).leader_and_isr == before

    with caplog.at_level(logging.ERROR, logger="kafka_lite.controller"):
        z.client.create(REASSIGN_PARTITIONS_PATH, b"{not json")
        try:
            wait_until(
                lambda: any("malformed" in r.getMessage() for r in caplog.records),
                what="the controller to refuse the JSON",
            )
        finally:
            z.delete_path(REASSIGN_PARTITIONS_PATH)
    assert z.get_partition_assignment(topic) == {0: [0, 1]}
    assert z.get_partition_state(topic, 0).leader_and_isr == before


def test_the_auto_rebalance_moves_leadership_back_on_its_own(zookeeper, tmp_path):
    """With ``auto.leader.rebalance.enable`` and a 1 s check interval, a bounced broker leads its
    preferred partitions again without anyone asking (the first check runs 5 s after failover)."""
    cluster = LiteCluster(
        zookeeper.connect_string,
        tmp_path,
        brokers=2,
        **{"auto.leader.rebalance.enable": True, "leader.imbalance.check.interval.seconds": 1},
    ).start()
    try:
        topic = topic_name("auto")
        create(cluster, topic, {0: [0, 1]})
        cluster.stop_broker(0)
        wait_until(lambda: every_broker_knows_leader(cluster, topic, 0, 1), what="broker 1 to lead")
        cluster.restart_broker(0)
        wait_until(
            lambda: every_broker_knows_leader(cluster, topic, 0, 0),
            timeout_s=30,
            what="the auto rebalance to give broker 0 its leadership back",
        )
    finally:
        cluster.stop()
