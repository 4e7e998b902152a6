"""Replication benchmark: what replication costs a producer, and how long a record takes from producer
to consumer when three replicas must have it first, on a 3-broker kafka_lite cluster, in one run.

No Kafka twin: modelled on the benchmarks of Kafka's 2014 post "Benchmarking Apache Kafka: 2 Million
Writes Per Second (On Three Cheap Machines)": ``kafka-producer-perf-test.sh`` with one replica and
acks=1 against three replicas and acks=all, and ``kafka.tools.EndToEndLatency`` (which sends one record
at a time; here the producer holds a steady rate instead, which a goal at a fixed rate needs).

    .venv/bin/python benchmarks/bench_replication.py [--part a|b|both] [--records 1000000]
        [--value-bytes 100] [--rounds 3] [--seconds 10] [--rate 10000] [--partitions 3]
        [--max-in-flight 1] [--network-threads 3] [--io-threads 8] [--offsets-partitions 50]
        [--replica-fetchers 1] [--clients confluent-kafka|kafka_lite|both] [--consumer CLIENT]
        [--count-requests]

Part a, throughput: confluent-kafka produces ``--records`` records (no key, a ``--value-bytes`` value)
to a topic with replication factor 1 with acks=1, and to a topic with replication factor 3 with
acks=all, in alternating order from round to round (``--rounds``), each time with a fresh producer
with ``bench_broker.py``'s settings (linger.ms=5, librdkafka's batch.size); it prints each round,
each one's median records/s, and acks=all's median as a share of acks=1's (goal: at least 50 %).
Beside the rates go the CPU seconds each broker process and the client process used in each
phase: three brokers and the client share the machine's cores, so a rate alone does not say who was
waiting for whom.

Part b, end-to-end latency, once with confluent-kafka's producer and consumer and once with
kafka_lite's (``--clients``): a producer with linger.ms=0 and acks=all sends to a
topic with replication factor 3 at ``--rate`` records/s for ``--seconds``, paced by Kafka's
``ThroughputThrottler`` (bursts of a few records, then a sleep of at least 2 ms, as
``kafka-producer-perf-test.sh --throughput`` does); each value starts with the record's sequence
number and its send time (``time.perf_counter_ns``, just before the send). A consumer of the same
client in a thread of the same process, assigned every partition from its end (the high
watermarks, read before anything is sent, so no record can slip past it), takes the time each record
arrives; a record is readable only once every replica in the ISR has it, so the latency includes
replication. It prints the count, median, 99th and 99.9th percentiles (Kafka's EndToEndLatency's rule:
the value at index ⌊n·q⌋ of the sorted latencies) and the maximum, in ms, beside the goals (median
≤ 5 ms, 99th percentile ≤ 20 ms), the records lost or duplicated, and the median of each fifth of
the run, which grows when the cluster falls behind the rate. Before the clock starts, one record to
each partition has gone all the way through, so connections and metadata are in place.

``--max-in-flight`` sets the producer's max.in.flight.requests.per.connection, 1 unless given.
A broker reads one request per connection at a time (the processor mutes the connection until the
answer has gone, as Kafka's does), so a request sent behind others waits in the socket for each of
them to go through a whole round of replication: with N in flight a record can wait N rounds
before its own begins. One in flight is the nearest a producer that holds a rate comes to
EndToEndLatency, which sends a record and waits for it; the records that arrive meanwhile go in the
next request together. With 5, the Java producer's default, the wait for the requests ahead shows;
librdkafka's own default (1,000,000) sends a request whenever records wait, and behind a cluster
slower than the rate the requests stay small and pile up, each waiting for the followers in turn.

The cluster is ``kafka-lite cluster up``'s: a ZooKeeper (``EmbeddedZooKeeper`` in its own process)
and three brokers, each a process of its own, on free loopback ports, stopped at the end whatever
happens. The brokers run with Kafka's defaults, except num.network.threads and num.io.threads, which
``cluster up`` lowers for a laptop and the benchmark puts back to Kafka's (3 and 8) unless
``--network-threads`` and ``--io-threads`` say otherwise: in CPython the threads of one broker take
turns holding the interpreter lock, so more of them add hand-offs rather than parallel work. Each
topic has three partitions, so that every broker leads one of each and follows the others: the load a
cluster of many partitions puts on every broker. ``--partitions 1`` gives part b's topic one
partition, the topic Kafka's EndToEndLatency measures (an auto-created topic at Kafka's default
num.partitions, and the one its later versions create): one broker leads it and the other two only
follow. Part b's cluster always has ``__consumer_offsets``, as EndToEndLatency's has (its consumer
is in a group), whichever client runs: librdkafka's consumer needs a group.id and makes the brokers
create the topic, and for kafka_lite's, assigned with no group, part b creates it the same way
first. ``--offsets-partitions N`` gives it N partitions instead of Kafka's 50: each follower's fetch
names every partition its leader leads, idle ones included, so this shows what those idle
partitions cost each round of replication. ``--replica-fetchers N`` sets num.replica.fetchers (Kafka's
default 1; the production configuration in Kafka 0.10's documentation has 4): a follower then fetches
from each leader with N threads, and each partition goes to one of them by a hash of its name (as
Kafka's ``AbstractFetcherManager.getFetcherId``), so the latency topic's partition shares its fetch
with only the idle partitions that hash alongside it; which, and how many, depends on the
leaders the cluster gave them. ``--consumer`` pairs the producer of ``--clients`` with the other
client's consumer, to tell which of the two sets the pace. ``--count-requests`` runs each broker's
request metrics reporter (``metric.reporters``, as ``cluster up`` does unless told not to) and, after
part b, reads its samples back: for each broker, the requests a second of each kind in the timed
stretch (the producer's Produce, a follower's Fetch, the consumer's Fetch, anything else, the
reporters' own requests among them) with their median times in purgatory and in all, and the records
each Produce carried; a Produce is a round of replication, so this is what the rounds cost each
leader. The broker logs are deleted
after a successful run and kept (their directory is printed) after a failure. Each part also counts the
brokers' "Shrinking ISR" and ERROR log lines: an ISR that shrank means acks=all waited for fewer
replicas. A new topic's first records, one with acks=all to each partition, go before any clock
starts (see ``create_topics``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import signal
import statistics
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench_broker import cpu_seconds, produce, produce_one, retained
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from headline import add_argument, figure, write

from kafka_lite.cli.cluster import start_cluster, stop_cluster, wait_healthy
from kafka_lite.common.time import SYSTEM
from kafka_lite.server.kafka_config import CONFIG_DEF
from kafka_lite.server.metrics_reporter import CLIENT_ID_PREFIX as REPORTER_CLIENT_PREFIX
from kafka_lite.server.metrics_reporter import REQUEST_METRICS_TOPIC
from kafka_lite.server.replica_fetcher_manager import fetcher_id
from kafka_lite.tools.throughput_throttler import ThroughputThrottler
from kafka_lite.utils.ports import free_port, port_free

BROKERS = 3
PARTITIONS = [0, 1, 2]
# The two phases of part a: (label, topic, replication factor, acks).
PHASES = [("RF 1, acks=1", "bench-rf1", 1, "1"), ("RF 3, acks=all", "bench-rf3", 3, "all")]
LATENCY_TOPIC = "bench-latency"
THROUGHPUT_GOAL = 0.5
MEDIAN_GOAL_MS, P99_GOAL_MS = 5, 20
# A latency record's value starts with its sequence number and its send time; warm-up records have
# sequence number WARM_UP.
STAMP = struct.Struct(">qq")
WARM_UP = -1
OFFSETS_TOPIC = "__consumer_offsets"
DEADLINE_S = 60
MESSAGE_TIMEOUT_S = 300  # librdkafka's default message.timeout.ms


# -- the cluster ---------------------------------------------------------------------------------------


def base_port() -> int:
    """A port with the next BROKERS - 1 free as well (broker N listens on base + N)."""
    while True:
        base = free_port()
        if base < 65000 and all(port_free(base + i) for i in range(BROKERS)):
            return base


@contextmanager
def cluster(
    directory: Path,
    offsets_partitions: int,
    network_threads: int,
    io_threads: int,
    replica_fetchers: int,
    metrics_reporter: bool = False,
) -> Iterator[dict]:
    """ZooKeeper and three brokers as processes, healthy; all stopped on the way out, whatever happens."""
    overrides = [
        f"num.network.threads={network_threads}",
        f"num.io.threads={io_threads}",
        f"offsets.topic.num.partitions={offsets_partitions}",
        f"num.replica.fetchers={replica_fetchers}",
    ]
    state = start_cluster(
        directory, BROKERS, free_port(), base_port(), overrides, metrics_reporter=metrics_reporter
    )
    try:
        wait_healthy(state)
        yield state
    finally:
        stop_cluster(state)


def bootstrap_of(state: dict) -> str:
    return ",".join(f"127.0.0.1:{b['port']}" for b in state["brokers"])


def create_topics(
    bootstrap: str, topics: dict[str, int], partitions: list[int] = PARTITIONS
) -> dict[str, list[int]]:
    """Create each topic with its replication factor, wait until every partition has a leader and the
    whole ISR, and send one record with acks=all through each partition; returns each topic's leaders
    by partition.

    The ISR is whole from the start (the controller puts every replica in it), but a follower whose
    first fetch reached its leader before the leader knew the partition waits replica.fetch.backoff.ms
    (1 s) before asking again, as in Kafka: the records with acks=all wait that out before any clock
    starts."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = [NewTopic(t, len(partitions), rf) for t, rf in topics.items()]
    for future in admin.create_topics(new, operation_timeout=DEADLINE_S).values():
        future.result(DEADLINE_S)
    deadline = time.monotonic() + DEADLINE_S
    while True:
        metadata = admin.list_topics(timeout=10).topics
        ready = all(
            t in metadata
            and len(metadata[t].partitions) == len(partitions)
            and all(p.leader >= 0 and len(p.isrs) == rf for p in metadata[t].partitions.values())
            for t, rf in topics.items()
        )
        if ready:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the topics {sorted(topics)} had no leaders or full ISRs after {DEADLINE_S} s"
            )
        time.sleep(0.1)  # polling metadata until the controller has propagated it; bounded by the deadline
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    failures = DeliveryFailures()
    for t in topics:
        for p in partitions:
            producer.produce(t, STAMP.pack(WARM_UP, 0), partition=p, on_delivery=failures)
    if producer.flush(DEADLINE_S) or failures:
        raise RuntimeError(f"the first records to {sorted(topics)} were not acknowledged: {failures[:1]}")
    return {t: [metadata[t].partitions[p].leader for p in partitions] for t in topics}


