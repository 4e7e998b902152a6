"""What the notebook ``mirroring.ipynb`` runs on: a real ZooKeeper and two kafka_lite clusters in this
process, the *source* and the *target*, one broker each under a chroot of its own; the clients that
write to the source and read its end offsets; and a table of which worker holds which partitions.

No Kafka twin: notebook tooling over ``kafka_lite.server.kafka_server`` (Kafka's ``KafkaServer``, two
clusters on one ZooKeeper as Kafka's operations guide runs them) for the notebook's
``MirrorMaker`` (Kafka 0.10.1's ``kafka.tools.MirrorMaker``) and uReplicator's
``HelixMirrorMakerManager``. Book: chapter 8, 8.1 and 8.2 (MirrorMaker; uReplicator's controller).
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile

from rich.console import Console
from rich.table import Table

from kafka_lite import KafkaConsumer, KafkaProducer
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.time import wait_until
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.zk.embedded import EmbeddedZooKeeper

console = Console(width=100)


class TwoClusters:
    """ZooKeeper, the source's broker 0 and the target's broker 0, started, with an admin client on
    each, a producer on the source (client id ``orders-writer``) and a consumer that only reads the
    source's end offsets. ``closers`` holds the close of every client and tool the notebook starts;
    ``stop`` calls them, stops the brokers and ZooKeeper and removes their files; if a cell fails
    before the notebook's last cell calls it, the kernel's exit does (atexit)."""

    def __init__(self) -> None:
        logging.getLogger("kazoo").setLevel(logging.ERROR)
        # The brokers' selectors warn of each connection a closing client resets: no news here.
        logging.getLogger("kafka_lite.network.selector").setLevel(logging.ERROR)
        self.workdir = tempfile.mkdtemp(prefix="mirroring-notebook-")
        self.zookeeper = EmbeddedZooKeeper(f"{self.workdir}/zookeeper")
        self.zookeeper.start()
        self.source_brokers = [self.start_broker("source", 0)]
        self.target_brokers = [self.start_broker("target", 0)]
        wait_until(
            lambda: all(
                len(b.metadata_cache.alive_brokers()) == 1 for b in self.source_brokers + self.target_brokers
            ),
            what="each cluster's broker to see itself registered",
        )
        self.source = ",".join(f"127.0.0.1:{b.port}" for b in self.source_brokers)
        self.target = ",".join(f"127.0.0.1:{b.port}" for b in self.target_brokers)
        self.closers = []
        self.stopped = False
        atexit.register(self.stop)
        self.source_admin = KafkaAdminClient(self.source)
        self.target_admin = KafkaAdminClient(self.target)
        self.producer = KafkaProducer(bootstrap_servers=self.source, client_id="orders-writer")
        self.reader = KafkaConsumer(bootstrap_servers=self.source, client_id="offsets-reader")
        self.closers += [
            self.source_admin.close,
            self.target_admin.close,
            self.producer.close,
            self.reader.close,
        ]

    def start_broker(self, cluster: str, broker_id: int) -> KafkaServer:
        config = KafkaConfig(
            {
                "broker.id": broker_id,
                "listeners": "PLAINTEXT://127.0.0.1:0",
                "log.dirs": f"{self.workdir}/{cluster}-{broker_id}",
                # Each cluster under its own chroot: the same ZooKeeper, two sets of /brokers, /controller...
                "zookeeper.connect": f"{self.zookeeper.connect_string}/{cluster}",
                "num.network.threads": 1,
                "num.io.threads": 2,
                "log.cleaner.enable": False,
                "group.initial.rebalance.delay.ms": 0,
                "offsets.topic.num.partitions": 2,
                "offsets.topic.replication.factor": 1,
                # The notebook stops whole clusters at the end: no leadership has anywhere to move.
                "controlled.shutdown.enable": False,
            }
        )
        server = KafkaServer(config)
        server.startup()
        return server

    def create(self, topic: str, partitions: int) -> None:
        """``topic`` with ``partitions`` partitions (one replica) on the source and on the target,
        once every partition has a leader on each (MirrorMaker does not create topics)."""
        for admin, brokers in (
            (self.source_admin, self.source_brokers),
            (self.target_admin, self.target_brokers),
        ):
            admin.create_topics([NewTopic(topic, partitions, 1, {}, {})])
            wait_until(
                lambda brokers=brokers: all(
                    len(b.metadata_cache.partitions(topic)) == partitions
                    and all(p.leader >= 0 for p in b.metadata_cache.partitions(topic).values())
                    for b in brokers
                ),
                what=f"leaders for {topic}",
            )

    def write(self, topic: str, n: int, start: int = 0) -> None:
        """Records ``start`` to ``start + n - 1`` to the source, keyed by 37 customers, then a flush."""
        for i in range(start, start + n):
            self.producer.send(topic, key=f"customer-{i % 37}".encode(), value=f"{topic}-{i}".encode())
        self.producer.flush()

    def target_counts(self, topic: str, partitions: int) -> dict[int, int]:
        """Per partition: the target's end offset (the records it holds, none ever deleted here)."""
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        with KafkaConsumer(bootstrap_servers=self.target, client_id="target-reader") as consumer:
            return {tp.partition: end for tp, end in consumer.end_offsets(tps).items()}

    def stop(self) -> None:
        """Stop the tools and clients, then the brokers and ZooKeeper, and remove their files."""
        if self.stopped:
            return
        self.stopped = True
        for close in reversed(self.closers):
            close()
        logging.getLogger("kafka_lite").setLevel(logging.CRITICAL)
        for broker in reversed(self.source_brokers + self.target_brokers):
            broker.shutdown()
        self.zookeeper.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def show_assignment(title: str, assignment: dict) -> None:
    """A table of the controller's assignment: each worker and the partitions of ``payments`` it holds
    ONLINE."""
    table = Table(title=title, title_justify="left")
    table.add_column("worker")
    table.add_column("partitions of payments (ONLINE)")
    for worker in sorted(assignment):
        table.add_row(worker, " ".join(str(tp.partition) for tp in sorted(assignment[worker])))
    console.print(table)
