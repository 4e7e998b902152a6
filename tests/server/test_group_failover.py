"""Committed offsets survive the group coordinator's broker: kafka-python commits, the broker that
leads the group's ``__consumer_offsets`` partition stops, another replica is elected leader and loads
the group and its offsets from the partition's log, and a new consumer of the group resumes from the
committed offsets (not from the beginning, where ``auto_offset_reset`` would send it otherwise).

The test runs on a 3-broker cluster of its own: stopping a broker of the session's cluster would
move the leaders other tests rely on."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.coordinator.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, partition_for
from tests.support.cluster import LiteCluster
from tests.support.topics import topic_name
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

pytestmark = pytest.mark.integration

GROUP = "failover-group"  # String.hashCode 1992778212: partition 0 of 4 (jshell)


@pytest.fixture
def own_cluster(zookeeper, tmp_path):
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=3).start()
    yield cluster
    cluster.stop()


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for p in range(partitions):
        for i in range(per_partition):
            producer.send(topic, value=f"{p}-{i}".encode(), partition=p)
    producer.flush(timeout=30)
    producer.close()


def consumer(bootstrap: str, topic: str) -> KafkaConsumer:
    c = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=GROUP,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    # the topic's metadata before subscribing (tests/server/test_group_apis.py says why)
    assert c.partitions_for_topic(topic), f"no metadata for {topic}"
    c.subscribe([topic])
    return c


def poll_until(c: KafkaConsumer, count: int, what: str) -> list:
    records: list = []

    def enough() -> bool:
        for batch in c.poll(timeout_ms=200).values():
            records.extend(batch)
        return len(records) >= count

    wait_until(enough, timeout_s=60, interval_s=0, what=what)
    return records


def find_coordinator(cluster: LiteCluster) -> dict:
    port = next(s.port for s in cluster.servers if s.running)

    def answered():
        response = WireClient(port).call(
            ApiKeys.FIND_COORDINATOR, 1, {"coordinator_key": GROUP, "coordinator_type": 0}
        )
        return response if Errors.for_code(response["error_code"]) is Errors.NONE else None

    return wait_until(answered, timeout_s=30, what=f"a coordinator for {GROUP}")["coordinator"]


def test_committed_offsets_survive_the_coordinators_broker(own_cluster):
    cluster = own_cluster
    offsets_tp = (GROUP_METADATA_TOPIC_NAME, partition_for(GROUP, 4))
    assert offsets_tp[1] == 0
    topic = topic_name("failover")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    produce(cluster.bootstrap_servers, topic, 2, 10)

    first = consumer(cluster.bootstrap_servers, topic)
    assert len(poll_until(first, 20, "the first consumer to read 20 records")) == 20
    first.commit()
    tps = [TopicPartition(topic, p) for p in range(2)]
    assert [first.committed(tp) for tp in tps] == [10, 10]
    first.close()

    coordinator = find_coordinator(cluster)["node_id"]
    assert coordinator == cluster.leader_of(*offsets_tp)
    # The new leader loads the partition up to its high watermark (as Kafka 0.10.1 does): wait until
    # every replica's high watermark covers the whole log, as followers learn it from their next fetch.
    leader_leo = (
        cluster.server(coordinator).replica_manager.get_partition(offsets_tp).get_replica().log_end_offset
    )
    wait_until(
        lambda: all(
            s.replica_manager.get_partition(offsets_tp).high_watermark() == leader_leo
            for s in cluster.servers
        ),
        what=f"every replica of {offsets_tp} to have its high watermark at {leader_leo}",
    )

    generation = cluster.server(coordinator).group_coordinator.group_manager.get_group(GROUP).generation_id
    cluster.stop_broker(coordinator)
    cluster.wait_for_brokers(2)
    new_coordinator = find_coordinator(cluster)["node_id"]
    assert new_coordinator != coordinator
    assert new_coordinator == cluster.leader_of(*offsets_tp)
    # the new coordinator loaded the group as it was stored: Empty, at the generation it had
    loaded = wait_until(
        lambda: cluster.server(new_coordinator).group_coordinator.group_manager.get_group(GROUP),
        what=f"broker {new_coordinator} to load {GROUP} from {offsets_tp}",
    )
    assert (loaded.current_state.value, loaded.generation_id) == ("Empty", generation)
    produce(cluster.bootstrap_servers, topic, 2, 5)  # offsets 10-14 of each partition

    second = consumer(cluster.bootstrap_servers, topic)
    try:
        assert [second.committed(tp) for tp in tps] == [10, 10]
        records = poll_until(second, 10, "the second consumer to read the 10 new records")
        assert sorted((r.partition, r.offset) for r in records) == [
            (p, o) for p in range(2) for o in range(10, 15)
        ]
    finally:
        second.close()

    cluster.restart_broker(coordinator)
    assert all(s.running for s in cluster.servers)


CRASH_OVERRIDES = [
    "group.initial.rebalance.delay.ms=0",
    "offsets.topic.num.partitions=4",
    "zookeeper.session.timeout.ms=4000",
    "replica.lag.time.max.ms=2000",
    "replica.fetch.wait.max.ms=200",
]


@pytest.mark.timeout(240)  # a hang fails here, not at the CI run's own limit
def test_committed_offsets_survive_the_coordinators_broker_killed(tmp_path):
    """The same with real broker processes, the coordinator's killed with SIGKILL (no clean shutdown,
    no controlled move of its leaderships): the controller learns of the crash when the broker's
    ZooKeeper session expires, elects another replica of the group's ``__consumer_offsets`` partition,
    and that broker loads the group. kafka_lite's own consumers commit and resume."""
    from kafka_lite import KafkaConsumer as LiteConsumer
    from kafka_lite import KafkaProducer as LiteProducer
    from kafka_lite.cli.main import main
    from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
    from tests.support.processes import cluster_up

    args = ["--dir", str(tmp_path / "cluster")]
    _, base = cluster_up(args, CRASH_OVERRIDES)
    # every broker: the killed one may be any of them, and a client bootstrapped from it alone would
    # wait for it for ever (as Kafka 0.10.1's consumer, poll waits for a coordinator without a limit)
    bootstrap = ",".join(f"127.0.0.1:{base + i}" for i in range(3))
    topic, group = "crash-orders", "crash-group"
    try:
        admin = KafkaAdminClient(bootstrap)
        admin.create_topics([NewTopic(topic, 2, 3)])
        # retries: a new topic's leader may answer NOT_LEADER_FOR_PARTITION until its LeaderAndIsr
        # arrives, after the metadata naming it did (the producer refreshes and retries, as Kafka's does)
        with LiteProducer(bootstrap_servers=bootstrap, acks="all", retries=5) as producer:
            for p in range(2):
                for i in range(10):
                    producer.send(topic, f"{p}-{i}".encode(), partition=p).get(30)

        def member() -> LiteConsumer:
            return LiteConsumer(
                topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=500,
            )  # fmt: skip

        first = member()
        read: list = []
        wait_until(
            lambda: (
                read.extend(r for rs in first.poll(timeout_ms=200, max_records=12).values() for r in rs)
                or len(read) >= 12
            ),
            what="the first member to read 12 records",
        )
        first.commit()  # the positions: what it read, partition by partition
        committed = {(topic, p): first.committed((topic, p)) for p in range(2)}
        assert sum(committed.values()) == len(read)
        first.close(autocommit=False)

        coordinator = admin.find_coordinator(group).id
        admin.close()
        assert main(["cluster", "kill", str(coordinator), *args]) == 0

        second = member()
        resumed: list = []
        wait_until(
            lambda: (
                resumed.extend(r for rs in second.poll(timeout_ms=200).values() for r in rs)
                or len(resumed) >= 20 - len(read)
            ),
            what="a new member to read what the first did not",
            timeout_s=60,
        )
        assert {(topic, p): second.committed((topic, p)) for p in range(2)} == committed
        for p in range(2):
            offsets = [r.offset for r in resumed if r.partition == p]
            assert offsets == list(range(committed[(topic, p)], 10)), f"partition {p} resumed at its commit"
        second.close()
        new_coordinator = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{base + (coordinator + 1) % 3}")
        try:
            assert new_coordinator.find_coordinator(group).id != coordinator
        finally:
            new_coordinator.close()
    finally:
        assert main(["cluster", "down", *args]) == 0
