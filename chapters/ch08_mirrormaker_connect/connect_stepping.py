"""What the notebook ``distributed_connect.ipynb`` runs on: a real ZooKeeper and one kafka_lite broker in
this process, the topics its connectors use, one HTTP request to a Connect worker's REST API as
``curl`` would send it, and a table of the connectors' and tasks' statuses.

No Kafka twin: notebook tooling over ``kafka_lite.server.kafka_server`` (Kafka's ``KafkaServer``) and
the REST API of the notebook's distributed workers (Kafka's ``ConnectDistributed``, whose
``RestServer`` answers in front of the ``DistributedHerder``). Book: chapter 8, 8.3.3-8.3.6 (the
herder, the worker, the REST server and the stores).
"""

from __future__ import annotations

import atexit
import json
import logging
import shutil
import socket
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.zk.embedded import EmbeddedZooKeeper

console = Console(width=100)


class OneBroker:
    """ZooKeeper and broker 0, started, with the topic ``connect-test`` that the file source writes and
    the file sink reads, made before either starts. ``workers`` maps a worker's name to the
    in-process Connect or the ``Popen`` of a worker process; ``stop`` stops them, the broker and
    ZooKeeper and removes their files; if a cell fails before the notebook's last cell calls it, the
    kernel's exit does (atexit)."""

    def __init__(self) -> None:
        logging.getLogger("kazoo").setLevel(logging.ERROR)
        # The broker's selector warns of each connection a closing client resets: no news here.
        logging.getLogger("kafka_lite.network.selector").setLevel(logging.ERROR)
        self.workdir = Path(tempfile.mkdtemp(prefix="connect-notebook-"))
        self.zookeeper = EmbeddedZooKeeper(self.workdir / "zookeeper")
        self.zookeeper.start()
        self.broker = KafkaServer(
            KafkaConfig(
                {
                    "broker.id": 0,
                    "listeners": "PLAINTEXT://127.0.0.1:0",
                    "log.dirs": str(self.workdir / "broker-0"),
                    "zookeeper.connect": self.zookeeper.connect_string + "/notebook",
                    "num.network.threads": 1,
                    "num.io.threads": 2,
                    "offsets.topic.num.partitions": 2,
                    "offsets.topic.replication.factor": 1,
                    # The workers' group forms at once, and a dead worker is noticed in 4 s (the
                    # broker's floor for a session is 6 s by default).
                    "group.initial.rebalance.delay.ms": 0,
                    "group.min.session.timeout.ms": 1000,
                    "controlled.shutdown.enable": False,
                }
            )
        )
        self.broker.startup()
        self.bootstrap = f"127.0.0.1:{self.broker.port}"
        self.workers = {}
        self.stopped = False
        atexit.register(self.stop)
        self.create_topic("connect-test")

    def create_topic(self, topic: str) -> None:
        """``topic``, one partition and one replica, made by an admin client."""
        admin = KafkaAdminClient(self.bootstrap)
        admin.create_topics([NewTopic(topic, 1, 1, {}, {})])
        admin.close()

    def stop(self) -> None:
        """Stop the workers (a worker process is killed), the broker and ZooKeeper, and remove their
        files."""
        if self.stopped:
            return
        self.stopped = True
        for worker in self.workers.values():
            if isinstance(worker, subprocess.Popen):
                worker.kill()
                worker.wait()
            else:
                worker.stop()
        logging.getLogger("kafka_lite").setLevel(logging.CRITICAL)
        self.broker.shutdown()
        self.zookeeper.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def free_port() -> int:
    """A port free on 127.0.0.1 now, for a worker process's ``rest.port``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rest(method, url, body=None):
    """One HTTP request to a worker's REST API: (status, JSON body), errors included."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def answers(url) -> bool:
    """Whether the worker at ``url`` answers ``GET /`` with 200 (False while it is not listening yet)."""
    try:
        return rest("GET", url + "/")[0] == 200
    except OSError:  # not listening yet
        return False


def show(bodies, title) -> None:
    """A table of connector status bodies (``GET /connectors/{name}/status``): each connector and
    each of its tasks, its state and the worker running it."""
    table = Table(title=title, title_justify="left")
    for column in ("connector / task", "state", "worker"):
        table.add_column(column)
    for body in bodies:
        table.add_row(body["name"], body["connector"]["state"], body["connector"]["worker_id"])
        for task in body["tasks"]:
            table.add_row(f"  {body['name']}-{task['id']}", task["state"], task["worker_id"])
    console.print(table)