def latency_group_consumer(bootstrap: str) -> Consumer:
    """librdkafka's consumer as part b uses it: a group.id (librdkafka requires one), nothing committed."""
    return Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench-latency", "enable.auto.commit": False}
    )


def fetch_companions(bootstrap: str, topic: str, partitions: list[int], replica_fetchers: int) -> list[int]:
    """For each partition of ``topic``, how many other partitions ride in the fetches that carry it.

    A follower fetches from each leader with num.replica.fetchers threads, each partition going to one
    of them by ``fetcher_id`` (Kafka's ``getFetcherId``): so every fetch a follower sends for the
    partition also names each other partition that the same broker leads, that the follower
    replicates, and that has the same fetcher id, idle or not. The largest count over the partition's
    followers."""
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics
    everything = [(t, p, m) for t, tm in metadata.items() for p, m in tm.partitions.items()]
    counts = []
    for p in partitions:
        mine, fetch = metadata[topic].partitions[p], fetcher_id(topic, p, replica_fetchers)
        # the partitions its leader would put in the same fetch, for a follower that replicates them
        alongside = [
            m
            for t, q, m in everything
            if (t, q) != (topic, p)
            and m.leader == mine.leader
            and fetcher_id(t, q, replica_fetchers) == fetch
        ]
        followers = [r for r in mine.replicas if r != mine.leader]
        counts.append(max((sum(f in m.replicas for m in alongside) for f in followers), default=0))
    return counts


