"""Storage benchmark: what ``Log.append`` adds to a plain file write, and how a lookup grows with the index.

No Kafka twin: modelled on Kafka's ``TestLinearWriteSpeed`` (a log against a plain channel write).

    .venv/bin/python benchmarks/bench_log_append.py [--mib 128] [--chunk-mib 8] [--repeat 7]

Prints:
* the rate of a plain Python loop writing 16 KiB buffers to a file, and of ``Log.append`` appending
  ready-made 16 KiB record batches (header and CRC checked, offsets assigned, indexes maintained,
  segments rolled at the default 1 GiB), on the same file system, and their ratio: the share of the
  write rate that is left once the log does its work per batch. Each repeat writes ``--mib``
  through both, interleaved in ``--chunk-mib`` chunks (which goes first alternates), so both meet
  the same page-cache and machine conditions; the ratio of a repeat is plain time / log time over
  the same bytes; the median, best and worst over repeats are printed;
* the cost of an ``OffsetIndex.lookup`` in an index of 1,000,000 entries against one of 1,000,
  warm, beside the ratio of their binary searches' probe counts (log2 of the entries), which is
  what the cost would grow by if each probe cost the same.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import tempfile
import time
from pathlib import Path

from headline import add_argument, figure, write

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import SYSTEM
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.offset_index import OffsetIndex

BATCH_BYTES = 16 * 1024


def _batch() -> MemoryRecords:
    """A 16 KiB v2 batch of 100-byte values, like a producer's full batch (batch.size=16384)."""
    records, size = [], 61
    while size + 120 < BATCH_BYTES:
        records.append((SYSTEM.milliseconds(), None, os.urandom(100)))
        size += 110
    # As the broker gets it: a memoryview into the network receive's bytearray (the RECORDS field of a
    # produce request decodes to a view, never a copy), which the log patches in place when it assigns
    # offsets.
    return MemoryRecords(memoryview(bytearray(MemoryRecords.with_records(records).buffer())))


def interleaved(directory: Path, records: MemoryRecords, count: int, chunk: int) -> tuple[float, float]:
    """Seconds spent writing ``count`` batches with a plain loop, and appending them to a ``Log``, in
    alternating chunks of ``chunk`` batches.

    Run one after the other, the two would meet different page-cache states and neighbours on a
    shared machine; interleaving gives both the same conditions. Chunks of megabytes keep the
    switch itself rare: the log's working set leaves the CPU caches once per chunk, not per batch.
    """
    payload = bytes(records.buffer())
    log = Log(directory / "bench-0", LogConfig(), time=SYSTEM)
    plain_path = directory / "plain.bin"
    plain_time = log_time = 0.0
    with open(plain_path, "wb", buffering=0) as f:
        for i in range(0, count, chunk):
            n = min(chunk, count - i)
            for which in ("plain", "log") if (i // chunk) % 2 == 0 else ("log", "plain"):
                start = time.perf_counter()
                if which == "plain":
                    for _ in range(n):
                        f.write(payload)
                    plain_time += time.perf_counter() - start
                else:
                    for _ in range(n):
                        log.append(records)
                    log_time += time.perf_counter() - start
    plain_path.unlink()
    log.delete()
    return plain_time, log_time


def lookup_costs(directory: Path, rounds: int, lookups: int = 200_000) -> list[tuple[float, float]]:
    """Seconds per ``OffsetIndex.lookup`` of a random offset in an index of 1,000 entries and in one
    of 1,000,000, for each of ``rounds`` passes over each, the two sizes timed alternately (pages warm),
    so that a slow spell on the machine does not fall on one size's passes only.
    """
    indexes = []
    for entries in (1_000, 1_000_000):
        index = OffsetIndex(directory / f"{entries}.index", 0, max_index_size=entries * 8)
        for i in range(entries):
            index.append(i * 10, i * 1024)  # positions must fit an int32, as in a real segment
        targets = [random.randrange(entries * 10) for _ in range(lookups)]
        for t in targets[:1000]:  # warm the pages
            index.lookup(t)
        indexes.append((index, targets))
    costs = []
    for r in range(rounds):
        cost = {}
        for index, targets in indexes if r % 2 == 0 else indexes[::-1]:
            lookup = index.lookup
            start = time.perf_counter()
            for t in targets:
                lookup(t)
            cost[index.entries] = (time.perf_counter() - start) / lookups
        costs.append((cost[1_000], cost[1_000_000]))
    for index, _ in indexes:
        index.delete()
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mib", type=int, default=128, help="data per repeat through each path (default 128 MiB)"
    )
    parser.add_argument("--chunk-mib", type=int, default=8, help="interleaving chunk (default 8 MiB)")
    parser.add_argument("--repeat", type=int, default=7)
    add_argument(parser)
    args = parser.parse_args()
    if args.mib < 1 or args.chunk_mib < 1 or args.repeat < 1:
        parser.error("--mib, --chunk-mib and --repeat must be at least 1")
    records = _batch()
    size = records.size_in_bytes()
    count = args.mib * 1024 * 1024 // size
    chunk = max(1, args.chunk_mib * 1024 * 1024 // size)
    runs = []
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-", dir=os.environ.get("BENCH_DIR")) as d:
        directory = Path(d)
        for _ in range(args.repeat):
            os.sync()  # each repeat starts with no dirty pages from the last
            runs.append(interleaved(directory, records, count, chunk))
        os.sync()  # the appends' dirty pages written back now, not by the kernel during the lookups
        lookups = lookup_costs(directory, rounds=args.repeat)
    mib = 1024 * 1024
    total = count * size
    ratios = sorted(plain / log for plain, log in runs)
    print(
        f"batch size: {size} bytes, {count} batches ({args.mib} MiB) per repeat through each path, "
        f"interleaved in {args.chunk_mib} MiB chunks, {args.repeat} repeats"
    )
    print(f"plain file write:  best {total / min(p for p, _ in runs) / mib:8.1f} MiB/s")
    print(f"Log.append:        best {total / min(lg for _, lg in runs) / mib:8.1f} MiB/s")
    print(
        f"append / plain:    median {ratios[len(ratios) // 2]:6.1%}, best {ratios[-1]:6.1%}, worst {ratios[0]:6.1%}"
        "  (the write rate left after validation, offsets, indexes and rolls)"
    )
    # A lookup's cost is its fastest pass: a pass only ever runs slower than the code does (other work
    # on the VM), so, as timeit does, the minimum is the estimate.
    small = min(small for small, _ in lookups)
    large = min(large for _, large in lookups)
    print(f"lookup, 1,000 entries:     {small * 1e6:6.2f} us  (fastest of {args.repeat} passes)")
    print(f"lookup, 1,000,000 entries: {large * 1e6:6.2f} us")
    probes = math.log2(1_000_000) / math.log2(1_000)
    print(
        f"1M / 1K lookup cost:       {large / small:6.2f}x  "
        f"(binary search probes: {probes:.2f}x; more means the larger index's probes cost more)"
    )
    plain_rate = total / min(p for p, _ in runs) / mib
    log_rate = total / min(lg for _, lg in runs) / mib
    write(
        args.json,
        "bench_log_append",
        [
            figure(
                "Log.append of 16 KiB batches, share of a plain file write",
                ratios[len(ratios) // 2],
                "%",
                detail=f"best repeats {log_rate:,.0f} and {plain_rate:,.0f} MiB/s",
            ),
            figure(
                "offset lookup, 1,000,000 index entries against 1,000",
                large / small,
                "x",
                detail=f"{small * 1e6:.2f} and {large * 1e6:.2f} µs",
            ),
        ],
    )


if __name__ == "__main__":
    main()
