"""What the notebook ``lab11_flight_delays.ipynb`` runs on: a real ZooKeeper and one kafka_lite broker in
this process, ``kafka-lite replay nycflights13`` started against it as a process of its own (the
command a second shell would run), and the stop of everything the notebook started, Spark's
streaming queries and session included.

No Kafka twin: notebook tooling over ``kafka_lite.testing.embedded_kafka_cluster`` (Kafka's
``KafkaServer``) and ``kafka_lite.cli.replay`` (the producer that writes nycflights13's tables at
their own times), for the streaming query the lab's ``flight_delays.py`` builds. Book: chapter 9,
9.2.2-9.2.4 (windows on record time, a stream joined with a table), as the data pipeline's lab 11
runs them on Spark.
"""

from __future__ import annotations

import subprocess
import sys

from kafka_lite.clients.admin import KafkaAdminClient

# The notebook takes its waits from here, with the broker.
from kafka_lite.common.time import wait_until  # noqa: F401
from kafka_lite.testing.embedded_kafka_cluster import EmbeddedKafkaCluster


class FlightsBroker:
    """ZooKeeper and broker 0 (an ``EmbeddedKafkaCluster``), started, the broker its own controller.
    ``spark``, once the notebook sets it, is stopped with them: ``stop`` stops its streaming queries
    and the session, then the broker and ZooKeeper, and removes their files. The notebook's last cell
    calls it; if a cell fails first, the kernel's exit does (atexit), so no query keeps polling a
    broker that is gone."""

    def __init__(self) -> None:
        self.cluster = EmbeddedKafkaCluster(1, prefix="lab11-notebook-")
        self.broker, self.workdir = self.cluster.brokers[0], self.cluster.workdir
        self.bootstrap = self.cluster.bootstrap_servers
        self.spark = None
        self.cluster.closers.append(self.stop_spark)  # by the cluster's stop, its atexit's too

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

    def stop_spark(self) -> None:
        """Stop the streaming queries and Spark's session, if the notebook started one."""
        if self.spark is not None:
            for query in self.spark.streams.active:
                query.stop()
            self.spark.stop()

    def stop(self) -> None:
        """Stop the streaming queries and Spark's session, then the cluster (its broker, ZooKeeper and
        files)."""
        self.cluster.stop()