def wait_for_offsets_topic(bootstrap: str) -> None:
    """Wait until every partition of ``__consumer_offsets`` has a leader that answers for it.

    A consumer with a group.id makes the brokers create the topic (librdkafka's looks up its group's
    coordinator at once, even for a consumer that only assigns itself partitions), fifty partitions
    of three replicas at Kafka's defaults, and the controller then takes most of a second to put them
    online before each broker creates its logs and starts their fetchers: a stall the measurement
    must not include. A leader answers ListOffsets for a partition only once it has taken the
    LeaderAndIsr that made it leader, and a broker takes its leader and follower partitions from the
    same request."""
    consumer = latency_group_consumer(bootstrap)
    try:
        deadline = time.monotonic() + DEADLINE_S
        partitions: list[int] = []
        while not partitions:  # the topic appears in the metadata once the controller has created it
            topic = consumer.list_topics(timeout=10).topics.get(OFFSETS_TOPIC)
            if (
                topic is not None
                and topic.partitions
                and all(p.leader >= 0 for p in topic.partitions.values())
            ):
                partitions = sorted(topic.partitions)
            elif time.monotonic() > deadline:
                raise RuntimeError(f"{OFFSETS_TOPIC} had no leaders after {DEADLINE_S} s")
            else:
                time.sleep(0.1)  # the controller is still creating it; bounded by the deadline
        for p in partitions:
            while True:
                try:
                    consumer.get_watermark_offsets(TopicPartition(OFFSETS_TOPIC, p), timeout=10)
                    break
                except KafkaException:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)  # the leader has not yet taken its LeaderAndIsr; bounded by the deadline
    finally:
        consumer.close()


def broker_cpu(state: dict) -> list[float]:
    return [cpu_seconds(b["pid"]) for b in state["brokers"]]


# What the brokers' logs tell about a part: an ISR that shrank means acks=all waited for fewer replicas.
LOG_SIGNS = {"ISR shrinks": "Shrinking ISR", "ERROR lines": "] ERROR "}


def log_signs(state: dict) -> dict[str, int]:
    """How many lines of the brokers' logs so far carry each of LOG_SIGNS."""
    counts = dict.fromkeys(LOG_SIGNS, 0)
    for b in state["brokers"]:
        with open(Path(state["dir"]) / "logs" / f"broker-{b['id']}.log", errors="replace") as f:
            for line in f:
                for name, sign in LOG_SIGNS.items():
                    counts[name] += sign in line
    return counts


def signs_text(before: dict[str, int], after: dict[str, int]) -> str:
    return ", ".join(f"{name} {after[name] - before[name]}" for name in LOG_SIGNS)


class DeliveryFailures(list):
    """A producer's ``on_delivery`` callback that keeps the failures."""

    def __call__(self, err, msg) -> None:
        if err is not None:
            self.append(f"{msg.topic()}-{msg.partition()}: {err}")


