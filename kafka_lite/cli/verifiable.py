"""``kafka-lite verifiable``: produce distinct values, read the topic back, and say what was lost.

No Kafka twin for this module itself: the command-line face of ``kafka_lite.tools.verifiable_client``,
in the manner of Kafka's ``kafka-verifiable-producer.sh`` and ``kafka-verifiable-consumer.sh`` run
one after the other and checked as the system tests check them. Kafka's two tools print a JSON line
per event for a test harness to read; this one does the harness's part too and prints the verdict.
A fault injected while it produces (``kafka-lite cluster pause | kill``, from another shell) shows
in the verdict. The exit code is 1 when an acknowledged value was lost.

The tool module is imported when the command runs, not when the CLI starts: a lab workspace's copy
of it is the learner's, and a broker started from that workspace should not import it.
"""

from __future__ import annotations

import argparse
import uuid

from kafka_lite.cli import CliError, positive_int

ACKS = {"0": 0, "1": 1, "-1": -1, "all": -1}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "verifiable",
        help="produce distinct values, read the topic back, and report what was acknowledged and lost",
    )
    parser.add_argument(
        "--bootstrap-server", required=True, metavar="HOST:PORT[,...]", help="the brokers to connect to"
    )
    parser.add_argument("--topic", required=True, help="the topic to produce to and read back")
    parser.add_argument(
        "--acks", choices=sorted(ACKS), default="all", help="the producer's acks (default: all)"
    )
    parser.add_argument(
        "--max-messages",
        type=positive_int("messages"),
        default=100,
        metavar="N",
        help="how many values to produce (default 100)",
    )
    parser.add_argument(
        "--prefix",
        default=None,
        help="the values are PREFIX-0, PREFIX-1, ... (default: a new one per run, so that runs on one "
        "topic do not mix)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.tools.verifiable_client import consume, produce, validate

    prefix = args.prefix or f"run-{uuid.uuid4().hex[:8]}"
    values = [f"{prefix}-{i}" for i in range(args.max_messages)]
    try:
        produced = produce(args.bootstrap_server, args.topic, values, ACKS[args.acks])
        consumed = consume(args.bootstrap_server, args.topic)
    except KafkaException as e:
        raise CliError(f"{type(e).__name__}: {e}") from None
    # Only this run's values: the topic may hold other runs' records, which are none of its business.
    mine = [c for c in consumed if c.value.startswith(prefix + "-")]
    verdict = validate(produced.acknowledged, mine)
    errors: dict[str, int] = {}
    for error in produced.failed.values():
        errors[error] = errors.get(error, 0) + 1

    def out(line: str) -> None:
        console.print(line, highlight=False, markup=False, soft_wrap=True)

    out(f"produced {len(values)} values ({prefix}-0 ...) to {args.topic} with acks={args.acks}")
    out(
        f"acknowledged {verdict.acknowledged}, failed {len(produced.failed)}"
        + (f" {errors}" if errors else "")
    )
    out(f"read back {len(mine)} of them: found {len(verdict.found)}, lost {len(verdict.lost)}, "
        f"duplicated {len(verdict.duplicated)}")  # fmt: skip
    for lost in verdict.lost[:20]:
        out(f"  lost {lost.value} (acknowledged at partition {lost.partition}, offset {lost.offset})")
    if len(verdict.lost) > 20:
        out(f"  ... and {len(verdict.lost) - 20} more")
    return 0 if verdict.ok else 1
