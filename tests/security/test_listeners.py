"""Several listeners per broker (KIP-103, Kafka 0.10.2): a SASL_PLAINTEXT listener for the clients
beside a PLAINTEXT one named INTERNAL for the brokers, on two brokers sharing the session's ZooKeeper.

Unmodified clients (confluent-kafka, kafka-python) log in on the first and never hear of the second;
the brokers replicate, and the controller reaches them, over the second. Each request carries the
listener it came in on, and Metadata answers with that listener's addresses.
"""

from __future__ import annotations

import json
import struct
import uuid

import kafka
import pytest
from confluent_kafka import Consumer as CkConsumer
from confluent_kafka import Producer as CkProducer
from confluent_kafka.admin import AdminClient as CkAdmin

from kafka_lite.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.types import encode
from kafka_lite.controller.controller_channel_manager import update_metadata_live_brokers
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.zk.zk_utils import Broker, EndPoint, ZkUtils
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)
TWO_LISTENERS = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
    "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
}
ALICE_CK = {
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanisms": "PLAIN",
    "sasl.username": "alice",
    "sasl.password": "alice-secret",
}
ALICE_KP = {
    "security_protocol": "SASL_PLAINTEXT",
    "sasl_mechanism": "PLAIN",
    "sasl_plain_username": "alice",
    "sasl_plain_password": "alice-secret",
}


def ports(cluster: LiteCluster, listener: str) -> dict[int, int]:
    return {s.broker_id: s.socket_server.bound_port(listener) for s in cluster.servers}


@pytest.fixture(scope="module")
def two_listeners(zookeeper, tmp_path_factory):
    cluster = LiteCluster(
        zookeeper.connect_string, tmp_path_factory.mktemp("listeners"), brokers=2, **TWO_LISTENERS
    )
    cluster.start()
    yield cluster
    cluster.stop()


def replicated_topic(cluster: LiteCluster) -> str:
    topic = f"two-listeners-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(
        cluster.bootstrap_servers,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username="alice",
        sasl_plain_password="alice-secret",
    )
    try:
        admin.create_topics([NewTopic(topic, 1, 2)])
    finally:
        admin.close()
    cluster.wait_for_leaders(topic, 1)
    return topic


# -- the cluster -------------------------------------------------------------------------------------------


@pytest.mark.compat
def test_clients_log_in_on_the_sasl_listener_and_the_brokers_replicate_over_internal(two_listeners):
    topic = replicated_topic(two_listeners)
    sasl = ports(two_listeners, "SASL_PLAINTEXT")
    assert two_listeners.bootstrap_servers == ",".join(f"127.0.0.1:{sasl[i]}" for i in (0, 1))

    producer = CkProducer({"bootstrap.servers": two_listeners.bootstrap_servers, **ALICE_CK})
    producer.produce(topic, b"from librdkafka")
    assert producer.flush(30) == 0
    producer = kafka.KafkaProducer(bootstrap_servers=two_listeners.bootstrap_servers, **ALICE_KP)
    producer.send(topic, b"from kafka-python").get(timeout=30)
    producer.close()

    consumer = kafka.KafkaConsumer(
        topic,
        bootstrap_servers=two_listeners.bootstrap_servers,
        auto_offset_reset="earliest",
        consumer_timeout_ms=20_000,
        **ALICE_KP,
    )
    try:
        assert [m.value for _, m in zip(range(2), consumer, strict=False)] == [
            b"from librdkafka",
            b"from kafka-python",
        ]
    finally:
        consumer.close()
    ck = CkConsumer(
        {
            "bootstrap.servers": two_listeners.bootstrap_servers,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            **ALICE_CK,
        }
    )
    ck.subscribe([topic])
    try:
        got = wait_until(lambda: ck.poll(0.5), timeout_s=30, what="librdkafka to consume a record")
        assert got.error() is None and got.value() == b"from librdkafka", got.error()
    finally:
        ck.close()

    # The follower fetched both records from the leader, over the leader's INTERNAL port.
    leader = two_listeners.leader_of(topic, 0)
    follower = two_listeners.server(1 - leader)
    wait_until(
        lambda: follower.replica_manager.get_partition((topic, 0)).get_replica().log_end_offset == 2,
        what="the follower to fetch both records",
    )
    fetchers = [
        t
        for t in follower.replica_manager.replica_fetcher_manager.fetcher_thread_map.values()
        if t.source_broker_id == leader
    ]
    assert fetchers, "a fetcher from the leader"
    internal = ports(two_listeners, "INTERNAL")
    for thread in fetchers:
        assert thread.client._address(thread.source_node) == ("127.0.0.1", internal[leader])


