"""Fixtures shared by the integration and compatibility tiers: one real ZooKeeper per test session
(per xdist worker), and a 3-broker kafka_lite cluster in its own chroot (DESIGN §5, §9)."""

from __future__ import annotations

import pytest

from tests.support.cluster import LiteCluster


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    from kafka_lite.zk.embedded import EmbeddedZooKeeper

    zk = EmbeddedZooKeeper(tmp_path_factory.mktemp("zookeeper"))
    zk.start()
    yield zk
    zk.stop()


@pytest.fixture(scope="session")
def cluster(zookeeper, tmp_path_factory):
    """Three brokers, replication factor 1 topics spread over them; shared by the tests of a worker."""
    c = LiteCluster(zookeeper.connect_string, tmp_path_factory.mktemp("cluster"), brokers=3)
    c.start()
    yield c
    c.stop()
