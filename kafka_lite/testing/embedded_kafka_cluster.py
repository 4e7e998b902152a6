"""ZooKeeper and N kafka_lite brokers in this process, set up for a notebook or a test and stopped whole.

Mirrors: org.apache.kafka.streams.integration.utils.EmbeddedKafkaCluster and KafkaEmbedded
         (streams/src/test/java/org/apache/kafka/streams/integration/utils/, Kafka 0.10.1 and later)
Differs: ZooKeeper is a child JVM (``EmbeddedZooKeeper``), not a server inside this process. The
         defaults are the chapter notebooks' (one network thread, no log cleaner, no controlled
         shutdown); Kafka 0.10.1's are its Streams tests' (topic deletion on, auto-creation off, a
         2 MiB dedupe buffer for the cleaner, no floor on a group's session timeout), and its brokers
         share a MockTime, where these run on real time: a notebook's clients do. A cluster may
         use another's ZooKeeper under a chroot of its own. ``stop`` also runs when the interpreter
         exits, and it removes the cluster's files.

What the chapters' notebooks start before their first cell about Kafka: the broker start-up of
chapter 2, 2.3 (``KafkaServer.startup``), N times, each broker on a port the kernel picks and with
its log directory in one temporary directory. ``overrides`` is a dict merged over ``DEFAULTS`` for
every broker; a notebook passes the settings its own story needs, with the reason beside each. The
constructor returns once every broker knows every other and a controller, as Kafka's tests wait
before their first request; ``create_topic`` returns once each partition has a leader that leads it
and every broker knows so (``IntegrationTestUtils.waitForTopicPartitions`` in Kafka's later
versions).
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.time import wait_until
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.zk.embedded import EmbeddedZooKeeper

DEFAULTS: dict[str, object] = {
    # Each broker listens on a port the kernel picks; ``bootstrap_servers`` reads it back.
    "listeners": "PLAINTEXT://127.0.0.1:0",
    # A few clients on one machine: one processor and two request handlers are enough threads.
    "num.network.threads": 1,
    "num.io.threads": 2,
    # No compaction: nothing here lives long enough to need it, and a notebook reads what was written.
    "log.cleaner.enable": False,
    # __consumer_offsets small, with one replica (Kafka's defaults are 50 partitions and 3 replicas,
    # which a one-broker cluster cannot place): the coordinator loads at once.
    "offsets.topic.num.partitions": 1,
    "offsets.topic.replication.factor": 1,
    # A group's first rebalance does not wait for more members (Kafka 0.11's default waits 3 s).
    "group.initial.rebalance.delay.ms": 0,
    # The cluster is stopped whole: no leadership has anywhere to move, and chapter 7.4's controlled
    # shutdown would retry, and wait, for nothing.
    "controlled.shutdown.enable": False,
}


class EmbeddedKafkaCluster:
    """ZooKeeper (started here, or ``zookeeper`` given and left running) and brokers 0 to
    ``num_brokers - 1``, started, under ``chroot`` (``"/source"``, say; ``""`` for none), their files in
    a new temporary directory named ``prefix...``. ``stop`` calls the ``closers`` (the clients
    and tools the notebook started), stops the brokers and the ZooKeeper it started and removes the
    directory; it is safe to call twice, and the interpreter's exit calls it if nothing did (a failed
    notebook cell must not leave a ZooKeeper JVM behind)."""

    def __init__(
        self,
        num_brokers: int = 1,
        overrides: dict[str, object] | None = None,
        *,
        chroot: str = "",
        zookeeper: EmbeddedZooKeeper | None = None,
        prefix: str = "kafka-lite-cluster-",
    ) -> None:
        # ZooKeeper's client logs each reconnection, and a broker's selector each connection a
        # closing client resets: no news in a notebook.
        logging.getLogger("kazoo").setLevel(logging.ERROR)
        logging.getLogger("kafka_lite.network.selector").setLevel(logging.ERROR)
        self.workdir = Path(tempfile.mkdtemp(prefix=prefix))
        self.brokers: list[KafkaServer] = []
        # What ``stop`` closes before the brokers go, the last added first: the clients and tools a
        # notebook starts, which would otherwise retry against brokers that are gone.
        self.closers: list[Callable[[], object]] = []
        self.stopped = False
        self._owns_zookeeper = zookeeper is None
        self.zookeeper = zookeeper or EmbeddedZooKeeper(self.workdir / "zookeeper")
        atexit.register(self.stop)
        try:
            if self._owns_zookeeper:
                self.zookeeper.start()
            self.zk_connect = self.zookeeper.connect_string + chroot
            for broker_id in range(num_brokers):
                config = {
                    **DEFAULTS,
                    "broker.id": broker_id,
                    "log.dirs": str(self.workdir / f"broker-{broker_id}"),
                    "zookeeper.connect": self.zk_connect,
                    **(overrides or {}),
                }
                self.brokers.append(KafkaServer(KafkaConfig(config)))
                self.brokers[-1].startup()
            wait_until(
                lambda: all(
                    len(b.metadata_cache.alive_brokers()) == num_brokers
                    and b.metadata_cache.controller_id >= 0
                    for b in self.brokers
                ),
                what=f"each broker to know all {num_brokers} brokers and the controller",
            )
        except BaseException:
            self.stop()
            raise

    @property
    def bootstrap_servers(self) -> str:
        """``host:port,...`` of every broker as it registered itself (its advertised listener)."""
        first = [b.advertised_endpoints()[0] for b in self.brokers]
        return ",".join(f"{e.host}:{e.port}" for e in first)

    def create_topic(self, topic: str, partitions: int = 1, replication_factor: int = 1) -> None:
        """``topic``, made by an admin client; returns once ``wait_for_leaders`` does."""
        admin = KafkaAdminClient(self.bootstrap_servers)
        try:
            admin.create_topics([NewTopic(topic, partitions, replication_factor, {}, {})])
        finally:
            admin.close()
        self.wait_for_leaders(topic, partitions)

    def wait_for_leaders(self, topic: str, partitions: int) -> None:
        """Until each of ``topic``'s ``partitions`` partitions has a leader that has taken it on (its
        LeaderAndIsr handled) and every broker's metadata cache names that leader (its UpdateMetadata
        handled): from then on a client's first request finds the partition."""
        by_id = {b.broker_id: b for b in self.brokers}

        def led_everywhere() -> bool:
            for broker in self.brokers:
                states = broker.metadata_cache.partitions(topic)
                if len(states) != partitions:
                    return False
                for partition, state in states.items():
                    leader = by_id.get(state.leader)
                    if leader is None or leader.replica_manager.get_partition((topic, partition)) is None:
                        return False
            return True

        wait_until(led_everywhere, what=f"a leader for each of {topic}'s {partitions} partitions")

    def stop(self) -> None:
        """Call the ``closers``, stop the brokers, then ZooKeeper if this cluster started it, and
        remove the files."""
        if self.stopped:
            return
        self.stopped = True
        atexit.unregister(self.stop)
        try:
            for close in reversed(self.closers):
                close()
        finally:
            self._stop_brokers()

    def _stop_brokers(self) -> None:
        # The brokers going down one by one see each other leave, and the controller logs, as errors,
        # each partition left with no live replica to lead it: expected here, and not worth a line each.
        quiet = logging.getLogger("kafka_lite")
        level = quiet.level
        quiet.setLevel(logging.CRITICAL)
        try:
            for broker in reversed(self.brokers):
                broker.shutdown()
        finally:
            quiet.setLevel(level)
            if self._owns_zookeeper:
                self.zookeeper.stop()
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> EmbeddedKafkaCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
