"""``kafka-lite replica-verification``: Kafka's ``kafka-replica-verification.sh``.

No Kafka twin for this module itself: the command-line face of
``kafka_lite.tools.replica_verification_tool``, flag for flag with Kafka's tool (``--broker-list``
is also spelled ``--bootstrap-server``, as the other kafka-lite tools take it). ``--reports N`` is
ours: stop after N reports (Kafka's runs until it is stopped).
"""

from __future__ import annotations

import argparse

from kafka_lite.cli import CliError, brokers_not_answering, offset_time, positive_int, whole_number

REQUEST_TIMEOUT_MS = 30_000  # how long each call waits for the brokers


def register(subparsers: argparse._SubParsersAction) -> None:
    from kafka_lite.tools import replica_verification_tool as tool

    parser = subparsers.add_parser(
        "replica-verification",
        help="check that every replica holds the same batches, and how far behind they are "
        "(kafka-replica-verification.sh)",
    )
    parser.add_argument(
        "--broker-list",
        "--bootstrap-server",
        dest="broker_list",
        required=True,
        metavar="HOST:PORT[,...]",
        help="the brokers to connect to",
    )
    parser.add_argument(
        "--topic-white-list",
        default=".*",
        metavar="REGEX",
        help="the topics to verify, a regular expression matching whole names (default: all)",
    )
    parser.add_argument(
        "--time",
        type=offset_time,
        default=-1,
        metavar="MS",
        help="where to start: -1 the latest offset, the high watermark (default); -2 the log start; or "
        "the first offset at or after a timestamp",
    )
    parser.add_argument(
        "--fetch-size", type=positive_int("bytes"), default=tool.DEFAULT_FETCH_SIZE, metavar="BYTES",
        help="the most bytes fetched per partition in a round",
    )  # fmt: skip
    parser.add_argument(
        "--max-wait-ms", type=whole_number("ms"), default=tool.DEFAULT_MAX_WAIT_MS, metavar="MS",
        help="how long each fetch may wait for new records",
    )  # fmt: skip
    parser.add_argument(
        "--report-interval-ms", type=whole_number("ms"), default=tool.DEFAULT_REPORT_INTERVAL_MS, metavar="MS",
        help="how often to print the largest lag",
    )  # fmt: skip
    parser.add_argument(
        "--reports", type=positive_int("reports"), default=None, metavar="N",
        help="stop after N reports (default: run until interrupted)",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.clients.client_utils import parse_bootstrap
    from kafka_lite.common.errors import KafkaException, TimeoutException
    from kafka_lite.tools.replica_verification_tool import (
        ReplicasDivergedException,
        ReplicaVerificationTool,
        whitelist,
    )

    def out(line: str) -> None:
        console.print(line, highlight=False, markup=False, soft_wrap=True)

    try:
        parse_bootstrap(args.broker_list)
    except KafkaException as e:
        raise CliError(f"--broker-list {args.broker_list!r}: {e}", exit_code=2) from None
    try:
        whitelist(args.topic_white_list)
    except KafkaException as e:
        raise CliError(f"--topic-white-list: {e}", exit_code=2) from None
    try:
        verifier = ReplicaVerificationTool(
            args.broker_list,
            topic_white_list=args.topic_white_list,
            initial_offset_time=args.time,
            fetch_size=args.fetch_size,
            max_wait_ms=args.max_wait_ms,
            report_interval_ms=args.report_interval_ms,
            out=out,
            request_timeout_ms=REQUEST_TIMEOUT_MS,
        )
        try:
            verifier.run(max_reports=args.reports)
        finally:
            verifier.close()
    except ReplicasDivergedException as e:
        out(str(e))  # as Kafka's tool: the line on stdout, then exit 1
        return 1
    except TimeoutException as e:
        raise brokers_not_answering(e, args.broker_list) from None
    except KafkaException as e:
        raise CliError(str(e)) from None
    return 0
