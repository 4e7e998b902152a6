"""The entry point of the ``kafka-lite`` command: argument parsing and sub-command dispatch.

No Kafka twin: Kafka ships one shell script per tool (``kafka-topics.sh``, ``kafka-dump-log.sh`` ...);
kafka_lite has one command whose sub-commands mirror those scripts (``kafka-lite --help`` lists them).
Each sub-command lives in its own module with a ``register(subparsers)`` function, so adding a
tool never touches this file beyond one line of ``SUBCOMMANDS``; a run imports only the module of the
sub-command it names.

Errors: a sub-command raises :class:`CliError` for a bad argument or input; ``main`` prints its
one-line message and exits with code 2 (bad usage) or 1 (the work failed), never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from types import ModuleType

from rich.console import Console
from rich.markup import escape

from kafka_lite.cli import CliError

# The sub-commands in the order ``--help`` lists them. Each is the module of its name (``-`` read as
# ``_``) with a ``register(subparsers)`` function.
SUBCOMMANDS = (
    "demo",
    "cluster",
    "zookeeper",
    "zookeeper-shell",
    "broker",
    "topics",
    "configs",
    "acls",
    "reassign-partitions",
    "preferred-replica-election",
    "console-producer",
    "console-consumer",
    "consumer-groups",
    "mirror-maker",
    "streams",
    "connect",
    "get-offsets",
    "delete-records",
    "transactions",
    "perf",
    "replay",
    "replica-verification",
    "verifiable",
    "durability-check",
    "jepsen",
    "raft",
    "metadata-quorum",
    "storage",
    "dump-log",
    "lab",
    "docs",
)


def subcommand_module(name: str) -> ModuleType:
    return importlib.import_module(f"kafka_lite.cli.{name.replace('-', '_')}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command's parser; with ``only`` (a sub-command's name), a parser that knows that
    sub-command alone. A broker, a ZooKeeper or a lab grading is a process started by name, often
    hundreds of times in a test run: it imports its own module, not the clients, Spark bridges and
    tools the other sub-commands import."""
    parser = argparse.ArgumentParser(
        prog="kafka-lite",
        description="Kafka's internals, chapter by chapter: the tools of kafka_lite.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in (only,) if only in SUBCOMMANDS else SUBCOMMANDS:
        subcommand_module(name).register(subparsers)
    return parser


def _named_subcommand(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names, when its first word is one (else the whole parser is built,
    for ``--help`` and for argparse's error naming the choices)."""
    return argv[0] if argv and argv[0] in SUBCOMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    # The library logs; a command shows only what it prints, unless it sets up logging itself (the
    # broker does). Without this, Python's last-resort handler would print every client-side warning
    # (a broker still starting refuses connections) to the terminal.
    logging.getLogger("kafka_lite").addHandler(logging.NullHandler())
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=_named_subcommand(argv))
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
