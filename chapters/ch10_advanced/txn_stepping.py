"""What the notebook ``transaction_stepping.ipynb`` runs on: a real ZooKeeper and three kafka_lite
brokers in this process, set up for transactions, and what reads a partition on its leader (its
``Partition``, its batches, its high watermark and last stable offset) as tables.

No Kafka twin: notebook tooling over ``kafka_lite.testing.embedded_kafka_cluster`` and
``kafka_lite.server.partition`` (Kafka's ``KafkaServer``s in Streams' ``EmbeddedKafkaCluster``, and
the ``Partition`` whose log and last stable offset the tables read). Book: chapter 10, 10.3
(transactions).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.end_transaction_marker import EndTransactionMarker

# The notebook takes its wait from here, with the cluster.
from kafka_lite.common.time import wait_until  # noqa: F401
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.testing.embedded_kafka_cluster import EmbeddedKafkaCluster

console = Console(width=100)


class ThreeBrokers:
    """ZooKeeper and brokers 0, 1 and 2 (an ``EmbeddedKafkaCluster``), started, with an admin client.
    ``closers`` holds the close of every client the notebook starts; ``stop`` calls them, then stops
    the cluster (its brokers, ZooKeeper and files); if a cell fails before the notebook's last cell
    calls it, the kernel's exit does (atexit)."""

    def __init__(self) -> None:
        self.cluster = EmbeddedKafkaCluster(
            3,
            {
                # No compaction: __transaction_state keeps every state the coordinator wrote, to read.
                "log.cleaner.enable": False,
                # Three partitions of __transaction_state, one replica each (Kafka's defaults are 50,
                # 3 replicas and a min ISR of 2): fewer partitions to create, and no follower to wait for.
                "transaction.state.log.num.partitions": 3,
                "transaction.state.log.replication.factor": 1,
                "transaction.state.log.min.isr": 1,
            },
            prefix="transactions-notebook-",
        )
        self.zookeeper, self.brokers = self.cluster.zookeeper, self.cluster.brokers
        self.bootstrap = self.cluster.bootstrap_servers
        self.closers = self.cluster.closers  # closed first by the cluster's stop, its atexit's too
        self.admin = KafkaAdminClient(self.bootstrap)
        self.closers.append(self.admin.close)

    def stop(self) -> None:
        """Close the clients, then stop the cluster."""
        self.cluster.stop()

    def partition(self, tp: TopicPartition):
        """The leader's Partition of ``tp`` (one replica each: the only broker that has a log for it)."""
        for broker in self.brokers:
            found = broker.replica_manager.get_partition((tp.topic, tp.partition))
            if found is not None and found.log is not None:
                return found
        raise LookupError(f"no broker has a log for {tp}")

    def batches(self, tp: TopicPartition) -> list[tuple]:
        """(first offset, last offset, producer id, epoch, transactional, marker or None) per batch."""
        rows = []
        for batch in read_batches(self.partition(tp).log):
            marker = None
            if batch.is_control_batch:
                marker = EndTransactionMarker.from_record(next(iter(batch))).control_type.name
            rows.append((batch.base_offset, batch.last_offset, batch.producer_id, batch.producer_epoch,
                         batch.is_transactional, marker))  # fmt: skip
        return rows

    def offsets(self, tp: TopicPartition) -> tuple[int, int]:
        """(HW, LSO) of ``tp`` on its leader."""
        p = self.partition(tp)
        return p.high_watermark(), p.last_stable_offset()

    def show_partitions(self, title: str, tps: tuple[TopicPartition, ...]) -> None:
        """Each partition of ``tps``: its leader, its batches, its HW and LSO, as a table."""
        table = Table("partition", "leader", "offsets", "producer id", "epoch", "transactional", "control",
                      "HW", "LSO", title=title, title_justify="left")  # fmt: skip
        for tp in tps:
            hw, lso = self.offsets(tp)
            for i, (first, last, pid, epoch, txn, marker) in enumerate(self.batches(tp)):
                head = (str(tp.partition), str(self.partition(tp).leader_replica_id)) if i == 0 else ("", "")
                tail = (str(hw), str(lso)) if i == 0 else ("", "")
                table.add_row(*head, f"{first}-{last}" if last > first else str(first), str(pid), str(epoch),
                              "yes" if txn else "no", marker or "", *tail)  # fmt: skip
            table.add_section()
        console.print(table)


def read_batches(log) -> list:
    """Every batch of ``log`` from its start, as a Fetch would read it."""
    records = log.read(log.log_start_offset, 1 << 20).records
    data = bytes(records.buffer()) if isinstance(records, MemoryRecords) else records.read_bytes()
    return list(MemoryRecords(data).batches())
