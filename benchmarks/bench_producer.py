"""Producer benchmark: kafka_lite's producer against kafka-python's and aiokafka's, with confluent-kafka
(librdkafka, a C library) as the ceiling, all producing to one kafka_lite broker in the same run.

No Kafka twin: modelled on kafka-producer-perf-test.sh.

    .venv/bin/python benchmarks/bench_producer.py [--records 100000] [--value-bytes 100] [--rounds 3] [--flat]
        [--codec compiled|python|both]

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

``--flat`` adds a fifth client: kafka_lite's producer with each record appended by ``flat_send``, the
steps of ``send`` for this benchmark's records spelled as one function instead of Kafka's dozen
methods (``send``, ``waitOnMetadata``, the serializers, ``partition``, the partitioner,
``ensureValidRecordSize``, ``RecordAccumulator.append`` and ``tryAppend``, ``ProducerBatch.tryAppend``).
The batches, the sender and the broker are the same, so the difference is what reading like Kafka
costs per record.

``--codec`` chooses kafka_lite's record codec (``common/record/codec.py``): ``compiled``, the
default, ``python`` (the reference ``MemoryRecordsBuilder`` for every kafka_lite client), or
``both``, which adds kafka_lite with the reference as a client of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_broker import TOPIC, print_client_rates, send_all, start_broker, stop
from headline import add_argument, figure, write

from kafka_lite.zk.embedded import EmbeddedZooKeeper

BOOTSTRAP = "127.0.0.1:19092"  # where bench_broker.start_broker listens
LINGER_MS = 5
BATCH_SIZE = 16384
CLIENTS = ("kafka_lite", "kafka-python", "aiokafka", "confluent-kafka")
FLAT = "kafka_lite, send spelled flat"  # with --flat: the price of Kafka's shape
REFERENCE = "kafka_lite, reference codec"  # with --codec both: the price of the Python codec


# -- one client's run (in its own process) -------------------------------------------------------------


def run_kafka_lite(records: int, value: bytes) -> float:
    from kafka_lite import KafkaProducer

    return _run_threaded(KafkaProducer, records, value)


def run_kafka_lite_reference(records: int, value: bytes) -> float:
    """kafka_lite's producer with the reference record codec (the Python MemoryRecordsBuilder)."""
    from kafka_lite.common.record import codec

    codec.use_codec(codec.PYTHON)
    return run_kafka_lite(records, value)


def run_kafka_lite_flat(records: int, value: bytes) -> float:
    """kafka_lite's producer, its sender and its batches, but each record appended by ``flat_send``
    below instead of ``KafkaProducer.send``: the price of Kafka's shape, measured (see the page)."""
    from kafka_lite import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP, acks=1, linger_ms=LINGER_MS, batch_size=BATCH_SIZE)
    producer.send(TOPIC, value).get(30)
    send = flat_send(producer)
    start = time.perf_counter()
    for _ in range(records):
        send(TOPIC, value)
    producer.flush()
    elapsed = time.perf_counter() - start
    producer.close()
    return records / elapsed


def flat_send(producer):
    """The steps of ``send`` for a record with no key, no headers and no serializer, spelled as one
    function: the topic's known partition count, the round-robin partition, the size bound, the
    clock, and the append to the partition's last batch under its deque's lock (the accumulator's own
    ``append`` when that batch is full). What ``send`` does in about fifteen calls, this does in
    about five; it checks nothing else, and is no part of kafka_lite."""
    from kafka_lite.common.record import codec
    from kafka_lite.producer.future_record_metadata import FutureRecordMetadata
    from kafka_lite.producer.producer_batch import Thunk

    metadata, accumulator, time_, sender = (
        producer.metadata,
        producer.accumulator,
        producer.time,
        producer.sender,
    )
    counters, max_request_size = producer.partitioner._topic_counter_map, producer.max_request_size

    def send(topic: str, value: bytes) -> FutureRecordMetadata:
        cluster = metadata.cluster
        available = cluster.available_partitions_for_topic(topic)
        partition = available[(next(counters[topic]) & 0x7FFFFFFF) % len(available)].partition
        if codec.estimate_size_in_bytes_upper_bound(None, value, []) > max_request_size:
            raise ValueError("record too large")
        timestamp = time_.milliseconds()
        tp = (topic, partition)
        dq = accumulator.batches.get(tp)
        if dq is not None:
            with dq.lock:
                if dq:
                    batch = dq[-1]
                    if batch.records_builder.try_append(timestamp, None, value, []):
                        batch.last_append_time = timestamp
                        future = FutureRecordMetadata(
                            batch.produce_future, batch.record_count, timestamp, None, -1, len(value), -1
                        )
                        batch.thunks.append(Thunk(None, future))
                        batch.record_count += 1
                        if len(dq) > 1:
                            sender.wakeup()
                        return future
                    batch.close_for_record_appends()
        result = accumulator.append(tp, timestamp, None, value, [], producer.max_block_time_ms)
        sender.wakeup()
        return result.future

    return send


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
    FLAT: run_kafka_lite_flat,
    REFERENCE: run_kafka_lite_reference,
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


