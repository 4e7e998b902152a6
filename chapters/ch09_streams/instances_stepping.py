"""What the notebook ``two_instances.ipynb`` runs on: a real ZooKeeper and three kafka_lite brokers in
this process, the clients the notebook writes and reads with, and a table of which tasks each
instance of a Streams application runs and keeps as standbys.

No Kafka twin: notebook tooling over ``kafka_lite.streams.kafka_streams`` (Kafka's ``KafkaStreams``;
the tables read its ``localThreadsMetadata()`` and its tasks' state managers). Book: chapter 9,
9.1.3-9.1.4 (tasks, threads and standbys; state and its restoration).
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile

from rich.console import Console
from rich.table import Table

from kafka_lite import KafkaConsumer, KafkaProducer
from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.time import wait_until
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.streams.examples.wordcount import STORE_NAME
from kafka_lite.streams.kafka_streams import KafkaStreams
from kafka_lite.zk.embedded import EmbeddedZooKeeper

console = Console(width=100)


class ThreeBrokers:
    """ZooKeeper and brokers 0, 1 and 2, started, with an admin client, a producer and a consumer
    that reads end offsets only. ``instances`` holds every ``KafkaStreams`` the notebook starts;
    ``stop`` closes them and the clients, stops the brokers and ZooKeeper and removes their files; if
    a cell fails before the notebook's last cell calls it, the kernel's exit does (atexit)."""

    def __init__(self) -> None:
        logging.getLogger("kazoo").setLevel(logging.ERROR)
        # The brokers' selectors warn of each connection a closing client resets: no news here.
        logging.getLogger("kafka_lite.network.selector").setLevel(logging.ERROR)
        # With one instance, a standby has nowhere to go (never beside its active copy), and the
        # assignor warns so on every rebalance; the notebook starts with one instance on purpose.
        logging.getLogger("kafka_lite.streams.processor.internals.assignment.task_assignor").setLevel(
            logging.ERROR
        )
        self.workdir = tempfile.mkdtemp(prefix="two-instances-notebook-")
        self.zookeeper = EmbeddedZooKeeper(f"{self.workdir}/zookeeper")
        self.zookeeper.start()
        self.brokers = [self.start_broker(i) for i in range(3)]
        wait_until(
            lambda: all(len(b.metadata_cache.alive_brokers()) == 3 for b in self.brokers), what="3 brokers"
        )
        self.bootstrap = ",".join(f"127.0.0.1:{b.port}" for b in self.brokers)
        self.instances: list[KafkaStreams] = []
        self.stopped = False
        atexit.register(self.stop)
        self.admin = KafkaAdminClient(self.bootstrap)
        self.producer = KafkaProducer(bootstrap_servers=self.bootstrap, client_id="lines")
        # end offsets only
        self.reader = KafkaConsumer(bootstrap_servers=self.bootstrap, client_id="offsets-reader")

    def start_broker(self, broker_id: int) -> KafkaServer:
        config = KafkaConfig(
            {
                "broker.id": broker_id,
                "listeners": "PLAINTEXT://127.0.0.1:0",
                "log.dirs": f"{self.workdir}/broker-{broker_id}",
                "zookeeper.connect": self.zookeeper.connect_string + "/notebook",
                "num.network.threads": 1,
                "num.io.threads": 2,
                "log.cleaner.enable": False,
                # The group's first rebalance does not wait for more members, and the instances may
                # ask for a 3 s session (the brokers' floor is 6 s by default).
                "group.initial.rebalance.delay.ms": 0,
                "group.min.session.timeout.ms": 1000,
                "offsets.topic.num.partitions": 2,
                # The notebook stops the whole cluster at the end: no leadership has anywhere to move
                # (chapter 7.4's controlled shutdown would retry, and wait, for nothing).
                "controlled.shutdown.enable": False,
            }
        )
        server = KafkaServer(config)
        server.startup()
        return server

    def stop(self) -> None:
        """Close the instances and clients, stop the brokers and ZooKeeper, remove their files."""
        if self.stopped:
            return
        self.stopped = True
        for streams in self.instances:
            streams.close(30_000)
        for client in (self.producer, self.reader, self.admin):
            client.close()
        # The brokers going down one by one see each other leave, and the controller logs, as errors,
        # each partition left with no live replica to lead it: expected here, and not worth a line each.
        logging.getLogger("kafka_lite").setLevel(logging.CRITICAL)
        for broker in reversed(self.brokers):
            broker.shutdown()
        self.zookeeper.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


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
