"""Security benchmark: produce on a SASL/PLAIN listener with the authorizer on, as a share of produce on
a PLAINTEXT listener with no authorizer, for kafka_lite's producer and for confluent-kafka's
(librdkafka).

No Kafka twin: Kafka's own docs say SASL costs its handshake once per connection, and the authorizer
a lookup in its ACL cache per request; this measures both on the produce path.

    .venv/bin/python benchmarks/bench_security.py [--records 50000] [--value-bytes 1000] [--rounds 5]

Two kafka_lite brokers, each in its own process, beside one ZooKeeper (separate chroots), built the
same but for security:

- plain: ``PLAINTEXT://127.0.0.1:19092``, no authorizer;
- secured: ``SASL_PLAINTEXT://127.0.0.1:19093`` with PLAIN, the brokers' own traffic on it too, and
  ``SimpleAclAuthorizer`` with ``super.users=User:admin``. The producer logs in as ``bench``, who is
  not a super user: an ACL allows it Write on the topic, so every Produce request is authorized
  through the ACL cache (Describe, implied by Write, and Write), as an ordinary client's is.

Each measurement is a fresh process that connects (on the secured broker: logs in), sends one record
and waits for it (so metadata, connections and the login are done), then starts the clock, sends
``--records`` records (no key, random ``--value-bytes`` values, acks=1, linger.ms 5, batch.size
16384) to a topic of four partitions and flushes. The four measurements take turns in every round in
an order that rotates; the table shows each one's median and each client's secured rate as a share
of its plain one (the goal: at least 90 %).
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

TOPIC = "security-bench"
LINGER_MS = 5
BATCH_SIZE = 16384
PLAIN = "127.0.0.1:19092"
SECURED = "127.0.0.1:19093"
GOAL = 0.9  # the secured rate as a share of the plain one
JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_bench="bench-secret";'
)
SECURED_SETTINGS = {
    "listeners": f"SASL_PLAINTEXT://{SECURED}",
    "security.inter.broker.protocol": "SASL_PLAINTEXT",
    "sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    "authorizer.class.name": "SimpleAclAuthorizer",
    "super.users": "User:admin",
}
COMMON_SETTINGS = {"offsets.topic.replication.factor": "1"}
RUNS = (
    ("kafka_lite", "plain"),
    ("kafka_lite", "secured"),
    ("confluent-kafka", "plain"),
    ("confluent-kafka", "secured"),
)


def kafka_lite_login(user: str) -> dict:
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
            "sasl_plain_username": user, "sasl_plain_password": f"{user}-secret"}  # fmt: skip


def librdkafka_login(user: str) -> dict:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN",
            "sasl.username": user, "sasl.password": f"{user}-secret"}  # fmt: skip


# -- one run (in its own process) ----------------------------------------------------------------------


def run_kafka_lite(mode: str, records: int, value: bytes) -> dict:
    from kafka_lite import KafkaProducer

    security = kafka_lite_login("bench") if mode == "secured" else {}
    producer = KafkaProducer(bootstrap_servers=SECURED if mode == "secured" else PLAIN, linger_ms=LINGER_MS,
                             batch_size=BATCH_SIZE, **security)  # fmt: skip
    producer.send(TOPIC, b"warm-up").get(30)  # connected, logged in, metadata known
    start = time.perf_counter()
    for _ in range(records):
        producer.send(TOPIC, value)
    producer.flush()
    elapsed = time.perf_counter() - start
    producer.close()
    return {"rate": records / elapsed}


def run_confluent_kafka(mode: str, records: int, value: bytes) -> dict:
    from confluent_kafka import Producer

    security = librdkafka_login("bench") if mode == "secured" else {}
    producer = Producer({"bootstrap.servers": SECURED if mode == "secured" else PLAIN, "linger.ms": LINGER_MS,
                         "batch.size": BATCH_SIZE, **security})  # fmt: skip
    producer.produce(TOPIC, b"warm-up")
    producer.flush(30)
    start = time.perf_counter()
    for _ in range(records):
        while True:
            try:
                producer.produce(TOPIC, value)
                break
            except BufferError:  # the local queue is full: let the I/O thread drain it
                producer.poll(0.01)
    producer.flush(60)
    return {"rate": records / (time.perf_counter() - start)}


RUNNERS = {"kafka_lite": run_kafka_lite, "confluent-kafka": run_confluent_kafka}


# -- the comparison ------------------------------------------------------------------------------------


def measure(client: str, mode: str, records: int, value_bytes: int) -> dict:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, __file__, "--client", client, "--mode", mode, "--records", str(records),
         "--value-bytes", str(value_bytes)],
        env=env, capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def prepare_topics(zk: EmbeddedZooKeeper) -> None:
    """The topic on both brokers (on the secured one created by the super user), and the ACL that
    lets ``bench`` write it, written as ``kafka-acls.sh`` writes it: on ZooKeeper."""
    from kafka_lite.cli.main import main as cli
    from kafka_lite.clients.admin import KafkaAdminClient, NewTopic

    for bootstrap, security in ((PLAIN, {}), (SECURED, kafka_lite_login("admin"))):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, **security)
        try:
            admin.create_topics([NewTopic(TOPIC, 4, 1)])
        finally:
            admin.close()
    status = cli(["acls", "--authorizer-properties", f"zookeeper.connect={zk.connect_string}/secured", "--add",
                  "--allow-principal", "User:bench", "--operation", "Write", "--topic", TOPIC])  # fmt: skip
    if status:
        raise SystemExit(f"could not add the benchmark's ACL (exit {status})")


def compare(records: int, value_bytes: int, rounds: int) -> dict[tuple[str, str], list[float]]:
    results: dict[tuple[str, str], list[float]] = {run: [] for run in RUNS}
    code = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        brokers = []
        try:
            for name, settings, probe in (
                ("plain", COMMON_SETTINGS, None),
                ("secured", {**COMMON_SETTINGS, **SECURED_SETTINGS},
                 {"bootstrap.servers": SECURED, **librdkafka_login("admin")}),
            ):  # fmt: skip
                (Path(d) / name).mkdir()
                brokers.append(start_broker(Path(d) / name, zk, sendfile=False, code=code, chroot=f"/{name}",
                                            settings=settings, probe=probe))  # fmt: skip
            prepare_topics(zk)
            for r in range(rounds):
                for client, mode in RUNS[r % len(RUNS) :] + RUNS[: r % len(RUNS)]:
                    rate = measure(client, mode, records, value_bytes)["rate"]
                    results[(client, mode)].append(rate)
                    print(f"round {r + 1} {client:16} {mode:8}{rate:12,.0f} records/s", flush=True)
        finally:
            for broker in brokers:
                stop(broker)
            zk.stop()
    return results


def report(results: dict[tuple[str, str], list[float]], records: int, value_bytes: int, rounds: int) -> None:
    print(f"\n{records:,} records of {value_bytes} bytes, linger.ms={LINGER_MS}, batch.size={BATCH_SIZE}, "
          f"acks=1, median of {rounds} rounds")  # fmt: skip
    print(f"{'client':18}{'PLAINTEXT':>12}{'SASL + ACLs':>14}{'share':>8}")
    for client in ("kafka_lite", "confluent-kafka"):
        plain = statistics.median(results[(client, "plain")])
        secured = statistics.median(results[(client, "secured")])
        print(f"{client:18}{plain:12,.0f}{secured:14,.0f}{secured / plain:8.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--value-bytes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--client", choices=list(RUNNERS), help=argparse.SUPPRESS)  # one run, in a child
    parser.add_argument("--mode", choices=("plain", "secured"), help=argparse.SUPPRESS)
    add_argument(parser)
    args = parser.parse_args()
    if args.client is not None:
        print(json.dumps(RUNNERS[args.client](args.mode, args.records, os.urandom(args.value_bytes))))
        return
    results = compare(args.records, args.value_bytes, args.rounds)
    report(results, args.records, args.value_bytes, args.rounds)
    write(args.json, "bench_security", headline_figures(results, args.rounds))


def headline_figures(results: dict[tuple[str, str], list[float]], rounds: int) -> list[dict]:
    figures = []
    for client in ("kafka_lite", "confluent-kafka"):
        plain = statistics.median(results[(client, "plain")])
        secured = statistics.median(results[(client, "secured")])
        figures.append(
            figure(
                f"{client}'s producer with SASL/PLAIN and ACLs, share of PLAINTEXT",
                secured / plain,
                "%",
                at_least=GOAL,
                detail=f"{secured:,.0f} against {plain:,.0f} records/s, median of {rounds} rounds",
            )
        )
    return figures


if __name__ == "__main__":
    main()
