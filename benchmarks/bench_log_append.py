"""Storage benchmark: how close ``Log.append`` gets to the raw file write rate, and index lookup cost.

No Kafka twin: modelled on Kafka's ``TestLinearWriteSpeed`` (a log against a plain channel write).

    .venv/bin/python benchmarks/bench_log_append.py [--mib 128] [--repeat 5]

Prints, over ``--repeat`` alternating runs of each:
* the rate of a plain Python loop writing 16 KiB buffers to a file, and of ``Log.append`` appending
  ready-made 16 KiB record batches (header and CRC checked, offsets assigned, indexes maintained,
  segments rolled at the default 1 GiB), on the same file system; and their ratio (goal >= 60 %);
* the cost of an ``OffsetIndex.lookup`` in an index of 1,000,000 entries against one of 1,000,
  warm (goal: at most twice).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

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


def plain_write(directory: Path, payload: bytes, count: int) -> float:
    path = directory / "plain.bin"
    start = time.perf_counter()
    with open(path, "wb", buffering=0) as f:
        for _ in range(count):
            f.write(payload)
    elapsed = time.perf_counter() - start
    path.unlink()
    return count * len(payload) / elapsed


def log_append(directory: Path, records: MemoryRecords, count: int) -> float:
    log = Log(directory / "bench-0", LogConfig(), time=SYSTEM)
    start = time.perf_counter()
    for _ in range(count):
        log.append(records)
    elapsed = time.perf_counter() - start
    log.delete()
    return count * records.size_in_bytes() / elapsed


def lookup_cost(directory: Path, entries: int, lookups: int = 200_000) -> float:
    index = OffsetIndex(directory / f"{entries}.index", 0, max_index_size=entries * 8)
    for i in range(entries):
        index.append(i * 10, i * 1024)  # positions must fit an int32, as in a real segment
    targets = [random.randrange(entries * 10) for _ in range(lookups)]
    for t in targets[:1000]:  # warm the pages
        index.lookup(t)
    start = time.perf_counter()
    for t in targets:
        index.lookup(t)
    elapsed = time.perf_counter() - start
    index.delete()
    return elapsed / lookups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=128, help="data per run (default 128 MiB)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    records = _batch()
    count = args.mib * 1024 * 1024 // records.size_in_bytes()
    plain_rates, log_rates = [], []
    with tempfile.TemporaryDirectory(prefix="kafka-lite-bench-", dir=os.environ.get("BENCH_DIR")) as d:
        directory = Path(d)
        # Alternate the two, each starting from a flushed page cache (os.sync), so that write-back of
        # one run's dirty pages does not slow the next: on this VM that effect is larger than the code's.
        for _ in range(args.repeat):
            os.sync()
            plain_rates.append(plain_write(directory, bytes(records.buffer()), count))
            os.sync()
            log_rates.append(log_append(directory, records, count))
        small = min(lookup_cost(directory, 1_000) for _ in range(3))
        large = min(lookup_cost(directory, 1_000_000) for _ in range(3))
    mib = 1024 * 1024
    pairs = sorted(log / plain for log, plain in zip(log_rates, plain_rates, strict=True))
    print(
        f"batch size: {records.size_in_bytes()} bytes, {count} batches ({args.mib} MiB) per run, {args.repeat} runs each"
    )
    print(f"plain file write:  best {max(plain_rates) / mib:8.1f} MiB/s")
    print(f"Log.append:        best {max(log_rates) / mib:8.1f} MiB/s")
    print(
        f"append / plain:    best/best {max(log_rates) / max(plain_rates):6.1%}, median of pairs {pairs[len(pairs) // 2]:6.1%}  (goal >= 60%)"
    )
    print(f"lookup, 1,000 entries:     {small * 1e6:6.2f} us")
    print(f"lookup, 1,000,000 entries: {large * 1e6:6.2f} us")
    print(f"1M / 1K lookup cost:       {large / small:6.2f}x  (goal <= 2x)")


if __name__ == "__main__":
    main()
