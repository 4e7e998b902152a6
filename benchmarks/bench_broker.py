"""Broker benchmark: confluent-kafka producing to and consuming from one kafka_lite broker, against the
same client on librdkafka's built-in mock cluster (its own ceiling), in the same run.

No Kafka twin: modelled on Kafka's ``kafka-producer-perf-test.sh`` / ``kafka-consumer-perf-test.sh``.

    .venv/bin/python benchmarks/bench_broker.py [--records 1000000] [--value-bytes 100] [--batch-size N]
    .venv/bin/python benchmarks/bench_broker.py --compare OTHER_CHECKOUT [--rounds 5] [--batch-size 16384]

Prints records/s in and out for: the mock cluster, kafka_lite with read-and-send fetches (the
default), and kafka_lite with ``os.sendfile`` fetches; and kafka_lite's rates as a share of the mock
cluster's; each fetch path is measured twice, alternating, best of each. The broker runs as its own
process (``kafka-lite broker start``) beside a ZooKeeper, so it and the client each have a core of
this 2-core machine.

``--compare`` measures two versions of the broker instead: this checkout's and another checkout's
(for example an older commit, made with ``git worktree add``), in alternating rounds on the same
machine, each run on a fresh broker and ZooKeeper chroot, and prints each one's median produce and
consume rates, the broker process's CPU seconds in each phase, and their ratios. ``--batch-size`` sets the producer's ``batch.size``: librdkafka's
default (1,000,000 bytes) packs a whole linger into one batch; Kafka's Java default, 16384, makes
the broker handle many more, smaller batches, which shows per-batch costs.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from headline import add_argument, figure, write

from kafka_lite.zk.embedded import EmbeddedZooKeeper

TOPIC = "bench"
PARTITIONS = [0, 1, 2, 3]
# The broker should take records as fast as the client can send them to a broker that does nothing:
# librdkafka's mock cluster, in the client's own process, is that ceiling.
RECORDS_IN_GOAL = 1.0
IN_ROUNDS = 3
# batch.size 1,000,000 is librdkafka's default, stated so that --batch-size can change it.
PRODUCER = {"acks": "1", "linger.ms": 5, "batch.size": 1_000_000, "queue.buffering.max.messages": 2_000_000}


def produce(
    bootstrap: str,
    records: int,
    value: bytes,
    extra: dict | None = None,
    topic: str = TOPIC,
    partition: int | None = None,
) -> tuple[float, Producer]:
    """Produce ``records`` copies of ``value``, to ``partition`` or where the partitioner puts them."""
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER, **(extra or {})})
    producer.list_topics(topic, timeout=30)  # metadata (and, on kafka_lite, auto-creation) before timing
    return send_all(producer, records, value, topic, partition), producer


def produce_one(producer: Producer, topic: str, value: bytes, partition: int | None = None) -> None:
    """Hand one record to the producer, waiting while its queue is full."""
    while True:
        try:
            if partition is None:
                producer.produce(topic, value)
            else:
                producer.produce(topic, value, partition=partition)
            return
        except BufferError:  # the client's queue is full: let it send
            producer.poll(0.01)


def send_all(
    producer: Producer, records: int, value: bytes, topic: str = TOPIC, partition: int | None = None
) -> float:
    """Produce ``records`` copies of ``value`` to ``topic`` and flush: records per second."""
    start = time.perf_counter()
    for _ in range(records):
        produce_one(producer, topic, value, partition)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - start
    if remaining:
        raise RuntimeError(f"{remaining} records were not delivered")
    return records / elapsed


def consume(bootstrap: str, records: int, partitions: list[int]) -> float:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.max.bytes": 52428800,
            "max.partition.fetch.bytes": 10485760,
            # librdkafka pauses fetching for fetch.queue.backoff.ms (1 s by default) whenever its local
            # queue holds queued.min.messages (100,000): with 100-byte records that pause, not either
            # broker, sets the pace. The same settings go to both brokers.
            "fetch.queue.backoff.ms": 10,
            "queued.min.messages": 1_000_000,
        }
    )
    consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in partitions])
    count = 0
    start = None  # the clock starts at the first record: connecting and the first fetch are not throughput
    deadline = time.perf_counter() + 120
    while count < records and time.perf_counter() < deadline:
        for msg in consumer.consume(10_000, 1.0):
            if msg.error() is None:
                if start is None:
                    start = time.perf_counter()
                count += 1
    elapsed = time.perf_counter() - (start or 0)
    consumer.close()
    if count < records:
        raise RuntimeError(f"consumed {count} of {records} records")
    return records / elapsed


def print_client_rates(kind: str, rates: dict[str, list[float]]) -> None:
    """The clients' median records/s, each labelled with its version, kafka_lite's ratio to each, and
    each client's lowest and highest round: the table bench_producer and bench_consumer end with. On a
    shared VM a client's rounds can differ by half; the spread says how far a median can be trusted."""
    import aiokafka
    import confluent_kafka
    import kafka

    versions = {
        "kafka_lite": "",
        "kafka_lite, send spelled flat": "",
        "kafka-python": kafka.__version__,
        "aiokafka": aiokafka.__version__,
        "confluent-kafka": f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})",
    }
    medians = {client: statistics.median(figures) for client, figures in rates.items()}
    print(f"{kind:40}{'records/s':>12}{'kafka_lite / it':>18}   rounds, lowest to highest")
    ours = medians["kafka_lite"]
    for client, median in medians.items():
        label = f"{client} {versions[client]}".strip()
        ratio = "" if client == "kafka_lite" else f"{ours / median:.2f}"
        spread = f"{min(rates[client]):,.0f} to {max(rates[client]):,.0f}"
        print(f"{label:40}{median:12,.0f}{ratio:>18}   {spread}")


