"""MirrorMaker benchmark: (a) MirrorMaker's copy rate against the source cluster's own consume rate on
the same data; (b) the stall while one of four mirror workers restarts, under MirrorMaker's consumer
group and under the controller-assigned workers of ``tools/ureplicator.py``.

No Kafka twin: modelled on kafka-consumer-perf-test.sh (a) and on Uber's uReplicator write-up (b).

    .venv/bin/python benchmarks/bench_mirror_maker.py [--records 100000] [--rounds 3]

Two clusters as real processes, started as ``kafka-lite cluster up`` starts them: the source (one
broker) and, beside it, the named cluster ``target`` (one broker) on the source's ZooKeeper under its
own chroot. Every client runs in a fresh process of its own for each measurement.

(a) A topic of four partitions on the source is filled once with ``--records`` records of 100 bytes.
kafka_lite's ``KafkaConsumer`` reads them all from the beginning (partitions assigned, no group); the
clock runs from the first record to the last. MirrorMaker (one stream, a fresh group, the producer
at MirrorMaker's no-data-loss defaults, acks=all and one request in flight, with linger.ms=50 and
batch.size=256 KiB) copies the same records to the target; the clock runs from the poll that returns
the first records until a producer flush after the last one is sent returns, so every record
counted is on the target (the records are counted per poll, so that counting costs the copy
nothing per record). Between the two, the same copy as a bare loop (poll, send key and value,
one flush at the end; the producer configured as MirrorMaker's, its no-data-loss defaults and the
same batching) shows what the two clients in one process cost before MirrorMaker's own work. The
three take turns in every round, in an order that rotates; medians, and each one's share of the
consumer's rate (MirrorMaker's goal: at least 50 %). The loop's and MirrorMaker's rounds also print
the process's CPU time per record over the same span, which the other work of a shared machine
disturbs less than the rate.

(b) A loader process writes 100-byte records at a fixed rate to an 8-partition source topic, and four
mirror workers (threads of one process) copy it to the target, whose topic stamps every record with
the time the target broker appended it (``message.timestamp.type=LogAppendTime``): the timeline of
records arriving, in 100 ms buckets, read back from the target afterwards. The records are keyed,
so each lands in the same partition on both sides. Once copying is steady one
worker restarts: MirrorMaker's fourth instance shuts down (its consumer leaves the group) and a new
one starts in the same group; the controller's worker ``w3`` is removed and a new ``w3`` added. The
restart window runs from the stop until the new worker copies again (MirrorMaker: the group Stable
with four members holding partitions; the controller: ``add_worker`` returned). Reported: the steady
rate (the median bucket of the two seconds before the stop), the seconds below half of it from the
stop on, the records copied during the restart window (and as a share of the steady rate over it),
and per partition the longest time between two of its records reaching the target, from half a
second before the stop to three seconds after the restart: how many partitions paused for a second
or more, and the longest pause. MirrorMaker's group uses the
consumer's defaults, session.timeout.ms 10 s and heartbeat.interval.ms 3 s (``--heartbeat-ms``);
both variants commit every second.

With ``BENCH_MIRROR_PROFILE=DIR`` in the environment, part a's loop and MirrorMaker run every thread
of their process (the copying thread, the producer's sender, the consumer's heartbeat) under cProfile
with a CPU-time clock, and write one file of statistics per thread into DIR, named by role,
thread and thread id (``mirror-mirrormaker-thread-0-<id>.prof``, ...): ``pstats`` adds them up.
cProfile names a function by file, line and name, and the ``__init__`` of every dataclass and the
``__new__`` of every named tuple are all ``<string>``'s, so one of them stands for all in a
thread's statistics: read what ``ProducerRecord`` or ``TopicPartition`` costs from the cumulative
time of the function that builds it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from headline import add_argument, figure, write

VALUE_BYTES = 100
COPY_PARTITIONS = 4
LOAD_PARTITIONS = 8
LOAD_RATE = 4000  # records/s written during part b: well below either variant's copy rate
WORKERS = 4
BUCKET_MS = 100
WARM_S, AFTER_S = 4.0, 10.0  # part b: steady copying before the restart, and the time watched after it
GOAL = 0.5  # MirrorMaker's rate as a share of the consumer's reading the source alone
LOOP_GOAL = 0.8  # MirrorMaker's rate over the bare consume-and-send loop's
# A partition "paused" if no record of it reached the target for this long around the restart: above
# the gaps of steady copying on a machine shared with other work (linger.ms, polls, the scheduler).
PAUSE_S = 1.0
# MirrorMaker's group at the consumer's defaults in 0.10.1 (--heartbeat-ms changes the interval).
SESSION_TIMEOUT_MS, HEARTBEAT_INTERVAL_MS = 10_000, 3_000
# The producer's batching, for MirrorMaker and the loop alike: larger batches than Kafka's defaults,
# as a mirror's producer is usually given (fewer, fuller requests to the target).
PRODUCER = {"linger.ms": "50", "batch.size": "262144"}
BROKER_OVERRIDES = ["offsets.topic.num.partitions=4", "group.initial.rebalance.delay.ms=0"]


# -- what runs in a fresh process --------------------------------------------------------------------


def child_consume(source: str, topic: str, records: int) -> dict:
    from kafka_lite import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=source, enable_auto_commit=False)
    consumer.assign([(topic, p) for p in range(COPY_PARTITIONS)])
    consumer.seek_to_beginning()
    count, start, deadline = 0, None, time.perf_counter() + 300
    while count < records and time.perf_counter() < deadline:
        for batch in consumer.poll(timeout_ms=1000).values():
            if start is None:
                start = time.perf_counter()
            count += len(batch)
    elapsed = time.perf_counter() - start
    consumer.close()
    assert count >= records, f"read {count} of {records}"
    return {"rate": count / elapsed}


def child_loop(source: str, target: str, topic: str, records: int) -> dict:
    """The same copy without MirrorMaker: poll, send each record's key and value, flush once; the
    producer configured as MirrorMaker configures its own (the no-data-loss defaults, acks=all and
    one request in flight, under the same batching), so the two differ only by MirrorMaker's work."""
    from kafka_lite import KafkaConsumer, KafkaProducer
    from kafka_lite.tools.mirror_maker import producer_config

    consumer = KafkaConsumer(bootstrap_servers=source, enable_auto_commit=False)
    consumer.assign([(topic, p) for p in range(COPY_PARTITIONS)])
    consumer.seek_to_beginning()
    producer = KafkaProducer(**producer_config({"bootstrap.servers": target, **PRODUCER}))
    count, start, deadline = 0, None, time.perf_counter() + 300
    while count < records and time.perf_counter() < deadline:
        for batch in consumer.poll(timeout_ms=1000).values():
            if start is None:
                start, cpu = time.perf_counter(), time.process_time()
            for record in batch:
                producer.send(topic, record.value, record.key)
            count += len(batch)
    producer.flush()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    producer.close()
    consumer.close()
    assert count >= records, f"copied {count} of {records}"
    return {"rate": count / elapsed, "cpu_us": cpu / count * 1e6}


