"""``kafka-lite get-offsets``: each partition's offset at a time, its log start or its log end.

Mirrors: kafka.tools.GetOffsetShell (core/src/main/scala/kafka/tools/GetOffsetShell.scala, Kafka 2.0,
         the new consumer's path; ``bin/kafka-get-offsets.sh`` since Kafka 3.0), through
         KafkaAdminClient's ListOffsets v1 (KIP-79, Kafka 0.10.1)
Book:    chapter 6, 6.1.4 (reading from the log: a read by timestamp goes through the time index)
Differs: ``--broker-list`` is also spelled ``--bootstrap-server``, as the other kafka-lite tools take
         it. Kafka 0.10's shell sent ListOffsets v0, which answered with segment base offsets at or
         before the time; v1, Kafka's own answer since 0.10.1, finds the first record at or after it.

::

    kafka-lite get-offsets --broker-list 127.0.0.1:9092 --topic orders --time -1
    orders:0:1200
    orders:1:1187

``--time -1`` (the default) gives each partition's latest offset as a consumer sees it, the high
watermark (chapter 6, 6.2: the log end offset of the records every in-sync replica has); ``-2`` its
log start offset, the first it still holds; a timestamp in ms, the offset of the first record whose
timestamp is at or after it, found through the partition's time index. A partition with no such
record prints no offset (``orders:0:``), as Kafka's tool does.
"""

from __future__ import annotations

import argparse
import sys

from kafka_lite.cli import CliError, admin_client, offset_time
from kafka_lite.cli.security import add_command_config

REQUEST_TIMEOUT_MS = 15_000  # how long each call waits for the brokers


def _partitions(text: str) -> list[int]:
    try:
        return sorted({int(p) for p in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expects a comma separated list of numeric partition ids, but received: {text}"
        ) from None


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "get-offsets",
        help="each partition's offset at a time, or its first or next (kafka-get-offsets.sh, GetOffsetShell)",
    )
    parser.add_argument(
        "--broker-list", "--bootstrap-server", dest="broker_list", required=True,
        metavar="HOST:PORT[,...]", help="the brokers to connect to",
    )  # fmt: skip
    add_command_config(parser)
    parser.add_argument("--topic", required=True, help="the topic to get offsets from")
    parser.add_argument(
        "--partitions", type=_partitions, default=None, metavar="P,P,...",
        help="the partitions (default: all of the topic's)",
    )  # fmt: skip
    parser.add_argument(
        "--time", type=offset_time, default=-1, metavar="MS",
        help="-1 the latest offset, the high watermark (default); -2 the log start offset; or the first "
        "offset at or after a timestamp",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.clients.admin import OffsetSpec

    configs = {"client_id": "GetOffsetShell", "request_timeout_ms": REQUEST_TIMEOUT_MS}
    with admin_client(args.broker_list, "--broker-list", args.command_config, **configs) as admin:
        infos = admin.describe_cluster().partitions_for_topic(args.topic)
        if not infos:
            raise CliError(f"Topic {args.topic} does not exist")
        wanted = [p for p in infos if args.partitions is None or p.partition in args.partitions]
        if not wanted:
            raise CliError(
                f"Topic {args.topic} does not have any of the requested partitions "
                f"{','.join(map(str, args.partitions))}"
            )
        errors = []
        for missing in sorted(set(args.partitions or []) - {p.partition for p in infos}):
            errors.append(f"Error: partition {missing} does not exist")
        with_leader = []
        for p in wanted:
            if p.leader is None:
                errors.append(f"Error: partition {p.partition} does not have a leader. Skip getting offsets")
            else:
                with_leader.append((args.topic, p.partition))
        for line in errors:  # as Kafka's tool: on stderr, and the other partitions' offsets still come
            print(line, file=sys.stderr)
        offsets = admin.list_offsets({tp: OffsetSpec(args.time) for tp in with_leader})
        for (topic, partition), found in sorted(offsets.items()):
            shown = "" if found.offset < 0 else str(found.offset)  # no record at or after the time
            print(f"{topic}:{partition}:{shown}")
        return 0
