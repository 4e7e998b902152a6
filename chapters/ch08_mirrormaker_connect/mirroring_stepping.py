"""What the notebook ``mirroring.ipynb`` runs on: a real ZooKeeper and two kafka_lite clusters in this
process, the *source* and the *target*, one broker each under a chroot of its own; the clients that
write to the source and read its end offsets; and a table of which worker holds which partitions.

No Kafka twin: notebook tooling over ``kafka_lite.testing.embedded_kafka_cluster`` (Kafka's
``KafkaServer``, two clusters on one ZooKeeper as Kafka's operations guide runs them) for the
notebook's ``MirrorMaker`` (Kafka 0.10.1's ``kafka.tools.MirrorMaker``) and uReplicator's
``HelixMirrorMakerManager``. Book: chapter 8, 8.1 and 8.2 (MirrorMaker; uReplicator's controller).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from kafka_lite import KafkaConsumer, KafkaProducer
from kafka_lite.clients.admin import KafkaAdminClient

# The notebooks of this chapter take their wait from here, with the clusters.
from kafka_lite.common.time import wait_until  # noqa: F401
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.testing.embedded_kafka_cluster import EmbeddedKafkaCluster

console = Console(width=100)


class TwoClusters:
    """ZooKeeper, the source's broker 0 and the target's broker 0, started, with an admin client on
    the source, a producer on the source (client id ``orders-writer``) and a consumer that only reads the
    source's end offsets. ``closers`` holds the close of every client and tool the notebook starts;
    ``stop`` calls them, stops the brokers and ZooKeeper and removes their files; if a cell fails
    before the notebook's last cell calls it, the kernel's exit does (atexit)."""

    def __init__(self) -> None:
        # Each cluster under its own chroot: the same ZooKeeper, two sets of /brokers, /controller...
        self.source_cluster = EmbeddedKafkaCluster(1, chroot="/source", prefix="mirroring-source-")
        self.target_cluster = EmbeddedKafkaCluster(
            1, chroot="/target", zookeeper=self.source_cluster.zookeeper, prefix="mirroring-target-"
        )
        self.zookeeper = self.source_cluster.zookeeper
        self.source = self.source_cluster.bootstrap_servers
        self.target = self.target_cluster.bootstrap_servers
        # Closed first by the target's stop (its atexit's too, which runs before the source's).
        self.closers = self.target_cluster.closers
        self.source_admin = KafkaAdminClient(self.source)
        self.producer = KafkaProducer(bootstrap_servers=self.source, client_id="orders-writer")
        self.reader = KafkaConsumer(bootstrap_servers=self.source, client_id="offsets-reader")
        self.closers += [
            self.source_admin.close,
            self.producer.close,
            self.reader.close,
        ]

    def create(self, topic: str, partitions: int) -> None:
        """``topic`` with ``partitions`` partitions (one replica) on the source and on the target,
        once every partition has a leader on each (MirrorMaker does not create topics)."""
        for cluster in (self.source_cluster, self.target_cluster):
            cluster.create_topic(topic, partitions)

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
        """Stop the tools and clients, then the target (its broker and files) and the source (its
        broker, ZooKeeper and files)."""
        try:
            self.target_cluster.stop()
        finally:
            self.source_cluster.stop()


def show_assignment(title: str, assignment: dict) -> None:
    """A table of the controller's assignment: each worker and the partitions of ``payments`` it holds
    ONLINE."""
    table = Table(title=title, title_justify="left")
    table.add_column("worker")
    table.add_column("partitions of payments (ONLINE)")
    for worker in sorted(assignment):
        table.add_row(worker, " ".join(str(tp.partition) for tp in sorted(assignment[worker])))
    console.print(table)