def child_mirror(source: str, target: str, topic: str, records: int, group: str) -> dict:
    from kafka_lite.tools.mirror_maker import POLL_TIMEOUT_MS, MirrorMaker, MirrorMakerNewConsumer

    done = threading.Event()
    first: list[float] = []  # the wall clock and the process's CPU time at the first records

    class Counting(MirrorMakerNewConsumer):
        """MirrorMaker's consumer wrapper, counting per poll rather than per record, so that the
        copy's own per-record work is all that is measured. ``receive`` polls again only once every
        record of the last poll has been handed to the handler and sent: when it does so after the
        last record, the copy is done but for the flush."""

        def __init__(self, consumer, whitelist: str) -> None:
            super().__init__(consumer, whitelist)
            self.count = 0

        def poll(self):
            if self.count >= records:
                done.set()
            batches = self.consumer.poll(POLL_TIMEOUT_MS)
            if batches and not first:
                first.extend((time.perf_counter(), time.process_time()))
            self.count += sum(len(batch) for batch in batches.values())
            return itertools.chain.from_iterable(batches.values())

    mm = MirrorMaker.from_configs(
        {"bootstrap.servers": source, "group.id": group, "auto.offset.reset": "earliest"},
        {"bootstrap.servers": target, **PRODUCER},
        whitelist=topic,
    )
    (thread,) = mm.threads
    counting = thread.consumer = Counting(thread.consumer.consumer, topic)
    runner = threading.Thread(target=mm.run)
    runner.start()
    try:
        assert done.wait(300), f"copied {counting.count} of {records}"
        mm.producer.flush()  # every record sent is now acknowledged by the target
        elapsed = time.perf_counter() - first[0]
        cpu = time.process_time() - first[1]
    finally:
        mm.shutdown()
        runner.join(60)
    return {"rate": records / elapsed, "cpu_us": cpu / records * 1e6}


