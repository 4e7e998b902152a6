"""Three combined KRaft nodes (each broker and controller, one metadata quorum) and a broker-only node
(an observer of the quorum) as processes, and unmodified kafka-python: a topic of replication factor
3 created through a node, records produced with acks=all through the broker-only node and read back;
then the partition's leader SIGKILLed: the controller (a new one, if the killed node was it) fences
it when its session runs out, moves the leadership to a surviving replica and shrinks the ISR, and
the records are read from the new leader, which takes acks=all writes again."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_lite.raft.tools.quorum_client import find_leader
from tests.kraft.nodes import CombinedNodes, fast_setting_s
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("kraft_combined_cluster")]

VOTERS = (1, 2, 3)
OBSERVER = 4
EVERYONE = (*VOTERS, OBSERVER)
TOPIC = "kraft-replicated"
FIRST = [f"before-{i}".encode() for i in range(10)]
AFTER = [f"after-{i}".encode() for i in range(5)]
# A step of the scenario (a killed node fenced, a new controller elected, the partition's new
# leader seen) takes a session and an election on an idle machine. Each wait ends as soon as its
# condition holds, so its deadline only bounds how long a broken run takes to fail: ten steps' worth
# leaves a loaded machine room to run a node late, have it fenced and let it back.
STEP_S = 10 * (
    fast_setting_s("broker.session.timeout.ms")
    + fast_setting_s("controller.quorum.fetch.timeout.ms")
    + fast_setting_s("controller.quorum.election.timeout.ms")
)


@pytest.fixture(scope="module")
def nodes(tmp_path_factory):
    cluster = CombinedNodes(
        tmp_path_factory.mktemp("kraft-combined-cluster"), VOTERS, broker_only=(OBSERVER,)
    )
    try:
        cluster.start_all()
        yield cluster
    finally:
        cluster.stop_all()


def produce(bootstrap: str, values: list[bytes]) -> list[int]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0, retries=5)
    try:
        return [producer.send(TOPIC, value, partition=0).get(timeout=15).offset for value in values]
    finally:
        producer.close()


def read_all(bootstrap: str, count: int) -> list[bytes]:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=15_000
    )
    try:
        consumer.assign([TopicPartition(TOPIC, 0)])
        seen = []
        for message in consumer:
            seen.append(message.value)
            if len(seen) == count:
                break
        return seen
    finally:
        consumer.close()


def in_sync(partition: dict | None) -> dict | None:
    """The partition, if every replica is in its ISR."""
    return partition if partition and sorted(partition["isr"]) == sorted(partition["replicas"]) else None


def test_the_broker_only_node_observes_the_quorum_and_votes_in_nothing(nodes):
    quorum = wait_until(
        lambda: find_leader({n: ("127.0.0.1", nodes.controller_ports[n]) for n in VOTERS}),
        STEP_S,
        "the quorum's leader",
    )
    assert sorted(v["replica_id"] for v in quorum["current_voters"]) == list(VOTERS)
    assert OBSERVER in {o["replica_id"] for o in quorum["observers"]}


def test_a_replicated_topic_survives_its_leader_killed(nodes):
    admin = KafkaAdminClient(bootstrap_servers=nodes.bootstrap(2), request_timeout_ms=10_000)
    try:
        response = admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=3)])
        assert [(t["name"], t["error_code"]) for t in response["topics"]] == [(TOPIC, 0)]
    finally:
        admin.close()
    # The partition starts with every replica in its ISR, but a node that a loaded machine ran late
    # may have been fenced since (taken out of the ISR) and be on its way back: wait for it.
    state = wait_until(
        lambda: all(nodes.partition(n, TOPIC) for n in EVERYONE) and in_sync(nodes.partition(OBSERVER, TOPIC)),
        STEP_S, "every node's cache holding the new partition, every replica in its ISR",
    )  # fmt: skip
    replicas = state["replicas"]
    assert len(set(replicas)) == 3, state
    assert produce(nodes.bootstrap(OBSERVER), FIRST) == list(range(len(FIRST)))
    assert read_all(nodes.bootstrap(OBSERVER), len(FIRST)) == FIRST

    old_leader = state["leader"]
    survivors = [n for n in EVERYONE if n != old_leader]
    replicas_left = sorted(r for r in replicas if r != old_leader)
    nodes.kill(old_leader)
    wait_until(
        lambda: (p := nodes.partition(survivors[0], TOPIC)) and p["leader"] in replicas_left
        and sorted(p["isr"]) == replicas_left,
        STEP_S, f"the partition led by a surviving replica, its ISR {replicas_left}: the killed node out",
    )  # fmt: skip
    wait_until(
        lambda: nodes.brokers_seen(survivors[-1]) == set(survivors), STEP_S, "the killed broker fenced"
    )
    bootstrap = nodes.bootstrap(*survivors)
    assert read_all(bootstrap, len(FIRST)) == FIRST, "every acknowledged record on the new leader"
    assert produce(bootstrap, AFTER) == list(range(len(FIRST), len(FIRST) + len(AFTER)))
    assert read_all(bootstrap, len(FIRST) + len(AFTER)) == FIRST + AFTER
