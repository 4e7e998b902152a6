"""The entry point of the ``kafka-lite`` command: argument parsing and sub-command dispatch.

No Kafka twin: Kafka ships one shell script per tool (``kafka-topics.sh``, ``kafka-dump-log.sh`` ...);
kafka_lite has one command whose sub-commands mirror those scripts (``kafka-lite --help`` lists them).
Each sub-command lives in its own module with a ``register(subparsers)`` function, so adding a
tool never touches this file beyond one import line.

Errors: a sub-command raises :class:`CliError` for a bad argument or input; ``main`` prints its
one-line message and exits with code 2 (bad usage) or 1 (the work failed), never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from kafka_lite.cli import (
    CliError,
    acls,
    broker,
    cluster,
    configs,
    connect,
    console_consumer,
    console_producer,
    consumer_groups,
    delete_records,
    demo,
    docs,
    dump_log,
    durability_check,
    get_offsets,
    jepsen,
    lab,
    metadata_quorum,
    mirror_maker,
    perf,
    preferred_replica_election,
    raft,
    reassign_partitions,
    replay,
    replica_verification,
    storage,
    streams,
    topics,
    verifiable,
    zookeeper,
    zookeeper_shell,
)

# The modules that contribute sub-commands, in the order `kafka-lite --help` lists them.
SUBCOMMAND_MODULES = (
    demo,
    cluster,
    zookeeper,
    zookeeper_shell,
    broker,
    topics,
    configs,
    acls,
    reassign_partitions,
    preferred_replica_election,
    console_producer,
    console_consumer,
    consumer_groups,
    mirror_maker,
    streams,
    connect,
    get_offsets,
    delete_records,
    perf,
    replay,
    replica_verification,
    verifiable,
    durability_check,
    jepsen,
    raft,
    metadata_quorum,
    storage,
    dump_log,
    lab,
    docs,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-lite",
        description="Kafka's internals, chapter by chapter: the tools of kafka_lite.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module in SUBCOMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # The library logs; a command shows only what it prints, unless it sets up logging itself (the
    # broker does). Without this, Python's last-resort handler would print every client-side warning
    # (a broker still starting refuses connections) to the terminal.
    logging.getLogger("kafka_lite").addHandler(logging.NullHandler())
    parser = build_parser()
    args = parser.parse_args(argv)
    console = Console()
    try:
        return int(args.handler(args, console) or 0)
    except CliError as e:
        Console(stderr=True, soft_wrap=True).print(
            f"[bold red]kafka-lite {args.command}:[/] {escape(str(e))}", highlight=False
        )
        return e.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
