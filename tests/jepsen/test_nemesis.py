"""The nemesis and its fault proxy on real clusters: the proxy carries Kafka's traffic, a partition
stops it across the cut and healing lets it through again, and the schedule strikes and heals on
stop. Kill and pause, and stopping the cluster without leaving anything behind, are proven by the
Jepsen run of each mode (``test_run.py``), on the same cluster.

The package's ``FaultyCluster`` of each mode (``conftest.py``) serves this module's tests, in order,
with a topic of their own. Every wait ends when its condition holds, within a deadline from the
cluster's settings (``STEP_TIMEOUT_S``, the hold).
"""

from __future__ import annotations

import random
import socket
import struct
import time

import pytest

from kafka_lite.cli import cluster as launcher
from kafka_lite.common.time import MockTime, wait_until
from kafka_lite.jepsen.fault_proxy import CLIENTS, client_id_of, node_of_client_id
from kafka_lite.jepsen.history import HistoryWriter, read_history
from kafka_lite.jepsen.nemesis import (
    STEP_TIMEOUT_S,
    ZOOKEEPER,
    FaultyCluster,
    Nemesis,
    cut_between,
)
from kafka_lite.utils.ports import port_free
from tests.support.processes import processes_under
from tests.support.topics import read_topic

TOPIC = "nemesis"  # not the run's "jepsen", which the run creates on the same cluster
PARTITIONS = 3


@pytest.fixture(scope="module")
def faulty(faulty_cluster) -> FaultyCluster:
    faulty_cluster.create_topic(TOPIC, PARTITIONS)
    return faulty_cluster


def api_versions_answered(port: int) -> bool:
    """Whether an ApiVersions request (v0, client_id "nemesis-test": a client's) sent to ``port`` is
    answered: a cut connection is reset at its first request, so it reads nothing."""
    body = struct.pack(">hhih", 18, 0, 7, len(b"nemesis-test")) + b"nemesis-test"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(struct.pack(">i", len(body)) + body)
            answer = s.recv(8)
    except OSError:  # reset by the proxy
        return False
    return len(answer) == 8 and struct.unpack(">ii", answer)[1] == 7


@pytest.mark.unit
def test_the_first_requests_client_id_names_the_node_it_comes_from():
    frame = struct.pack(">hhih", 1, 3, 42, len(b"replica-fetcher-2-0")) + b"replica-fetcher-2-0" + b"body"
    assert client_id_of(frame) == "replica-fetcher-2-0"
    assert client_id_of(struct.pack(">hhih", 18, 0, 1, -1)) is None
    with pytest.raises(ValueError, match="does not fit"):
        client_id_of(struct.pack(">hhih", 18, 0, 1, 50) + b"short")
    named = ["replica-fetcher-2-0", "controller-1", "broker-0-controlled-shutdown",
             "broker-2-txn-marker-sender", "broker-1-add-partitions-to-txn-sender", "raft-1", "0"]  # fmt: skip
    assert [node_of_client_id(c) for c in named] == [2, 1, 0, 2, 1, 1, 0]
    assert [node_of_client_id(c) for c in ("producer-1", "consumer-3", "", None, "raft-x")] == [CLIENTS] * 5


@pytest.mark.unit
def test_the_shapes_of_a_partition(tmp_path):
    cluster = FaultyCluster(tmp_path / "zk", kraft=False)  # not started: a shape needs only the nodes
    with HistoryWriter(tmp_path / "history.jsonl", MockTime()) as history:
        nemesis = Nemesis(cluster, {"partition"}, history, random.Random(5), MockTime())
        everyone = {0, 1, 2, ZOOKEEPER, CLIENTS}
        for _ in range(10):
            _, isolated = nemesis.shape("isolated")
            alone = set.intersection(*(set(pair) for pair in isolated))
            assert len(alone) == 1 and alone <= {0, 1, 2}
            assert isolated == {frozenset((*alone, x)) for x in everyone - alone}

            _, split = nemesis.shape("majority-minority")
            minority = {n for n in (0, 1, 2) if all(frozenset((n, m)) in split for m in {0, 1, 2} - {n})}
            assert len(minority) == 1  # one node of three
            majority = {0, 1, 2} - minority | {ZOOKEEPER}  # ZooKeeper stays with the majority
            clients_side = majority if frozenset((CLIENTS, *minority)) in split else minority
            clients_side.add(CLIENTS)
            assert split == cut_between([minority, majority])

            _, from_zookeeper = nemesis.shape("cut-from-zookeeper")
            assert len(from_zookeeper) == 1 and ZOOKEEPER in next(iter(from_zookeeper))


