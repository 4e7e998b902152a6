"""``kafka-lite demo``: the README's run command: a local cluster at work, then its layers.

No Kafka twin: Kafka's quick start (book 1.4) starts ZooKeeper and a broker, then produces and
consumes with the console tools. ``kafka-lite demo`` brings up ZooKeeper and three brokers (as
``kafka-lite cluster up`` does, on free ports in a scratch directory), creates a topic, produces to it
with ``kafka-lite console-producer``, consumes back with kcat (a real Kafka client) and with
``kafka-lite console-consumer`` in a group, describes the group's committed offsets and lag with
``kafka-lite consumer-groups``, shows where the records landed on disk, and stops the cluster.
``--layers`` shows the layers under the broker instead: record batches written to a segment, read
back, corrupted on purpose and caught, converted to the old formats; a partition's log rolling,
recovering from a torn write and dumped.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kafka_lite.cli import CliError
from kafka_lite.common.errors import CorruptRecordException
from kafka_lite.common.record import CompressionType, FileRecords, Header, MemoryRecords
from kafka_lite.common.record.convert import down_convert
from kafka_lite.common.record.inspect import describe_batch, render_tree
from kafka_lite.common.time import SYSTEM
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig
from kafka_lite.tools.dump_log_segments import dump

RECORDS_PER_BATCH = 200


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="a local cluster at work, or the layers under it (the README's run command)"
    )
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to write the demo's files (default: a temp dir)"
    )
    parser.add_argument("--layers", action="store_true", help="the record and storage layers, no cluster")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    if not args.layers:
        from kafka_lite.cli.cluster_demo import cluster_demo

        if args.dir is not None:
            return cluster_demo(args.dir, console)
        with tempfile.TemporaryDirectory(prefix="kafka-lite-demo-") as d:
            return cluster_demo(Path(d), console)
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        return _demo(args.dir, console)
    with tempfile.TemporaryDirectory(prefix="kafka-lite-demo-") as d:
        return _demo(Path(d), console)


def _records(batch_no: int, now_ms: int) -> list[tuple]:
    return [
        (
            now_ms + i,
            b"user-%d" % (i % 7),
            b'{"page": "/item/%d", "batch": %d}' % (i, batch_no),
            [Header("src", b"demo")],
        )
        for i in range(RECORDS_PER_BATCH)
    ]


def _demo(directory: Path, console: Console) -> int:
    now = SYSTEM.milliseconds()
    console.rule("[bold]1. A record batch (magic 2), field by field")
    small = MemoryRecords.with_records(_records(0, now)[:2])
    console.print(render_tree(describe_batch(small.buffer())))

    console.rule("[bold]2. One batch per codec, appended to a segment file")
    segment = directory / f"{0:020d}.log"
    log = FileRecords.open(segment)
    table = Table("codec", "base offset", "records", "bytes", "bytes/record")
    next_offset = 0
    for batch_no, codec in enumerate(CompressionType):
        records = MemoryRecords.with_records(
            _records(batch_no, now), compression=codec, base_offset=next_offset
        )
        log.append(records.buffer())
        table.add_row(
            codec.config_name, str(next_offset), str(RECORDS_PER_BATCH), str(records.size_in_bytes()),
            f"{records.size_in_bytes() / RECORDS_PER_BATCH:.1f}",
        )  # fmt: skip
        next_offset += RECORDS_PER_BATCH
    log.flush()
    console.print(table)
    console.print(f"wrote {log.size_in_bytes()} bytes to {segment}")

    console.rule("[bold]3. Read back and verify every CRC")
    stored = MemoryRecords(log.read_bytes())
    batches = stored.validate()
    records = list(stored.records())
    if [r.offset for r in records] != list(range(next_offset)):
        raise CliError("offsets read back do not match those written")
    console.print(
        f"{batches} batches, {len(records)} records, offsets 0..{records[-1].offset}: all CRCs valid"
    )

    console.rule("[bold]4. Flip one byte on disk: the CRC catches it")
    damaged_at = log.size_in_bytes() // 2
    raw = bytearray(log.read_bytes())
    raw[damaged_at] ^= 0xFF
    try:
        MemoryRecords(raw).validate()
    except CorruptRecordException as e:
        console.print(f"flipped byte {damaged_at} -> [red]CorruptRecordException[/]: {escape(str(e))}")
    else:
        raise CliError(f"a flipped byte at {damaged_at} went unnoticed")

    console.rule("[bold]5. The same records in the formats the book describes")
    sizes = Table("format", "bytes", "vs v2")
    v2_size = stored.size_in_bytes()
    for magic in (1, 0):
        old = down_convert(MemoryRecords(log.read_bytes()), magic)
        if sum(1 for _ in old.records()) != len(records):
            raise CliError(f"down-conversion to magic {magic} lost records")
        sizes.add_row(
            f"message set v{magic}", str(old.size_in_bytes()), f"{old.size_in_bytes() / v2_size:.2f}x"
        )
    sizes.add_row("record batch v2", str(v2_size), "1.00x")
    console.print(sizes)
    log.close()
    console.print("[green]record layer OK[/]")
    _storage_demo(directory, console)
    console.print(
        "[green]storage layer OK[/] - the broker and cluster arrive with later chapters (see README)."
    )
    return 0


def _storage_demo(directory: Path, console: Console) -> None:
    """A partition's log: written, rolled, crashed mid-write, recovered, and dumped."""
    console.rule("[bold]6. A partition log: appends roll segments and grow sparse indexes")
    partition_dir = directory / "demo-0"
    config = LogConfig(segment_bytes=64 * 1024, index_interval_bytes=4096)
    log = Log(partition_dir, config)
    now = SYSTEM.milliseconds()
    for batch_no in range(40):
        log.append(MemoryRecords.with_records(_records(batch_no, now + batch_no * 1000)[:50]))
    table = Table("segment", "bytes", "index entries", "time index entries")
    for segment in log.log_segments():
        table.add_row(
            f"{segment.base_offset:020d}.log", str(segment.size_in_bytes()),
            str(segment.index.entries), str(segment.time_index.entries),
        )  # fmt: skip
    console.print(table)
    console.print(f"log end offset {log.log_end_offset}, {log.number_of_segments} segments")
    written = log.log_end_offset

    console.rule("[bold]7. Crash mid-write: recovery cuts the torn batch and rebuilds the indexes")
    log.append(MemoryRecords.with_records(_records(99, now)[:50]))
    active = log.active_segment.log.path
    log.close()  # no clean-shutdown marker: the next open must recover
    with open(active, "r+b") as f:
        f.truncate(active.stat().st_size - 100)  # the last batch loses its final 100 bytes
    recovered = Log(partition_dir, config, recovery_point=written)
    if recovered.log_end_offset != written:
        raise CliError(f"recovery left LEO {recovered.log_end_offset}, expected {written}")
    console.print(f"reopened: torn batch dropped, log end offset back to {recovered.log_end_offset}")

    console.rule("[bold]8. kafka-lite dump-log on the first segment's index")
    first = recovered.log_segments()[0]
    recovered.close()
    for line in list(dump(first.index.path))[:6]:
        console.print(line, highlight=False, markup=False)