def compare(
    records: int, value_bytes: int, rounds: int, clients: tuple[str, ...] = CLIENTS
) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {client: [] for client in clients}
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        try:
            broker = start_broker(Path(d), zk, sendfile=False, code=Path(__file__).resolve().parents[1])
            try:
                for r in range(rounds):
                    order = clients[r % len(clients) :] + clients[: r % len(clients)]
                    for client in order:
                        rate = measure(client, records, value_bytes)
                        rates[client].append(rate)
                        print(f"round {r + 1} {client:32}{rate:12,.0f} records/s", flush=True)
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
    rates = dict(rates)
    reference = rates.pop(REFERENCE, None)
    print_client_rates("producer", rates)
    if reference is not None:
        # The shared table knows the clients by name; this row is kafka_lite again, with the other codec.
        median, ours = statistics.median(reference), statistics.median(rates["kafka_lite"])
        spread = f"{min(reference):,.0f} to {max(reference):,.0f}"
        print(f"{REFERENCE:40}{median:12,.0f}{ours / median:>18.2f}   {spread}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--flat", action="store_true", help="also time kafka_lite's producer with send's steps spelled flat"
    )
    parser.add_argument(
        "--codec",
        choices=("compiled", "python", "both"),
        default="compiled",
        help="kafka_lite's record codec (KAFKA_LITE_RECORDS): the compiled twin (the default), the "
        "Python reference, or both (adds kafka_lite with the reference as a client of its own)",
    )
    parser.add_argument(
        "--client", choices=list(RUNNERS), help=argparse.SUPPRESS
    )  # one run, in a child process
    add_argument(parser)
    args = parser.parse_args()
    if args.client is not None:
        print(RUNNERS[args.client](args.records, os.urandom(args.value_bytes)))
        return
    # The children inherit the choice (common/record/codec.py reads it when first imported).
    os.environ["KAFKA_LITE_RECORDS"] = "python" if args.codec == "python" else "compiled"
    clients = (*CLIENTS, FLAT) if args.flat else CLIENTS
    if args.codec == "both":
        clients = (*clients, REFERENCE)
    rates = compare(args.records, args.value_bytes, args.rounds, clients)
    report(rates, args.records, args.value_bytes, args.rounds)
    write(args.json, "bench_producer", headline_figures(rates, args.rounds))


# The producer's goals against its peers, as kafka_lite's median rate over each one's.
GOALS = {"kafka-python": 10.0, "aiokafka": 1.4, "confluent-kafka": 0.4}


def headline_figures(rates: dict[str, list[float]], rounds: int) -> list[dict]:
    medians = {client: statistics.median(figures) for client, figures in rates.items()}
    ours = medians["kafka_lite"]
    figures = [
        figure(
            f"producer, kafka_lite over {client}",
            ours / medians[client],
            "x",
            at_least=GOALS.get(client),
            detail=f"{ours:,.0f} against {medians[client]:,.0f} records/s, median of {rounds} rounds",
        )
        for client in CLIENTS[1:]
    ]
    for other in (FLAT, REFERENCE):
        if other in medians:
            figures.append(
                figure(
                    f"producer, kafka_lite over {other}",
                    ours / medians[other],
                    "x",
                    detail=f"{ours:,.0f} against {medians[other]:,.0f} records/s",
                )
            )
    if REFERENCE in medians:
        reference = medians[REFERENCE]
        figures.append(
            figure(
                "producer, kafka_lite with the reference codec over aiokafka",
                reference / medians["aiokafka"],
                "x",
                detail=f"{reference:,.0f} against {medians['aiokafka']:,.0f} records/s",
            )
        )
    return figures


if __name__ == "__main__":
    main()