class Phase:
    """Each broker's and this process's CPU seconds over one stretch of the benchmark."""

    def __init__(self, state: dict) -> None:
        self.state = state

    def __enter__(self) -> Phase:
        self.brokers_start, self.client_start = broker_cpu(self.state), time.process_time()
        self.start_ms = time.time() * 1000
        return self

    def __exit__(self, *exc) -> None:
        self.brokers = [end - start for start, end in zip(self.brokers_start, broker_cpu(self.state))]
        self.client = time.process_time() - self.client_start
        self.end_ms = time.time() * 1000

    def cpu(self) -> list[float]:
        """Broker 0, 1, 2, then the client."""
        return [*self.brokers, self.client]


def table_row(label: str, rate: str, cpu: list[str]) -> str:
    """One line of the report's tables: what, records/s, then CPU seconds of broker 0, 1, 2 and the client."""
    return f"{label:24}{rate:>12}" + "".join(f"{c:>10}" for c in cpu)


def table_header(label: str = "") -> str:
    return table_row(label, "records/s", [*(f"broker {i}" for i in range(BROKERS)), "client"]) + "  (CPU s)"


def figures(rate: float, cpu: list[float]) -> tuple[str, list[str]]:
    return f"{rate:,.0f}", [f"{c:.2f}" for c in cpu]


# -- part a: throughput --------------------------------------------------------------------------------


def part_a(state: dict, records: int, value: bytes, rounds: int) -> dict:
    bootstrap = bootstrap_of(state)
    leaders = create_topics(bootstrap, {topic: rf for _, topic, rf, _ in PHASES})
    results: dict[str, dict[str, list]] = {label: {"rate": [], "cpu": []} for label, *_ in PHASES}
    failures = DeliveryFailures()
    print(table_header())
    for r in range(rounds):
        for label, topic, _, acks in PHASES if r % 2 == 0 else PHASES[::-1]:
            extra = {"acks": acks, "on_delivery": failures, "delivery.report.only.error": True}
            with Phase(state) as phase:
                rate = produce(bootstrap, records, value, extra, topic)[0]  # the producer goes at once
            if failures:
                raise RuntimeError(f"{len(failures)} records were not delivered, the first: {failures[0]}")
            results[label]["rate"].append(rate)
            results[label]["cpu"].append(phase.cpu())
            print(table_row(f"round {r + 1}, {label}", *figures(rate, phase.cpu())))
    for _, topic, _, _ in PHASES:
        held, sent = retained(bootstrap, PARTITIONS, topic), records * rounds + len(PARTITIONS)
        if held != sent:
            raise RuntimeError(f"{topic} holds {held} records below its high watermarks, not the {sent} sent")
    return {"results": results, "leaders": leaders}


def report_a(a: dict, records: int, value_bytes: int, rounds: int) -> None:
    results = a["results"]
    print(
        f"\nPart a: {records} records of {value_bytes} bytes, confluent-kafka (linger.ms=5), "
        f"{len(PARTITIONS)} partitions on {BROKERS} brokers, rounds: {rounds}"
    )
    for _, topic, _, _ in PHASES:
        print(f"  leaders of {topic} by partition: {a['leaders'][topic]}")
    print(table_header("median"))
    medians = {}
    for label, *_ in PHASES:
        medians[label] = statistics.median(results[label]["rate"])
        cpu = [statistics.median(c[i] for c in results[label]["cpu"]) for i in range(BROKERS + 1)]
        print(table_row(label, *figures(medians[label], cpu)))
    (base, *_), (replicated, *_) = PHASES
    ratio = medians[replicated] / medians[base]
    print(f"{replicated} / {base}: {ratio:.0%} (goal: at least {THROUGHPUT_GOAL:.0%})")
    print(f"in the brokers' logs: {a['log signs']}")


# -- part b: end-to-end latency ------------------------------------------------------------------------


class LatencyConsumer(threading.Thread):
    """Reads the latency topic from its end and notes, for every record, its sequence number and the
    nanoseconds from its send time (in its value) to its arrival here. Each client's consumer is a
    subclass: ``next_values()`` hands over the values that have arrived, as soon as there is one (an
    empty list when none came within its poll's timeout)."""

    def __init__(self) -> None:
        super().__init__(name="latency-consumer", daemon=True)
        self.sequences: list[int] = []  # in arrival order, duplicates included
        self.distinct: set[int] = set()
        self.latencies_ns: list[int] = []
        self.warm_up = 0
        self.errors: list[str] = []
        self.arrived = threading.Condition()
        self.stopping = threading.Event()

    def next_values(self) -> list[bytes]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                values = self.next_values()
                now = time.perf_counter_ns()
                with self.arrived:
                    for value in values:
                        sequence, sent_ns = STAMP.unpack_from(value)
                        if sequence == WARM_UP:
                            self.warm_up += 1
                        else:
                            self.sequences.append(sequence)
                            self.distinct.add(sequence)
                            self.latencies_ns.append(now - sent_ns)
                    if values:
                        self.arrived.notify_all()
        except Exception as e:
            with self.arrived:
                self.errors.append(repr(e))
                self.arrived.notify_all()
        finally:
            self.close()

    def wait_for(self, predicate) -> bool:
        """Wait until ``predicate()`` holds of what has arrived, or DEADLINE_S passes: whether it holds."""
        with self.arrived:
            return self.arrived.wait_for(predicate, DEADLINE_S)


