"""EmbeddedKafkaCluster: brokers that start and answer, its defaults and a cluster's overrides, a
chroot on a shared ZooKeeper, and a stop (or a failed start) that leaves no process and no files."""

from __future__ import annotations

import glob
import tempfile
import uuid
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from kafka_lite import KafkaProducer
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.errors import ConfigException
from kafka_lite.testing.embedded_kafka_cluster import EmbeddedKafkaCluster
from tests.support.processes import processes_under

pytestmark = pytest.mark.integration


def test_brokers_start_answer_and_stop_twice_leaving_nothing():
    cluster = EmbeddedKafkaCluster(2, prefix="embedded-cluster-test-")
    try:
        workdir = cluster.workdir
        assert workdir.name.startswith("embedded-cluster-test-") and workdir.is_dir()
        assert [p.split(":")[0] for p in processes_under(workdir)] == [str(cluster.zookeeper.pid)]
        assert cluster.bootstrap_servers == ",".join(f"127.0.0.1:{b.port}" for b in cluster.brokers)

        admin = KafkaAdminClient(cluster.bootstrap_servers)
        try:
            described = admin.describe_cluster()
        finally:
            admin.close()
        assert sorted(described.nodes) == [0, 1] and described.controller is not None

        cluster.create_topic("words", partitions=2, replication_factor=2)
        for broker in cluster.brokers:  # every broker knows each partition's leader, and it leads
            states = broker.metadata_cache.partitions("words")
            assert sorted(states) == [0, 1] and all(s.leader in (0, 1) for s in states.values())
        with KafkaProducer(bootstrap_servers=cluster.bootstrap_servers) as producer:
            assert producer.send("words", value=b"hello", partition=1).get(10).offset == 0
        closed_while_up = []  # a closer runs once, before the brokers stop
        cluster.closers.append(lambda: closed_while_up.append(all(b.running for b in cluster.brokers)))
    finally:
        cluster.stop()
    cluster.stop()  # a second stop (the notebook's last cell, then the kernel's exit) does nothing

    assert closed_while_up == [True]
    assert cluster.stopped and not workdir.exists()
    assert processes_under(workdir) == []
    assert not any(b.running for b in cluster.brokers)


def test_defaults_overrides_and_a_chroot_on_a_shared_zookeeper(zookeeper):
    chroot = f"/embedded-{uuid.uuid4().hex[:8]}"
    cluster = EmbeddedKafkaCluster(
        1,
        {"num.io.threads": 3, "offsets.topic.num.partitions": 2},
        chroot=chroot,
        zookeeper=zookeeper,
    )
    try:
        config = cluster.brokers[0].config
        assert (config["num.io.threads"], config["offsets.topic.num.partitions"]) == (3, 2)  # overridden
        assert (config["num.network.threads"], config["controlled.shutdown.enable"]) == (1, False)  # kept
        assert config["log.dirs"] == str(cluster.workdir / "broker-0")
        assert cluster.zk_connect == zookeeper.connect_string + chroot
        zk = KazooClient(zookeeper.connect_string)
        zk.start(timeout=10)
        try:
            assert zk.get_children(f"{chroot}/brokers/ids") == ["0"]  # registered under the chroot
            assert not zk.exists("/brokers/ids/0")
        finally:
            zk.stop()
            zk.close()
    finally:
        cluster.stop()
    assert not cluster.workdir.exists()
    assert zookeeper.pid is not None  # the shared ZooKeeper is not the cluster's to stop


def test_a_broker_that_fails_to_start_leaves_no_zookeeper_and_no_files():
    prefix = f"embedded-cluster-failing-{uuid.uuid4().hex[:8]}-"
    with pytest.raises(ConfigException, match=r"num\.io\.threads"):
        EmbeddedKafkaCluster(1, {"num.io.threads": 0}, prefix=prefix)
    left = glob.glob(f"{tempfile.gettempdir()}/{prefix}*")
    assert left == []
    assert processes_under(Path(tempfile.gettempdir()) / prefix) == []
