"""``kafka-lite durability-check``: acks=all records produced while a broker is SIGKILLed, then checked.

No Kafka twin: the command-line face of ``kafka_lite.testing.durability_checker`` (Kafka's system
tests' ProduceConsumeValidateTest with a broker-bounce nemesis). With a cluster already running in
``--dir`` it uses it, ZooKeeper or KRaft; otherwise it starts one there (3 brokers, a short ZooKeeper
session; with ``--kraft`` three combined KRaft nodes, quick elections and short broker sessions)
and stops it at the end. Exit code 1 when an acknowledged record was lost or read out of order.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kafka_lite.cli import positive_int


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "durability-check",
        help="produce with acks=all while a broker is killed and restarted; report what was lost",
    )
    parser.add_argument("--dir", type=Path, default=Path(".kafka-lite"), help="the cluster's directory")
    parser.add_argument(
        "--rounds", type=positive_int("rounds"), default=10, help="kills and restarts (default 10)"
    )
    parser.add_argument("--victim", choices=("leader", "controller"), default="leader",
                        help="whom each round kills: the partition's leader or the controller's broker")  # fmt: skip
    parser.add_argument("--records-per-round", type=positive_int("records"), default=100, metavar="M",
                        help="acknowledgements to wait for before each kill (default 100)")  # fmt: skip
    parser.add_argument("--kraft", action="store_true",
                        help="when no cluster runs in --dir: start three combined KRaft nodes, no ZooKeeper")  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.cli.cluster import _alive, _pids, load_state, stop_cluster
    from kafka_lite.testing import durability_checker

    existing = load_state(args.dir)
    own = None
    if existing is None or not all(_alive(p) for p in _pids(existing)):
        kind = "KRaft cluster of 3 combined nodes" if args.kraft else "3-broker cluster"
        console.print(f"starting a {kind} in {args.dir}", highlight=False)
        own = durability_checker.start(args.dir, kraft=args.kraft)
    try:
        report = durability_checker.check(
            args.dir, args.rounds, args.victim, args.records_per_round,
            log=lambda line: console.print(line, highlight=False),
        )  # fmt: skip
    finally:
        if own is not None:  # the pids as they are now: the restarted brokers are new processes
            stop_cluster(load_state(args.dir) or own)
    for line in report.lines():
        console.print(line, highlight=False)
    return 0 if report.ok else 1