class ConfluentLatencyConsumer(LatencyConsumer):
    def __init__(self, bootstrap: str, topic: str, partitions: list[int]) -> None:
        super().__init__()
        self.topic = topic
        self.consumer = latency_group_consumer(bootstrap)
        # the topic's metadata first: librdkafka answers "Unknown partition" for a topic it has not met
        self.consumer.list_topics(self.topic, timeout=10)
        ends = [
            self.consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout=10)[1]
            for p in partitions
        ]
        self.consumer.assign([TopicPartition(self.topic, p, end) for p, end in zip(partitions, ends)])

    def next_values(self) -> list[bytes]:
        # poll hands over each record as soon as it is there (consume(n, timeout) would hold the
        # first until n have come or the timeout has passed)
        message = self.consumer.poll(0.05)
        if message is None:
            return []
        if message.error() is not None:
            raise RuntimeError(str(message.error()))
        return [message.value()]

    def close(self) -> None:
        self.consumer.close()


class KafkaLiteLatencyConsumer(LatencyConsumer):
    """Assigned with no group.id, so it never meets a coordinator and never has the brokers create
    ``__consumer_offsets``: ``part_b`` creates it first."""

    def __init__(self, bootstrap: str, topic: str, partitions: list[int]) -> None:
        from kafka_lite import KafkaConsumer

        super().__init__()
        self.topic = topic
        self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        tps = [(self.topic, p) for p in partitions]
        self.consumer.assign(tps)
        self.consumer.seek_to_end()
        for tp in tps:  # the end offsets now, before anything is sent
            self.consumer.position(tp)

    def next_values(self) -> list[bytes]:
        return [r.value for records in self.consumer.poll(timeout_ms=50).values() for r in records]

    def close(self) -> None:
        self.consumer.close()


class ConfluentLatencyProducer:
    def __init__(self, bootstrap: str, topic: str, settings: dict) -> None:
        self.topic = topic
        self.failures = DeliveryFailures()
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                **settings,
                "on_delivery": self.failures,
                "delivery.report.only.error": True,
            }
        )

    def send(self, value: bytes, partition: int | None = None) -> None:
        produce_one(self.producer, self.topic, value, partition)
        self.producer.poll(0)

    def flush(self, timeout: float) -> int:
        """Wait up to ``timeout`` seconds: how many records are still unacknowledged."""
        return self.producer.flush(timeout)


class KafkaLiteLatencyProducer:
    def __init__(self, bootstrap: str, topic: str, settings: dict) -> None:
        from kafka_lite import KafkaProducer

        self.topic = topic
        self.failures: list[BaseException] = []
        self.producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            acks=settings["acks"],
            linger_ms=settings["linger.ms"],
            max_in_flight_requests_per_connection=settings["max.in.flight.requests.per.connection"],
        )
        self.pending = 0
        self.lock = threading.Lock()

    def _done(self, _) -> None:
        with self.lock:
            self.pending -= 1

    def _failed(self, e: BaseException) -> None:
        with self.lock:
            self.pending -= 1
            self.failures.append(e)

    def send(self, value: bytes, partition: int | None = None) -> None:
        with self.lock:
            self.pending += 1
        self.producer.send(self.topic, value, partition=partition).add_callback(self._done).add_errback(
            self._failed
        )

    def flush(self, timeout: float) -> int:
        self.producer.flush(timeout)
        with self.lock:
            return self.pending


CLIENT_PAIRS = {
    "confluent-kafka": (ConfluentLatencyProducer, ConfluentLatencyConsumer),
    "kafka_lite": (KafkaLiteLatencyProducer, KafkaLiteLatencyConsumer),
}


