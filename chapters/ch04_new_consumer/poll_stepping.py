"""What the notebook ``poll_loop.ipynb`` runs on: a real ZooKeeper and one kafka_lite broker in this
process with the topic ``orders`` (two partitions) and a producer that writes to it, and what reads a
``KafkaConsumer``'s insides between two polls: the records its fetcher still holds and the Fetch
requests it has sent and not yet had answered.

No Kafka twin: notebook tooling over ``kafka_lite.testing.embedded_kafka_cluster`` (Kafka's
``KafkaServer``), ``kafka_lite.consumer.internals.fetcher`` and ``consumer_network_client`` (Kafka's
``Fetcher`` and ``ConsumerNetworkClient``, whose buffers and in-flight requests the tables read).
Book: chapter 4, 4.1.3-4.1.5 (the poll loop, fetching and getting records).
"""

from __future__ import annotations

from kafka_lite.common.protocol.api_keys import ApiKeys

# The notebook takes its wait from here, with the broker.
from kafka_lite.common.time import wait_until  # noqa: F401
from kafka_lite.producer.kafka_producer import KafkaProducer
from kafka_lite.testing.embedded_kafka_cluster import EmbeddedKafkaCluster


class OneBroker:
    """ZooKeeper and broker 0 (an ``EmbeddedKafkaCluster``), started, the topic ``orders`` with two
    partitions led by it, and a producer. ``stop`` closes the producer, then stops the cluster (its
    broker, ZooKeeper and files); the notebook's last cell calls it, and if a cell fails first, the
    kernel's exit does (atexit)."""

    def __init__(self) -> None:
        self.cluster = EmbeddedKafkaCluster(1, prefix="poll-loop-notebook-")
        self.broker = self.cluster.brokers[0]
        self.bootstrap = self.cluster.bootstrap_servers
        self.cluster.create_topic("orders", partitions=2)
        # A long linger: the records of one produce() call go as one batch, when flush() sends them.
        self.producer = KafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=1000)
        self.cluster.closers.append(self.producer.close)  # by the cluster's stop, its atexit's too

    def produce(self, partition, values):
        """Write ``values`` to orders-``partition`` as one batch, and wait until the broker has them;
        their offsets."""
        futures = [self.producer.send("orders", value=v.encode(), partition=partition) for v in values]
        self.producer.flush()
        return [f.get(10).offset for f in futures]

    def stop(self) -> None:
        """Close the producer, then stop the cluster."""
        self.cluster.stop()


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
