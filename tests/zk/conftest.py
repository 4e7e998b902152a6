"""ZooKeeper fixtures: every test gets its own chroot on the session's one server.

The server itself is ``tests/conftest.py``'s session-scoped ``zookeeper`` fixture (one
``EmbeddedZooKeeper`` per test session, per xdist worker), shared with the broker tests, so running
the whole suite never starts a second JVM for these tests (one ZooKeeper per session, a chroot
per cluster).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from kafka_lite.zk.zk_utils import ZkUtils


@pytest.fixture
def zk_connect(zookeeper) -> str:
    """A connect string with a chroot of this test's own: ``127.0.0.1:PORT/test_<uuid>``."""
    return f"{zookeeper.connect_string}/test_{uuid.uuid4().hex}"


@pytest.fixture
def make_zk_utils(zk_connect: str) -> Iterator[Callable[..., ZkUtils]]:
    """Open more ZkUtils (more ZooKeeper sessions, like more brokers) in the test's chroot; all are
    closed at the end (closing twice is harmless, so a test may close one early)."""
    opened: list[ZkUtils] = []

    def make(**kwargs) -> ZkUtils:
        utils = ZkUtils(zk_connect, **kwargs)
        opened.append(utils)
        return utils

    yield make
    for utils in opened:
        utils.close()


@pytest.fixture
def zk_utils(make_zk_utils) -> ZkUtils:
    utils = make_zk_utils()
    utils.setup_common_paths()
    return utils