def percentile(ordered: list[int], q: float) -> int:
    """Kafka's EndToEndLatency's rule: the value at index ⌊n·q⌋ of the sorted list."""
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def medians_by_fifth(sequences: list[int], latencies_ns: list[int], total: int) -> list[float]:
    """The median latency, in ms, of the records sent in each fifth of the run: steady if the cluster
    keeps up with the rate, growing if records queue up."""
    fifths: list[list[int]] = [[] for _ in range(5)]
    for sequence, latency in zip(sequences, latencies_ns):
        fifths[sequence * 5 // total].append(latency)
    return [statistics.median(f) / 1e6 if f else float("nan") for f in fifths]


def part_b(
    state: dict,
    rate: int,
    seconds: float,
    value_bytes: int,
    max_in_flight: int,
    client: str,
    partitions: list[int],
    consumer_client: str | None = None,
    replica_fetchers: int = 1,
) -> dict:
    """``client``'s producer and, unless ``consumer_client`` names the other, its consumer."""
    consumer_client = consumer_client or client
    label = client if consumer_client == client else f"{client}'s producer, {consumer_client}'s consumer"
    bootstrap = bootstrap_of(state)
    topic = f"{LATENCY_TOPIC}-{client}" + (f"-{consumer_client}" if consumer_client != client else "")
    create_topics(bootstrap, {topic: 3}, partitions)
    settings: dict = {"acks": "all", "linger.ms": 0, "max.in.flight.requests.per.connection": max_in_flight}
    producer_class, consumer_class = CLIENT_PAIRS[client][0], CLIENT_PAIRS[consumer_client][1]
    producer = producer_class(bootstrap, topic, settings)
    failures = producer.failures
    padding = bytes(value_bytes - STAMP.size)
    # Kafka's EndToEndLatency consumes in a group, so its cluster has __consumer_offsets, and every
    # follower's fetch names the idle partitions its leader leads there. librdkafka's consumer makes
    # the brokers create the topic (it requires a group.id); kafka_lite's, assigned with none, would
    # not. Created either way, before the consumer starts, so that both clients measure one cluster.
    wait_for_offsets_topic(bootstrap)
    consumer = consumer_class(bootstrap, topic, partitions)
    consumer.start()
    try:
        for p in partitions:  # one record through each partition before the clock starts
            producer.send(STAMP.pack(WARM_UP, time.perf_counter_ns()) + padding, partition=p)
        producer.flush(DEADLINE_S)
        if not consumer.wait_for(lambda: consumer.warm_up == len(partitions) or consumer.errors):
            raise RuntimeError(
                f"the consumer did not receive the warm-up records within {DEADLINE_S} s {consumer.errors[:1]}"
            )
        companions = fetch_companions(bootstrap, topic, partitions, replica_fetchers)
        total = int(rate * seconds)
        with Phase(state) as phase:
            # The throttler counts whole milliseconds and lets everything through while none has passed
            # since its start: started 1 ms back, it holds the rate from the first record, instead of
            # opening the run with a millisecond's burst of as many records as the loop can send.
            throttler = ThroughputThrottler(rate, SYSTEM.hi_res_clock_ms() - 1)
            start = time.perf_counter()
            for i in range(total):
                send_start_ms = SYSTEM.hi_res_clock_ms()
                producer.send(STAMP.pack(i, time.perf_counter_ns()) + padding)
                if throttler.should_throttle(i, send_start_ms):
                    throttler.throttle()
            sent_in = time.perf_counter() - start
            # A cluster that falls behind the rate takes its time to catch up; librdkafka fails a record
            # that is not acknowledged within message.timeout.ms (300 s by default), so this ends. A
            # second at a time, so that a signal (Ctrl-C) is handled meanwhile.
            deadline = time.monotonic() + MESSAGE_TIMEOUT_S + DEADLINE_S
            while (remaining := producer.flush(1)) and time.monotonic() < deadline:
                pass
            # then what is lost stays lost (counted below)
            consumer.wait_for(lambda: len(consumer.distinct) >= total - len(failures) or consumer.errors)
    finally:
        consumer.stopping.set()
        consumer.join(DEADLINE_S)
    if remaining or failures or consumer.errors:
        raise RuntimeError(
            f"{remaining} records still unacknowledged after {MESSAGE_TIMEOUT_S + DEADLINE_S} s, "
            f"{len(failures)} failed (the first: {failures[:1]}), consumer errors: {consumer.errors[:3]}"
        )
    distinct = len(consumer.distinct)
    return {
        "client": label,
        "partitions": len(partitions),
        "companions": companions,
        "producer": ", ".join(f"{k}={v}" for k, v in settings.items()),
        "sent": total,
        "send_rate": total / sent_in,
        "latencies_ms": sorted(ns / 1e6 for ns in consumer.latencies_ns),
        "fifths_ms": medians_by_fifth(consumer.sequences, consumer.latencies_ns, total),
        "lost": total - distinct,
        "duplicates": len(consumer.sequences) - distinct,
        "cpu": phase.cpu(),
        "window_ms": (phase.start_ms, phase.end_ms),
    }


# -- the requests of a round ---------------------------------------------------------------------------

# What each broker's request metrics reporter names a request by: the API, and who sent it.
KINDS = ("the producer's Produce", "a follower's Fetch", "the consumer's Fetch", "anything else")


def kind_of(sample: dict) -> str:
    client = sample["client_id"]
    if sample["api"] == "Produce" and not client.startswith(REPORTER_CLIENT_PREFIX):
        return KINDS[0]
    if sample["api"] == "Fetch":
        return KINDS[1] if client.startswith("replica-fetcher-") else KINDS[2]
    return KINDS[3]  # the reporters' own Produce, Metadata, OffsetCommit, heartbeats


def request_samples(bootstrap: str) -> list[dict]:
    """Every sample in the reporters' topic so far, read from the beginning to each partition's end."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-request-counts",
                         "enable.auto.commit": False})  # fmt: skip
    try:
        metadata = consumer.list_topics(REQUEST_METRICS_TOPIC, timeout=DEADLINE_S)
        partitions = [TopicPartition(REQUEST_METRICS_TOPIC, p, OFFSET_BEGINNING)
                      for p in metadata.topics[REQUEST_METRICS_TOPIC].partitions]  # fmt: skip
        ends = {tp.partition: consumer.get_watermark_offsets(tp, timeout=DEADLINE_S)[1] for tp in partitions}
        consumer.assign(partitions)
        positions = dict.fromkeys(ends, 0)
        samples, deadline = [], time.monotonic() + DEADLINE_S
        while any(positions[p] < ends[p] for p in ends) and time.monotonic() < deadline:
            for message in consumer.consume(10_000, timeout=1):
                if message.error() is None:
                    samples.append(json.loads(message.value()))
                    positions[message.partition()] = message.offset() + 1
        return samples
    finally:
        consumer.close()


def reported_past(bootstrap: str, end_ms: float) -> list[dict]:
    """The samples once every broker's reporter has sent one of a request completed after ``end_ms``
    (each sends what it holds every second), so that none of the stretch before it is still held."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        samples = request_samples(bootstrap)
        if len({s["broker_id"] for s in samples if s["time_ms"] > end_ms}) == BROKERS:
            return samples
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the brokers' reporters sent nothing past the run's end within {DEADLINE_S} s"
            )