def child_load(source: str, topic: str, seconds: float) -> dict:
    from kafka_lite import KafkaProducer
    from kafka_lite.tools.throughput_throttler import ThroughputThrottler

    producer = KafkaProducer(bootstrap_servers=source, linger_ms=5)
    value = b"x" * VALUE_BYTES
    start_ms = int(time.time() * 1000)
    throttler = ThroughputThrottler(LOAD_RATE, start_ms)
    sent = 0
    while time.time() * 1000 - start_ms < seconds * 1000:
        # Keyed, so that a record's target partition (the target's partitioner, as MirrorMaker's
        # default handler leaves it) is its source partition: a pause per partition means one thing.
        producer.send(topic, value, str(sent).encode())
        sent += 1
        if throttler.should_throttle(sent, int(time.time() * 1000)):
            throttler.throttle()
    producer.close()
    return {"sent": sent}


def child_workers(variant: str, source: str, target: str, topic: str, group: str, heartbeat_ms: int) -> dict:
    """Four workers copy ``topic``; after WARM_S one restarts. Wall-clock times of the restart."""
    consumer = {"bootstrap.servers": source, "group.id": group, "auto.offset.reset": "earliest"}
    producer = {"bootstrap.servers": target, **PRODUCER}
    if variant == "mirror-maker":
        timeouts = {"session.timeout.ms": str(SESSION_TIMEOUT_MS), "heartbeat.interval.ms": str(heartbeat_ms)}
        return _restart_mirror_maker({**consumer, **timeouts}, producer, topic, source, group)
    return _restart_controller_worker(consumer, producer, topic)


def _restart_mirror_maker(consumer: dict, producer: dict, topic: str, source: str, group: str) -> dict:
    from kafka_lite.clients.admin import KafkaAdminClient
    from kafka_lite.tools.mirror_maker import MirrorMaker

    def start(i: int):
        mm = MirrorMaker.from_configs({**consumer, "client.id": f"mm-{i}"}, producer, whitelist=topic,
                                      offset_commit_interval_ms=1000)  # fmt: skip
        runner = threading.Thread(target=mm.run)
        runner.start()
        return mm, runner

    admin = KafkaAdminClient(source)

    def stable_with_four() -> bool:
        (description,) = admin.describe_consumer_groups([group])
        return (
            description.state == "Stable" and sum(bool(m.assignment) for m in description.members) == WORKERS
        )

    instances = [start(i) for i in range(WORKERS)]
    _wait(stable_with_four, "the group of four")
    time.sleep(WARM_S)  # steady copying before the restart: the timeline's baseline
    stopped = time.time()
    mm, runner = instances[-1]
    mm.shutdown()
    runner.join(60)
    instances[-1] = start(WORKERS)
    _wait(stable_with_four, "the group of four again")
    ready = time.time()
    time.sleep(AFTER_S)  # the timeline after the restart
    for mm, runner in instances:
        mm.shutdown()
        runner.join(60)
    admin.close()
    return {"stopped": stopped, "ready": ready}


def _restart_controller_worker(consumer: dict, producer: dict, topic: str) -> dict:
    from kafka_lite.tools.ureplicator import HelixMirrorMakerManager, WorkerInstance

    def worker(i: int) -> WorkerInstance:
        return WorkerInstance.from_configs(f"w{i}", consumer, producer, offset_commit_interval_ms=1000)

    controller = HelixMirrorMakerManager()
    for i in range(WORKERS):
        controller.add_worker(worker(i))
    controller.add_topic_to_mirror_maker(topic, LOAD_PARTITIONS)
    time.sleep(WARM_S)  # steady copying before the restart: the timeline's baseline
    stopped = time.time()
    controller.remove_worker(f"w{WORKERS - 1}")
    controller.add_worker(worker(WORKERS - 1))
    ready = time.time()
    time.sleep(AFTER_S)  # the timeline after the restart
    controller.shutdown()
    return {"stopped": stopped, "ready": ready}


def _wait(condition, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if condition():
                return
        except Exception:  # the coordinator may not know the group yet
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)  # polling the coordinator; bounded by the deadline


CHILDREN = {
    "consume": child_consume,
    "loop": child_loop,
    "mirror": child_mirror,
    "load": child_load,
    "workers": child_workers,
}


