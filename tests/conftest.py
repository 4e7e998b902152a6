"""Fixtures shared across tiers: for the integration and compatibility tiers, one real ZooKeeper per
test session (per xdist worker) and a 3-broker kafka_lite cluster in its own chroot, and a KRaft
cluster of three combined nodes; for the docs and browser tiers, the docs site, built once per run."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from pathlib import Path

import pytest

from tests.docs.site import build_site, execute_notebooks
from tests.support.cluster import LiteCluster

SITE_BUILD_DEADLINE = 1200  # seconds a worker waits for another's build of the docs site


# A test that leaves one of these ignored in its worker passes the ignore on to every process the
# worker starts after it (an ignored signal stays ignored across exec): a ZooKeeper JVM or a broker
# started later would not hear the SIGTERM that stops it, and Ctrl-C would not reach a child.
SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@pytest.fixture(autouse=True)
def no_shutdown_signal_left_ignored():
    """Fails a test that leaves SIGTERM, SIGINT or SIGHUP ignored (as a foreground command's
    ``ShutdownSignals.close`` does, rightly, in a process about to exit), and puts them back."""
    before = {signum: signal.getsignal(signum) for signum in SHUTDOWN_SIGNALS}
    yield
    left = [s for s in SHUTDOWN_SIGNALS if signal.getsignal(s) == signal.SIG_IGN != before[s]]
    for signum in left:
        signal.signal(signum, before[signum])
    assert not left, f"the test left {', '.join(signal.Signals(s).name for s in left)} ignored in its worker"


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    from kafka_lite.zk.embedded import EmbeddedZooKeeper

    zk = EmbeddedZooKeeper(tmp_path_factory.mktemp("zookeeper"))
    zk.start()
    yield zk
    zk.stop()


@pytest.fixture(scope="session")
def cluster(zookeeper, tmp_path_factory):
    """Three brokers, replication factor 1 topics spread over them; shared by the tests of a worker,
    and stopped after the last of them (``_SessionClusters``)."""
    c = LiteCluster(zookeeper.connect_string, tmp_path_factory.mktemp("cluster"), brokers=3)
    c.start()
    with _SESSION_CLUSTERS.running("cluster", c.stop):
        yield c


@pytest.fixture(scope="session")
def kraft_cluster(tmp_path_factory):
    """Three combined KRaft nodes as ``cluster up --kraft`` starts them: the compat tier's second
    mode (tests/compat/conftest.py) and the KRaft run of kafka_lite's tools, started once per worker
    and stopped after the last test that uses it (``_SessionClusters``)."""
    from tests.support.kraft_cluster import KRaftCluster

    c = KRaftCluster(tmp_path_factory.mktemp("kraft-cluster"))
    with _SESSION_CLUSTERS.running("kraft_cluster", c.stop):
        c.start()
        yield c


class _SessionClusters:
    """Stops a session cluster after the last test of the run that uses it, not when the worker ends.

    A session fixture lives until its worker has run its last test, and a cluster keeps polling
    while it waits: followers fetch, brokers heartbeat, the quorum's followers fetch from its
    leader. Every test that uses the ZooKeeper cluster or the KRaft cluster runs on one worker (the
    ``cluster`` xdist group, ``pytest_collection_modifyitems`` below), which then runs other
    groups' tests; so each worker counts the run's tests that use each cluster, and the one that has
    run them all stops it. A worker that runs only some of them (a module of another group that
    takes the cluster) keeps its own until its end, as a session fixture would."""

    def __init__(self) -> None:
        self.users: dict[str, int] = {}  # cluster -> tests of the run that use it
        self.done: dict[str, int] = {}
        self.stops: dict[str, object] = {}

    @contextlib.contextmanager
    def running(self, name: str, stop):
        stopped = []

        def stop_once() -> None:
            if not stopped:
                stopped.append(True)
                stop()

        self.stops[name] = stop_once
        try:
            yield
        finally:
            stop_once()

    def count(self, items: list[pytest.Item]) -> None:
        for item in items:
            for name in clusters_used(item):
                self.users[name] = self.users.get(name, 0) + 1

    def finished(self, item: pytest.Item) -> None:
        for name in clusters_used(item):
            self.done[name] = self.done.get(name, 0) + 1
            if self.done[name] == self.users.get(name) and name in self.stops:
                self.stops.pop(name)()


_SESSION_CLUSTERS = _SessionClusters()


def clusters_used(item: pytest.Item) -> list[str]:
    """The session clusters ``item`` uses: the ZooKeeper ``cluster``, the ``kraft_cluster``, or one
    of them through the compatibility tier's two-mode ``cluster`` (tests/compat/conftest.py)."""
    names = getattr(item, "fixturenames", ())
    callspec = getattr(item, "callspec", None)
    mode = callspec.params.get("cluster") if callspec is not None else None
    used = []
    if "cluster" in names and _is_the_session_cluster(item) and mode in (None, "zookeeper"):
        used.append("cluster")
    if "kraft_cluster" in names or mode == "kraft":
        used.append("kraft_cluster")
    return used


def _is_the_session_cluster(item: pytest.Item) -> bool:
    """Whether the ``cluster`` ``item`` gets is this file's (directly or through the compatibility
    tier's), not a module's own fixture of that name."""
    definitions = item._fixtureinfo.name2fixturedefs.get("cluster", ())
    return bool(definitions) and definitions[-1].scope == "session"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # First, as the root conftest's marks: xdist reads the xdist_group marks once, into the ids.
    # A test that uses a session cluster and names no group of its own goes where the cluster is
    # (a Spark test goes where the run's JVM is: the root conftest's rule).
    for item in items:
        if clusters_used(item) and not any(item.get_closest_marker(m) for m in ("xdist_group", "spark")):
            item.add_marker(pytest.mark.xdist_group("cluster"))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _SESSION_CLUSTERS.count(session.items)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    _SESSION_CLUSTERS.finished(item)


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
