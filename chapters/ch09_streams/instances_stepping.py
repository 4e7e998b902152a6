"""What the notebook ``two_instances.ipynb`` runs on: a real ZooKeeper and three kafka_lite brokers in
this process, the clients the notebook writes and reads with, and a table of which tasks each
instance of a Streams application runs and keeps as standbys.

No Kafka twin: notebook tooling over ``kafka_lite.streams.kafka_streams`` (Kafka's ``KafkaStreams``;
the tables read its ``localThreadsMetadata()`` and its tasks' state managers). Book: chapter 9,
9.1.3-9.1.4 (tasks, threads and standbys; state and its restoration).
"""

from __future__ import annotations

import logging

from rich.console import Console
from rich.table import Table

from kafka_lite import KafkaConsumer, KafkaProducer
from kafka_lite.clients.admin import KafkaAdminClient

# The notebook takes its wait from here, with the cluster.
from kafka_lite.common.time import wait_until  # noqa: F401
from kafka_lite.streams.examples.wordcount import STORE_NAME
from kafka_lite.streams.kafka_streams import KafkaStreams
from kafka_lite.testing.embedded_kafka_cluster import EmbeddedKafkaCluster

console = Console(width=100)


class ThreeBrokers:
    """ZooKeeper and brokers 0, 1 and 2 (an ``EmbeddedKafkaCluster``), started, with an admin client,
    a producer and a consumer that reads end offsets only. ``instances`` holds every ``KafkaStreams``
    the notebook starts; ``stop`` closes them and the clients, then stops the cluster (its brokers,
    ZooKeeper and files); if a cell fails before the notebook's last cell calls it, the kernel's exit
    does (atexit)."""

    def __init__(self) -> None:
        # With one instance, a standby has nowhere to go (never beside its active copy), and the
        # assignor warns so on every rebalance; the notebook starts with one instance on purpose.
        logging.getLogger("kafka_lite.streams.processor.internals.assignment.task_assignor").setLevel(
            logging.ERROR
        )
        # The instances may ask for a 3 s session (the brokers' floor is 6 s by default).
        self.cluster = EmbeddedKafkaCluster(
            3, {"group.min.session.timeout.ms": 1000}, prefix="two-instances-notebook-"
        )
        self.zookeeper, self.brokers = self.cluster.zookeeper, self.cluster.brokers
        self.workdir = self.cluster.workdir
        self.bootstrap = self.cluster.bootstrap_servers
        self.instances: list[KafkaStreams] = []
        self.admin = KafkaAdminClient(self.bootstrap)
        self.producer = KafkaProducer(bootstrap_servers=self.bootstrap, client_id="lines")
        # end offsets only
        self.reader = KafkaConsumer(bootstrap_servers=self.bootstrap, client_id="offsets-reader")
        # Closed by the cluster's stop (its atexit's too) before the brokers go, the instances first.
        self.cluster.closers += [
            self.admin.close,
            self.reader.close,
            self.producer.close,
            self.close_instances,
        ]

    def close_instances(self) -> None:
        """Close every ``KafkaStreams`` the notebook started."""
        for streams in self.instances:
            streams.close(30_000)

    def stop(self) -> None:
        """Close the instances and clients, then stop the cluster."""
        self.cluster.stop()


def tasks(streams: KafkaStreams, kind: str = "active_tasks") -> set[str]:
    """The ids of the instance's active (or standby) tasks, from its ThreadMetadata."""
    return {t.task_id for thread in streams.local_threads_metadata() for t in getattr(thread, kind)}


def restored(streams: KafkaStreams) -> dict[str, int]:
    """Each active counting task: how many changelog records its store replayed when it was created."""
    return {
        str(task_id): task.state_mgr.restored.get(STORE_NAME, 0)
        for thread in streams.threads
        for task_id, task in list(thread.active_tasks.items())
        if task.get_store(STORE_NAME) is not None
    }


def show_tasks(title: str, **named: KafkaStreams) -> None:
    """Each named instance's threads: their state, active and standby tasks, and what the counting
    tasks restored."""
    table = Table(title=title, title_justify="left")
    for column in ("instance", "thread", "state", "active tasks", "standby tasks", "restored (Counts)"):
        table.add_column(column)
    for name, streams in named.items():
        for thread in streams.local_threads_metadata():
            table.add_row(
                name,
                thread.thread_name,
                thread.thread_state,
                " ".join(sorted(t.task_id for t in thread.active_tasks)),
                " ".join(sorted(t.task_id for t in thread.standby_tasks)),
                str(restored(streams)),
            )
    console.print(table)
