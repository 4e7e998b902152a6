"""The end-of-partition stall: Kafka's fetch rule against the hold-back (``fetch_hold_back_caught_up``),
kafka_lite's consumer reading from one kafka_lite broker.

No Kafka twin: a measurement of one situation Kafka's ``Fetcher.createFetchRequests`` meets.

    .venv/bin/python benchmarks/bench_fetch_hold_back.py [--records 3000] [--rounds 3]

One broker leads both partitions of the topic. Partition 0 holds 10 records, partition 1
``--records`` records of 100 bytes. A consumer assigned both reads from the beginning with
``max_poll_records`` 100 and ``max_partition_fetch_bytes`` 32 KiB (the records were produced in
batches of about 8 KiB), so partition 1 takes many
fetches and its records stay buffered over several polls, while partition 0 is read to its end by
the first one. With Kafka's rule, partition 0 (fetchable, nothing buffered, its broker free) is then
fetched alone; the broker holds that fetch ``fetch_max_wait_ms`` (500 ms, the default), since
nothing new is there, and partition 1's next fetch waits behind it. With the hold-back, partition
0 waits for partition 1's next fetch instead.

Each round runs one consumer of each setting, taking turns; the clock runs from the first record
to the last. The table gives each setting's median seconds, its fetch requests, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench_broker import produce, start_broker, stop
from headline import add_argument, figure, write

from kafka_lite.zk.embedded import EmbeddedZooKeeper

BOOTSTRAP = "127.0.0.1:19092"  # where bench_broker.start_broker listens
TOPIC = "bench-hold-back"
SHORT_RECORDS = 10
SETTINGS = {"Kafka's rule": False, "hold-back": True}


def read_all(records: int, hold_back: bool) -> tuple[float, int]:
    """Seconds from the first record to the last, and the fetch requests sent, for one consumer."""
    from kafka_lite.consumer import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=BOOTSTRAP,
        max_poll_records=100,
        max_partition_fetch_bytes=32 * 1024,
        fetch_hold_back_caught_up=hold_back,
    )
    partitions = [TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)]
    consumer.assign(partitions)
    consumer.seek_to_beginning()
    total = records + SHORT_RECORDS
    got = 0
    start = None
    deadline = time.monotonic() + 120
    while got < total:
        if time.monotonic() > deadline:
            raise RuntimeError(f"read {got} of {total} records in 120 s")
        for batch in consumer.poll(timeout_ms=1000).values():
            if start is None:
                start = time.perf_counter()
            got += len(batch)
    elapsed = time.perf_counter() - start
    fetches = consumer.fetcher.fetch_latency.count
    consumer.close(timeout_ms=0)
    return elapsed, fetches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    add_argument(parser)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {name: [] for name in SETTINGS}
    fetches: dict[str, list[int]] = {name: [] for name in SETTINGS}
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-") as d:
        zk = EmbeddedZooKeeper(Path(d) / "zookeeper")
        zk.start()
        broker = start_broker(Path(d), zk, sendfile=False)
        try:
            value = os.urandom(100)
            produce(BOOTSTRAP, SHORT_RECORDS, value, topic=TOPIC, partition=0)[1].flush(30)
            # Batches of about 8 KiB, so a 32 KiB fetch brings a few of them, not the whole partition.
            small_batches = {"batch.size": 8192}
            produce(BOOTSTRAP, args.records, value, small_batches, TOPIC, partition=1)[1].flush(30)
            names = list(SETTINGS)
            for r in range(args.rounds):
                for name in names[r % 2 :] + names[: r % 2]:  # the first to run alternates
                    elapsed, sent = read_all(args.records, SETTINGS[name])
                    seconds[name].append(elapsed)
                    fetches[name].append(sent)
        finally:
            stop(broker)
            zk.stop()
    print(
        f"\n{args.records:,} records of 100 bytes in partition 1 and {SHORT_RECORDS} in partition 0 "
        f"(one leader), read from the beginning, median of {args.rounds} rounds"
    )
    for name in SETTINGS:
        print(
            f"{name:16}{statistics.median(seconds[name]):10.3f} s"
            f"{statistics.median(fetches[name]):8.0f} fetches"
        )
    ratio = statistics.median(seconds["Kafka's rule"]) / statistics.median(seconds["hold-back"])
    print(f"Kafka's rule takes {ratio:.1f}x the hold-back's time")
    rule, hold = (statistics.median(seconds[name]) for name in ("Kafka's rule", "hold-back"))
    detail = f"{rule:.2f} s against {hold:.2f} s, median of {args.rounds} rounds"
    write(
        args.json,
        "bench_fetch_hold_back",
        [
            figure(
                "end-of-partition stall, Kafka's fetch rule's time over the hold-back's",
                ratio,
                "x",
                detail=detail,
            )
        ],
    )


if __name__ == "__main__":
    main()
