"""Fixtures shared across tiers: for the integration and compatibility tiers, one real ZooKeeper per
test session (per xdist worker) and a 3-broker kafka_lite cluster in its own chroot;
for the docs and browser tiers, the docs site, built once per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.site import XDIST_GROUP, build_site
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


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The docs site, built once (it executes every chapter notebook) and read by every docs, link,
    leak and browser test."""
    return build_site(tmp_path_factory.mktemp("site"))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups from the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A session fixture is made once per xdist worker, so every test that reads the site goes to the
    same worker (``--dist loadgroup``): one build per run however many workers there are."""
    for item in items:
        if "site" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(XDIST_GROUP))
