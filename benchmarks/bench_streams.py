"""Streams benchmark: word count on kafka_lite Streams against the same loop written by hand and
against quixstreams; Kafka's SimpleBenchmark cases; and restoring a store from its changelog.

No Kafka twin: part b ports Kafka's ``SimpleBenchmark`` (streams/src/test/java/org/apache/kafka/
streams/perf/SimpleBenchmark.java, Kafka 0.10.1); the rest is modelled on it.

    .venv/bin/python benchmarks/bench_streams.py [--part all|a|b|c] [--rounds 5] [--lines 5000]
        [--records 200000] [--restore-records 200000] [--no-quix] [--buffered-records 1000]

``--buffered-records`` sets the word count's ``buffered.records.per.partition``; with
``BENCH_STREAMS_PROFILE=FILE`` in the environment, the word count's stream thread runs under
cProfile and writes its statistics to FILE.

One kafka_lite broker runs as its own process beside a ZooKeeper (as ``bench_broker`` starts it).

a. Word count, ``build_wordcount``'s topology, on one ``KafkaStreams`` instance (one stream thread)
   against the same aggregation written directly on kafka_lite's ``KafkaConsumer`` and
   ``KafkaProducer`` with the same I/O: one consumer subscribed to the lines and to a repartition
   topic; each line split, each word sent to the repartition topic keyed by itself; each word read
   back and counted in a dict, each new count sent to a changelog partition (the repartition
   partition's number) and to the output topic; every second the producer flushed and the offsets
   committed. With quixstreams installed in its own virtualenv (``benchmarks/.venv-quix``, made
   on first use unless ``--no-quix``), the same word count on quixstreams (``group_by``, a stateful
   ``apply`` on its RocksDB state, ``to_topic``). Every contestant runs in a fresh process, commits
   every second, writes counts as Kafka's ``Serdes.Long`` (8 bytes, big-endian), and prints "ready"
   once its consumer has its partitions; then the benchmark produces ``--lines`` lines of ten words
   (confluent-kafka) and reads the output topic (confluent-kafka) until every word's count has
   reached its final value. The clock runs from the first line sent to that last count seen. The
   contestants take turns in every round, the first one changing each round.

b. Kafka's SimpleBenchmark, in this process: ``--records`` records with 4-byte Integer keys and
   100-byte values, produced before the clock starts; a source with a processor that waits for the
   last key (``processStream``), the same processor putting every record in a persistent store
   (``processStreamWithStateStore``), and a stream left-joined with a table (``kStreamKTableJoin``):
   the table's topic holds every key once, the stream's topic the same number of records with random
   keys, written after the table's, so every record finds its row. The clock runs from the first
   record entering the task (the timestamp extractor sees it) to the last one out of the topology
   (Kafka's runs from ``start()``, which would add the group's join to a few seconds of work);
   the join's rate counts the stream's records, as Kafka's latch does, though the table's as many
   records are read in the same time. MB/s counts each record as 108 bytes, as Kafka's
   ``megaBytePerSec`` does.

c. Restoring: ``--restore-records`` records (distinct 8-byte keys, 100-byte values) in the
   changelog partition of a persistent, logged store; then a ``KafkaStreams`` whose state
   directory is empty starts, and its task's ``ProcessorStateManager.register`` replays the
   changelog into the store before the task processes anything. The benchmark times ``register``
   (wrapped here, from the outside) and checks ``task.state_mgr.restored``; for scale, a plain
   ``KafkaConsumer`` reading the same partition from the beginning, the two alternating.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from headline import add_argument, figure, write

HERE = Path(__file__).resolve().parent
QUIX_VENV = HERE / ".venv-quix"
BOOTSTRAP = "127.0.0.1:19092"  # where bench_broker.start_broker listens
PARTITIONS = 2
COMMIT_INTERVAL_S = 1.0
WORDS_PER_LINE = 10
VOCABULARY = 2000
CONTESTANTS = ["kafka_lite Streams", "hand-written loop", "quixstreams"]
# Streams' word count against the others: at most LOOP_GOAL times the hand-written loop's time, and at
# least QUIX_GOAL times quixstreams' rate.
LOOP_GOAL, QUIX_GOAL = 1.5, 1.0
CHILD = {"kafka_lite Streams": "streams", "hand-written loop": "loop", "quixstreams": "quix"}


def topics(prefix: str) -> dict[str, str]:
    """The topics of one word count run; the repartition and changelog ones are the loop's own."""
    return {
        "input": f"{prefix}-lines",
        "output": f"{prefix}-counts",
        "repartition": f"{prefix}-loop-repartition",
        "changelog": f"{prefix}-loop-changelog",
    }