@pytest.mark.unit
def test_bad_faults_shapes_and_cuts_are_named(tmp_path):
    kraft = FaultyCluster(tmp_path / "kraft", kraft=True)
    with HistoryWriter(tmp_path / "history.jsonl", MockTime()) as history:
        with pytest.raises(ValueError, match="explode"):
            Nemesis(kraft, {"kill", "explode"}, history, random.Random(1), MockTime())
        nemesis = Nemesis(kraft, {"partition"}, history, random.Random(1), MockTime())
        with pytest.raises(ValueError, match="no ZooKeeper"):
            nemesis.shape("cut-from-zookeeper")
        with pytest.raises(ValueError, match="'ring'"):
            nemesis.shape("ring")
        with pytest.raises(ValueError, match="'nobody'"):
            nemesis.run_one("kill", "nobody")
        with pytest.raises(ValueError, match="no target, not 'leader'"):
            nemesis.run_one("partition", "leader")
    with pytest.raises(ValueError, match=r"cannot cut \[0, 7\]"):
        kraft.partition({frozenset((0, 7))})
    with pytest.raises(ValueError, match=r"cannot cut \[0, 'zookeeper'\]"):
        kraft.partition({frozenset((0, ZOOKEEPER))})  # a KRaft cluster has none
    with pytest.raises(ValueError, match="at least 1 broker, got 0"):
        FaultyCluster(tmp_path / "none", kraft=True, brokers=0)


def test_the_proxy_carries_kafka_traffic_and_knows_who_sends_it(faulty):
    from kafka_lite.producer.kafka_producer import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=faulty.bootstrap_servers, acks=-1, retries=10)
    try:
        for v in range(10):
            producer.send(TOPIC, str(v).encode(), partition=v % PARTITIONS)
        producer.flush()
    finally:
        producer.close()
    records = read_topic(faulty.bootstrap_servers, TOPIC)
    assert sorted(int(r.value) for r in records) == list(range(10))
    # acks=all: every replica, leader or follower, has them; each node answers for its own log.
    ends = [{faulty.log_end_offset(n, TOPIC, p) for n in faulty.node_ids} for p in range(PARTITIONS)]
    assert all(len(end) == 1 for end in ends), ends
    assert sum(end.pop() for end in ends) == len(records)
    assert faulty.log_end_offset(faulty.node_ids[0], "no-such-topic", 0) is None
    # Every follower fetches from its leader through the leader's proxy, named as itself, not a client.
    links = set(faulty.proxy.links())
    for p in range(PARTITIONS):
        leader = faulty.leader_of(TOPIC, p)
        for follower in (n for n in faulty.node_ids if n != leader):
            assert (follower, leader) in links, (
                f"no fetch link from {follower} to {leader}: {sorted(links, key=str)}"
            )


def test_a_partition_stops_traffic_across_the_cut_and_healing_restores_it(faulty):
    leader = faulty.leader_of(TOPIC, 0)
    others = [n for n in faulty.node_ids if n != leader]
    front = faulty.fronts["broker"]
    assert api_versions_answered(front[leader])
    faulty.partition(cut_between([{leader}, {*others, CLIENTS}]))
    try:
        assert not api_versions_answered(front[leader])
        assert api_versions_answered(front[others[0]])  # the clients still reach the others
        across = [link for link in faulty.proxy.links() if frozenset(link) in faulty.cut]
        assert across == []

        # The cut is real between nodes too: a partition led by another node loses the cut one
        # from its ISR once replica.lag.time.max.ms has passed without a fetch from it.
        def dropped() -> bool:
            for p in range(PARTITIONS):
                led_by, isr = faulty.leader_and_isr(TOPIC, p, asking=others)
                if led_by in others and leader not in isr:
                    return True
            return False

        wait_until(
            dropped,
            f"a partition led by {others} to drop node {leader} from its ISR",
            STEP_TIMEOUT_S,
            time=faulty.time,
        )
    finally:
        faulty.heal()
    assert api_versions_answered(front[leader])
    faulty.wait_whole()


