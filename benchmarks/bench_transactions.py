"""Transactions benchmark: transactional produce committing every 100 ms, as a share of idempotent
produce of the same records, for kafka_lite's producer and for confluent-kafka's (librdkafka) on the
same broker; and the latency of ``commit_transaction``.

No Kafka twin: modelled on the measurement the Confluent blog "Transactions in Apache Kafka" reports
for KIP-98 (1 KB records at the producer's full speed, a commit every 100 ms: about 3 % slower than
without transactions).

    .venv/bin/python benchmarks/bench_transactions.py [--records 30000] [--value-bytes 1000] [--rounds 5]

One kafka_lite broker in its own process beside a ZooKeeper (``bench_broker.start_broker``), with the
internal topics at replication factor 1. Each measurement is a fresh process that sends ``--records``
records (no key, random ``--value-bytes`` values) to a topic of four partitions, then flushes;
records/s is records over the time from the first send to the end of the last flush or commit:

- idempotent: ``enable.idempotence`` (acks=all, the sequence numbers), no transaction;
- transactional: the same producer with a ``transactional.id``; ``init_transactions`` before the
  clock starts; a transaction begun, and committed every 100 ms of sending, the last one at the end.
  Each ``commit_transaction`` is timed: it flushes what is still in flight, sends EndTxn, and returns
  when the coordinator has written PrepareCommit (the markers are written after it answers).

Both clients use linger.ms=5 and batch.size=16384. The four measurements take turns in every round,
in an order that rotates; the table shows medians, each client's transactional rate as a share of its
idempotent rate (the goal: at least 70 %), and the median and 99th percentile of every commit of every
round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_broker import start_broker, stop
from headline import add_argument, figure, write

from kafka_lite.zk.embedded import EmbeddedZooKeeper

BOOTSTRAP = "127.0.0.1:19092"  # where bench_broker.start_broker listens
GOAL = 0.7  # kafka_lite's transactional rate as a share of its idempotent one
TOPIC = "txn-bench"
COMMIT_INTERVAL_S = 0.1
LINGER_MS = 5
BATCH_SIZE = 16384
RUNS = (
    ("kafka_lite", "idempotent"),
    ("kafka_lite", "transactional"),
    ("confluent-kafka", "idempotent"),
    ("confluent-kafka", "transactional"),
)
BROKER_SETTINGS = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",
}


# -- one run (in its own process) ----------------------------------------------------------------------


def run_kafka_lite(mode: str, records: int, value: bytes, run_id: str) -> dict:
    from kafka_lite import KafkaProducer

    settings = {"bootstrap_servers": BOOTSTRAP, "linger_ms": LINGER_MS, "batch_size": BATCH_SIZE}
    if mode == "transactional":
        producer = KafkaProducer(transactional_id=f"bench-{run_id}", **settings)
        producer.init_transactions()
    else:
        producer = KafkaProducer(enable_idempotence=True, **settings)
        producer.send(TOPIC, b"warm-up").get(30)  # connected, metadata known, a producer id
    return _timed(
        mode, records,
        send=lambda: producer.send(TOPIC, value),
        flush=producer.flush,
        begin=getattr(producer, "begin_transaction", None),
        commit=getattr(producer, "commit_transaction", None),
        close=producer.close,
    )  # fmt: skip


def run_confluent_kafka(mode: str, records: int, value: bytes, run_id: str) -> dict:
    from confluent_kafka import Producer

    settings = {"bootstrap.servers": BOOTSTRAP, "linger.ms": LINGER_MS, "batch.size": BATCH_SIZE}
    if mode == "transactional":
        producer = Producer({**settings, "transactional.id": f"bench-{run_id}"})
        producer.init_transactions(30)
    else:
        producer = Producer({**settings, "enable.idempotence": True})
        producer.produce(TOPIC, b"warm-up")
        producer.flush(30)

    def send() -> None:
        while True:
            try:
                producer.produce(TOPIC, value)
                return
            except BufferError:  # the local queue is full: let the I/O thread drain it
                producer.poll(0.01)

    return _timed(
        mode, records, send=send, flush=lambda: producer.flush(60),
        begin=producer.begin_transaction, commit=lambda: producer.commit_transaction(60),
        close=lambda: None,
    )  # fmt: skip


def _timed(mode: str, records: int, send, flush, begin, commit, close) -> dict:
    """Send ``records`` records; under ``transactional`` commit every 100 ms. Records/s and the
    milliseconds each commit took."""
    commits: list[float] = []
    start = time.perf_counter()
    if mode == "transactional":
        begin()
        last_commit = start
        for i in range(records):
            send()
            now = time.perf_counter()
            if now - last_commit >= COMMIT_INTERVAL_S and i < records - 1:
                commits.append(_commit(commit))
                begin()
                last_commit = time.perf_counter()
        commits.append(_commit(commit))
    else:
        for _ in range(records):
            send()
        flush()
    elapsed = time.perf_counter() - start
    close()
    return {"rate": records / elapsed, "commits_ms": commits}


def _commit(commit) -> float:
    t0 = time.perf_counter()
    commit()
    return (time.perf_counter() - t0) * 1000


RUNNERS = {"kafka_lite": run_kafka_lite, "confluent-kafka": run_confluent_kafka}


# -- the comparison ------------------------------------------------------------------------------------


def measure(client: str, mode: str, records: int, value_bytes: int, run_id: str) -> dict:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, __file__, "--client", client, "--mode", mode, "--records", str(records),
         "--value-bytes", str(value_bytes), "--run-id", run_id],
        env=env, capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def create_topic() -> None:
    from kafka_lite.clients.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    try:
        admin.create_topics([NewTopic(TOPIC, 4, 1)])
    finally:
        admin.close()


def compare(records: int, value_bytes: int, rounds: int) -> dict[tuple[str, str], list[dict]]:
    results: dict[tuple[str, str], list[dict]] = {run: [] for run in RUNS}
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        try:
            broker = start_broker(Path(d), zk, sendfile=False, code=Path(__file__).resolve().parents[1],
                                  settings=BROKER_SETTINGS)  # fmt: skip
            try:
                create_topic()
                for r in range(rounds):
                    for client, mode in RUNS[r % len(RUNS) :] + RUNS[: r % len(RUNS)]:
                        result = measure(client, mode, records, value_bytes, f"{r}-{client}")
                        results[(client, mode)].append(result)
                        print(
                            f"round {r + 1} {client:16} {mode:14}{result['rate']:12,.0f} records/s",
                            flush=True,
                        )
            finally:
                stop(broker)
        finally:
            zk.stop()
    return results


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(results: dict[tuple[str, str], list[dict]], records: int, value_bytes: int, rounds: int) -> None:
    print(
        f"\n{records:,} records of {value_bytes} bytes, linger.ms={LINGER_MS}, batch.size={BATCH_SIZE}, "
        f"a commit every {COMMIT_INTERVAL_S * 1000:.0f} ms, one kafka_lite broker, median of {rounds} rounds"
    )
    print(f"{'client':18}{'idempotent':>14}{'transactional':>16}{'share':>8}"
          f"{'commits':>9}{'commit p50 ms':>15}{'commit p99 ms':>15}")  # fmt: skip
    for client in ("kafka_lite", "confluent-kafka"):
        idem = statistics.median(r["rate"] for r in results[(client, "idempotent")])
        txn = statistics.median(r["rate"] for r in results[(client, "transactional")])
        commits = [c for r in results[(client, "transactional")] for c in r["commits_ms"]]
        print(f"{client:18}{idem:14,.0f}{txn:16,.0f}{txn / idem:8.0%}{len(commits):9}"
              f"{statistics.median(commits):15.1f}{percentile(commits, 0.99):15.1f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=30_000)
    parser.add_argument("--value-bytes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--client", choices=list(RUNNERS), help=argparse.SUPPRESS)  # one run, in a child
    parser.add_argument("--mode", choices=("idempotent", "transactional"), help=argparse.SUPPRESS)
    parser.add_argument("--run-id", default="0", help=argparse.SUPPRESS)
    add_argument(parser)
    args = parser.parse_args()
    if args.client is not None:
        result = RUNNERS[args.client](args.mode, args.records, os.urandom(args.value_bytes), args.run_id)
        print(json.dumps(result))
        return
    results = compare(args.records, args.value_bytes, args.rounds)
    report(results, args.records, args.value_bytes, args.rounds)
    write(args.json, "bench_transactions", headline_figures(results, args.rounds))


def headline_figures(results: dict[tuple[str, str], list[dict]], rounds: int) -> list[dict]:
    figures = []
    for client in ("kafka_lite", "confluent-kafka"):
        idem = statistics.median(r["rate"] for r in results[(client, "idempotent")])
        txn = statistics.median(r["rate"] for r in results[(client, "transactional")])
        commits = [c for r in results[(client, "transactional")] for c in r["commits_ms"]]
        figures.append(
            figure(
                f"{client}'s producer committing every 100 ms, share of idempotent",
                txn / idem,
                "%",
                at_least=GOAL if client == "kafka_lite" else None,
                detail=f"{txn:,.0f} against {idem:,.0f} records/s, median of {rounds} rounds; "
                f"commit p50 {statistics.median(commits):.0f} ms, p99 {percentile(commits, 0.99):.0f} ms",
            )
        )
    return figures


if __name__ == "__main__":
    main()
