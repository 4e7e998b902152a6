"""The target cluster of the MirrorMaker tests: one broker of its own, beside the session's
``cluster`` (the source), on the same ZooKeeper under another chroot."""

from __future__ import annotations

import pytest

from tests.support.cluster import LiteCluster


@pytest.fixture(scope="session")
def target(zookeeper, tmp_path_factory):
    c = LiteCluster(
        zookeeper.connect_string,
        tmp_path_factory.mktemp("mirror-target"),
        brokers=1,
        **{"offsets.topic.replication.factor": 1},  # one broker: no group of the target needs more
    )
    c.start()
    yield c
    c.stop()
