"""Consumer benchmark: kafka_lite's consumer against kafka-python's and aiokafka's, with confluent-kafka
(librdkafka, a C library) as the ceiling, all reading the same topic from one kafka_lite broker in the
same run; then the time a group of ten consumers takes to rebalance after one leaves, under kafka_lite's
consumer and under kafka-python's.

No Kafka twin: modelled on kafka-consumer-perf-test.sh.

    .venv/bin/python benchmarks/bench_consumer.py [--records 200000] [--value-bytes 100] [--rounds 3]

Throughput: the topic (four partitions) is filled once with ``--records`` records of
``--value-bytes`` bytes; every consumer then reads all of them from the beginning, with partitions
assigned (no group, so no commit or rebalance is timed), fetches of up to 50 MiB (1 MiB per
partition), at most 10,000 records a poll. The clock starts at the first record and stops at the
last: connecting and the first metadata are not throughput. Each consumer runs in a process of its
own, started afresh for every measurement; the clients take turns in every round, in an order that
rotates, and the table shows each one's median and kafka_lite's ratio to it.

Rebalance: ten consumers of one group share a topic of twenty partitions, each polling in a thread
of one process (session.timeout.ms 10 s, heartbeat.interval.ms 1 s, for both clients). Once the group
is stable, one consumer closes (it sends LeaveGroup); the rebalance time is from the close until
the last of the other nine has its new partitions (its rebalance listener's ``on_partitions_assigned``).
The others learn of the rebalance from a heartbeat's REBALANCE_IN_PROGRESS, so the heartbeat interval
bounds what either client can do.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_broker import PARTITIONS, TOPIC, consume, print_client_rates, produce, start_broker, stop
from headline import add_argument, figure, write

from kafka_lite.zk.embedded import EmbeddedZooKeeper

BOOTSTRAP = "127.0.0.1:19092"  # where bench_broker.start_broker listens
CLIENTS = ("kafka_lite", "kafka-python", "aiokafka", "confluent-kafka")
FETCH = {"fetch_max_bytes": 52428800, "max_partition_fetch_bytes": 1048576}
MAX_RECORDS = 10_000
GROUP_SIZE = 10
GROUP_TOPIC = "bench-group"
GROUP_PARTITIONS = 20
GROUP_TIMEOUTS = {"session_timeout_ms": 10_000, "heartbeat_interval_ms": 1_000}


# -- one client's run (in its own process) -------------------------------------------------------------


def run_kafka_lite(records: int) -> float:
    from kafka_lite import KafkaConsumer

    # kafka_lite's TopicPartition is a plain (topic, partition) tuple
    return _run_polling(KafkaConsumer, lambda topic, partition: (topic, partition), records)


def run_kafka_python(records: int) -> float:
    from kafka import KafkaConsumer, TopicPartition

    return _run_polling(KafkaConsumer, TopicPartition, records)


def _run_polling(consumer_class, partition_class, records: int) -> float:
    """A consumer with kafka-python's API (kafka_lite's has the same): poll until every record is in."""
    consumer = consumer_class(bootstrap_servers=BOOTSTRAP, enable_auto_commit=False, **FETCH)
    consumer.assign([partition_class(TOPIC, p) for p in PARTITIONS])
    consumer.seek_to_beginning()
    count, start = 0, None
    deadline = time.perf_counter() + 300
    while count < records and time.perf_counter() < deadline:
        for batch in consumer.poll(timeout_ms=1000, max_records=MAX_RECORDS).values():
            if start is None:
                start = time.perf_counter()
            count += len(batch)
    elapsed = time.perf_counter() - (start or 0)
    consumer.close()
    if count < records:
        raise RuntimeError(f"consumed {count} of {records} records")
    return records / elapsed


def run_aiokafka(records: int) -> float:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> float:
        consumer = AIOKafkaConsumer(bootstrap_servers=BOOTSTRAP, enable_auto_commit=False, **FETCH)
        await consumer.start()
        try:
            consumer.assign([TopicPartition(TOPIC, p) for p in PARTITIONS])
            await consumer.seek_to_beginning()
            count, start = 0, None
            deadline = time.perf_counter() + 300
            while count < records and time.perf_counter() < deadline:
                for batch in (await consumer.getmany(timeout_ms=1000, max_records=MAX_RECORDS)).values():
                    if start is None:
                        start = time.perf_counter()
                    count += len(batch)
            if count < records:
                raise RuntimeError(f"consumed {count} of {records} records")
            return records / (time.perf_counter() - start)
        finally:
            await consumer.stop()

    return asyncio.run(run())


def run_confluent_kafka(records: int) -> float:
    return consume(BOOTSTRAP, records, PARTITIONS)


RUNNERS = {
    "kafka_lite": run_kafka_lite,
    "kafka-python": run_kafka_python,
    "aiokafka": run_aiokafka,
    "confluent-kafka": run_confluent_kafka,
}


# -- a group's rebalance (in its own process) ----------------------------------------------------------


def rebalance_kafka_lite() -> float:
    from kafka_lite import KafkaConsumer
    from kafka_lite.consumer.consumer_rebalance_listener import ConsumerRebalanceListener

    return _rebalance(KafkaConsumer, ConsumerRebalanceListener)


def rebalance_kafka_python() -> float:
    from kafka import KafkaConsumer
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    return _rebalance(KafkaConsumer, ConsumerRebalanceListener)


def _rebalance(consumer_class, listener_class) -> float:
    """Seconds from one member's close until every other member has its new assignment."""
    group = f"bench-rebalance-{os.getpid()}"
    assigned_at: list[float] = [0.0] * GROUP_SIZE
    assignments: list[set] = [set() for _ in range(GROUP_SIZE)]
    stopping = [False] * GROUP_SIZE

    class Listener(listener_class):
        def __init__(self, i: int) -> None:
            self.i = i

        def on_partitions_revoked(self, revoked) -> None:
            pass

        def on_partitions_assigned(self, assigned) -> None:
            assignments[self.i] = set(assigned)
            assigned_at[self.i] = time.perf_counter()

    consumers = [
        consumer_class(
            bootstrap_servers=BOOTSTRAP, group_id=group, enable_auto_commit=False, **GROUP_TIMEOUTS
        )
        for _ in range(GROUP_SIZE)
    ]
    for i, consumer in enumerate(consumers):
        consumer.subscribe([GROUP_TOPIC], listener=Listener(i))

    def loop(i: int) -> None:
        while not stopping[i]:
            consumers[i].poll(timeout_ms=50)

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(GROUP_SIZE)]
    for t in threads:
        t.start()

    def stable(members: range) -> bool:
        owned = [tp for i in members for tp in assignments[i]]
        return len(owned) == GROUP_PARTITIONS == len(set(owned)) and all(assignments[i] for i in members)

    _wait(lambda: stable(range(GROUP_SIZE)), "the group of ten to settle")
    stopping[0] = True
    threads[0].join()
    left_at = time.perf_counter()
    consumers[0].close()
    _wait(lambda: min(assigned_at[1:]) > left_at and stable(range(1, GROUP_SIZE)), "the nine to rebalance")
    elapsed = max(assigned_at[1:]) - left_at
    for i in range(1, GROUP_SIZE):
        stopping[i] = True
        threads[i].join()
        consumers[i].close()
    return elapsed