@pytest.mark.compat
def test_metadata_names_the_ports_of_the_listener_it_was_asked_on(two_listeners):
    sasl, internal = ports(two_listeners, "SASL_PLAINTEXT"), ports(two_listeners, "INTERNAL")
    assert not set(sasl.values()) & set(internal.values())
    # confluent-kafka on the SASL listener
    admin = CkAdmin({"bootstrap.servers": two_listeners.bootstrap_servers, **ALICE_CK})
    brokers = admin.list_topics(timeout=30).brokers
    assert {i: (b.host, b.port) for i, b in brokers.items()} == {i: ("127.0.0.1", p) for i, p in sasl.items()}
    # a plain request on the INTERNAL listener
    for broker_id in (0, 1):
        wire = WireClient(internal[broker_id])
        try:
            response = wire.call(ApiKeys.METADATA, 1, {"topics": None})
        finally:
            wire.close()
        assert {b["node_id"]: b["port"] for b in response["brokers"]} == internal


@pytest.mark.integration
def test_each_broker_registers_both_end_points_with_the_protocol_map(two_listeners):
    zk = ZkUtils(two_listeners.zk_connect)
    try:
        sasl, internal = ports(two_listeners, "SASL_PLAINTEXT"), ports(two_listeners, "INTERNAL")
        for broker_id in (0, 1):
            data, _ = zk.client.get(f"/brokers/ids/{broker_id}")
            info = json.loads(data)
            assert info["version"] == 4
            assert info["endpoints"] == [
                f"SASL_PLAINTEXT://127.0.0.1:{sasl[broker_id]}",
                f"INTERNAL://127.0.0.1:{internal[broker_id]}",
            ]
            assert info["listener_security_protocol_map"] == {
                "SASL_PLAINTEXT": "SASL_PLAINTEXT",
                "INTERNAL": "PLAINTEXT",
            }
            # the top-level pair, for readers older than end points: the first PLAINTEXT end point
            assert (info["host"], info["port"]) == ("127.0.0.1", internal[broker_id])
            broker = zk.get_broker(broker_id)
            assert broker.end_point("INTERNAL") == EndPoint(
                "127.0.0.1", internal[broker_id], "INTERNAL", "PLAINTEXT"
            )
            assert broker.end_point("SASL_PLAINTEXT").port == sasl[broker_id]
    finally:
        zk.close()


@pytest.mark.integration
def test_every_broker_hears_the_configured_listener_names_from_the_controller(two_listeners):
    """UpdateMetadata names each end point's listener: a controller that called every end point
    PLAINTEXT would leave the brokers unable to answer on SASL_PLAINTEXT or INTERNAL."""
    sasl, internal = ports(two_listeners, "SASL_PLAINTEXT"), ports(two_listeners, "INTERNAL")
    for server in two_listeners.servers:
        cached = {
            b.id: {(e.listener_name, e.security_protocol, e.port) for e in b.endpoints}
            for b in server.metadata_cache.alive_brokers()
        }
        assert cached == {
            i: {("SASL_PLAINTEXT", "SASL_PLAINTEXT", sasl[i]), ("INTERNAL", "PLAINTEXT", internal[i])}
            for i in (0, 1)
        }
        # the broker's own connections (transaction markers) go to the inter-broker addresses
        assert {b.id: b.port for b in server.metadata_cache.alive_brokers()} == internal


# -- UpdateMetadata v3 and the metadata cache -------------------------------------------------------------


BROKER = Broker(
    7,
    "h",
    9093,
    "r1",
    endpoints=(
        EndPoint("h", 9092, "SASL_PLAINTEXT", "SASL_PLAINTEXT"),
        EndPoint("h", 9093, "INTERNAL", "PLAINTEXT"),
    ),
)


def _string(s: str) -> bytes:
    return struct.pack(">h", len(s)) + s.encode()


