"""What the notebook ``poll_loop.ipynb`` runs on: a real ZooKeeper and one kafka_lite broker in this
process with the topic ``orders`` (two partitions) and a producer that writes to it, and what reads a
``KafkaConsumer``'s insides between two polls: the records its fetcher still holds and the Fetch
requests it has sent and not yet had answered.

No Kafka twin: notebook tooling over ``kafka_lite.server.kafka_server`` (Kafka's ``KafkaServer``) and
``kafka_lite.consumer.internals.fetcher`` and ``consumer_network_client`` (Kafka's ``Fetcher`` and
``ConsumerNetworkClient``, whose buffers and in-flight requests the tables read). Book: chapter 4,
4.1.3-4.1.5 (the poll loop, fetching and getting records).
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile

from kafka_lite.clients.admin import KafkaAdminClient, NewTopic
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.time import wait_until
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.server.kafka_config import KafkaConfig
from kafka_lite.server.kafka_server import KafkaServer
from kafka_lite.zk.embedded import EmbeddedZooKeeper


class OneBroker:
    """ZooKeeper and broker 0, started, the topic ``orders`` with two partitions led by it, and a
    producer. ``stop`` closes the producer, stops the broker and ZooKeeper and removes their files;
    the notebook's last cell calls it, and if a cell fails first, the kernel's exit does (atexit)."""

    def __init__(self) -> None:
        logging.getLogger("kazoo").setLevel(logging.ERROR)
        # The broker's selector warns of each connection a closing client resets: no news here.
        logging.getLogger("kafka_lite.network.selector").setLevel(logging.ERROR)
        self.workdir = tempfile.mkdtemp(prefix="poll-loop-notebook-")
        self.zookeeper = EmbeddedZooKeeper(f"{self.workdir}/zookeeper")
        self.zookeeper.start()
        self.broker = KafkaServer(
            KafkaConfig(
                {
                    "broker.id": 0,
                    "listeners": "PLAINTEXT://127.0.0.1:0",
                    "log.dirs": f"{self.workdir}/broker-0",
                    "zookeeper.connect": self.zookeeper.connect_string + "/notebook",
                    "num.network.threads": 1,
                    "num.io.threads": 2,
                    "log.cleaner.enable": False,
                    # One broker: __consumer_offsets has one replica (Kafka's default is 3), and few
                    # partitions.
                    "offsets.topic.replication.factor": 1,
                    "offsets.topic.num.partitions": 2,
                    # The first rebalance does not wait for more members (Kafka 0.11's default is 3 s).
                    "group.initial.rebalance.delay.ms": 0,
                }
            )
        )
        self.broker.startup()
        self.stopped = False
        atexit.register(self.stop)
        self.bootstrap = f"127.0.0.1:{self.broker.port}"
        broker = self.broker
        wait_until(
            lambda: broker.metadata_cache.controller_id == 0, what="the broker to be its own controller"
        )
        admin = KafkaAdminClient(self.bootstrap)
        admin.create_topics([NewTopic("orders", 2, 1, {}, {})])
        admin.close()
        wait_until(
            lambda: (
                all(p.leader == 0 for p in broker.metadata_cache.partitions("orders").values())
                and len(broker.metadata_cache.partitions("orders")) == 2
            ),
            what="leaders for orders' 2 partitions",
        )
        # A long linger: the records of one produce() call go as one batch, when flush() sends them.
        self.producer = KafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=1000)

    def produce(self, partition, values):
        """Write ``values`` to orders-``partition`` as one batch, and wait until the broker has them;
        their offsets."""
        futures = [self.producer.send("orders", value=v.encode(), partition=partition) for v in values]
        self.producer.flush()
        return [f.get(10).offset for f in futures]

    def stop(self) -> None:
        """Close the producer, stop the broker and ZooKeeper, and remove their files."""
        if self.stopped:
            return
        self.stopped = True
        self.producer.close()
        self.broker.shutdown()
        self.zookeeper.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)  # ZooKeeper's and the broker's files


def fetches_in_flight(c):
    """The Fetch requests sent (or queued) and not yet answered: each as [partition@offset, ...]."""
    network = c.client.client
    requests = [r for queue in network.in_flight._requests.values() for r in queue]
    requests += [r for queued in c.client.unsent.values() for r in queued]
    return [
        [
            f"{t['topic']}-{p['partition']}@{p['fetch_offset']}"
            for t in r.body["topics"]
            for p in t["partitions"]
        ]
        for r in requests
        if r.api == ApiKeys.FETCH
    ]


def buffered(c):
    """The partitions whose records the fetcher holds: parsed but not handed out, or a completed fetch
    not yet parsed."""
    f = c.fetcher
    held = []
    if f.next_in_line_records is not None and not f.next_in_line_records.is_drained():
        held.append(f"{f.next_in_line_records.partition[0]}-{f.next_in_line_records.partition[1]} (parsed)")
    held += [f"{cf.partition[0]}-{cf.partition[1]} (queued)" for cf in f.completed_fetches]
    return held