def in_turn(names: list[str], r: int) -> list[str]:
    """``names`` in round ``r``'s order: the first to run moves on by one each round."""
    return names[r % len(names) :] + names[: r % len(names)]


def split_words(line: str) -> list[str]:
    """``wordcount.split_words``, repeated here for the quixstreams process, which has no kafka_lite."""
    import re

    return [word for word in re.split(r"\W+", line.lower()) if word]


# -- a: the contestants, each run in its own process ------------------------------------------------------


def child_streams(prefix: str, state_dir: str) -> None:
    from kafka_lite.streams.examples.wordcount import build_wordcount
    from kafka_lite.streams.kafka_streams import KafkaStreams, State
    from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder

    names = topics(prefix)
    if os.environ.get("BENCH_STREAMS_PROFILE"):
        profile_stream_threads(os.environ["BENCH_STREAMS_PROFILE"])
    builder = build_wordcount(KStreamBuilder(), names["input"], names["output"])
    props = {
        "application.id": f"{prefix}-streams",
        "bootstrap.servers": BOOTSTRAP,
        "state.dir": state_dir,
        "commit.interval.ms": int(COMMIT_INTERVAL_S * 1000),
        "buffered.records.per.partition": int(os.environ.get("BENCH_BUFFERED_RECORDS", "1000")),
    }
    streams = KafkaStreams(builder, props)
    streams.start()
    while streams.state() is not State.RUNNING:
        time.sleep(0.01)
    print("ready", flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
    streams.close(30_000)


def profile_stream_threads(path: str) -> None:
    """Run every stream thread under cProfile, its statistics written to ``path`` when it ends."""
    import cProfile

    from kafka_lite.streams.processor.internals.stream_thread import StreamThread

    run = StreamThread.run

    def profiled_run(self) -> None:
        profiler = cProfile.Profile()
        try:
            profiler.runcall(run, self)
        finally:
            profiler.dump_stats(path)

    StreamThread.run = profiled_run


def child_loop(prefix: str) -> None:
    """The word count on the clients alone: Streams' I/O without Streams."""
    from kafka_lite import KafkaConsumer, KafkaProducer

    names = topics(prefix)
    source, repartition, changelog, output = (
        names["input"],
        names["repartition"],
        names["changelog"],
        names["output"],
    )
    consumer = KafkaConsumer(
        bootstrap_servers=BOOTSTRAP,
        group_id=f"{prefix}-loop",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=1000,  # as Streams' consumer
    )
    producer = KafkaProducer(bootstrap_servers=BOOTSTRAP, linger_ms=100)  # as Streams' producer
    consumer.subscribe([source, repartition])
    while not consumer.assignment():
        consumer.poll(100)
    print("ready", flush=True)
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    counts: dict[bytes, int] = {}
    last_commit = time.monotonic()
    while not stop.is_set():
        for partition, records in consumer.poll(100).items():
            if partition.topic == source:
                for record in records:
                    for word in split_words(record.value.decode()):
                        key = word.encode()
                        producer.send(repartition, key=key, value=key)
            else:
                for record in records:
                    count = counts.get(record.key, 0) + 1
                    counts[record.key] = count
                    value = count.to_bytes(8, "big", signed=True)
                    producer.send(changelog, key=record.key, value=value, partition=partition.partition)
                    producer.send(output, key=record.key, value=value)
        if time.monotonic() - last_commit >= COMMIT_INTERVAL_S:
            producer.flush()  # what is committed as read has been written, as Streams' commit
            consumer.commit_sync()
            last_commit = time.monotonic()
    producer.close()
    consumer.close()


def child_quix(prefix: str, state_dir: str) -> None:
    """The word count on quixstreams; runs in ``.venv-quix``, without kafka_lite."""
    import logging

    from quixstreams import Application

    names = topics(prefix)
    app = Application(
        broker_address=BOOTSTRAP,
        consumer_group=f"{prefix}-quix",
        auto_offset_reset="earliest",
        commit_interval=COMMIT_INTERVAL_S,
        state_dir=state_dir,
        loglevel=logging.WARNING,
    )
    lines = app.topic(names["input"], key_deserializer="str", value_deserializer="str")
    counts = app.topic(names["output"], key_serializer="str", value_serializer="bytes")

    def count(word: str, state) -> bytes:
        n = state.get("count", 0) + 1
        state.set("count", n)
        return n.to_bytes(8, "big", signed=True)

    sdf = app.dataframe(lines)
    sdf = sdf.apply(split_words, expand=True)
    sdf = sdf.group_by(lambda word: word, name="word")
    sdf = sdf.apply(count, stateful=True)
    sdf.to_topic(counts)

    on_assign = app._on_assign  # quixstreams has no public "assigned" hook; run() subscribes with this

    def on_assign_then_ready(consumer, partitions):
        on_assign(consumer, partitions)
        print("ready", flush=True)

    app._on_assign = on_assign_then_ready
    threading.Thread(target=lambda: (sys.stdin.read(), app.stop()), daemon=True).start()
    app.run()


# -- a: the driver -----------------------------------------------------------------------------------


def make_lines(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"word{i:04d}" for i in range(VOCABULARY)]
    return [" ".join(rng.choices(vocabulary, k=WORDS_PER_LINE)) for _ in range(count)]


def create_topics(names: list[str], partitions: int = PARTITIONS) -> None:
    from kafka_lite import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(BOOTSTRAP)
    try:
        admin.create_topics([NewTopic(name, partitions, 1) for name in names])
    finally:
        admin.close()


def quix_python(install: bool) -> Path | None:
    """quixstreams' interpreter: its own virtualenv, since it pins a confluent-kafka older than ours."""
    python = QUIX_VENV / "bin" / "python"
    if not python.exists() and install:
        print("creating benchmarks/.venv-quix and installing quixstreams ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(QUIX_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "quixstreams"], check=True)
    return python if python.exists() else None


def run_word_count(contestant: str, prefix: str, lines: list[str], python: Path, state_dir: Path) -> float:
    """Seconds from the first line sent to the last final count seen on the output topic."""
    from collections import Counter

    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    names = topics(prefix)
    create_topics([names["input"], names["output"]])
    if contestant == "hand-written loop":
        create_topics([names["repartition"], names["changelog"]])
    expected = Counter(word.encode() for line in lines for word in split_words(line))
    child = subprocess.Popen(
        [str(python), str(Path(__file__)), "--child", CHILD[contestant], prefix, str(state_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{contestant} did not start")
        observer = Consumer(
            {"bootstrap.servers": BOOTSTRAP, "group.id": f"{prefix}-observer", "enable.auto.commit": False}
        )
        observer.assign([TopicPartition(names["output"], p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 5})
        start = time.perf_counter()
        for i, line in enumerate(lines):
            producer.produce(names["input"], line.encode(), str(i).encode())
        producer.flush(30)
        final = 0
        deadline = time.monotonic() + 300
        while final < len(expected):
            if time.monotonic() > deadline or child.poll() is not None:
                raise RuntimeError(f"{contestant}: {final} of {len(expected)} words counted")
            for message in observer.consume(10_000, 0.05):
                if message.error() is None:
                    if int.from_bytes(message.value(), "big") == expected[message.key()]:
                        final += 1
        elapsed = time.perf_counter() - start
        observer.close()
        return elapsed
    finally:
        child.stdin.close()
        try:
            child.wait(60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def part_a(args: argparse.Namespace, tmp: Path) -> list[dict]:
    contestants = CONTESTANTS[:2]
    pythons = {name: Path(sys.executable) for name in contestants}
    quix = None if args.no_quix else quix_python(install=True)
    if quix is not None:
        contestants.append("quixstreams")
        pythons["quixstreams"] = quix
    lines = make_lines(args.lines, seed=1)
    words = len(lines) * WORDS_PER_LINE
    seconds: dict[str, list[float]] = {name: [] for name in contestants}
    for r in range(args.rounds):
        for name in in_turn(contestants, r):
            prefix = f"wc{r}-{CHILD[name]}"
            elapsed = run_word_count(name, prefix, lines, pythons[name], tmp / prefix)
            seconds[name].append(elapsed)
            print(f"  round {r + 1}: {name:20}{elapsed:8.2f} s", flush=True)
    print(
        f"\na. word count: {len(lines):,} lines of {WORDS_PER_LINE} words ({words:,} words, "
        f"{VOCABULARY:,} distinct), {PARTITIONS} partitions, median of {args.rounds} rounds"
    )
    print(f"{'':22}{'median s':>10}{'lines/s':>10}{'words/s':>10}   rounds, lowest to highest (s)")
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    for name in contestants:
        m = medians[name]
        spread = f"{min(seconds[name]):.2f} to {max(seconds[name]):.2f}"
        print(f"{name:22}{m:10.2f}{len(lines) / m:10,.0f}{words / m:10,.0f}   {spread}")
    ours = medians["kafka_lite Streams"]
    loop = medians["hand-written loop"]
    print(f"kafka_lite Streams takes {ours / loop:.2f}x the loop's time (goal {LOOP_GOAL:.2f}x)")
    figures = [
        figure(
            "Streams' word count, its time over the hand-written loop's",
            ours / loop,
            "x",
            at_most=LOOP_GOAL,
            detail=f"{ours:.2f} s against {loop:.2f} s for {len(lines):,} lines, median of {args.rounds} rounds",
        )
    ]
    if "quixstreams" in medians:
        quix = medians["quixstreams"]
        print(f"kafka_lite Streams runs at {quix / ours:.2f}x quixstreams' rate (goal {QUIX_GOAL:.2f}x)")
        figures.insert(
            0,
            figure(
                "Streams' word count, its rate over quixstreams'",
                quix / ours,
                "x",
                at_least=QUIX_GOAL,
                detail=f"{len(lines) / ours:,.0f} against {len(lines) / quix:,.0f} lines/s",
            ),
        )
    return figures


# -- b: Kafka's SimpleBenchmark ----------------------------------------------------------------------

KEY_SIZE, VALUE_SIZE = 8, 100  # Kafka's RECORD_SIZE counts an 8-byte key for its 4-byte Integer keys
RECORD_SIZE = KEY_SIZE + VALUE_SIZE


def produce_keyed(topic: str, keys, value: bytes) -> None:
    from confluent_kafka import Producer

    producer = Producer(
        {"bootstrap.servers": BOOTSTRAP, "linger.ms": 5, "queue.buffering.max.messages": 2_000_000}
    )
    for key in keys:
        while True:
            try:
                producer.produce(topic, value, struct.pack(">i", key))
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(120):
        raise RuntimeError(f"records for {topic} were not delivered")


class Clock:
    """The time the first record entered a task (the clock is the tasks' timestamp extractor, which
    sees every record as it is buffered, from whichever topic) and the time the last one came out
    of the topology; an event set then."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.seen = 0
        self.first = 0.0
        self.last = 0.0
        self.done = threading.Event()

    def extract(self, record) -> int:
        if not self.first:
            self.first = time.perf_counter()
        return record.timestamp

    def tick(self) -> None:
        self.seen += 1
        if self.seen == self.total:
            self.last = time.perf_counter()
            self.done.set()


def simple_topology(case: str, source: str, table: str, clock: Clock):
    """One of SimpleBenchmark's topologies, each ending in ``clock.tick()`` per record."""
    from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
    from kafka_lite.streams.processor.processor import AbstractProcessor
    from kafka_lite.streams.processor.topology_builder import TopologyBuilder
    from kafka_lite.streams.serialization import Serdes
    from kafka_lite.streams.state.stores import Stores

    integer, byte_array = Serdes.Integer(), Serdes.ByteArray()
    if case == "join":
        # createKafkaStreamsKStreamKTableJoin: input1.leftJoin(input2, VALUE_JOINER).foreach(countDown)
        builder = KStreamBuilder()
        stream = builder.stream(source, key_serde=integer, value_serde=byte_array)
        rows = builder.table(table, f"{table}-store", key_serde=integer, value_serde=byte_array)
        joined = stream.left_join(rows, lambda v1, v2: v1 + v2 if v2 is not None else v1)
        joined.foreach(lambda key, value: clock.tick())
        return builder

    class Process(AbstractProcessor):
        def process(self, key, value) -> None:
            clock.tick()

    class ProcessWithStore(AbstractProcessor):
        def init(self, context) -> None:
            super().init(context)
            self.store = context.get_state_store("store")

        def process(self, key, value) -> None:
            self.store.put(key, value)
            clock.tick()

    builder = TopologyBuilder()
    builder.add_source(
        "source",
        source,
        key_deserializer=integer.deserializer(),
        value_deserializer=byte_array.deserializer(),
    )
    builder.add_processor("process", Process if case == "process" else ProcessWithStore, "source")
    if case == "store":
        # Stores.create("store").withIntegerKeys().withByteArrayValues().persistent().build()
        store = Stores.create("store").with_keys(integer).with_values(byte_array).persistent().build()
        builder.add_state_store(store, "process")
    return builder


SIMPLE_CASES = {
    "process": "source -> processor (processStream)",
    "store": "source -> processor with a store (processStreamWithStateStore)",
    "join": "stream left-join table (kStreamKTableJoin)",
}


def run_simple(case: str, r: int, source: str, table: str, records: int, tmp: Path) -> float:
    from kafka_lite.streams.kafka_streams import KafkaStreams

    clock = Clock(records)
    props = {
        "application.id": f"simple-benchmark-{case}-{r}",
        "bootstrap.servers": BOOTSTRAP,
        "state.dir": str(tmp / f"simple-{case}-{r}"),
        "timestamp.extractor": clock,
    }
    streams = KafkaStreams(simple_topology(case, source, table, clock), props)
    streams.start()
    try:
        if not clock.done.wait(600):
            raise RuntimeError(f"{case}: {clock.seen} of {records} records processed")
    finally:
        streams.close(60_000)
    return clock.last - clock.first


def part_b(args: argparse.Namespace, tmp: Path) -> list[dict]:
    value = bytes(VALUE_SIZE)
    source, stream, table = (
        "simpleBenchmarkSourceTopic",
        "joinSourceTopic1kStreamKTable",
        "joinSourceTopic2kStreamKTable",
    )
    create_topics([source, stream, table], partitions=1)
    rng = random.Random(2)
    produce_keyed(source, range(args.records), value)
    # The table first: records are processed in timestamp order, so every stream record finds its row.
    produce_keyed(table, range(args.records), value)
    produce_keyed(stream, (rng.randrange(args.records) for _ in range(args.records)), value)
    seconds: dict[str, list[float]] = {case: [] for case in SIMPLE_CASES}
    cases = list(SIMPLE_CASES)
    for r in range(args.rounds):
        for case in in_turn(cases, r):
            elapsed = run_simple(case, r, stream if case == "join" else source, table, args.records, tmp)
            seconds[case].append(elapsed)
            print(f"  round {r + 1}: {case:8}{elapsed:8.2f} s", flush=True)
    print(
        f"\nb. SimpleBenchmark: {args.records:,} records (4-byte Integer keys, {VALUE_SIZE}-byte values), "
        f"one partition, one stream thread, median of {args.rounds} rounds"
    )
    print(f"{'':64}{'median s':>10}{'records/s':>11}{'MB/s':>8}   rounds (s)")
    for case, label in SIMPLE_CASES.items():
        m = statistics.median(seconds[case])
        mb = args.records * RECORD_SIZE / 2**20 / m
        spread = f"{min(seconds[case]):.2f} to {max(seconds[case]):.2f}"
        print(f"{label:64}{m:10.2f}{args.records / m:11,.0f}{mb:8.2f}   {spread}")
    return [
        figure(
            f"SimpleBenchmark, {label}",
            args.records / statistics.median(seconds[case]),
            "records/s",
            detail=f"{args.records:,} records, median of {args.rounds} rounds",
        )
        for case, label in SIMPLE_CASES.items()
    ]


# -- c: restoring a store from its changelog --------------------------------------------------------


def run_restore(r: int, app_id: str, source: str, records: int, tmp: Path) -> tuple[float, int]:
    """Seconds the task's state manager spent registering (restoring) the store, and records restored."""
    from kafka_lite.streams.kafka_streams import KafkaStreams, State
    from kafka_lite.streams.processor.internals.processor_state_manager import ProcessorStateManager

    timings: list[float] = []
    register = ProcessorStateManager.register

    def timed_register(self, store, logging_enabled, restore_callback):
        start = time.perf_counter()
        register(self, store, logging_enabled, restore_callback)
        timings.append(time.perf_counter() - start)

    ProcessorStateManager.register = timed_register
    clock = Clock(1)
    props = {"application.id": app_id, "bootstrap.servers": BOOTSTRAP, "state.dir": str(tmp / f"restore-{r}")}
    streams = KafkaStreams(simple_topology("store", source, "", clock), props)
    try:
        streams.start()
        deadline = time.monotonic() + 600
        while streams.state() is not State.RUNNING or not timings:
            if time.monotonic() > deadline:
                raise RuntimeError("the task did not restore within 600 s")
            time.sleep(0.01)
        restored = sum(
            task.state_mgr.restored.get("store", 0)
            for thread in streams.threads
            for task in thread.active_tasks.values()
        )
    finally:
        streams.close(60_000)
        ProcessorStateManager.register = register
    if restored != records:
        raise RuntimeError(f"restored {restored} of {records} records")
    return sum(timings), restored


def read_partition(topic: str, records: int) -> float:
    """Seconds a plain kafka_lite consumer takes to read ``topic``'s partition 0 from the beginning."""
    from kafka_lite import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP, max_poll_records=1000)  # as the restore consumer
    partition = TopicPartition(topic, 0)
    start = time.perf_counter()
    consumer.assign([partition])
    consumer.seek_to_beginning(partition)
    got = 0
    while got < records:
        got += sum(len(batch) for batch in consumer.poll(100).values())
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed


def part_c(args: argparse.Namespace, tmp: Path) -> list[dict]:
    from confluent_kafka import Producer

    app_id, source = "restore-benchmark", "restoreBenchmarkSourceTopic"
    changelog = f"{app_id}-store-changelog"
    create_topics([source, changelog], partitions=1)
    producer = Producer(
        {"bootstrap.servers": BOOTSTRAP, "linger.ms": 5, "queue.buffering.max.messages": 2_000_000}
    )
    value = os.urandom(VALUE_SIZE)
    for i in range(args.restore_records):
        while True:
            try:
                producer.produce(changelog, value, struct.pack(">q", i), partition=0)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(120):
        raise RuntimeError("the changelog was not filled")
    restore_s: list[float] = []
    read_s: list[float] = []
    for r in range(args.rounds):
        for step in in_turn(["restore", "read"], r):
            if step == "restore":
                elapsed, _restored = run_restore(r, app_id, source, args.restore_records, tmp)
                restore_s.append(elapsed)
            else:
                read_s.append(read_partition(changelog, args.restore_records))
        print(f"  round {r + 1}: restore {restore_s[-1]:.2f} s, plain read {read_s[-1]:.2f} s", flush=True)
    n = args.restore_records
    restore, read = statistics.median(restore_s), statistics.median(read_s)
    print(
        f"\nc. restoring a persistent store from {n:,} changelog records "
        f"({KEY_SIZE}-byte keys, {VALUE_SIZE}-byte values), median of {args.rounds} rounds"
    )
    print(f"{'':44}{'median s':>10}{'records/s':>11}   rounds (s)")
    print(f"{'ProcessorStateManager.register (restore)':44}{restore:10.2f}{n / restore:11,.0f}"
          f"   {min(restore_s):.2f} to {max(restore_s):.2f}")  # fmt: skip
    print(f"{'plain KafkaConsumer read of the changelog':44}{read:10.2f}{n / read:11,.0f}"
          f"   {min(read_s):.2f} to {max(read_s):.2f}")  # fmt: skip
    print(f"restoring runs at {read / restore:.2f}x the plain read's rate")
    return [
        figure(
            "restoring a persistent store, its rate over a plain consumer's read",
            read / restore,
            "x",
            detail=f"{n / restore:,.0f} against {n / read:,.0f} records/s",
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["all", "a", "b", "c"], default="all")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lines", type=int, default=5_000)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--restore-records", type=int, default=200_000)
    parser.add_argument("--no-quix", action="store_true")
    parser.add_argument(
        "--buffered-records",
        type=int,
        default=1000,
        help="buffered.records.per.partition of the word count's Streams instance (Kafka's default 1000)",
    )
    parser.add_argument("--child", nargs=3, metavar=("KIND", "PREFIX", "STATE_DIR"), help=argparse.SUPPRESS)
    add_argument(parser)
    args = parser.parse_args()
    if args.child:
        kind, prefix, state_dir = args.child
        {"streams": lambda: child_streams(prefix, state_dir), "loop": lambda: child_loop(prefix),
         "quix": lambda: child_quix(prefix, state_dir)}[kind]()  # fmt: skip
        return

    from bench_broker import start_broker, stop

    from kafka_lite.zk.embedded import EmbeddedZooKeeper

    os.environ["BENCH_BUFFERED_RECORDS"] = str(args.buffered_records)  # read by the Streams child
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        tmp = Path(d)
        zk = EmbeddedZooKeeper(tmp / "zookeeper")
        zk.start()
        broker = start_broker(tmp, zk, sendfile=False)
        figures = []
        try:
            if args.part in ("all", "a"):
                figures += part_a(args, tmp)
            if args.part in ("all", "b"):
                figures += part_b(args, tmp)
            if args.part in ("all", "c"):
                figures += part_c(args, tmp)
        finally:
            stop(broker)
            zk.stop()
    write(args.json, "bench_streams", figures)


if __name__ == "__main__":
    main()
