"""The compatibility tier runs against both modes: every test that takes ``cluster`` runs once on the
ZooKeeper cluster and once on the KRaft cluster (three combined nodes as processes), the root
conftest's, each started once per worker. A test that needs what only ZooKeeper mode has
says so with ``tests.support.kraft_cluster.zookeeper_only`` and why."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", params=["zookeeper", "kraft"])
def cluster(request):
    # "cluster" asked for from inside this fixture is the root conftest's ZooKeeper cluster
    if request.param == "zookeeper":
        return request.getfixturevalue("cluster")
    return request.getfixturevalue("kraft_cluster")
