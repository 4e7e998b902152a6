"""What the notebook ``hanging_transaction.ipynb`` runs on: a real ZooKeeper and one kafka_lite broker
in this process behind chapter 13's fault proxy, and what reads a partition of it (its batches, its
high watermark and last stable offset, a ``read_committed`` consumer) or runs Kafka's tools on it.

No Kafka twin: notebook tooling over ``kafka_lite.testing.embedded_kafka_cluster`` and
``kafka_lite.jepsen.fault_proxy`` (Kafka's ``KafkaServer``, whose ``ReplicaManager`` the reads look
into; the proxy is the slow network of KIP-890's hanging transaction). Book: chapter 10, 10.3
(transactions).
"""

from __future__ import annotations

import atexit
import logging

from rich.console import Console
from rich.table import Table

from kafka_lite import KafkaConsumer
from kafka_lite.cli.main import main as kafka_lite
from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.end_transaction_marker import EndTransactionMarker
from kafka_lite.common.time import wait_until
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.jepsen.fault_proxy import FaultProxy
from kafka_lite.testing.embedded_kafka_cluster import EmbeddedKafkaCluster
from kafka_lite.utils.ports import free_ports

console = Console(width=100)

# The producer's network client warns of each request that times out in the proxy (the point of the
# script), and a new broker of its empty log directory: expected here. (The cluster quiets the
# broker's selector, which warns of each connection a closing client resets.)
EXPECTED_WARNINGS = (
    "kafka_lite.clients.network_client",
    "kafka_lite.producer",
    "kafka_lite.server.broker_metadata_checkpoint",
)


class ProxiedBroker:
    """ZooKeeper, broker 0 and its ``FaultProxy``, started: the broker listens on one port and tells
    every client (itself included) to use the proxy's, so every request passes the proxy, which
    forwards it or holds it. ``stop`` stops them all and removes their files; if a cell fails before
    the notebook's last cell calls it, the kernel's exit does (atexit)."""

    def __init__(self) -> None:
        for name in EXPECTED_WARNINGS:
            logging.getLogger(name).setLevel(logging.ERROR)
        self.listener = free_ports(2)
        proxy_port = self.listener + 1
        # The proxy listens first: the broker's own controller reaches the broker through it.
        self.proxy = FaultProxy()
        self.proxy.listen(proxy_port, self.listener, target=0)
        try:
            self.cluster = EmbeddedKafkaCluster(
                1,
                {
                    # The broker binds one port and registers the proxy's, so every client goes
                    # through the proxy.
                    "listeners": f"PLAINTEXT://127.0.0.1:{self.listener}",
                    "advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy_port}",
                    # One partition of __transaction_state, one replica (Kafka's defaults are 50, 3
                    # replicas and a min ISR of 2, more than one broker can hold).
                    "transaction.state.log.num.partitions": 1,
                    "transaction.state.log.replication.factor": 1,
                    "transaction.state.log.min.isr": 1,
                },
                prefix="hanging-notebook-",
            )
        except BaseException:
            self.proxy.close()
            raise
        self.zookeeper, self.broker = self.cluster.zookeeper, self.cluster.brokers[0]
        self.zk_connect = self.cluster.zk_connect
        self.bootstrap = self.cluster.bootstrap_servers  # the proxy's port, as the broker registered it
        self.closers = self.cluster.closers  # every client started, closed by the cluster's stop
        self.admin = KafkaAdminClient(self.bootstrap)
        self.closers.append(self.admin.close)
        atexit.register(self.stop)

    def stop(self) -> None:
        """Close the clients, stop the cluster (its broker, ZooKeeper and files), then the proxy."""
        try:
            self.cluster.stop()
        finally:
            self.proxy.close()

    def create(self, topic: str) -> TopicPartition:
        """``topic`` with one partition, once its leader (the one broker) has it."""
        self.admin.create_topics([NewTopic(topic, 1, 1)])
        self.cluster.wait_for_leaders(topic, 1)
        return TopicPartition(topic, 0)

    def batches(self, tp: TopicPartition) -> list[tuple]:
        """(first offset, last offset, producer id, epoch, transactional, marker or None, values) per
        batch of the partition's log, as ``kafka-lite dump-log`` reads them."""
        log = self.broker.replica_manager.get_partition((tp.topic, tp.partition)).log
        records = log.read(log.log_start_offset, 1 << 20).records
        data = bytes(records.buffer()) if isinstance(records, MemoryRecords) else records.read_bytes()
        rows = []
        for batch in MemoryRecords(data).batches():
            marker = None
            if batch.is_control_batch:
                marker = EndTransactionMarker.from_record(next(iter(batch))).control_type.name
            values = "" if batch.is_control_batch else " ".join(r.value.decode() for r in batch)
            rows.append((batch.base_offset, batch.last_offset, batch.producer_id, batch.producer_epoch,
                         batch.is_transactional, marker, values))  # fmt: skip
        return rows

    def offsets(self, tp: TopicPartition) -> tuple[int, int]:
        """(HW, LSO) of ``tp`` on its leader."""
        p = self.broker.replica_manager.get_partition((tp.topic, tp.partition))
        return p.high_watermark(), p.last_stable_offset()

    def show(self, tp: TopicPartition, title: str) -> None:
        """The partition's batches, its HW and its LSO, as a table."""
        hw, lso = self.offsets(tp)
        table = Table("offsets", "producer id", "epoch", "transactional", "control", "records",
                      title=f"{title}: HW {hw}, LSO {lso}", title_justify="left")  # fmt: skip
        for first, last, pid, epoch, txn, marker, values in self.batches(tp):
            table.add_row(f"{first}-{last}" if last > first else str(first), str(pid), str(epoch),
                          "yes" if txn else "no", marker or "", values)  # fmt: skip
        console.print(table)

    def read_committed(self, tp: TopicPartition) -> list[str]:
        """What a read_committed consumer reads of ``tp`` from the start, up to its end offset (the LSO)."""
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, isolation_level="read_committed")
        try:
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            end = consumer.end_offsets([tp])[tp]
            values = []

            def caught_up():
                for records in consumer.poll(timeout_ms=100).values():
                    values.extend(r.value.decode() for r in records)
                return consumer.position(tp) >= end

            wait_until(caught_up, what="the read_committed consumer to reach the LSO")
            return values
        finally:
            consumer.close()

    def transactions(self, *args: str) -> None:
        """``kafka-lite transactions``, as an operator runs it."""
        assert kafka_lite(["transactions", "--bootstrap-server", self.bootstrap, *args]) == 0

    def configs(self, *args: str) -> None:
        """``kafka-lite configs`` on the cluster's ZooKeeper, as an operator runs it."""
        assert kafka_lite(["configs", "--zookeeper", self.zk_connect, *args]) == 0
