"""``kafka-lite console-producer --bootstrap-server B --topic T``: Kafka's ``kafka-console-producer.sh``.

No Kafka twin for this module itself: the command-line face of ``kafka_lite.tools.console_producer``,
flag for flag with Kafka 0.10.1's tool. Its ``--broker-list`` is also spelled ``--bootstrap-server``,
as Kafka 2.5+ spells it. Reads stdin to its end (Ctrl-D at a terminal), one record per line::

    printf 'k1:hello\\nk2:world\\n' | kafka-lite console-producer --bootstrap-server 127.0.0.1:9092 \\
        --topic t --property parse.key=true --property key.separator=:

``--key-serializer`` and ``--value-serializer`` (Kafka 0.10.1's options, default
``kafka.serializer.DefaultEncoder``: the line's bytes) take Kafka's serializer class names and turn
each line's text into that type's bytes (``kafka_lite.cli.serde_classes``, which says where this
differs from Kafka)::

    printf 'apples:3\\n' | kafka-lite console-producer --bootstrap-server 127.0.0.1:9092 --topic t \\
        --property parse.key=true --property key.separator=: \\
        --value-serializer org.apache.kafka.common.serialization.LongSerializer

Nothing is printed on success, as Kafka's tool prints nothing; a failure is one line on stderr and
exit code 1, a bad argument exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import BinaryIO

from rich.console import Console

from kafka_lite.cli import CliError, key_values, message_with_causes, properties_file
from kafka_lite.cli.serde_classes import DEFAULT_ENCODER, SerializingReader, UnknownClassException
from kafka_lite.common.errors import KafkaException
from kafka_lite.tools.console_producer import (
    OPTION_SETTINGS,
    READER_PROPERTIES,
    LineMessageReader,
    ReaderException,
    produce,
    producer_props,
)

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")  # what the broker stores (zstd: Kafka 2.1's)
ACKS = ("all", "-1", "0", "1")
SERIALIZER_PROPERTIES = ("key.serializer", "value.serializer")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "console-producer",
        help="send lines from stdin to a topic, one record per line (kafka-console-producer.sh)",
    )
    parser.add_argument("--bootstrap-server", "--broker-list", dest="bootstrap_server", required=True,
                        metavar="HOST:PORT[,...]", help="brokers to find the cluster from")  # fmt: skip
    parser.add_argument("--topic", required=True, help="the topic to send to")
    parser.add_argument("--sync", action="store_true", help="send one record at a time, waiting for each")
    parser.add_argument("--compression-codec", nargs="?", const="gzip", choices=CODECS, metavar="CODEC",
                        help=f"one of {', '.join(CODECS)}; gzip if given without a value (default: none)")  # fmt: skip
    parser.add_argument("--request-required-acks", choices=ACKS, metavar="ACKS",
                        help=f"acks: 0, 1 or all (-1) (default: {OPTION_SETTINGS['request_required_acks'][1]})")  # fmt: skip
    # The numeric options, each the producer setting OPTION_SETTINGS names, with the tool's default.
    numeric = {
        "--request-timeout-ms": "",
        "--message-send-max-retries": "",
        "--retry-backoff-ms": "",
        "--timeout": ": how long a batch waits for more lines; 0 with --sync",
        "--metadata-expiry-ms": "",
        "--max-block-ms": ": how long send waits for metadata or memory",
        "--max-memory-bytes": "",
        "--max-partition-memory-bytes": "",
    }
    for flag, what in numeric.items():
        setting, default = OPTION_SETTINGS[flag[2:].replace("-", "_")]
        parser.add_argument(flag, type=int, metavar="N", help=f"{setting}{what} (default: {default})")
    parser.add_argument("--property", action="append", default=[], metavar="K=V",
                        help=f"for the line reader: {', '.join(READER_PROPERTIES)}")  # fmt: skip
    parser.add_argument("--key-serializer", default=DEFAULT_ENCODER, metavar="CLASS",
                        help=f"Kafka's class name of the keys' serializer (default: {DEFAULT_ENCODER}, the bytes)")  # fmt: skip
    parser.add_argument("--value-serializer", default=DEFAULT_ENCODER, metavar="CLASS",
                        help=f"Kafka's class name of the values' serializer (default: {DEFAULT_ENCODER})")  # fmt: skip
    parser.add_argument("--producer-property", action="append", default=[], metavar="K=V",
                        help="a producer setting by Kafka's name (acks=all, linger.ms=5 ...)")  # fmt: skip
    parser.add_argument("--producer.config", dest="producer_config", type=Path, metavar="FILE",
                        help="producer settings in a properties file (--producer-property wins)")  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console, stdin: BinaryIO | None = None) -> int:
    from kafka_lite import KafkaProducer

    reader_props = key_values(args.property, "--property")
    extra = key_values(args.producer_property, "--producer-property")
    file_props = properties_file(args.producer_config, "--producer.config")
    for name in SERIALIZER_PROPERTIES:
        if name in reader_props:  # a setting of the tool, not of its line reader: say where it goes
            raise CliError(
                f"--property {name}: the serializers are options of the tool: --{name.replace('.', '-')} CLASS",
                exit_code=2,
            )
    try:
        lines = LineMessageReader(sys.stdin.buffer if stdin is None else stdin, reader_props)
        reader = SerializingReader(lines, args.key_serializer, args.value_serializer)
    except (ReaderException, UnknownClassException) as e:
        raise CliError(message_with_causes(e), exit_code=2) from None
    options = {name: getattr(args, name) for name in OPTION_SETTINGS}
    try:
        # The settings go in by Kafka's dotted names, which the producer's ConfigDef takes beside
        # kafka-python's keywords, so an error names the setting as the user typed it.
        producer = KafkaProducer(
            **producer_props(args.bootstrap_server, options, file_props, extra, sync=args.sync)
        )
    except KafkaException as e:
        raise CliError(message_with_causes(e), exit_code=2) from None
    try:
        sent, failures = produce(reader, producer, args.topic, sync=args.sync)
    except ReaderException as e:
        raise CliError(message_with_causes(e)) from None
    finally:
        producer.close()  # sends what the accumulator still holds, as Kafka's shutdown hook does
    if failures.first is not None:
        more = f" ({failures.count} of the {sent} records sent failed)" if failures.count > 1 else ""
        raise CliError(failures.first + more)
    return 0
