"""What the notebook ``distributed_connect.ipynb`` runs on: a real ZooKeeper and one kafka_lite broker in
this process, the topics its connectors use, one HTTP request to a Connect worker's REST API as
``curl`` would send it, and a table of the connectors' and tasks' statuses.

No Kafka twin: notebook tooling over ``kafka_lite.testing.embedded_kafka_cluster`` (Kafka's
``KafkaServer``) and the REST API of the notebook's distributed workers (Kafka's
``ConnectDistributed``, whose ``RestServer`` answers in front of the ``DistributedHerder``). Book:
chapter 8, 8.3.3-8.3.6 (the herder, the worker, the REST server and the stores).
"""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.error
import urllib.request

from rich.console import Console
from rich.table import Table

from kafka_lite.testing.embedded_kafka_cluster import EmbeddedKafkaCluster

console = Console(width=100)


class OneBroker:
    """ZooKeeper and broker 0, started, with the topic ``connect-test`` that the file source writes and
    the file sink reads, made before either starts. ``workers`` maps a worker's name to the
    in-process Connect or the ``Popen`` of a worker process; ``stop`` stops them, the broker and
    ZooKeeper and removes their files; if a cell fails before the notebook's last cell calls it, the
    kernel's exit does (atexit)."""

    def __init__(self) -> None:
        self.cluster = EmbeddedKafkaCluster(
            1,
            {
                # The workers' group forms at once (the cluster's default), and a dead worker is
                # noticed in 4 s (the broker's floor for a session is 6 s by default).
                "group.min.session.timeout.ms": 1000,
            },
            prefix="connect-notebook-",
        )
        self.zookeeper, self.broker = self.cluster.zookeeper, self.cluster.brokers[0]
        self.workdir = self.cluster.workdir
        self.bootstrap = self.cluster.bootstrap_servers
        self.workers = {}
        self.cluster.closers.append(self.stop_workers)  # by the cluster's stop, its atexit's too
        self.create_topic("connect-test")

    def create_topic(self, topic: str) -> None:
        """``topic``, one partition and one replica, made by an admin client, once its leader has it."""
        self.cluster.create_topic(topic)

    def stop_workers(self) -> None:
        """Stop the workers: a worker in this process stops, a worker process is killed."""
        for worker in self.workers.values():
            if isinstance(worker, subprocess.Popen):
                worker.kill()
                worker.wait()
            else:
                worker.stop()

    def stop(self) -> None:
        """Stop the workers, then the cluster (its broker, ZooKeeper and files)."""
        self.cluster.stop()


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
