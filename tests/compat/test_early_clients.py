"""Clients that arrive the moment a broker's port opens, before the controller has sent it any
metadata: kafka-python and confluent-kafka (librdkafka), unmodified, get the whole cluster.

An answer listing no brokers is what stalls librdkafka (and makes kafka-python give up
bootstrapping). Every client here starts before the broker and keeps trying to connect (every
10 ms) until the port opens, so its first requests arrive as early as they can: every one of them
must be answered, and with the cluster as the controller describes it.

ZooKeeper only: it holds the ZooKeeper controller's first UpdateMetadata to an in-process broker;
a KRaft broker learns the cluster from the metadata log instead, and serves once unfenced.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient

from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.utils.ports import free_port
from tests.support.cluster import LiteCluster
from tests.support.waiting import wait_until

pytestmark = pytest.mark.compat

DEADLINE_S = 30
KAFKA_PYTHON_CLIENTS = 4


class EarlyClients:
    """Clients of both libraries aimed at ``port`` before anything listens there: kafka-python admin
    clients that bootstrap (ApiVersions, Metadata) and describe the cluster (Metadata), and two
    librdkafka admin clients with a CreateTopics and a Metadata request queued before they connect."""

    def __init__(self, port: int) -> None:
        bootstrap = f"127.0.0.1:{port}"
        self.errors: list[BaseException] = []
        self.described: list[dict] = []
        self.listed: list = []
        self.topic = f"early-{uuid.uuid4().hex[:8]}"
        self.threads = [
            threading.Thread(target=self._kafka_python, args=(bootstrap,), daemon=True)
            for _ in range(KAFKA_PYTHON_CLIENTS)
        ]
        config = {"bootstrap.servers": bootstrap, "reconnect.backoff.ms": 10, "reconnect.backoff.max.ms": 10}
        self._creator, self._lister = AdminClient(config), AdminClient(config)
        self.created = self._creator.create_topics(
            [NewTopic(self.topic, num_partitions=2, replication_factor=1)], operation_timeout=DEADLINE_S
        )[self.topic]
        self.threads.append(threading.Thread(target=self._list, daemon=True))
        for t in self.threads:
            t.start()

    def _kafka_python(self, bootstrap: str) -> None:
        try:
            admin = KafkaAdminClient(
                bootstrap_servers=bootstrap,
                reconnect_backoff_ms=10,
                reconnect_backoff_max_ms=10,
                bootstrap_timeout_ms=DEADLINE_S * 1000,
                request_timeout_ms=DEADLINE_S * 1000,
            )
            try:
                self.described.append(admin.describe_cluster())
            finally:
                admin.close()
        except BaseException as e:
            self.errors.append(e)

    def _list(self) -> None:
        try:
            self.listed.append(self._lister.list_topics(timeout=DEADLINE_S))
        except BaseException as e:
            self.errors.append(e)

    def answered(self) -> bool:
        return bool(self.described or self.listed or self.errors or self.created.done())

    def check_answers(self, brokers: list[int], controller: int) -> None:
        """Every request answered, each Metadata naming ``controller`` and the brokers (``brokers``,
        or the first of them: a client that goes on to ask broker 0 may get broker 0's view from just
        before the UpdateMetadata naming broker 1 reached it, as each broker hears from the
        controller on its own channel); the topic created."""
        views = [brokers, brokers[:1]]
        assert self.created.result(timeout=DEADLINE_S) is None, "CreateTopics answered with an error"
        for t in self.threads:
            t.join(DEADLINE_S)
            assert not t.is_alive(), "a client got no answer"
        assert not self.errors, self.errors
        assert len(self.described) == KAFKA_PYTHON_CLIENTS
        for view in self.described:
            assert sorted(b["broker_id"] for b in view["brokers"]) in views, view
            assert view["controller_id"] == controller, view
        (metadata,) = self.listed
        assert sorted(metadata.brokers) in views, metadata.brokers
        assert metadata.controller_id == controller


def hold_controller(cluster: LiteCluster) -> threading.Event:
    """Keep the active controller's event thread busy (a slow controller) until the returned event
    is set: the broker-change event of a new broker, and so its UpdateMetadata, wait behind it."""
    release, holding = threading.Event(), threading.Event()

    def busy() -> None:
        holding.set()
        release.wait(DEADLINE_S)

    cluster.controller()._put("HeldByTest", busy)
    assert holding.wait(DEADLINE_S), "the controller's event thread never ran the test's event"
    return release


def test_a_broker_that_is_its_own_controller_answers_clients_from_its_first_instant(zookeeper, tmp_path):
    """A one-broker cluster: the broker's own controller sends it UpdateMetadata through the very
    listener the clients are racing to."""
    port = free_port()
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=0)
    broker = KafkaServer(cluster.config(0, port))
    cluster.servers.append(broker)
    try:
        clients = EarlyClients(port)
        broker.startup()
        clients.check_answers(brokers=[0], controller=0)
        cluster.wait_for_leaders(clients.topic, 2)
    finally:
        cluster.stop()


def test_clients_wait_for_a_slow_controllers_first_metadata(zookeeper, tmp_path):
    """Broker 1 starts while broker 0's controller is busy, so the gap between broker 1's port
    opening and its first metadata is held open, not left to timing: every client request of the
    gap waits, and is answered once the controller's UpdateMetadata arrives."""
    cluster = LiteCluster(zookeeper.connect_string, tmp_path, brokers=1).start()
    release = hold_controller(cluster)
    try:
        port = free_port()
        broker = KafkaServer(cluster.config(1, port))
        cluster.servers.append(broker)  # cluster.stop() stops it too
        clients = EarlyClients(port)
        broker.startup()  # opens the port; the held controller cannot send it UpdateMetadata yet
        assert not broker.metadata_cache.has_metadata()
        # Each client has a request waiting for the metadata, or was answered without it (the bug).
        wait_until(
            lambda: (
                broker.apis.client_request_purgatory.watched() >= KAFKA_PYTHON_CLIENTS + 2
                or clients.answered()
            ),
            timeout_s=DEADLINE_S,
            what="a request of every client waiting for broker 1's first metadata",
        )
        assert not clients.answered(), (
            f"answered before broker 1 had any metadata: {clients.described} {clients.listed} "
            f"{clients.errors} CreateTopics done: {clients.created.done()}"
        )
        release.set()
        clients.check_answers(brokers=[0, 1], controller=0)
        cluster.wait_for_leaders(clients.topic, 2)
        assert broker.apis.client_request_purgatory.watched() == 0
    finally:
        release.set()
        cluster.stop()
