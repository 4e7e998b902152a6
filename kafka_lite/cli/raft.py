"""``kafka-lite raft``: run a voter of a Raft quorum as a process, ask the quorum who leads, and check
after a kill/restart run that no committed record was lost.

No Kafka twin: the command-line face of ``kafka_lite.raft.tools`` (Kafka 3.3 starts TestRaftServer
with ``bin/test-kraft-server-start.sh`` and describes the quorum with ``kafka-metadata-quorum.sh``).

    kafka-lite raft test-server --node-id 1 --voters 1@127.0.0.1:9990,2@127.0.0.1:9991,3@127.0.0.1:9992 \\
        --data-dir /tmp/raft-1 --throughput 500 --record-size 256 --duration 30
    kafka-lite raft describe --voters 1@127.0.0.1:9990,2@127.0.0.1:9991,3@127.0.0.1:9992
    kafka-lite raft check /tmp/raft-1 /tmp/raft-2 /tmp/raft-3
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from kafka_lite.cli import CliError, positive_int, whole_number


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("raft", help="a Raft quorum of processes: test-server, describe, check")
    commands = parser.add_subparsers(dest="raft_command", metavar="RAFT_COMMAND")
    commands.required = True

    server = commands.add_parser(
        "test-server", help="run one voter with a workload its leader appends (Kafka's TestRaftServer)"
    )
    server.add_argument("--node-id", type=whole_number("node id"), required=True, help="this voter's id")
    server.add_argument("--voters", required=True, metavar="ID@HOST:PORT,...",
                        help="every voter, as controller.quorum.voters: 1@127.0.0.1:9990,2@127.0.0.1:9991,...")  # fmt: skip
    server.add_argument(
        "--data-dir", type=Path, required=True, help="where the log and quorum-state file live"
    )
    server.add_argument("--throughput", type=positive_int("records per second"), default=1000,
                        help="records a second the leader appends (default 1000)")  # fmt: skip
    server.add_argument(
        "--record-size", type=positive_int("bytes"), default=256, help="bytes a record (default 256)"
    )
    server.add_argument("--linger-ms", type=whole_number("ms"), default=None,
                        help="controller.quorum.append.linger.ms (default Kafka's 25)")  # fmt: skip
    server.add_argument("--election-timeout-ms", type=positive_int("ms"), default=None,
                        help="controller.quorum.election.timeout.ms (default 1000)")  # fmt: skip
    server.add_argument("--fetch-timeout-ms", type=positive_int("ms"), default=None,
                        help="controller.quorum.fetch.timeout.ms (default 2000)")  # fmt: skip
    server.add_argument("--duration", type=positive_int("seconds"), default=None,
                        help="stop after this many seconds (default: run until SIGTERM)")  # fmt: skip
    server.add_argument("--committed-file", type=Path, default=None,
                        help="append '<offset> <key>' for each record this node saw committed while leading")  # fmt: skip
    server.set_defaults(handler=run_test_server)

    describe = commands.add_parser("describe", help="ask the voters who leads (DescribeQuorum)")
    describe.add_argument("--voters", required=True, metavar="ID@HOST:PORT,...",
                          help="the quorum's voters, as controller.quorum.voters; the leader answers")  # fmt: skip
    describe.set_defaults(handler=run_describe)

    check = commands.add_parser("check", help="is every record a leader saw committed in every voter's log?")
    check.add_argument("data_dirs", nargs="+", type=Path, metavar="DATA_DIR", help="each voter's --data-dir")
    check.add_argument("--committed-file", type=Path, action="append", default=None,
                       help="a leader's committed file (default: committed.txt in each data directory)")  # fmt: skip
    check.set_defaults(handler=run_check)


def _raft_config(args: argparse.Namespace):
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.raft import raft_config as rc

    settings = {rc.QUORUM_VOTERS_CONFIG: args.voters}
    if getattr(args, "linger_ms", None) is not None:
        settings[rc.QUORUM_LINGER_MS_CONFIG] = args.linger_ms
    if getattr(args, "election_timeout_ms", None) is not None:
        settings[rc.QUORUM_ELECTION_TIMEOUT_MS_CONFIG] = args.election_timeout_ms
        settings[rc.QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG] = args.election_timeout_ms
    if getattr(args, "fetch_timeout_ms", None) is not None:
        settings[rc.QUORUM_FETCH_TIMEOUT_MS_CONFIG] = args.fetch_timeout_ms
    try:
        config = rc.RaftConfig.from_config(settings)
    except (ConfigException, ValueError) as e:
        raise CliError(f"--voters: {e}", exit_code=2) from None
    if not config.quorum_voter_ids():
        raise CliError("--voters: no voters given", exit_code=2)
    return config


def run_test_server(args: argparse.Namespace, console) -> int:
    from kafka_lite.raft.tools.test_raft_server import run_test_server as run

    config = _raft_config(args)
    if args.node_id not in config.quorum_voter_ids():
        raise CliError(
            f"--node-id: {args.node_id} is not among the voters {sorted(config.quorum_voter_ids())}",
            exit_code=2,
        )
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        report = run(
            args.node_id, config, args.data_dir, args.throughput, args.record_size, args.duration,
            args.committed_file, out=sys.stdout,
        )  # fmt: skip
    except OSError as e:
        raise CliError(f"node {args.node_id}: {e}") from None
    summary = {"event": "summary", **report.as_dict()}
    sys.stdout.write(json.dumps(summary) + "\n")
    sys.stdout.flush()
    return 1 if report.error else 0


def run_describe(args: argparse.Namespace, console) -> int:
    from kafka_lite.raft.raft_config import InetAddressSpec
    from kafka_lite.raft.tools.quorum_client import find_leader

    config = _raft_config(args)
    addresses = {
        v: (s.host, s.port)
        for v, s in config.quorum_voter_connections().items()
        if isinstance(s, InetAddressSpec)
    }
    answer = find_leader(addresses)
    if answer is None:
        console.print("no voter answers as leader", highlight=False)
        return 1
    console.print(f"leader {answer['leader_id']} in epoch {answer['leader_epoch']}, "
                  f"high watermark {answer['high_watermark']}", highlight=False)  # fmt: skip
    for voter in answer["current_voters"]:
        console.print(
            f"  voter {voter['replica_id']}: log end offset {voter['log_end_offset']}", highlight=False
        )
    return 0


def run_check(args: argparse.Namespace, console) -> int:
    from kafka_lite.raft.tools.raft_checker import check

    for data_dir in args.data_dirs:
        if not data_dir.is_dir():
            raise CliError(f"DATA_DIR: {data_dir} is not a directory", exit_code=2)
    try:
        report = check(args.data_dirs, args.committed_file)
    except (FileNotFoundError, ValueError) as e:
        raise CliError(str(e), exit_code=2) from None
    for line in report.lines():
        console.print(line, highlight=False)
    return 0 if report.ok else 1
