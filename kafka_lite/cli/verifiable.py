"""``kafka-lite verifiable``: produce distinct values, read the topic back, and say what was lost.

No Kafka twin for this module itself: the command-line face of ``kafka_lite.tools.verifiable_client``,
in the manner of Kafka's ``kafka-verifiable-producer.sh`` and ``kafka-verifiable-consumer.sh`` run
one after the other and checked as the system tests check them. Kafka's two tools print a JSON line
per event for a test harness to read; this one does the harness's part too and prints the verdict.
A fault injected while it produces (``kafka-lite cluster pause | kill``, from another shell) shows
in the verdict. Before reading back it waits (up to ``HW_WAIT_S``) for the high watermarks to pass
what was acknowledged, so that replication lag is not taken for loss. The exit code is 1 when an
acknowledged value was lost.

The tool module is imported when the command runs, not when the CLI starts: a lab workspace's copy
of it is the learner's, and a broker started from that workspace should not import it.
"""

from __future__ import annotations

import argparse
import time
import uuid

from kafka_lite.cli import CliError, positive_int, with_causes

ACKS = {"0": 0, "1": 1, "-1": -1, "all": -1}
# How long to wait for the high watermarks to pass the acknowledged offsets before reading back. With
# acks=1 an acknowledgement can come before the followers' copies, and a consumer reads only below
# the HW: read at once, and lag would look like loss. After a real loss the HW may never get there.
HW_WAIT_S = 10.0


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
        caught_up = _wait_for_high_watermarks(args.bootstrap_server, args.topic, produced.acknowledged)
        consumed = consume(args.bootstrap_server, args.topic)
    except KafkaException as e:
        raise CliError(with_causes(e)) from None
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
    if not caught_up:
        out(f"the high watermark did not pass every acknowledged offset within {HW_WAIT_S:.0f} s")
    for lost in verdict.lost[:20]:
        out(f"  lost {lost.value} (acknowledged at partition {lost.partition}, offset {lost.offset})")
    if len(verdict.lost) > 20:
        out(f"  ... and {len(verdict.lost) - 20} more")
    return 0 if verdict.ok else 1


def _wait_for_high_watermarks(bootstrap_servers: str, topic: str, acknowledged: list) -> bool:
    """Until each partition's HW is above the last offset acknowledged in it; False at the deadline."""
    from kafka_lite.common.topic_partition import TopicPartition
    from kafka_lite.consumer.kafka_consumer import KafkaConsumer

    last: dict[TopicPartition, int] = {}
    for a in acknowledged:
        tp = TopicPartition(topic, a.partition)
        last[tp] = max(last.get(tp, -1), a.offset)
    if not last:
        return True
    consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers, enable_auto_commit=False)
    try:
        deadline = time.monotonic() + HW_WAIT_S
        while True:
            end = consumer.end_offsets(list(last))
            if all(end[tp] > offset for tp, offset in last.items()):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)  # polling the end offsets; bounded by the deadline
    finally:
        consumer.close(autocommit=False)