def request_counts(samples: list[dict], b: dict) -> dict:
    """Part b's timed stretch, request by request: per broker and kind, how many a second, and the
    median of each's time in purgatory (remote) and in all (total), in ms."""
    start_ms, end_ms = b["window_ms"]
    seconds = (end_ms - start_ms) / 1000
    by: dict[tuple[int, str], list[dict]] = {}
    for sample in samples:
        if start_ms <= sample["time_ms"] <= end_ms:
            by.setdefault((sample["broker_id"], kind_of(sample)), []).append(sample)
    rows = {}
    for (broker, kind), found in sorted(by.items(), key=lambda item: (item[0][0], KINDS.index(item[0][1]))):
        rows[(broker, kind)] = {
            "per_s": len(found) / seconds,
            "remote_ms": statistics.median(s["remote_time_ms"] for s in found),
            "total_ms": statistics.median(s["total_time_ms"] for s in found),
        }
    produces = sum(len(v) for (_, kind), v in by.items() if kind == KINDS[0])
    return {"rows": rows, "seconds": seconds, "records_per_produce": b["sent"] / produces if produces else 0}


def report_counts(counts: dict, b: dict) -> None:
    print(
        f"\nrequests a second at each broker during {b['client']}'s {counts['seconds']:.1f} s, from the brokers' "
        "request metrics reporters (median ms in purgatory / in all):"
    )
    for (broker, kind), row in counts["rows"].items():
        print(
            f"  broker {broker}  {kind:<24} {row['per_s']:8.1f}/s   {row['remote_ms']:6.2f} / {row['total_ms']:6.2f}"
        )
    print(f"records per Produce request (a round each): {counts['records_per_produce']:.1f}")


def report_b(b: dict, rate: int, seconds: float, value_bytes: int) -> None:
    ms = b["latencies_ms"]
    partitions = f"{b['partitions']} partition{'s' if b['partitions'] != 1 else ''}"
    print(
        f"\nPart b: end to end, RF 3, {partitions}, {b['client']} (producer {b['producer']}, consumer defaults), "
        f"{value_bytes}-byte values at {rate:,} records/s for {seconds:g} s"
    )
    print(table_header())
    print(table_row(f"sent {b['sent']}", *figures(b["send_rate"], b["cpu"])))
    print(f"received {len(ms)} (lost {b['lost']}, duplicated {b['duplicates']})")
    if ms:
        print(
            f"latency ms: median {statistics.median(ms):.1f} (goal <= {MEDIAN_GOAL_MS}), "
            f"p99 {percentile(ms, 0.99):.1f} (goal <= {P99_GOAL_MS}), p99.9 {percentile(ms, 0.999):.1f}, "
            f"max {ms[-1]:.1f}"
        )
        print(
            "median latency ms of the records sent in each fifth of the run: "
            + "  ".join(f"{m:.1f}" for m in b["fifths_ms"])
        )
    print(
        "other partitions in each follower fetch that carries a partition of the topic "
        f"(num.replica.fetchers decides): {', '.join(map(str, b['companions']))}"
    )
    print(f"in the brokers' logs: {b['log signs']}")