def retained(bootstrap: str, partitions: list[int], topic: str = TOPIC) -> int:
    """Records ``topic``'s partitions hold below their high watermarks."""
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench"})
    total = 0
    for p in partitions:
        low, high = probe.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
        total += high - low
    probe.close()
    return total


def mock_cluster(records: int, value: bytes) -> tuple[float, float]:
    """The mock cluster lives inside the producer; it keeps only the newest part of each partition
    (about 50,000 records here), so its consume rate is measured over what it kept."""
    rate_in, producer = produce("", records, value, {"test.mock.num.brokers": 1})
    broker = next(iter(producer.list_topics(timeout=10).brokers.values()))
    bootstrap = f"{broker.host}:{broker.port}"
    partitions = list(producer.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions)
    rate_out = consume(bootstrap, retained(bootstrap, partitions), partitions)
    return rate_in, rate_out


def own_cpu_seconds() -> float:
    """User plus system CPU time of this process, every thread (librdkafka's included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def raw_fetch_rate(port: int, rounds: int = 20) -> float:
    """Bytes/s of Fetch responses alone: one connection asking each partition for 10 MiB from offset 0
    again and again (warm page cache), reading each response into one buffer. No client library and
    no record parsing, so what differs between the two broker settings is the send path only."""
    import socket
    import struct

    from kafka_lite.common.protocol.api_keys import ApiKeys
    from kafka_lite.common.protocol.requests import RequestHeader, encode_request

    sock = socket.create_connection(("127.0.0.1", port))
    buf = bytearray(64 << 20)
    total = 0
    start = time.perf_counter()
    for i in range(rounds):
        body = {
            "replica_id": -1, "max_wait_time": 0, "min_bytes": 0, "max_bytes": 52428800, "isolation_level": 0,
            "topics": [{"topic": TOPIC, "partitions": [
                {"partition": p, "fetch_offset": 0, "log_start_offset": -1, "max_bytes": 10485760} for p in PARTITIONS
            ]}],
        }  # fmt: skip
        payload = encode_request(RequestHeader(ApiKeys.FETCH, 5, i, "bench"), body)
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        (size,) = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))
        view, got = memoryview(buf), 0
        while got < size:
            got += sock.recv_into(view[got:size])
        total += size + 4
    elapsed = time.perf_counter() - start
    sock.close()
    return total / elapsed


def start_broker(
    directory: Path,
    zk: EmbeddedZooKeeper,
    sendfile: bool,
    code: Path | None = None,
    chroot: str = "",
    settings: dict[str, str] | None = None,
    probe: dict[str, str] | None = None,
) -> subprocess.Popen:
    """Start one broker process; with ``code``, that checkout's kafka_lite runs it; ``settings`` are
    added to its server.properties (a key given again there wins); ``probe``: the librdkafka settings
    that reach it, when it does not listen on the default PLAINTEXT port."""
    config = directory / "server.properties"
    config.write_text(
        "\n".join(
            [
                "broker.id=0",
                "listeners=PLAINTEXT://127.0.0.1:19092",
                f"log.dirs={directory / 'data'}",
                f"zookeeper.connect={zk.connect_string}{chroot}",
                f"fetch.sendfile.enable={str(sendfile).lower()}",
                "num.network.threads=1",
                "num.io.threads=2",
                "num.partitions=4",  # as the mock cluster's auto-created topics
                *(f"{k}={v}" for k, v in (settings or {}).items()),
            ]
        )
        + "\n"
    )
    log_file = open(directory / "broker.log", "ab")
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_lite.cli.main", "broker", "start", str(config)],
        stdout=log_file,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=code,
    )
    # The probe retries until the broker listens; its refused connections meanwhile are expected,
    # so librdkafka's error lines (level 3) stay out of the benchmark's output.
    probe_client = Producer({"bootstrap.servers": "127.0.0.1:19092", "log_level": 2, **(probe or {})})
    probe_client.list_topics(timeout=30)
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(60)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far (Linux's /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def compare(other: Path, records: int, value: bytes, rounds: int) -> None:
    """This checkout's broker against ``other``'s, alternating which goes first in each round."""
    this = Path(__file__).resolve().parents[1]
    trees = {"this": this, "other": other.resolve()}
    # Rates, and the broker's own CPU seconds per phase: a client-bound phase (consuming, here) shows
    # the broker's cost better in its CPU time than in a rate the client sets.
    rates: dict[str, dict[str, list[float]]] = {
        name: {"in": [], "out": [], "cpu in": [], "cpu out": []} for name in trees
    }
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        try:
            run = 0
            for r in range(rounds):
                order = ["this", "other"] if r % 2 == 0 else ["other", "this"]
                for name in order:
                    run += 1
                    directory = Path(d) / f"run-{run}"
                    directory.mkdir()
                    proc = start_broker(directory, zk, False, trees[name], f"/bench-{run}")
                    try:
                        cpu_start = cpu_seconds(proc.pid)
                        rate_in, _ = produce("127.0.0.1:19092", records, value)
                        cpu_produced = cpu_seconds(proc.pid)
                        rate_out = consume("127.0.0.1:19092", records, PARTITIONS)
                        cpu_consumed = cpu_seconds(proc.pid)
                    finally:
                        stop(proc)
                    run_rates = {
                        "in": rate_in,
                        "out": rate_out,
                        "cpu in": cpu_produced - cpu_start,
                        "cpu out": cpu_consumed - cpu_produced,
                    }
                    for what, figure in run_rates.items():
                        rates[name][what].append(figure)
                    print(
                        f"round {r + 1} {name:5} in {rate_in:12,.0f}  out {rate_out:12,.0f} records/s; broker CPU "
                        f"{run_rates['cpu in']:.2f} s producing, {run_rates['cpu out']:.2f} s consuming"
                    )
        finally:
            zk.stop()
    print(f"{records} records of {len(value)} bytes, acks=1, confluent-kafka, one broker, {rounds} rounds")
    print(f"this:  {this}\nother: {trees['other']}")
    print(f"{'median':24}{'this':>14}{'other':>14}{'this/other':>12}")
    for what, label, fmt in (
        ("in", "in, records/s", ",.0f"),
        ("out", "out, records/s", ",.0f"),
        ("cpu in", "broker CPU in, s", ".2f"),
        ("cpu out", "broker CPU out, s", ".2f"),
    ):
        a, b = statistics.median(rates["this"][what]), statistics.median(rates["other"][what])
        print(f"{label:24}{a:14{fmt}}{b:14{fmt}}{a / b:12.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="the producer's batch.size (librdkafka's default if unset)",
    )
    parser.add_argument(
        "--compare", type=Path, metavar="CHECKOUT", help="another kafka_lite checkout to alternate with"
    )
    parser.add_argument("--rounds", type=int, default=5, help="with --compare: rounds of one run each")
    add_argument(parser)
    args = parser.parse_args()
    if args.batch_size is not None:
        if args.batch_size <= 0:
            parser.error(f"--batch-size must be a positive number of bytes, not {args.batch_size}")
        PRODUCER["batch.size"] = args.batch_size
    if args.compare is not None and not (args.compare / "kafka_lite" / "__init__.py").exists():
        parser.error(f"--compare {args.compare}: not a kafka_lite checkout (no kafka_lite/__init__.py there)")
    value = os.urandom(args.value_bytes)
    if args.compare is not None:
        compare(args.compare, args.records, value, args.rounds)
        return
    results = {}
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        directory = Path(d)
        zk = EmbeddedZooKeeper(directory / "zookeeper")
        zk.start()
        try:
            # Records in: the mock cluster and kafka_lite take turns, IN_ROUNDS each, the order
            # alternating; medians. While kafka_lite takes them, the CPU each side spends says
            # which one sets the pace.
            mock_ins: list[float] = []
            mock_outs: list[float] = []
            ins: list[float] = []
            cpu: dict[str, list[float]] = {"broker": [], "client": []}
            proc = start_broker(directory, zk, sendfile=False)
            try:
                for round_ in range(IN_ROUNDS):
                    for who in ("mock", "kafka_lite") if round_ % 2 == 0 else ("kafka_lite", "mock"):
                        if who == "mock":
                            mock_in, mock_out = mock_cluster(args.records, value)
                            mock_ins.append(mock_in)
                            mock_outs.append(mock_out)
                            continue
                        producer = Producer({"bootstrap.servers": "127.0.0.1:19092", **PRODUCER})
                        producer.list_topics(TOPIC, timeout=30)
                        broker_cpu, client_cpu, start = (
                            cpu_seconds(proc.pid),
                            own_cpu_seconds(),
                            time.perf_counter(),
                        )
                        ins.append(send_all(producer, args.records, value))
                        wall = time.perf_counter() - start
                        cpu["broker"].append((cpu_seconds(proc.pid) - broker_cpu) / wall)
                        cpu["client"].append((own_cpu_seconds() - client_cpu) / wall)
            finally:
                stop(proc)
            rate_in, mock_in, mock_out = statistics.median(ins), statistics.median(mock_ins), max(mock_outs)
            busy = {side: statistics.median(shares) for side, shares in cpu.items()}
            # Each fetch path twice, alternating, on the same data (a broker restart in between): the
            # best of each, so that neither always runs second.
            outs: dict[str, list[float]] = {"read-and-send": [], "sendfile": []}
            raws: dict[str, list[float]] = {"read-and-send": [], "sendfile": []}
            for mode in ("read-and-send", "sendfile", "read-and-send", "sendfile"):
                proc = start_broker(directory, zk, sendfile=mode == "sendfile")
                try:
                    outs[mode].append(consume("127.0.0.1:19092", args.records, PARTITIONS))
                    raws[mode].append(raw_fetch_rate(19092))
                finally:
                    stop(proc)
            results["read-and-send"] = (rate_in, max(outs["read-and-send"]))
            results["sendfile"] = (None, max(outs["sendfile"]))
            results["raw read-and-send"] = max(raws["read-and-send"])
            results["raw sendfile"] = max(raws["sendfile"])
        finally:
            zk.stop()
    print(f"{args.records} records of {args.value_bytes} bytes, acks=1, confluent-kafka, one broker")
    print(f"{'':28}{'in (records/s)':>16}{'out (records/s)':>17}")
    print(f"{'librdkafka mock cluster':28}{mock_in:16,.0f}{mock_out:17,.0f}")
    rate_in, read_out = results["read-and-send"]
    _, sendfile_out = results["sendfile"]
    print(f"{'kafka_lite, read-and-send':28}{rate_in:16,.0f}{read_out:17,.0f}")
    print(f"{'kafka_lite, sendfile':28}{'':16}{sendfile_out:17,.0f}")
    print(f"kafka_lite / mock: in {rate_in / mock_in:.0%}, out {max(read_out, sendfile_out) / mock_out:.0%}")
    print(
        f"records in, medians of {IN_ROUNDS} turns each; while kafka_lite took them the broker process used "
        f"{busy['broker']:.0%} of a core, the client process {busy['client']:.0%}"
    )
    print(f"sendfile / read-and-send, consumer records/s: {sendfile_out / read_out:.2f}x")
    raw_read, raw_sendfile = results["raw read-and-send"], results["raw sendfile"]
    mib = 1024 * 1024
    print(
        f"fetch responses alone (raw socket, 40 MiB per request): read-and-send {raw_read / mib:,.0f} MiB/s, "
        f"sendfile {raw_sendfile / mib:,.0f} MiB/s ({raw_sendfile / raw_read:.2f}x)"
    )
    out = max(read_out, sendfile_out)
    write(
        args.json,
        "bench_broker",
        [
            figure(
                "records in, share of librdkafka's mock cluster",
                rate_in / mock_in,
                "%",
                at_least=RECORDS_IN_GOAL,
                detail=f"{rate_in:,.0f} against {mock_in:,.0f} records/s, medians of {IN_ROUNDS} turns; "
                f"the broker {busy['broker']:.0%} of a core, the client {busy['client']:.0%}",
            ),
            figure(
                "records out, share of librdkafka's mock cluster",
                out / mock_out,
                "%",
                detail=f"{out:,.0f} against {mock_out:,.0f} records/s",
            ),
            figure(
                "Fetch responses alone, sendfile over read-and-send",
                raw_sendfile / raw_read,
                "x",
                detail=f"{raw_sendfile / mib:,.0f} against {raw_read / mib:,.0f} MiB/s",
            ),
        ],
    )


if __name__ == "__main__":
    main()