def _wait(condition, what: str, timeout: float = 120) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.01)


REBALANCERS = {"kafka_lite": rebalance_kafka_lite, "kafka-python": rebalance_kafka_python}


# -- the comparison ------------------------------------------------------------------------------------


def measure(args: list[str]) -> float:
    """Run this script with ``args`` in a fresh process; the figure it prints last."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, timeout=600, check=True
    )
    return float(out.stdout.split()[-1])


def compare(
    records: int, value_bytes: int, rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    rates: dict[str, list[float]] = {client: [] for client in CLIENTS}
    rebalances: dict[str, list[float]] = {client: [] for client in REBALANCERS}
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        try:
            broker = start_broker(Path(d), zk, sendfile=False, code=Path(__file__).resolve().parents[1])
            try:
                _fill(records, value_bytes)
                for r in range(rounds):
                    order = CLIENTS[r % len(CLIENTS) :] + CLIENTS[: r % len(CLIENTS)]
                    for client in order:
                        rate = measure(["--client", client, "--records", str(records)])
                        rates[client].append(rate)
                        print(f"round {r + 1} {client:16}{rate:12,.0f} records/s", flush=True)
                    for client in sorted(REBALANCERS, reverse=r % 2 == 1):
                        seconds = measure(["--rebalance", client])
                        rebalances[client].append(seconds)
                        print(f"round {r + 1} {client:16}{seconds:12.3f} s to rebalance", flush=True)
            finally:
                stop(broker)
        finally:
            zk.stop()
    return rates, rebalances


def _fill(records: int, value_bytes: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
    admin.create_topics([NewTopic(GROUP_TOPIC, GROUP_PARTITIONS, 1)])[GROUP_TOPIC].result(30)
    _, producer = produce(BOOTSTRAP, records, os.urandom(value_bytes))
    producer.flush(30)


def report(
    rates: dict[str, list[float]], rebalances: dict[str, list[float]], records: int, value_bytes: int
) -> None:
    rounds = len(rates["kafka_lite"])
    print(
        f"\n{records:,} records of {value_bytes} bytes in {len(PARTITIONS)} partitions, read from the beginning, "
        f"one kafka_lite broker, median of {rounds} rounds"
    )
    print_client_rates("consumer", rates)
    print(f"\nrebalance of a group of {GROUP_SIZE} after one member leaves, median of {rounds} rounds")
    for client, figures in rebalances.items():
        print(f"{client:40}{statistics.median(figures):12.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client", choices=CLIENTS, help=argparse.SUPPRESS)  # one run, in a child process
    parser.add_argument("--rebalance", choices=sorted(REBALANCERS), help=argparse.SUPPRESS)
    add_argument(parser)
    args = parser.parse_args()
    if args.client is not None:
        print(RUNNERS[args.client](args.records))
        return
    if args.rebalance is not None:
        print(REBALANCERS[args.rebalance]())
        return
    rates, rebalances = compare(args.records, args.value_bytes, args.rounds)
    report(rates, rebalances, args.records, args.value_bytes)
    write(args.json, "bench_consumer", headline_figures(rates, rebalances))


# The consumer's goals against its peers, as kafka_lite's median rate over each one's.
GOALS = {"kafka-python": 10.0, "aiokafka": 0.5}


def headline_figures(rates: dict[str, list[float]], rebalances: dict[str, list[float]]) -> list[dict]:
    medians = {client: statistics.median(figures) for client, figures in rates.items()}
    ours = medians["kafka_lite"]
    figures = [
        figure(
            f"consumer, kafka_lite over {client}",
            ours / medians[client],
            "x",
            at_least=GOALS.get(client),
            detail=f"{ours:,.0f} against {medians[client]:,.0f} records/s, median of {len(rates[client])} rounds",
        )
        for client in CLIENTS
        if client != "kafka_lite"
    ]
    mine, theirs = (statistics.median(rebalances[c]) for c in ("kafka_lite", "kafka-python"))
    figures.append(
        figure(
            f"a group of {GROUP_SIZE} rebalancing, kafka_lite's time over kafka-python's",
            mine / theirs,
            "x",
            detail=f"{mine:.2f} s against {theirs:.2f} s",
        )
    )
    return figures


if __name__ == "__main__":
    main()