def test_the_coordinator_isolated_is_the_one_a_client_finds(faulty, tmp_path):
    from kafka_lite.clients.admin import KafkaAdminClient

    group = "nemesis-coordinator-group"
    with HistoryWriter(tmp_path / "history.jsonl", faulty.time) as history:
        nemesis = Nemesis(faulty, {"partition"}, history, random.Random(2), faulty.time)
        assert nemesis.shape("coordinator-isolated")[0] == "isolated"  # no group of a run yet
        faulty.groups.add(group)
        admin = KafkaAdminClient(bootstrap_servers=faulty.bootstrap_servers)
        try:
            found = admin.find_coordinator(group).id  # creates __consumer_offsets if it is not there
        finally:
            admin.close()
        faulty.wait_whole()
        shape, cut = nemesis.shape("coordinator-isolated")
    everyone = {*faulty.node_ids, CLIENTS, *(() if faulty.kraft else (ZOOKEEPER,))}
    assert shape == "coordinator-isolated"
    assert cut == {frozenset((found, x)) for x in everyone - {found}}


def test_the_schedule_strikes_and_stop_heals_whatever_is_in_force(faulty, tmp_path):
    with HistoryWriter(tmp_path / "history.jsonl", faulty.time) as history:
        nemesis = Nemesis(faulty, {"partition"}, history, random.Random(3), faulty.time, interval_s=0)
        nemesis.start()
        wait_until(lambda: faulty.cut, "the nemesis to cut the network", STEP_TIMEOUT_S, time=faulty.time)
        nemesis.stop()  # cuts the hold short: heals, then waits until the cluster is whole
    ops = read_history(tmp_path / "history.jsonl")
    assert [(op.f, op.type) for op in ops] == [
        ("partition", "invoke"),
        ("partition", "ok"),
        ("heal", "invoke"),
        ("heal", "ok"),
        ("whole", "invoke"),
        ("whole", "ok"),
    ]
    assert ops[0].value["cut"] and ops[2].value == ops[0].value
    # stop cut the hold short: the heal came about as soon as the cut was seen, not a hold later
    assert (ops[2].time - ops[1].time) / 1e9 < faulty.hold_s()
    assert nemesis.faults_done == 1
    assert faulty.cut == set() and faulty.is_whole()


def test_a_delay_holds_the_clients_produce_to_the_leader_until_it_is_released(faulty, tmp_path):
    from kafka_lite.common.protocol.api_keys import ApiKeys
    from kafka_lite.common.record import MemoryRecords
    from tests.support.wire import WireClient, produce_body

    late = bytes(MemoryRecords.with_records([(int(time.time() * 1000), None, b"late")]).buffer())

    with HistoryWriter(tmp_path / "history.jsonl", faulty.time) as history:
        nemesis = Nemesis(faulty, {"delay"}, history, random.Random(4), faulty.time)
        release = nemesis._delay()  # the leader of a partition of a topic the cluster has
        (strike,) = [op for op in read_history(tmp_path / "history.jsonl") if op.type == "ok"]
        node = strike.value["nodes"][0]
        topic, partition = strike.value["as"].removeprefix("leader of ").rsplit("-", 1)
        partition = int(partition)
        client, other = WireClient(faulty.fronts["broker"][node]), WireClient(faulty.fronts["broker"][node])
        try:
            # acks=all: answered once the ISR has the record, so that a read right after sees it
            client.send(ApiKeys.PRODUCE, 3, produce_body(topic, partition, late, acks=-1))
            assert other.call(ApiKeys.API_VERSIONS, 0, {}), "other requests go on"
            client.sock.settimeout(1.0)
            with pytest.raises(socket.timeout):
                client.read_frame()  # held: no answer while the delay is in force
            client.sock.settimeout(STEP_TIMEOUT_S)
            release()
            assert client.read_frame(), "answered once released"
        finally:
            client.close()
            other.close()
    ops = read_history(tmp_path / "history.jsonl")
    assert [(op.f, op.type) for op in ops] == [("delay", "invoke"), ("delay", "ok"),
                                               ("release", "invoke"), ("release", "ok")]  # fmt: skip
    assert ops[0].value["requests"] == "Produce" and topic in faulty.topics
    assert b"late" in [r.value for r in read_topic(faulty.bootstrap_servers, topic)]


@pytest.mark.integration
def test_a_failed_start_leaves_nothing_behind(tmp_path):
    cluster = FaultyCluster(tmp_path / "broken", kraft=True, overrides=["num.io.threads=none"])
    with pytest.raises(launcher.CliError, match="exited"):
        cluster.start()  # the proxies listen, the nodes start and refuse their settings
    assert processes_under(tmp_path / "broken") == []
    fronts = [port for ports in cluster.fronts.values() for port in ports.values()]
    assert fronts and [p for p in fronts if not port_free(p)] == []