def profile_threads(directory: str, role: str) -> None:
    """Run every thread started from now on, and the rest of the main thread's work, under cProfile
    with a CPU-time clock (a thread waiting on a socket costs nothing); each thread's statistics go
    to ``directory/<role>-<thread name>-<thread id>.prof`` when it ends."""
    import atexit
    import cProfile

    def path(thread: threading.Thread) -> str:
        name = "".join(c if c.isalnum() or c in "-_" else "_" for c in thread.name)
        return os.path.join(directory, f"{role}-{name}-{thread.ident}.prof")

    start = threading.Thread.start

    def start_profiled(self) -> None:
        # Wrapped per instance at start, so that a subclass's own run (MirrorMakerThread's) is too.
        run = self.run

        def profiled_run() -> None:
            profiler = cProfile.Profile(time.thread_time)
            try:
                profiler.runcall(run)
            finally:
                profiler.dump_stats(path(self))

        self.run = profiled_run
        start(self)

    threading.Thread.start = start_profiled
    main = cProfile.Profile(time.thread_time)
    main.enable()

    def dump_main() -> None:
        main.disable()
        main.dump_stats(path(threading.main_thread()))

    atexit.register(dump_main)


# -- the orchestrator --------------------------------------------------------------------------------


def run_child(role: str, *args) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", role, json.dumps(args)],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{role} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def start_child(role: str, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--child", role, json.dumps(args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def clusters(directory: Path):
    """The source cluster and the named cluster ``target`` on its ZooKeeper, as `cluster up` starts them."""
    from kafka_lite.cli.cluster import named_dir, start_cluster, wait_healthy
    from kafka_lite.utils.ports import free_ports

    zk_port = free_ports(3)
    source = start_cluster(directory, 1, zk_port, zk_port + 1, BROKER_OVERRIDES)
    wait_healthy(source)
    shared = {**source["zookeeper"], "shared_with": source["dir"]}
    target = start_cluster(named_dir(directory, "target"), 1, zk_port, zk_port + 2, BROKER_OVERRIDES,
                           name="target", shared_zookeeper=shared)  # fmt: skip
    wait_healthy(target)
    return source, target


def create_topic(bootstrap: str, topic: str, partitions: int, configs: dict | None = None) -> None:
    from kafka_lite.clients.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1, {}, configs or {})])
        _wait(
            lambda: all(p.leader is not None for p in _partitions(admin, topic, partitions)),
            f"{topic}'s leaders",
        )
    finally:
        admin.close()


def _partitions(admin, topic: str, n: int):
    parts = [p for p in admin.describe_cluster().partitions.values() if p.topic == topic]
    assert len(parts) == n
    return parts


def fill(bootstrap: str, topic: str, records: int) -> None:
    from kafka_lite import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, batch_size=65536)
    value = b"x" * VALUE_BYTES
    for i in range(records):
        producer.send(topic, value, partition=i % COPY_PARTITIONS)
    producer.close()


