"""``kafka-lite perf producer`` and ``perf consumer``: Kafka's ``kafka-producer-perf-test.sh`` and
``kafka-consumer-perf-test.sh``.

No Kafka twin for this module itself: the command-line face of
``kafka_lite.tools.producer_performance``, with Kafka 0.11's arguments (``--topic``,
``--num-records``, ``--record-size``, ``--throughput``, ``--producer-props k=v ...``,
``--producer.config``, ``--print-metrics``), plus ``--bootstrap-server`` (it sets
``bootstrap.servers``, over ``--producer-props``) and a rich progress bar on stderr, shown only at a
terminal and not with ``--no-progress``. Kafka's window lines and summary line go to stdout::

    kafka-lite perf producer --bootstrap-server 127.0.0.1:9092 --topic t \\
        --num-records 100000 --record-size 100 --throughput 10000 --producer-props acks=1 linger.ms=5

``perf consumer`` is the face of ``kafka_lite.tools.consumer_performance``, with Kafka's
arguments (``--bootstrap-server`` of 2.5, also spelled ``--broker-list`` as in 1.0, ``--topic``,
``--messages``, ``--group``, ``--from-latest``, ``--fetch-size``, ``--timeout`` of 2.0,
``--show-detailed-stats``, ``--reporting-interval``, ``--hide-header``, ``--consumer.config``) and the same progress bar; its
header and summary lines (or the detailed lines) go to stdout::

    kafka-lite perf consumer --bootstrap-server 127.0.0.1:9092 --topic t --messages 100000
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kafka_lite.cli import CliError, key_values, positive_int, properties_file, whole_number, with_causes
from kafka_lite.common.errors import KafkaException


def _throughput(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number: give records/s, or -1 for no limit"
        ) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite records/s, or -1 for no limit")
    if value == 0:
        raise argparse.ArgumentTypeError("0 records/s would send nothing: give records/s, or -1 for no limit")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "perf",
        help="load tests: perf producer, perf consumer (kafka-producer-perf-test.sh, kafka-consumer-perf-test.sh)",
    )
    tools = parser.add_subparsers(dest="tool", metavar="TOOL")
    tools.required = True
    producer = tools.add_parser(
        "producer", help="send records at a set rate; Kafka's throughput and latency summary"
    )
    producer.add_argument("--topic", required=True, help="the topic to send to")
    producer.add_argument("--num-records", type=positive_int("records"), required=True, metavar="N",
                          help="how many records to send")  # fmt: skip
    record_size = whole_number("bytes", too_small="a record size cannot be negative")
    producer.add_argument("--record-size", type=record_size, required=True, metavar="BYTES",
                          help="each record's value, in bytes (random capital letters, no key)")  # fmt: skip
    producer.add_argument("--throughput", type=_throughput, required=True, metavar="RECORDS/S",
                          help="at most this many records a second; -1 for no limit")  # fmt: skip
    producer.add_argument("--producer-props", nargs="+", default=[], metavar="K=V",
                          help="producer settings by Kafka's names (acks=all linger.ms=5 ...)")  # fmt: skip
    producer.add_argument("--producer.config", dest="producer_config", metavar="FILE",
                          help="producer settings in a properties file (--producer-props wins)")  # fmt: skip
    producer.add_argument("--bootstrap-server", metavar="HOST:PORT[,...]",
                          help="sets bootstrap.servers")  # fmt: skip
    producer.add_argument(
        "--print-metrics", action="store_true", help="print the producer's metrics at the end"
    )
    producer.add_argument("--no-progress", action="store_true", help="no progress bar")
    producer.set_defaults(handler=run_producer)
    _register_consumer(tools)


def _register_consumer(tools: argparse._SubParsersAction) -> None:
    from kafka_lite.tools import consumer_performance as perf

    consumer = tools.add_parser(
        "consumer", help="read records as fast as they come, in a new group; Kafka's throughput summary"
    )
    consumer.add_argument("--bootstrap-server", "--broker-list", dest="bootstrap_server", required=True,
                          metavar="HOST:PORT[,...]", help="brokers to find the cluster from")  # fmt: skip
    consumer.add_argument("--topic", required=True, help="the topic to read")
    consumer.add_argument(
        "--messages",
        type=positive_int("records"),
        required=True,
        metavar="N",
        help="how many records to read",
    )
    consumer.add_argument("--group", help="the group to read in (default: a new perf-consumer-N, N random)")
    consumer.add_argument("--from-latest", action="store_true",
                          help="start a new group at the log end (default: at the beginning)")  # fmt: skip
    consumer.add_argument("--fetch-size", type=positive_int("bytes"), default=perf.DEFAULT_FETCH_SIZE, metavar="BYTES",
                          help=f"max.partition.fetch.bytes (default: {perf.DEFAULT_FETCH_SIZE})")  # fmt: skip
    consumer.add_argument("--timeout", type=positive_int("ms"), default=perf.DEFAULT_TIMEOUT_MS, metavar="MS",
                          help=f"give up after this long without a record (default: {perf.DEFAULT_TIMEOUT_MS})")  # fmt: skip
    consumer.add_argument("--show-detailed-stats", action="store_true",
                          help="a line every --reporting-interval instead of the summary")  # fmt: skip
    consumer.add_argument("--reporting-interval", type=positive_int("ms"), default=perf.REPORTING_INTERVAL_MS, metavar="MS",
                          help=f"between detailed lines (default: {perf.REPORTING_INTERVAL_MS})")  # fmt: skip
    consumer.add_argument("--hide-header", action="store_true", help="no header line")
    consumer.add_argument("--consumer.config", dest="consumer_config", metavar="FILE",
                          help="consumer settings in a properties file")  # fmt: skip
    consumer.add_argument("--no-progress", action="store_true", help="no progress bar")
    consumer.set_defaults(handler=run_consumer)


def producer_settings(args: argparse.Namespace) -> dict[str, str]:
    """The producer's settings by Kafka's names: the file, then ``--producer-props``, then
    ``--bootstrap-server``; without ``bootstrap.servers`` among them, a usage error."""
    props = properties_file(args.producer_config, "--producer.config")
    props.update(key_values(args.producer_props, "--producer-props"))
    if args.bootstrap_server:
        props["bootstrap.servers"] = args.bootstrap_server
    if not props.get("bootstrap.servers"):
        raise CliError(
            "no brokers to connect to: give --bootstrap-server HOST:PORT "
            "(or bootstrap.servers in --producer-props or --producer.config)",
            exit_code=2,
        )
    return props


def progress_bar(
    args: argparse.Namespace, console: Console, counted: str
) -> tuple[Progress, Callable[[str], None]]:
    """The tool's progress bar on stderr (off with --no-progress or when stderr is no terminal), and
    ``out``, which prints a line of the tool's report."""
    err_console = Console(stderr=True)
    progress = Progress(
        TextColumn(f"[bold]{args.topic}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(counted),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=args.no_progress or not err_console.is_terminal,
    )

    def out(line: str) -> None:
        # While the bar is up on a terminal that is stdout's too, a line goes through the bar's own
        # console, which prints it above the bar; to a file or a pipe, stdout takes it as it is.
        live = progress.live.is_started and console.is_terminal
        (err_console if live else console).print(line, highlight=False, markup=False, soft_wrap=True)

    return progress, out


def run_producer(args: argparse.Namespace, console: Console) -> int:
    from kafka_lite import KafkaProducer
    from kafka_lite.tools import producer_performance as perf

    props = producer_settings(args)
    try:
        # Kafka's dotted names go in as they are: the producer's ConfigDef takes them beside
        # kafka-python's keywords, so a bad one is named as the user typed it.
        producer = KafkaProducer(**props)
    except KafkaException as e:
        raise CliError(str(e), exit_code=2) from None

    progress, out = progress_bar(args, console, "records sent")
    stats = perf.Stats(args.num_records, out=out)
    payload = perf.random_payload(args.record_size)
    try:
        with progress:
            task = progress.add_task("send", total=args.num_records)
            perf.run(
                producer, args.topic, args.num_records, payload, args.throughput, stats,
                progress=lambda n: progress.update(task, completed=n),
            )  # fmt: skip
        if stats.count:  # nothing acknowledged: the error below says why, a line of zeros would not
            stats.print_total()
        if args.print_metrics:
            for name, value in sorted(producer.metrics().items()):
                out(f"producer-metrics:{name:<40} : {float(value):.3f}")
    finally:
        producer.close(timeout=0)  # already closed by run, unless interrupted: then stop at once
    if stats.first_error is not None:
        e = stats.first_error
        raise CliError(
            f"{stats.errors} of the {stats.iteration} records sent failed, the first with " + with_causes(e)
        )
    return 0


def consumer_settings(args: argparse.Namespace) -> dict[str, str]:
    """The consumer's settings by Kafka's names, as Kafka's ``ConsumerPerfConfig`` sets them: the
    file, then the tool's options over it."""
    import random

    props = properties_file(args.consumer_config, "--consumer.config")
    props.update(
        {
            "bootstrap.servers": args.bootstrap_server,
            "group.id": args.group or f"perf-consumer-{random.randrange(100000)}",
            "max.partition.fetch.bytes": str(args.fetch_size),
            "auto.offset.reset": "latest" if args.from_latest else "earliest",
            "check.crcs": "false",  # as Kafka's tool: the test measures the consumer, not CRC32C
        }
    )
    props.setdefault("client.id", "perf-consumer")
    return props


def run_consumer(args: argparse.Namespace, console: Console) -> int:
    from kafka_lite import KafkaConsumer
    from kafka_lite.tools import consumer_performance as perf

    try:
        consumer = KafkaConsumer(**consumer_settings(args))
    except KafkaException as e:
        raise CliError(str(e), exit_code=2) from None

    progress, out = progress_bar(args, console, "records read")
    if not args.hide_header:
        out(perf.header(args.show_detailed_stats))
    stats = perf.ConsumerPerfStats()
    try:
        with progress:
            task = progress.add_task("read", total=args.messages)
            complete = perf.consume(
                consumer, [args.topic], args.messages, args.timeout, stats, args.reporting_interval,
                detailed=out if args.show_detailed_stats else None,
                progress=lambda n: progress.update(task, completed=n),
            )  # fmt: skip
    except KafkaException as e:
        raise CliError(with_causes(e)) from None
    finally:
        consumer.close()
    if not args.show_detailed_stats:
        out(stats.summary())
    if not complete:
        raise CliError(
            f"Exiting before consuming the expected number of messages: timeout ({args.timeout} ms) exceeded "
            f"after {stats.messages_read} of {args.messages}. You can use the --timeout option to increase "
            "the timeout."
        )
    return 0
