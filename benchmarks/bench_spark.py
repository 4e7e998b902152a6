"""Spark benchmark: reading a topic through the ``kafka_lite`` data source, against reading the same
records from a Parquet file in the same Spark, and against a bare loop that only decodes the same
record batches in Python.

No Kafka twin: the comparison a Spark user makes (a topic read with Spark's Kafka source against the
same data in Parquet), plus the floor set by decoding records in Python at all.

    .venv/bin/python benchmarks/bench_spark.py [--records 1000000] [--value-bytes 100] [--rounds 3]

One broker (as bench_broker starts it) holds ``--records`` records of ``--value-bytes`` bytes in four
partitions, produced once with confluent-kafka. Spark runs ``local[2]``: two Python workers read two
partitions at a time. Each round times, in turn:

- ``kafka_lite``: ``spark.read.format("kafka_lite")`` over the network back-end (each task fetches
  its partition's range from the leader, decodes it with the compiled decoder and yields Arrow
  record batches), every column written to Spark's ``noop`` sink, so every record is read and
  converted and nothing else is done;
- ``kafka_lite (tuples)``: the same with ``kafka_lite.rows=tuples``, the readable path that yields one
  tuple per record and leaves the conversion to Spark;
- ``parquet``: the same rows, written once to a Parquet file before the rounds, read into ``noop``;
- ``bare decode``: in this process, the same record batches (fetched once, untimed) iterated record
  by record with kafka_lite's decoder and nothing else: the cost of the record format in Python, on
  one core;
- ``bare decode (compiled)``: the same loop over the compiled decoder the Arrow path uses.

The first read of a session starts Spark's Python workers; one untimed read of each kind comes first.
The table shows each kind's median rate, kafka_lite's ratio to Parquet and to the bare loop, and the
cost per record per core (wall time x cores used / records).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_broker import PARTITIONS, TOPIC, produce, start_broker, stop
from headline import add_argument, figure, write

from kafka_lite.zk.embedded import EmbeddedZooKeeper

BOOTSTRAP = "127.0.0.1:19092"  # where bench_broker.start_broker listens
SPARK_CORES = 2


def read_kafka_lite(spark, rows: str) -> None:
    df = (
        spark.read.format("kafka_lite")
        .option("kafka.bootstrap.servers", BOOTSTRAP)
        .option("subscribe", TOPIC)
        .option("kafka_lite.rows", rows)
        .load()
    )
    df.write.format("noop").mode("overwrite").save()


def read_parquet(spark, path: Path) -> None:
    spark.read.parquet(str(path)).write.format("noop").mode("overwrite").save()


def fetch_batches(records: int) -> list:
    """Every partition's record batches, fetched as an executor fetches them."""
    from kafka_lite.spark.network import NetworkDataConsumer, NetworkOffsetReader
    from kafka_lite.spark.offsets import OffsetRange
    from kafka_lite.spark.options import ClientSettings

    settings = ClientSettings(bootstrap_servers=BOOTSTRAP, log_dirs=(), kafka_params={})
    reader = NetworkOffsetReader(settings)
    tps = [(TOPIC, p) for p in PARTITIONS]
    latest = reader.latest_offsets(tps)
    reader.close()
    consumer = NetworkDataConsumer(settings)
    batches = []
    for tp in tps:
        batches += consumer.fetch(OffsetRange(tp[0], tp[1], 0, latest[tp]), fail_on_data_loss=True)
    consumer.close()
    found = sum(batch.next_offset - batch.base_offset for batch in batches)
    if found != records:
        raise RuntimeError(f"fetched {found} records' batches, expected {records}")
    return batches


def decode_all(batches: list, decode=iter) -> int:
    """Every record of ``batches``, decoded by ``decode`` (kafka_lite's decoder: iterating a batch)."""
    n = 0
    for batch in batches:
        for _record in decode(batch):
            n += 1
    return n


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    add_argument(parser)
    args = parser.parse_args()

    from kafka_lite.common.record import compiled
    from kafka_lite.spark import session

    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        directory = Path(tmp)
        zk = EmbeddedZooKeeper(directory / "zk")
        zk.start()
        broker = start_broker(directory, zk, sendfile=True)
        try:
            rate, _producer = produce(BOOTSTRAP, args.records, b"v" * args.value_bytes)
            print(f"produced {args.records:,} records of {args.value_bytes} bytes at {rate:,.0f} records/s")
            spark = session(app_name="bench_spark")
            parquet = directory / "bench.parquet"
            (
                spark.read.format("kafka_lite")
                .option("kafka.bootstrap.servers", BOOTSTRAP)
                .option("subscribe", TOPIC)
                .load()
                .write.parquet(str(parquet))
            )
            count = spark.read.parquet(str(parquet)).count()
            if count != args.records:
                raise RuntimeError(f"the Parquet copy has {count} rows, expected {args.records}")
            batches = fetch_batches(args.records)

            kinds = {
                "kafka_lite": lambda: read_kafka_lite(spark, "arrow"),
                "kafka_lite (tuples)": lambda: read_kafka_lite(spark, "tuples"),
                "parquet": lambda: read_parquet(spark, parquet),
                "bare decode": lambda: decode_all(batches),
                # the compiled twin of DefaultRecordBatch, reading each batch's own bytes
                "bare decode (compiled)": lambda: decode_all(
                    batches, lambda b: compiled.DefaultRecordBatch(b.buffer()) if b.magic >= 2 else b
                ),
            }
            for run in kinds.values():
                run()  # warm: Python workers started, files in the page cache
            seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
            for round_ in range(args.rounds):
                for kind, run in kinds.items():
                    seconds[kind].append(timed(run))
                print(f"round {round_ + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in seconds.items()))
            spark.stop()
        finally:
            stop(broker)
            zk.stop()

    median = {kind: statistics.median(v) for kind, v in seconds.items()}
    cores = {"bare decode": 1, "bare decode (compiled)": 1}
    print()
    print(f"| read of {args.records:,} records | median s | records/s | µs per record per core |")
    print("|---|---|---|---|")
    for kind, s in median.items():
        per_record_us = s * cores.get(kind, SPARK_CORES) / args.records * 1e6
        print(f"| {kind} | {s:.2f} | {args.records / s:,.0f} | {per_record_us:.2f} |")
    print()
    print(f"kafka_lite / parquet (rate): {median['parquet'] / median['kafka_lite']:.2f}")
    print(f"kafka_lite / bare decode (rate): {median['bare decode'] / median['kafka_lite']:.2f}")
    print(f"arrow / tuples (rate): {median['kafka_lite (tuples)'] / median['kafka_lite']:.2f}")
    ours = args.records / median["kafka_lite"]
    write(
        args.json,
        "bench_spark",
        [
            figure(
                f"Spark reading {args.records:,} records, kafka_lite's source over Parquet",
                median["parquet"] / median["kafka_lite"],
                "x",
                detail=f"{ours:,.0f} against {args.records / median['parquet']:,.0f} records/s, "
                f"median of {args.rounds} rounds",
            ),
            figure(
                "Spark's source over a bare loop decoding the same batches",
                median["bare decode"] / median["kafka_lite"],
                "x",
                detail=f"{ours:,.0f} against {args.records / median['bare decode']:,.0f} records/s",
            ),
        ],
    )


if __name__ == "__main__":
    main()