def arrivals(bootstrap: str, topic: str, partitions: int) -> list[tuple[int, int]]:
    """The partition and LogAppendTime of every record on the target topic."""
    from kafka_lite import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tps = [(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning()
    ends = consumer.end_offsets(tps)
    stamps: list[tuple[int, int]] = []
    while any(consumer.position(tp) < ends[tp] for tp in tps):
        for batch in consumer.poll(timeout_ms=1000).values():
            stamps.extend((r.partition, r.timestamp) for r in batch)
    consumer.close()
    return stamps


def timeline(arrived: list[tuple[int, int]], stopped: float, ready: float) -> dict:
    """Buckets of BUCKET_MS from two seconds before the stop; the stall's figures; and each
    partition's longest pause (between two records reaching the target) around the restart."""
    stamps = [ts for _, ts in arrived]
    start_ms = int(stopped * 1000) - 2000
    n = int((2 + (ready - stopped) + AFTER_S) * 1000 / BUCKET_MS)
    buckets = [0] * n
    for ts in stamps:
        i = (ts - start_ms) // BUCKET_MS
        if 0 <= i < n:
            buckets[i] += 1
    before = 2000 // BUCKET_MS
    steady = statistics.median(buckets[:before]) * 1000 / BUCKET_MS
    below = sum(1 for b in buckets[before:] if b * 1000 / BUCKET_MS < steady / 2) * BUCKET_MS / 1000
    window = [ts for ts in stamps if stopped * 1000 <= ts < ready * 1000]
    around = (stopped * 1000 - 500, ready * 1000 + 3000)
    pauses = []
    for p in range(LOAD_PARTITIONS):
        times = sorted(ts for q, ts in arrived if q == p and around[0] <= ts <= around[1])
        pauses.append(
            max((b - a for a, b in itertools.pairwise(times)), default=around[1] - around[0]) / 1000
        )
    return {"steady": steady, "below_half_s": below, "window_s": ready - stopped,
            "copied_in_window": len(window), "share_in_window": len(window) / (steady * (ready - stopped)),
            "buckets": buckets, "pauses": pauses,
            "paused": sum(x >= PAUSE_S for x in pauses), "longest_pause_s": max(pauses)}  # fmt: skip


def part_a(source: dict, target: dict, records: int, rounds: int) -> dict:
    from kafka_lite.cli.cluster import bootstrap_servers

    src, tgt = bootstrap_servers(source), bootstrap_servers(target)
    create_topic(src, "bench-copy", COPY_PARTITIONS)
    create_topic(tgt, "bench-copy", COPY_PARTITIONS)
    fill(src, "bench-copy", records)
    rates: dict[str, list[float]] = {"consumer": [], "loop": [], "mirror-maker": []}
    for r in range(rounds):
        order = list(rates)[r % 3 :] + list(rates)[: r % 3]  # rotates, so no one always goes first
        for who in order:
            if who == "consumer":
                result = run_child("consume", src, "bench-copy", records)
            elif who == "loop":
                result = run_child("loop", src, tgt, "bench-copy", records)
            else:
                result = run_child("mirror", src, tgt, "bench-copy", records, f"bench-mm-{r}")
            rates[who].append(result["rate"])
            cpu = f", {result['cpu_us']:.1f} µs of CPU a record" if "cpu_us" in result else ""
            print(f"  round {r + 1}: {who:<13} {result['rate']:>10,.0f} records/s{cpu}", flush=True)
    return rates


def part_b(source: dict, target: dict, rounds: int, heartbeat_ms: int) -> dict:
    from kafka_lite.cli.cluster import bootstrap_servers

    src, tgt = bootstrap_servers(source), bootstrap_servers(target)
    results: dict[str, list[dict]] = {"mirror-maker": [], "controller": []}
    for r in range(rounds):
        order = ["mirror-maker", "controller"] if r % 2 == 0 else ["controller", "mirror-maker"]
        for variant in order:
            topic = f"bench-load-{variant}-{r}"
            create_topic(src, topic, LOAD_PARTITIONS)
            create_topic(tgt, topic, LOAD_PARTITIONS, {"message.timestamp.type": "LogAppendTime"})
            loader = start_child("load", src, topic, 60)
            try:
                times = run_child("workers", variant, src, tgt, topic, f"bench-{variant}-{r}", heartbeat_ms)
            finally:
                loader.kill()
                loader.wait()
            t = timeline(arrivals(tgt, topic, LOAD_PARTITIONS), times["stopped"], times["ready"])
            results[variant].append(t)
            print(f"  round {r + 1}: {variant:<13} steady {t['steady']:>6,.0f}/s, restart {t['window_s']:.2f} s, "
                  f"{t['below_half_s']:.1f} s below half, {t['copied_in_window']:,} copied in the window; "
                  f"longest pause per partition (s): {' '.join(f'{x:.2f}' for x in t['pauses'])}",
                  flush=True)  # fmt: skip
    return results


def main() -> None:
    logging.basicConfig(level=logging.ERROR)  # the clients' reconnect warnings while a broker starts
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--part", choices=("a", "b"), help="one part only (default both)")
    parser.add_argument("--heartbeat-ms", type=int, default=HEARTBEAT_INTERVAL_MS,
                        help="heartbeat.interval.ms of MirrorMaker's group in part b (default 3000, Kafka's)")  # fmt: skip
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="?", help=argparse.SUPPRESS)
    add_argument(parser)
    args = parser.parse_args()
    if args.child:
        if os.environ.get("BENCH_MIRROR_PROFILE") and args.child in ("loop", "mirror"):
            profile_threads(os.environ["BENCH_MIRROR_PROFILE"], args.child)
        print(json.dumps(CHILDREN[args.child](*json.loads(args.args))))
        return

    from kafka_lite.cli.cluster import stop_cluster

    with tempfile.TemporaryDirectory(prefix="bench-mirror-") as tmp:
        source, target = clusters(Path(tmp) / "state")
        try:
            if args.part in (None, "a"):
                print(f"(a) {args.records:,} records of {VALUE_BYTES} bytes, {COPY_PARTITIONS} partitions")
                rates = part_a(source, target, args.records, args.rounds)
            if args.part in (None, "b"):
                print(f"(b) {LOAD_RATE:,} records/s into {LOAD_PARTITIONS} partitions, {WORKERS} workers, one "
                      f"restarts; MirrorMaker's heartbeat.interval.ms {args.heartbeat_ms}")  # fmt: skip
                stalls = part_b(source, target, args.rounds, args.heartbeat_ms)
        finally:
            stop_cluster(target)
            stop_cluster(source)

    figures = []
    if args.part in (None, "a"):
        print_part_a(rates, args.rounds)
        figures += part_a_figures(rates, args.rounds)
    if args.part in (None, "b"):
        print_part_b(stalls, args.rounds)
        figures += part_b_figures(stalls)
    write(args.json, "bench_mirror_maker", figures)


def part_a_figures(rates: dict, rounds: int) -> list[dict]:
    consumer, mirror = statistics.median(rates["consumer"]), statistics.median(rates["mirror-maker"])
    loop = statistics.median(rates["loop"])
    return [
        figure(
            "MirrorMaker over the bare consume-and-send loop",
            mirror / loop,
            "x",
            at_least=LOOP_GOAL,
            detail=f"{mirror:,.0f} against {loop:,.0f} records/s, median of {rounds} rounds",
        ),
        figure(
            "MirrorMaker, share of the consumer's rate on the source alone",
            mirror / consumer,
            "%",
            at_least=GOAL,
            detail=f"{mirror:,.0f} against {consumer:,.0f} records/s",
        ),
    ]


def part_b_figures(stalls: dict) -> list[dict]:
    windows = {variant: statistics.median(t["window_s"] for t in runs) for variant, runs in stalls.items()}
    group, controller = windows["mirror-maker"], windows["controller"]
    return [
        figure(
            "one of four mirror workers restarts, the controller's window over the group's",
            controller / group,
            "x",
            detail=f"{controller:.2f} s against {group:.2f} s",
        )
    ]


def print_part_a(rates: dict, rounds: int) -> None:
    consumer, mirror = statistics.median(rates["consumer"]), statistics.median(rates["mirror-maker"])
    loop = statistics.median(rates["loop"])
    print(f"\n(a) medians of {rounds} rounds")
    print(f"| {'reader':<40} | {'records/s':>10} | {'of the consumer':>15} |")
    for label, rate in (("kafka_lite consumer (source only)", consumer),
                        ("consume-and-send loop, source to target", loop),
                        ("MirrorMaker, source to target", mirror)):  # fmt: skip
        print(f"| {label:<40} | {rate:>10,.0f} | {rate / consumer:>15.0%} |")
    met = "met" if mirror / consumer >= GOAL else "not met"
    print(f"MirrorMaker / consumer: {mirror / consumer:.0%} (goal: at least {GOAL:.0%}, {met})")


def print_part_b(stalls: dict, rounds: int) -> None:
    print(f"\n(b) medians of {rounds} rounds")
    print(f"| {'variant':<13} | {'steady /s':>9} | {'restart s':>9} | {'s below half':>12} | {'copied in restart':>17} "
          f"| {'of steady':>9} | {'paused >= 1 s':>13} | {'longest pause s':>15} |")  # fmt: skip
    keys = (
        "steady",
        "window_s",
        "below_half_s",
        "copied_in_window",
        "share_in_window",
        "paused",
        "longest_pause_s",
    )
    for variant, runs in stalls.items():
        med = {k: statistics.median(t[k] for t in runs) for k in keys}
        print(f"| {variant:<13} | {med['steady']:>9,.0f} | {med['window_s']:>9.2f} | {med['below_half_s']:>12.1f} "
              f"| {med['copied_in_window']:>17,.0f} | {med['share_in_window']:>9.0%} | {med['paused']:>13.0f} "
              f"| {med['longest_pause_s']:>15.2f} |")  # fmt: skip
    print(
        "\ntimelines (records per 100 ms from 2 s before the stop), the median round by seconds below half:"
    )
    for variant, runs in stalls.items():
        mid = sorted(runs, key=lambda t: t["below_half_s"])[len(runs) // 2]
        print(f"  {variant}: {' '.join(str(b) for b in mid['buckets'])}")


if __name__ == "__main__":
    main()
