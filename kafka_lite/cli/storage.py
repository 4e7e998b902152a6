"""``kafka-lite storage {random-uuid,format,info}``: Kafka's ``kafka-storage.sh``.

No Kafka twin for this module itself: the command-line face of ``kafka_lite.server.storage_tool``
(Kafka's kafka.tools.StorageTool), flag for flag with Kafka 3.3's tool. As Kafka's, a bad argument
and a failed command exit with code 1 (argparse4j's ``parseArgsOrFail`` and ``TerseFailure`` both do),
not the 2 of kafka-lite's other commands' usage errors.

    kafka-lite storage random-uuid
    kafka-lite storage format -t CLUSTER_ID -c server.properties [--ignore-formatted] [-r 3.3-IV3]
    kafka-lite storage info -c server.properties
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from typing import NoReturn

from rich.console import Console

from kafka_lite.cli import CliError


class _StorageArgumentParser(argparse.ArgumentParser):
    """A parser whose errors exit 1, as kafka-storage.sh's do, naming the argument."""

    def parse_known_args(
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # argparse leaves a sub-command's unknown arguments to the top parser, which exits 2
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "storage",
        help="format a KRaft node's log directories, or show what they hold (kafka-storage.sh)",
        description="The Kafka storage tool.",
    )
    commands = parser.add_subparsers(
        dest="storage_command", metavar="COMMAND", parser_class=_StorageArgumentParser
    )
    info = commands.add_parser("info", help="Get information about the Kafka log directories on this node.")
    format_ = commands.add_parser("format", help="Format the Kafka log directories on this node.")
    commands.add_parser("random-uuid", help="Print a random UUID.")
    for command in (info, format_):
        command.add_argument("--config", "-c", required=True, help="The Kafka configuration file to use.")
    format_.add_argument("--cluster-id", "-t", required=True, help="The cluster ID to use.")
    format_.add_argument(
        "--ignore-formatted", "-g", action="store_true", help="skip directories already formatted"
    )
    format_.add_argument(
        "--release-version",
        "-r",
        help="A KRaft release version to use for the initial metadata version. The minimum is 3.3-IV0 "
        "(bootstrap.checkpoint's), the default the latest (3.3-IV3).",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    # the tool's code (and KafkaConfig behind it) loads only when the command runs
    from kafka_lite.server.storage_tool import TerseFailure, load_config, random_uuid, run_format, run_info

    if args.storage_command is None:
        raise CliError("storage needs a command: info, format or random-uuid", exit_code=1)
    if args.storage_command == "random-uuid":
        console.print(random_uuid(), highlight=False, markup=False)
        return 0
    out = io.StringIO()
    try:
        config = load_config(args.config)
        if args.storage_command == "info":
            code = run_info(config, out)
        else:
            code = run_format(config, args.cluster_id, args.release_version, args.ignore_formatted, out)
    except TerseFailure as e:
        raise CliError(str(e), exit_code=1) from None
    finally:
        console.print(out.getvalue(), end="", highlight=False, markup=False, soft_wrap=True)
    return code
