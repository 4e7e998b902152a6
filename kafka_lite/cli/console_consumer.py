"""``kafka-lite console-consumer --bootstrap-server B --topic T``: Kafka's ``kafka-console-consumer.sh``.

No Kafka twin for this module itself: the command-line face of ``kafka_lite.tools.console_consumer``,
flag for flag with Kafka's tool (0.10.1's, with ``--group`` of 1.0 and the formatter properties of
2.7). Prints each record's value, one per line, to stdout, until ``--max-messages``, ``--timeout-ms``
without a record, or Ctrl-C; then ``Processed a total of N messages`` on stderr::

    kafka-lite console-consumer --bootstrap-server 127.0.0.1:9092 --topic t --from-beginning \\
        --property print.key=true --property key.separator=: --max-messages 10

The formatter's ``key.deserializer`` and ``value.deserializer`` properties take Kafka's class names
(``kafka_lite.cli.serde_classes``), as in Kafka's Streams quick start, which reads word counts
stored as 8-byte longs::

    kafka-lite console-consumer --bootstrap-server 127.0.0.1:9092 --topic streams-wordcount-output \\
        --from-beginning --property print.key=true \\
        --property value.deserializer=org.apache.kafka.common.serialization.LongDeserializer

``--key-deserializer`` and ``--value-deserializer`` set the same two properties (and win over them),
as Kafka 0.11 hands them to the formatter. ``--formatter`` takes the one formatter there is,
``kafka.tools.DefaultMessageFormatter``, so that Kafka's commands run as they are written.

Ctrl-C does what Kafka's shutdown hook does: it wakes the consumer's poll, and the consumer closes
cleanly, committing its positions (when the group auto-commits) and leaving its group; the exit
code is then 130, as a Java tool's after SIGINT. A failure is one line on stderr and exit code 1,
a bad argument exit code 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TextIO

from rich.console import Console

from kafka_lite.cli import CliError, brokers_not_answering, key_values, properties_file, with_causes
from kafka_lite.cli.serde_classes import DeserializingFormatter, UnknownClassException, deserializer_for
from kafka_lite.common.errors import KafkaException, TimeoutException, WakeupException
from kafka_lite.tools.console_consumer import (
    FORMATTER_PROPERTIES,
    ConsoleConsumerException,
    ConsumerWrapper,
    DefaultMessageFormatter,
    FormatterException,
    check_options,
    consumer_props,
    parse_offset,
    process,
)


def _whole(minimum: int, what: str):
    """An argparse type: a whole number of at least ``minimum`` (argparse names the option)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text}: {what} must be at least {minimum}")
        return value

    return parse


DEFAULT_FORMATTER = "kafka.tools.DefaultMessageFormatter"
# The formatter's properties: DefaultMessageFormatter's own, and the two deserializers it loads.
DESERIALIZER_PROPERTIES = ("key.deserializer", "value.deserializer")
PROPERTIES = (*FORMATTER_PROPERTIES, *DESERIALIZER_PROPERTIES)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "console-consumer",
        help="print a topic's records to stdout, one per line (kafka-console-consumer.sh)",
    )
    parser.add_argument("--bootstrap-server", dest="bootstrap_server", required=True,
                        metavar="HOST:PORT[,...]", help="brokers to find the cluster from")  # fmt: skip
    parser.add_argument("--topic", help="the topic to consume")
    parser.add_argument("--whitelist", metavar="REGEX",
                        help="consume every topic whose whole name matches this regular expression")  # fmt: skip
    parser.add_argument(
        "--group", help="the consumer group to join (default: a new console-consumer-N, N random)"
    )
    parser.add_argument("--from-beginning", action="store_true",
                        help="start at the earliest offset when the group has no committed offset")  # fmt: skip
    parser.add_argument("--partition", type=_whole(0, "a partition"), metavar="P",
                        help="read only this partition of --topic, assigned without group management")  # fmt: skip
    parser.add_argument("--offset", metavar="earliest|latest|N",
                        help="with --partition: where to start (default: latest)")  # fmt: skip
    parser.add_argument("--max-messages", type=_whole(1, "the number of messages"), metavar="N",
                        help="exit after printing N records (default: consume on)")  # fmt: skip
    parser.add_argument("--timeout-ms", type=_whole(0, "a timeout"), metavar="MS",
                        help="exit when no record arrives for this long")  # fmt: skip
    parser.add_argument("--property", action="append", default=[], metavar="K=V",
                        help=f"for the formatter: {', '.join(PROPERTIES)}")  # fmt: skip
    parser.add_argument("--formatter", default=DEFAULT_FORMATTER, metavar="CLASS",
                        help=f"the formatter's class; {DEFAULT_FORMATTER} is the one there is")  # fmt: skip
    parser.add_argument("--key-deserializer", metavar="CLASS",
                        help="sets the formatter's key.deserializer (Kafka's class name)")  # fmt: skip
    parser.add_argument("--value-deserializer", metavar="CLASS",
                        help="sets the formatter's value.deserializer (Kafka's class name)")  # fmt: skip
    parser.add_argument("--consumer-property", action="append", default=[], metavar="K=V",
                        help="a consumer setting by Kafka's name (fetch.min.bytes=1024 ...)")  # fmt: skip
    parser.add_argument("--consumer.config", dest="consumer_config", type=Path, metavar="FILE",
                        help="consumer settings in a properties file (--consumer-property wins)")  # fmt: skip
    parser.set_defaults(handler=run)