@pytest.mark.unit
def test_update_metadata_v3_carries_each_end_point_with_its_listener_name():
    version, live_brokers = update_metadata_live_brokers([BROKER])
    assert version == 3
    body = {"controller_id": 7, "controller_epoch": 1, "partition_states": [], "live_brokers": live_brokers}
    expected = (
        struct.pack(">iii", 7, 1, 0)  # controller id, epoch, no partition states
        + struct.pack(">ii", 1, 7)  # one live broker, id 7
        + struct.pack(">i", 2)  # two end points: port, host, listener name, security protocol id
        + struct.pack(">i", 9092) + _string("h") + _string("SASL_PLAINTEXT") + struct.pack(">h", 2)
        + struct.pack(">i", 9093) + _string("h") + _string("INTERNAL") + struct.pack(">h", 0)
        + _string("r1")
    )  # fmt: skip
    assert encode(ApiKeys.UPDATE_METADATA.request_schema(version), body) == expected


@pytest.mark.unit
def test_the_metadata_cache_answers_per_listener_and_leaves_out_a_broker_without_it():
    version, live_brokers = update_metadata_live_brokers(
        [BROKER, Broker(8, "k", 9192)]  # broker 8: one PLAINTEXT listener only
    )
    cache = MetadataCache(0, inter_broker_listener_name="INTERNAL")
    state = {"controller_epoch": 1, "leader_epoch": 0, "zk_version": 0}
    partitions = [
        {"topic": "t", "partition": 0, "leader": 7, "isr": [7, 8], "replicas": [7, 8], **state},
        {"topic": "t", "partition": 1, "leader": 8, "isr": [8], "replicas": [8], **state},
    ]
    cache.update_cache(7, 1, {"live_brokers": live_brokers, "partition_states": partitions}, version)

    assert [(b.id, b.port) for b in cache.alive_endpoints("SASL_PLAINTEXT")] == [(7, 9092)]
    assert [(b.id, b.port) for b in cache.alive_endpoints("INTERNAL")] == [(7, 9093)]
    assert [(b.id, b.port) for b in cache.alive_endpoints("PLAINTEXT")] == [(8, 9192)]
    # the broker's own connections: each broker at its inter-broker address where it has one
    assert [(b.id, b.port) for b in cache.alive_brokers()] == [(7, 9093), (8, 9192)]

    seen_on_sasl = {
        p["partition_id"]: p
        for p in cache.topic_metadata(["t"], "SASL_PLAINTEXT", error_unavailable_endpoints=True)[0][
            "partition_metadata"
        ]
    }
    assert seen_on_sasl[0]["leader"] == 7 and seen_on_sasl[0]["isr"] == [7]
    assert seen_on_sasl[0]["partition_error_code"] == 9  # REPLICA_NOT_AVAILABLE: 8 has no such listener
    assert (
        seen_on_sasl[1]["leader"] == -1 and seen_on_sasl[1]["partition_error_code"] == 5
    )  # LEADER_NOT_AVAILABLE
    seen_by_all = {p["partition_id"]: p for p in cache.topic_metadata(["t"])[0]["partition_metadata"]}
    assert seen_by_all[0]["partition_error_code"] == 0 and seen_by_all[1]["leader"] == 8


@pytest.mark.unit
def test_the_registration_of_any_version_is_read():
    from kafka_lite.zk.zk_utils import broker_from_registration

    v1 = broker_from_registration(1, {"version": 1, "host": "a", "port": 1})
    assert v1.endpoints == (EndPoint("a", 1, "PLAINTEXT", "PLAINTEXT"),)
    v3 = broker_from_registration(
        2, {"version": 3, "host": None, "port": -1, "endpoints": ["SASL_PLAINTEXT://b:2"]}
    )
    assert (v3.host, v3.port) == ("b", 2) and v3.end_point(
        "SASL_PLAINTEXT"
    ).security_protocol == "SASL_PLAINTEXT"
    v4 = broker_from_registration(
        3,
        {
            "version": 4,
            "host": "c",
            "port": 4,
            "endpoints": ["CLIENT://c:3", "REPLICATION://c:4"],
            "listener_security_protocol_map": {"CLIENT": "SASL_PLAINTEXT", "REPLICATION": "PLAINTEXT"},
        },
    )
    assert [(e.listener_name, e.security_protocol, e.port) for e in v4.endpoints] == [
        ("CLIENT", "SASL_PLAINTEXT", 3),
        ("REPLICATION", "PLAINTEXT", 4),
    ]
    with pytest.raises(Exception, match="not found for broker 3"):
        v4.end_point("PLAINTEXT")
