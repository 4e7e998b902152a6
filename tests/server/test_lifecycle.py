"""Brokers starting, stopping and restarting: clean shutdown, data kept, controller failover."""

from __future__ import annotations

import logging

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafka_lite.log.log import CLEAN_SHUTDOWN_FILE
from kafka_lite.log.log_segment import LogSegment
from kafka_lite.server.kafka_server import InconsistentBrokerIdException, KafkaServer
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until

pytestmark = pytest.mark.integration


def produce(bootstrap: str, topic: str, n: int) -> list[bytes]:
    """Send ``n`` values with kafka-python's defaults (idempotent, acks=all); return them sorted."""
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    sent = sorted(f"v{i}".encode() for i in range(n))
    for v in sent:
        producer.send(topic, value=v)
    producer.flush()
    producer.close()
    return sent


def read_all(bootstrap: str, topic: str, partitions: int) -> list[bytes]:
    """Every value in the partitions, sorted: read up to the end offsets the broker gives now (at most
    5 s without a record), so that the read stops at the last record instead of waiting for more."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=5_000)
    partitions_read = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(partitions_read)
    consumer.seek_to_beginning()
    ends = consumer.end_offsets(partitions_read)
    values = []
    try:
        while any(consumer.position(tp) < ends[tp] for tp in partitions_read):
            values.append(next(consumer).value)
    except StopIteration:
        pass  # nothing for 5 s: what was read is all there is to compare
    finally:
        consumer.close()
    return sorted(values)


def test_a_restarted_broker_keeps_what_it_acknowledged_and_skips_recovery(zookeeper, tmp_path, monkeypatch):
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=1).start()
    try:
        cluster.create_topic("kept", partitions=2)
        sent = produce(cluster.bootstrap_servers, "kept", 200)
        cluster.servers[0].shutdown()
        data = tmp_path / "broker-0"
        assert (data / CLEAN_SHUTDOWN_FILE).exists(), "a clean shutdown leaves its marker"
        assert any(p.suffix == ".snapshot" for p in data.rglob("*")), "idempotent producer state snapshotted"

        recovered = []  # the segments the restart re-validates: none after a clean shutdown
        original_recover = LogSegment.recover

        def recover(segment, *args, **kwargs):
            recovered.append(segment.base_offset)
            return original_recover(segment, *args, **kwargs)

        monkeypatch.setattr(LogSegment, "recover", recover)
        restarted = KafkaServer(cluster.config(0))
        restarted.startup()
        cluster.servers = [restarted]
        assert recovered == [], "the clean-shutdown marker skips recovery"
        assert not (data / CLEAN_SHUTDOWN_FILE).exists(), "the marker is consumed at start-up"
        cluster.wait_for_brokers(1)
        cluster.wait_for_leaders("kept", 2)
        wait_until(
            lambda: restarted.replica_manager.get_partition(("kept", 0)) is not None,
            what="the leader's partitions",
        )
        assert read_all(cluster.bootstrap_servers, "kept", 2) == sent
    finally:
        cluster.stop()


def test_a_log_directory_remembers_its_broker_id(zookeeper, tmp_path):
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=1).start()
    cluster.stop()
    config = cluster.config(0)
    config.broker_id = 5  # the same directory, another id
    server = KafkaServer(config)
    with pytest.raises(InconsistentBrokerIdException, match=r"doesn.t match stored broker\.id 0"):
        server.startup()
    server.shutdown()


def test_controller_failover_moves_leadership_of_replicated_partitions(zookeeper, tmp_path):
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=3).start()
    try:
        cluster.create_topic("ha", partitions=3, replication_factor=2)
        old_controller = cluster.controller().broker_id
        led_before = {p for p in range(3) if cluster.leader_of("ha", p) == old_controller}
        assert led_before, "the controller leads a partition (three partitions over three brokers)"
        cluster.server(old_controller).shutdown()
        survivors = [s for s in cluster.servers if s.broker_id != old_controller]
        new = wait_until(
            lambda: next((s.broker_id for s in survivors if s.controller.is_active()), None),
            what="another broker to become controller",
        )
        assert new != old_controller
        # The new controller is active as soon as it wins /controller (Kafka's isActive), and bumps
        # /controller_epoch right after, in its failover.
        wait_until(lambda: survivors[0].zk.get_controller_epoch() >= 2, what="the new controller's epoch 2")
        for p in led_before:
            wait_until(
                lambda p=p: all(
                    s.metadata_cache.partition_state("ha", p).leader not in (old_controller, -1)
                    for s in survivors
                ),
                what=f"a new leader for ha-{p} on every surviving broker",
            )
        wait_until(
            lambda: all(len(s.metadata_cache.alive_brokers()) == 2 for s in survivors),
            what="the dead broker to leave the metadata",
        )
    finally:
        cluster.stop()


def test_a_broker_leaving_and_returning_takes_its_partitions_offline_and_back(zookeeper, tmp_path):
    """Replication factor 1: the partitions a stopped broker led have no other replica, so they go
    offline (leader -1, the ISR keeping its last member since unclean election is off); when the broker
    returns the controller elects it again and its data is served."""
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=3).start()
    try:
        cluster.create_topic("solo", partitions=3, replication_factor=1)
        sent = produce(cluster.bootstrap_servers, "solo", 60)
        victim = next(s for s in cluster.servers if not s.controller.is_active())
        partitions = [p for p in range(3) if cluster.leader_of("solo", p) == victim.broker_id]
        assert partitions, "the stopped broker leads a partition (three partitions over three brokers)"
        victim.shutdown()
        survivors = [s for s in cluster.servers if s is not victim]
        for p in partitions:
            wait_until(
                lambda p=p: all(s.metadata_cache.partition_state("solo", p).leader == -1 for s in survivors),
                what=f"solo-{p} to go offline",
            )
            state = survivors[0].zk.get_partition_state("solo", p)
            assert state.leader_and_isr.isr == [victim.broker_id], (
                "an ISR never becomes empty without unclean election"
            )
        back = KafkaServer(cluster.config(victim.broker_id))
        back.startup()
        cluster.servers = [*survivors, back]
        for p in partitions:
            wait_until(
                lambda p=p: all(
                    s.metadata_cache.partition_state("solo", p).leader == victim.broker_id
                    for s in cluster.servers
                ),
                what=f"solo-{p} led by its returning broker",
            )
        assert read_all(cluster.bootstrap_servers, "solo", 3) == sent
    finally:
        cluster.stop()


def _expire_session(zk_connect: str, client) -> None:
    """ZooKeeper's own trick for expiring a session in a test: open a second connection with the same
    session id and password, and close it; the server ends the session for both."""
    from kazoo.client import KazooClient

    hosts = zk_connect.split("/", 1)[0]
    twin = KazooClient(hosts=hosts, client_id=client.client_id)
    twin.start(timeout=10)
    twin.stop()
    twin.close()


def test_a_broker_whose_session_expires_registers_again(zookeeper, tmp_path, caplog):
    """An expired ZooKeeper session takes the broker's ephemeral registration (and, for the controller,
    /controller) with it; the broker registers again under its new session and the cluster heals."""
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=3).start()
    try:
        cluster.create_topic("healing", partitions=3, replication_factor=1)
        controller = cluster.controller()
        victim = controller.broker_id  # the hardest case: the controller itself loses its session
        server = cluster.server(victim)
        caplog.set_level(logging.INFO, logger="kafka_lite.server.kafka_server")
        _expire_session(cluster.zk_connect, server.zk.client)
        watcher = next(s for s in cluster.servers if s is not server)
        wait_until(lambda: victim not in watcher.zk.get_all_broker_ids() or watcher.zk.get_controller_id() != victim,
                   what="the expiry to be seen")  # fmt: skip
        wait_until(lambda: victim in watcher.zk.get_all_broker_ids(), what="the broker to register again")
        wait_until(lambda: watcher.zk.get_controller_id() >= 0, what="a controller")
        cluster.wait_for_brokers(3)
        cluster.wait_for_leaders("healing", 3)
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
        for p in range(3):
            producer.send("healing", value=b"x", partition=p).get(timeout=30)
        producer.close()
        messages = [r.getMessage() for r in caplog.records]
        assert f"Broker {victim}: ZooKeeper session expired" in messages
        assert f"Broker {victim} re-registered in ZooKeeper under a new session" in messages
    finally:
        cluster.stop()