def run(
    args: argparse.Namespace, console: Console, stdout: BinaryIO | None = None, stderr: TextIO | None = None
) -> int:
    from kafka_lite import KafkaConsumer

    output = sys.stdout.buffer if stdout is None else stdout
    report = sys.stderr if stderr is None else stderr
    try:
        check_options(args.topic, args.whitelist, args.partition, args.offset, args.from_beginning)
        offset = parse_offset(args.offset, args.from_beginning)
        formatter = message_formatter(args)
        extra = key_values(args.consumer_property, "--consumer-property")
        file_props = properties_file(args.consumer_config, "--consumer.config")
        props = consumer_props(args.bootstrap_server, args.group, args.from_beginning, file_props, extra)
        # Kafka's dotted names go in as they are: the consumer's ConfigDef takes them beside
        # kafka-python's keywords, so a bad one is named as the user typed it.
        consumer = KafkaConsumer(**props)
    except (ConsoleConsumerException, FormatterException, UnknownClassException, KafkaException) as e:
        raise CliError(str(e), exit_code=2) from None

    count = 0

    def counted(n: int) -> None:
        nonlocal count
        count = n

    interrupted = False
    restore = _wake_on_interrupt(consumer)
    try:
        process(args.max_messages, formatter, _wrapper(consumer, args, offset), output, counted)
    except TimeoutException:
        pass  # --timeout-ms without a record: the end of the run, as Kafka's tool ends it
    except WakeupException:
        interrupted = True  # Ctrl-C: the consumer closes below, as Kafka's shutdown hook closes it
    except BrokenPipeError:
        report.write("Unable to write to standard out, closing consumer.\n")
    except ConsoleConsumerException as e:  # an option the cluster shows to be wrong (--partition)
        raise CliError(str(e), exit_code=2) from None
    except KafkaException as e:
        raise CliError(with_causes(e)) from None
    finally:
        try:
            consumer.close()  # commits (when the group auto-commits) and leaves the group
        finally:
            restore()
            report.write(f"Processed a total of {count} messages\n")
            report.flush()
    return 130 if interrupted else 0


def message_formatter(args: argparse.Namespace) -> DefaultMessageFormatter | DeserializingFormatter:
    """The formatter ``--formatter`` and ``--property`` ask for (Kafka's ``formatter.init(formatterArgs)``),
    with ``--key-deserializer``/``--value-deserializer`` set as properties first, as Kafka 0.11 sets them."""
    if args.formatter != DEFAULT_FORMATTER:
        raise FormatterException(
            f"--formatter {args.formatter}: the one formatter there is is {DEFAULT_FORMATTER} "
            "(its --property settings choose what a line shows)"
        )
    props = key_values(args.property, "--property")
    unknown = sorted(set(props) - set(PROPERTIES))
    if unknown:
        raise FormatterException(
            f"Unknown --property {', '.join(unknown)}: the formatter takes {', '.join(PROPERTIES)}"
        )
    deserializers = {}
    for name, option in zip(DESERIALIZER_PROPERTIES, (args.key_deserializer, args.value_deserializer)):
        # the formatter below takes only its own properties: the deserializers leave the dict
        class_name, where = props.pop(name, None), f"--property {name}"
        if option:
            class_name, where = option, f"--{name.replace('.', '-')}"
        if class_name is not None:
            deserializers[name] = (class_name, deserializer_for(class_name, where))
    formatter = DefaultMessageFormatter(props)
    if not deserializers:
        return formatter
    return DeserializingFormatter(
        formatter, deserializers.get("key.deserializer"), deserializers.get("value.deserializer")
    )


def _wrapper(consumer, args: argparse.Namespace, offset: int | str) -> ConsumerWrapper:
    """The consumer subscribed, or assigned and positioned (``--partition``, which first asks the
    brokers for the topic's partitions: a timeout there is theirs, not the end of a quiet run)."""
    try:
        return ConsumerWrapper(consumer, args.topic, args.partition, offset, args.whitelist, args.timeout_ms)
    except TimeoutException as e:
        raise brokers_not_answering(e, args.bootstrap_server) from None


def _wake_on_interrupt(consumer) -> Callable[[], object]:
    """Make Ctrl-C (SIGINT) wake the consumer's poll rather than raise inside it, as Kafka's shutdown
    hook calls ``consumer.wakeup()``; a second Ctrl-C interrupts at once. Returns what restores the
    previous handler. Only the main thread may set a signal handler: elsewhere (the demo running the
    tool in a thread) Ctrl-C stays as it is."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_interrupt(signum, frame) -> None:
        signal.signal(signal.SIGINT, previous)
        consumer.wakeup()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    if previous is None:  # a handler set outside Python: put the default back
        previous = signal.SIG_DFL
    return lambda: signal.signal(signal.SIGINT, previous)
