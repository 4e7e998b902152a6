"""Fixtures shared across tiers: for the integration and compatibility tiers, one real ZooKeeper per
test session (per xdist worker) and a 3-broker kafka_lite cluster in its own chroot, and a KRaft
cluster of three combined nodes; for the docs and browser tiers, the docs site, built once per run."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from tests.docs.site import build_site, execute_notebooks
from tests.support.cluster import LiteCluster

SITE_BUILD_DEADLINE = 1200  # seconds a worker waits for another's build of the docs site


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
def kraft_cluster(tmp_path_factory):
    """Three combined KRaft nodes as ``cluster up --kraft`` starts them: the compat tier's second
    mode (tests/compat/conftest.py) and the KRaft run of kafka_lite's tools, started once per worker."""
    from tests.support.kraft_cluster import KRaftCluster

    c = KRaftCluster(tmp_path_factory.mktemp("kraft-cluster"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The docs site, built once per test run (its notebooks executed first, each once, by whichever
    workers ask for the site meanwhile) and read by every docs, link, leak and browser test.

    A session fixture is made once per process, and pytest-xdist runs a process per worker; so the
    site is built into the run's own directory, which its workers share (their temporary directories
    are ``popen-gw0``, ``popen-gw1``, ... inside it), under a lock: the first worker to ask builds it,
    the others wait for that build and read it."""
    run_dir = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_dir = run_dir.parent
    out, built = run_dir / "site", run_dir / "site.built"
    # Every worker that asks helps execute the notebooks (each one once), before one of them builds.
    executed = run_dir / "site-notebooks"
    if not built.exists():
        execute_notebooks(executed)
    with open(run_dir / "site.lock", "w") as lock:
        deadline = time.monotonic() + SITE_BUILD_DEADLINE
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"another worker has been building the site for {SITE_BUILD_DEADLINE} s")
                time.sleep(0.5)
        if not built.exists():  # a failed build leaves no mark: the next worker tries, and fails, too
            build_site(out, executed)
            built.touch()
    return out