# -- main ----------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=["a", "b", "both"], default="both", help="throughput, latency, or both"
    )
    parser.add_argument("--records", type=int, default=1_000_000, help="part a: records per phase and round")
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="part a: rounds of both phases")
    parser.add_argument("--seconds", type=float, default=10, help="part b: how long to send")
    parser.add_argument("--rate", type=int, default=10_000, help="part b: records per second")
    parser.add_argument(
        "--partitions",
        type=int,
        default=len(PARTITIONS),
        metavar="N",
        help="part b: the latency topic's partitions (1 is EndToEndLatency's own topic)",
    )
    parser.add_argument(
        "--clients",
        choices=[*CLIENT_PAIRS, "both"],
        default="both",
        help="part b: whose producer and consumer (confluent-kafka's, kafka_lite's, or each in turn)",
    )
    parser.add_argument(
        "--consumer",
        choices=list(CLIENT_PAIRS),
        help="part b: this client's consumer instead of the producer's own",
    )
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=1,
        metavar="N",
        help="part b: the producer's max.in.flight.requests.per.connection",
    )
    for flag, name in (
        ("--network-threads", "num.network.threads"),
        ("--io-threads", "num.io.threads"),
        ("--offsets-partitions", "offsets.topic.num.partitions"),
        ("--replica-fetchers", "num.replica.fetchers"),
    ):
        parser.add_argument(
            flag,
            type=int,
            default=CONFIG_DEF.keys[name].default,
            metavar="N",
            help=f"the brokers' {name} (default: Kafka's)",
        )
    parser.add_argument(
        "--count-requests",
        action="store_true",
        help="part b: the brokers run their request metrics reporters, and each run's requests are "
        "counted by broker and kind (the reporters' own requests add a little load)",
    )
    add_argument(parser)
    args = parser.parse_args()
    for name in (
        "records",
        "rounds",
        "seconds",
        "rate",
        "partitions",
        "max_in_flight",
        "network_threads",
        "io_threads",
        "offsets_partitions",
        "replica_fetchers",
    ):
        if getattr(args, name) is not None and getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, not {getattr(args, name)}")
    if args.part != "a" and args.value_bytes < STAMP.size:
        parser.error(
            f"--value-bytes must be at least {STAMP.size} for part b (its sequence number and send time), "
            f"not {args.value_bytes}"
        )
    if args.value_bytes < 0:
        parser.error(f"--value-bytes must not be negative, not {args.value_bytes}")
    # As the kafka-lite command does: waiting for the cluster, kafka_lite's admin client meets brokers
    # that still refuse connections, and Python's last-resort handler would print each warning.
    logging.getLogger("kafka_lite").addHandler(logging.NullHandler())
    # SIGTERM as Ctrl-C: an exception, so that the cluster is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(f"stopped by signal {signum}"))
    directory = Path(tempfile.mkdtemp(prefix="kafka-lite-bench-replication-"))
    a = None
    bs: list[dict] = []
    clients = list(CLIENT_PAIRS) if args.clients == "both" else [args.clients]
    try:
        with cluster(
            directory,
            args.offsets_partitions,
            args.network_threads,
            args.io_threads,
            args.replica_fetchers,
            args.count_requests,
        ) as state:
            if args.part in ("a", "both"):
                before = log_signs(state)
                a = part_a(state, args.records, os.urandom(args.value_bytes), args.rounds)
                a["log signs"] = signs_text(before, log_signs(state))
            if args.part in ("b", "both"):
                for client in clients:
                    before = log_signs(state)
                    b = part_b(
                        state,
                        args.rate,
                        args.seconds,
                        args.value_bytes,
                        args.max_in_flight,
                        client,
                        list(range(args.partitions)),
                        args.consumer,
                        args.replica_fetchers,
                    )
                    b["log signs"] = signs_text(before, log_signs(state))
                    bs.append(b)
                if args.count_requests:
                    samples = reported_past(bootstrap_of(state), bs[-1]["window_ms"][1])
                    for b in bs:
                        b["counts"] = request_counts(samples, b)
    except BaseException:
        print(f"the cluster's logs are kept in {directory / 'logs'}")
        raise
    if a is not None:
        report_a(a, args.records, args.value_bytes, args.rounds)
    for b in bs:
        report_b(b, args.rate, args.seconds, args.value_bytes)
        if "counts" in b:
            report_counts(b["counts"], b)
    lost = sum(b["lost"] for b in bs)
    if lost:
        print(f"the cluster's logs are kept in {directory / 'logs'}")
        raise SystemExit(f"{lost} acknowledged records never reached the consumer")
    shutil.rmtree(directory)
    write(args.json, "bench_replication", headline_figures(a, bs, args.rounds))


def headline_figures(a: dict | None, bs: list[dict], rounds: int) -> list[dict]:
    figures = []
    if a is not None:
        (base, *_), (replicated, *_) = PHASES
        rates = {label: statistics.median(a["results"][label]["rate"]) for label in (base, replicated)}
        figures.append(
            figure(
                f"replication, {replicated} against {base}",
                rates[replicated] / rates[base],
                "%",
                at_least=THROUGHPUT_GOAL,
                detail=f"{rates[replicated]:,.0f} against {rates[base]:,.0f} records/s, median of {rounds} rounds",
            )
        )
    for b in bs:
        ms = b["latencies_ms"]
        if not ms:
            continue
        where = f"{b['partitions']} partition{'s' if b['partitions'] != 1 else ''}"
        for name, value, goal in (
            ("median", statistics.median(ms), MEDIAN_GOAL_MS),
            ("p99", percentile(ms, 0.99), P99_GOAL_MS),
        ):
            figures.append(
                figure(
                    f"produce to consume, RF 3, acks=all, {b['client']}, {name} latency",
                    value,
                    "ms",
                    at_most=goal,
                    detail=f"{len(ms):,} records over {where}",
                )
            )
    return figures


if __name__ == "__main__":
    main()
