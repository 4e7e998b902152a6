"""Producer benchmark: kafka_lite's producer against kafka-python's and aiokafka's, with confluent-kafka
(librdkafka, a C library) as the ceiling, all producing to one kafka_lite broker in the same run.

No Kafka twin: modelled on kafka-producer-perf-test.sh.

    .venv/bin/python benchmarks/bench_producer.py [--records 100000] [--value-bytes 100] [--rounds 3]

Every producer sends the same records (no key, a ``--value-bytes`` value) to one topic of four
partitions with the same settings: acks=1, linger.ms=5, batch.size=16384 (Kafka's Java default),
compression none; it sends as fast as it can, then flushes, and the rate is records over the time
from the first send to the end of the flush. Before the clock starts each one has connected and
fetched metadata with one acknowledged record, as a long-running application would have.

Each producer runs in a process of its own, started afresh for every measurement, so none inherits
another's threads, sockets or garbage. The broker runs as its own process beside a ZooKeeper (see
``bench_broker.py``), so the producer and the broker each have a core of a 2-core machine. The
clients take turns in every round, in an order that rotates from round to round, so a machine that
gets busier or quieter during the run affects them alike; the table shows each one's median, and the
ratios of kafka_lite's median to the others'.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_broker import TOPIC, print_client_rates, send_all, start_broker, stop

from kafka_lite.zk.embedded import EmbeddedZooKeeper

BOOTSTRAP = "127.0.0.1:19092"  # where bench_broker.start_broker listens
LINGER_MS = 5
BATCH_SIZE = 16384
CLIENTS = ("kafka_lite", "kafka-python", "aiokafka", "confluent-kafka")


# -- one client's run (in its own process) -------------------------------------------------------------


def run_kafka_lite(records: int, value: bytes) -> float:
    from kafka_lite import KafkaProducer

    return _run_threaded(KafkaProducer, records, value)


def run_kafka_python(records: int, value: bytes) -> float:
    from kafka import KafkaProducer

    return _run_threaded(KafkaProducer, records, value)


def _run_threaded(producer_class, records: int, value: bytes) -> float:
    """A producer with kafka-python's API (kafka_lite's has the same): send them all, then flush."""
    producer = producer_class(bootstrap_servers=BOOTSTRAP, acks=1, linger_ms=LINGER_MS, batch_size=BATCH_SIZE)
    producer.send(TOPIC, value).get(30)
    start = time.perf_counter()
    for _ in range(records):
        producer.send(TOPIC, value)
    producer.flush()
    elapsed = time.perf_counter() - start
    producer.close()
    return records / elapsed


def run_aiokafka(records: int, value: bytes) -> float:
    from aiokafka import AIOKafkaProducer

    async def run() -> float:
        producer = AIOKafkaProducer(
            bootstrap_servers=BOOTSTRAP, acks=1, linger_ms=LINGER_MS, max_batch_size=BATCH_SIZE
        )
        await producer.start()
        try:
            await producer.send_and_wait(TOPIC, value)
            start = time.perf_counter()
            for _ in range(records):
                await producer.send(TOPIC, value)  # returns once the record is in a batch
            await producer.flush()
            return records / (time.perf_counter() - start)
        finally:
            await producer.stop()

    return asyncio.run(run())


def run_confluent_kafka(records: int, value: bytes) -> float:
    from confluent_kafka import KafkaException, Producer

    producer = Producer(
        {
            "bootstrap.servers": BOOTSTRAP,
            "acks": "1",
            "linger.ms": LINGER_MS,
            "batch.size": BATCH_SIZE,
            "queue.buffering.max.messages": 2_000_000,
        }
    )
    errors: list[object] = []
    producer.produce(TOPIC, value, on_delivery=lambda err, _: errors.append(err) if err else None)
    producer.flush(30)
    if errors:
        raise KafkaException(errors[0])
    return send_all(producer, records, value)


RUNNERS = {
    "kafka_lite": run_kafka_lite,
    "kafka-python": run_kafka_python,
    "aiokafka": run_aiokafka,
    "confluent-kafka": run_confluent_kafka,
}


# -- the comparison ------------------------------------------------------------------------------------


def measure(client: str, records: int, value_bytes: int) -> float:
    """Run ``client`` in a fresh process; its records/s."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--client",
            client,
            "--records",
            str(records),
            "--value-bytes",
            str(value_bytes),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return float(out.stdout.split()[-1])


def compare(records: int, value_bytes: int, rounds: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {client: [] for client in CLIENTS}
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        try:
            broker = start_broker(Path(d), zk, sendfile=False, code=Path(__file__).resolve().parents[1])
            try:
                for r in range(rounds):
                    order = CLIENTS[r % len(CLIENTS) :] + CLIENTS[: r % len(CLIENTS)]
                    for client in order:
                        rate = measure(client, records, value_bytes)
                        rates[client].append(rate)
                        print(f"round {r + 1} {client:16}{rate:12,.0f} records/s", flush=True)
            finally:
                stop(broker)
        finally:
            zk.stop()
    return rates


def report(rates: dict[str, list[float]], records: int, value_bytes: int, rounds: int) -> None:
    print(
        f"\n{records:,} records of {value_bytes} bytes, acks=1, linger.ms={LINGER_MS}, "
        f"batch.size={BATCH_SIZE}, one kafka_lite broker, median of {rounds} rounds"
    )
    print_client_rates("producer", rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client", choices=CLIENTS, help=argparse.SUPPRESS)  # one run, in a child process
    args = parser.parse_args()
    if args.client is not None:
        print(RUNNERS[args.client](args.records, os.urandom(args.value_bytes)))
        return
    rates = compare(args.records, args.value_bytes, args.rounds)
    report(rates, args.records, args.value_bytes, args.rounds)


if __name__ == "__main__":
    main()
