"""``kafka-lite consumer-groups``: list groups, describe one with its lag, reset its offsets.

Mirrors: bin/kafka-consumer-groups.sh (kafka.admin.ConsumerGroupCommand, Kafka 0.10.1 for --list and
         --describe, Kafka 0.11.0 for --reset-offsets, KIP-122), through KafkaAdminClient
Book:    chapter 5, 5.2 (the coordinator: a group's state, its members and their partitions,
         committed offsets in __consumer_offsets); chapter 4, 4.4 (lag: the log end offset minus
         the committed offset)
Differs: rows are sorted by topic and partition, with the columns sized to their contents, as
         Kafka 2.x prints them; a reset prints GROUP before Kafka 0.11's TOPIC PARTITION NEW-OFFSET.
         ``--timeout`` is how long each call may wait for the brokers (Kafka: 5000 ms for
         --describe only; here 15000 ms for every action, coordinators being created on first use).

::

    kafka-lite consumer-groups --bootstrap-server 127.0.0.1:9092 --list
    kafka-lite consumer-groups --bootstrap-server 127.0.0.1:9092 --describe --group billing
    kafka-lite consumer-groups --bootstrap-server 127.0.0.1:9092 --reset-offsets --group billing \\
        --topic orders:0,1 --to-earliest --execute

What --describe shows, one row per partition: the offset the group has committed (CURRENT-OFFSET),
the partition's log end offset, their difference (LAG: how far the group is behind), and the member
that owns the partition now (CONSUMER-ID, HOST, CLIENT-ID), or ``-`` for a partition with a committed
offset but no owner. A member with no partition shows one row of its own with ``-`` for the topic.

A reset commits new offsets from outside the group (generation -1, no member id), which the
coordinator accepts only while the group has no members: as Kafka does, the tool refuses to reset a
group that is not Empty (or unknown), and commits nothing without ``--execute``.
"""

from __future__ import annotations

import argparse
import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console

from kafka_lite.cli import CliError, admin_client
from kafka_lite.cli.security import add_command_config
from kafka_lite.common.topic_partition import TopicPartition

if TYPE_CHECKING:  # the admin client loads when a command runs, so that --help stays quick
    from kafka_lite.clients.admin import ConsumerGroupDescription, KafkaAdminClient, MemberDescription
    from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

Warn = Callable[[str], None]

DEFAULT_TIMEOUT_MS = 15_000
MISSING = "-"  # what Kafka prints for a value it does not have

# The reset scenarios (Kafka's allResetOffsetScenarioOpts), in the order the help lists them.
SCENARIOS = ("to_earliest", "to_latest", "to_current", "to_offset", "shift_by", "to_datetime")
RESET_ONLY = (*SCENARIOS, "topic", "all_topics", "dry_run", "execute")
INACTIVE_STATES = ("Empty", "Dead")
REBALANCING_STATES = ("PreparingRebalance", "AwaitingSync")
CONSUMER_PROTOCOL_TYPES = ("consumer", "")  # a subscribing consumer's group, or one that only stores offsets

DESCRIBE_HEADER = (
    "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID",
)  # fmt: skip
RESET_HEADER = ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "consumer-groups",
        help="list consumer groups, describe one with its lag, reset its offsets (kafka-consumer-groups.sh)",
    )
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,...]",
                        help="the brokers to connect to")  # fmt: skip
    add_command_config(parser)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--list", action="store_true", help="list the consumer groups of the cluster")
    action.add_argument("--describe", action="store_true",
                        help="a group's partitions: committed offset, log end offset, lag and owner")  # fmt: skip
    action.add_argument("--reset-offsets", action="store_true",
                        help="move a group's committed offsets; the group must have no active members")  # fmt: skip
    parser.add_argument("--group", metavar="GROUP", help="the group to describe or reset")
    parser.add_argument("--timeout", type=_positive_ms, default=DEFAULT_TIMEOUT_MS, metavar="MS",
                        help=f"how long to wait for the brokers' answers (default: {DEFAULT_TIMEOUT_MS})")  # fmt: skip
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--topic", action="append", metavar="TOPIC[:P,P...]",
                       help="with --reset-offsets: a topic, or some of its partitions; may be repeated")  # fmt: skip
    scope.add_argument("--all-topics", action="store_true",
                       help="with --reset-offsets: every partition the group has committed an offset for")  # fmt: skip
    scenario = parser.add_mutually_exclusive_group()
    scenario.add_argument(
        "--to-earliest", action="store_true", help="reset to each partition's log start offset"
    )
    scenario.add_argument("--to-latest", action="store_true", help="reset to each partition's log end offset")
    scenario.add_argument("--to-current", action="store_true",
                          help="reset to the committed offset (the log end offset where there is none)")  # fmt: skip
    scenario.add_argument("--to-offset", type=int, metavar="N",
                          help="reset to offset N (kept within the log's start and end offsets)")  # fmt: skip
    scenario.add_argument("--shift-by", type=int, metavar="N",
                          help="move the committed offset by N, which may be negative")  # fmt: skip
    scenario.add_argument("--to-datetime", metavar="ISO",
                          help="reset to the first offset at or after a time, e.g. 2026-11-23T08:00:00.000 "
                          "(local time) or 2026-11-23T08:00:00Z")  # fmt: skip
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="show the new offsets, commit nothing")
    mode.add_argument("--execute", action="store_true", help="commit the new offsets")
    parser.set_defaults(handler=run)


def _positive_ms(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of milliseconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} ms: give a timeout of at least 1 ms")
    return value


# -- the arguments -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicSpec:
    """One ``--topic`` of a reset: a topic, and the partitions named after its colon (None: all)."""

    topic: str
    partitions: tuple[int, ...] | None


def parse_topic_spec(text: str) -> TopicSpec:
    """``orders`` or ``orders:0,2`` (Kafka's reset scope syntax); a bad one is a usage error naming it."""
    topic, sep, partitions = text.partition(":")
    if not topic:
        raise CliError(f"--topic {text!r}: the topic name is missing", exit_code=2)
    if not sep:
        return TopicSpec(topic, None)
    numbers = partitions.split(",")
    if not all(n.strip().isdigit() for n in numbers):
        raise CliError(
            f"--topic {text!r}: partitions must be numbers separated by commas, as in {topic}:0,1",
            exit_code=2,
        )
    return TopicSpec(topic, tuple(sorted({int(n) for n in numbers})))


def parse_datetime(text: str) -> int:
    """Milliseconds since the epoch of an ISO 8601 time; one without a zone is local time, as Kafka's
    ``--to-datetime`` reads it."""
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise CliError(
            f"--to-datetime {text!r}: expected an ISO 8601 time such as 2026-11-23T08:00:00.000 "
            "(local time) or 2026-11-23T08:00:00Z",
            exit_code=2,
        ) from None
    return int(moment.timestamp() * 1000)


def _given(args: argparse.Namespace, dest: str) -> bool:
    """Whether an option was given: a flag set, or a value (``--to-offset 0`` too)."""
    value = getattr(args, dest)
    return value is not None and value is not False


def check_args(args: argparse.Namespace) -> None:
    """The combinations argparse cannot express, each refused naming the options (Kafka's checkArgs)."""
    if args.group is not None and not args.group.strip():
        raise CliError("--group: the group id cannot be empty", exit_code=2)
    if args.list and args.group is not None:
        raise CliError("--group cannot be used with --list", exit_code=2)
    if (args.describe or args.reset_offsets) and args.group is None:
        raise CliError(f"{'--describe' if args.describe else '--reset-offsets'} needs --group", exit_code=2)
    if not args.reset_offsets:
        given = [_flag(d) for d in RESET_ONLY if _given(args, d)]
        if given:
            action = "--list" if args.list else "--describe"
            raise CliError(f"{given[0]} goes only with --reset-offsets, not with {action}", exit_code=2)
        return
    if not args.topic and not args.all_topics:
        raise CliError("One of the reset scopes should be defined: --all-topics, --topic.", exit_code=2)
    if not any(_given(args, d) for d in SCENARIOS):
        raise CliError(
            "--reset-offsets needs one of the reset scenarios: " + ", ".join(map(_flag, SCENARIOS)),
            exit_code=2,
        )


# -- the command ------------------------------------------------------------------------------------------


def run(args: argparse.Namespace, console: Console) -> int:
    check_args(args)
    topics = [parse_topic_spec(t) for t in args.topic or ()]
    timestamp = parse_datetime(args.to_datetime) if args.to_datetime is not None else None
    errors = Console(stderr=True, soft_wrap=True, highlight=False)
    configs = {"client_id": "kafka-lite-consumer-groups", "request_timeout_ms": args.timeout}
    with admin_client(args.bootstrap_server, command_config=args.command_config, **configs) as admin:
        if args.list:
            for group_id in list_groups(admin):
                _print(console, group_id)
        elif args.describe:
            lines, note = describe_group(admin, args.group)
            if note:
                errors.print(note, markup=False)
            for line in lines:
                _print(console, line)
        else:
            reset_offsets(admin, args, topics, timestamp, console, errors)
        return 0


def _print(console: Console, line: str) -> None:
    # soft_wrap: a row is one line however narrow the terminal; markup off: ids may hold brackets
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def list_groups(admin: KafkaAdminClient) -> list[str]:
    """The consumer groups' ids: groups of consumers, and groups that only store offsets (Kafka's
    ``listConsumerGroups``); other kinds of groups (Kafka Connect's) are left out."""
    return [g.group_id for g in admin.list_consumer_groups() if g.protocol_type in CONSUMER_PROTOCOL_TYPES]


# -- --describe ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionAssignmentState:
    """One row of --describe (Kafka's ``PartitionAssignmentState``); None prints as ``-``."""

    group: str
    topic: str | None
    partition: int | None
    offset: int | None
    log_end_offset: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None

    @property
    def lag(self) -> int | None:
        """Kafka's ``getLag``: unknown unless both the committed and the log end offset are known."""
        if self.offset is None or self.log_end_offset is None:
            return None
        return self.log_end_offset - self.offset

    def cells(self) -> tuple[str, ...]:
        values = (self.group, self.topic, self.partition, self.offset, self.log_end_offset, self.lag,
                  self.consumer_id, self.host, self.client_id)  # fmt: skip
        return tuple(MISSING if v is None else str(v) for v in values)


def group_note(group_id: str, state: str, protocol_type: str) -> str | None:
    """What Kafka says about a group's state before its rows; a group that cannot be described raises."""
    if state == "Dead":
        raise CliError(f"Consumer group '{group_id}' does not exist.")
    if protocol_type not in CONSUMER_PROTOCOL_TYPES:
        raise CliError(
            f"Consumer Group '{group_id}' with protocol type '{protocol_type}' is not a valid consumer group"
        )
    if state == "Empty":
        return f"Consumer group '{group_id}' has no active members."
    if state in REBALANCING_STATES:
        return f"Warning: Consumer group '{group_id}' is rebalancing."
    return None


def collect_group_assignment(
    description: ConsumerGroupDescription,
    committed: dict[TopicPartition, OffsetAndMetadata],
    log_end_offsets: dict[TopicPartition, int],
) -> list[PartitionAssignmentState]:
    """The rows of --describe from a group's description, its committed offsets and the log end
    offsets (Kafka's ``collectGroupAssignment``): each partition owned or committed, by topic and
    partition, then one row for each member that owns nothing."""
    group = description.group_id
    owners = {tp: m for m in description.members for tp in m.assignment}
    rows = []
    for tp in sorted(set(owners) | set(committed)):
        offset = committed[tp].offset if tp in committed else None
        owner = _owner(owners.get(tp))
        rows.append(PartitionAssignmentState(group, tp[0], tp[1], offset, log_end_offsets.get(tp), *owner))
    for member in description.members:
        if not member.assignment:
            rows.append(PartitionAssignmentState(group, None, None, None, None, *_owner(member)))
    return rows


def _owner(member: MemberDescription | None) -> tuple[str | None, str | None, str | None]:
    """CONSUMER-ID, HOST and CLIENT-ID of a partition's owner; all unknown for a partition with none."""
    return (None, None, None) if member is None else (member.member_id, member.host, member.client_id)


def format_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Columns left-aligned to their widest cell and one space apart; the last column is not padded,
    so no line ends in spaces."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    return [
        " ".join([c.ljust(w) for c, w in zip(row[:-1], widths, strict=False)] + [row[-1]])
        for row in (header, *rows)
    ]


def describe_group(admin: KafkaAdminClient, group_id: str) -> tuple[list[str], str | None]:
    """The lines --describe prints, and the note on the group's state (or None)."""
    from kafka_lite.clients.admin import OffsetSpec

    (description,) = admin.describe_consumer_groups([group_id])
    note = group_note(group_id, description.state, description.protocol_type)
    committed = admin.list_consumer_group_offsets(group_id)
    partitions = {tp for m in description.members for tp in m.assignment} | set(committed)
    # a committed offset may outlive its topic: such a partition shows no log end offset
    existing = admin.describe_cluster().partitions
    ends = admin.list_offsets({tp: OffsetSpec.latest() for tp in sorted(partitions) if tp in existing})
    rows = collect_group_assignment(description, committed, {tp: r.offset for tp, r in ends.items()})
    return format_table(DESCRIBE_HEADER, [r.cells() for r in rows]), note


# -- --reset-offsets ----------------------------------------------------------------------------------------


def partitions_to_reset(
    admin: KafkaAdminClient, group_id: str, topics: list[TopicSpec]
) -> list[TopicPartition]:
    """The partitions a reset covers (Kafka's ``getPartitionsToReset``): with --all-topics, every
    partition the group has committed; else the partitions each --topic names, or all of its own."""
    if not topics:
        return sorted(admin.list_consumer_group_offsets(group_id))
    cluster = admin.describe_cluster()
    partitions: set[TopicPartition] = set()
    for spec in topics:
        known = [p.partition for p in cluster.partitions_for_topic(spec.topic)]
        if not known:
            raise CliError(f"--topic {spec.topic}: the topic does not exist")
        missing = sorted(set(spec.partitions or ()) - set(known))
        if missing:
            raise CliError(
                f"--topic {spec.topic}: no partition {', '.join(map(str, missing))} "
                f"({spec.topic} has partitions 0-{max(known)})"
            )
        partitions.update((spec.topic, p) for p in (spec.partitions or known))
    return sorted(partitions)


def check_offset_range(tp: TopicPartition, offset: int, earliest: int, latest: int, warn: Warn) -> int:
    """``offset`` kept within the partition's log, with Kafka's warning when it is not (Kafka's
    ``checkOffsetRange``)."""
    name = f"{tp[0]}-{tp[1]}"
    if offset < earliest:
        warn(f"New offset ({offset}) is lower than earliest offset for topic partition {name}. "
             f"Value will be set to {earliest}")  # fmt: skip
        return earliest
    if offset > latest:
        warn(f"New offset ({offset}) is higher than latest offset for topic partition {name}. "
             f"Value will be set to {latest}")  # fmt: skip
        return latest
    return offset


def prepare_offsets_to_reset(
    admin: KafkaAdminClient,
    group_id: str,
    partitions: list[TopicPartition],
    args: argparse.Namespace,
    timestamp: int | None,
    warn: Warn,
) -> dict[TopicPartition, int]:
    """The new offset of each partition, as the scenario says (Kafka's ``prepareOffsetsToReset``)."""
    from kafka_lite.clients.admin import OffsetSpec

    def offsets(spec: OffsetSpec) -> dict[TopicPartition, int]:
        return {tp: r.offset for tp, r in admin.list_offsets(dict.fromkeys(partitions, spec)).items()}

    if not partitions:
        return {}
    if args.to_earliest:
        return offsets(OffsetSpec.earliest())
    latest = offsets(OffsetSpec.latest())
    if args.to_latest:
        return latest
    if args.to_datetime is not None:
        # no record at or after the time: the log end offset, as Kafka's getLogTimestampOffset falls back
        at = offsets(OffsetSpec.for_timestamp(timestamp))
        return {tp: at[tp] if at[tp] >= 0 else latest[tp] for tp in partitions}
    committed = admin.list_consumer_group_offsets(group_id, partitions)
    if args.to_current:
        return {tp: committed[tp].offset if tp in committed else latest[tp] for tp in partitions}
    earliest = offsets(OffsetSpec.earliest())
    if args.to_offset is not None:
        wanted = dict.fromkeys(partitions, args.to_offset)
    else:
        no_commit = [tp for tp in partitions if tp not in committed]
        if no_commit:
            tp = no_commit[0]
            raise CliError(
                f"Cannot shift offset for partition {tp[0]}-{tp[1]} since there is no current committed offset"
            )
        wanted = {tp: committed[tp].offset + args.shift_by for tp in partitions}
    return {tp: check_offset_range(tp, wanted[tp], earliest[tp], latest[tp], warn) for tp in partitions}


def reset_offsets(
    admin: KafkaAdminClient,
    args: argparse.Namespace,
    topics: list[TopicSpec],
    timestamp: int | None,
    console: Console,
    errors: Console,
) -> None:
    """Kafka's ``resetOffsets``: refuse an active group, print the new offsets, commit them with
    --execute."""
    from kafka_lite.consumer.offset_and_metadata import OffsetAndMetadata

    group_id = args.group
    (description,) = admin.describe_consumer_groups([group_id])
    if description.state not in INACTIVE_STATES:
        raise CliError(
            f"Assignments can only be reset if the group '{group_id}' is inactive, "
            f"but the current state is {description.state}."
        )
    if not args.dry_run and not args.execute:
        errors.print("WARN: No action will be performed as the --execute option is missing; "
                     "showing what --dry-run would show.", markup=False)  # fmt: skip
    partitions = partitions_to_reset(admin, group_id, topics)
    new_offsets = prepare_offsets_to_reset(
        admin, group_id, partitions, args, timestamp, lambda text: errors.print(text, markup=False)
    )
    rows = [(group_id, tp[0], str(tp[1]), str(offset)) for tp, offset in sorted(new_offsets.items())]
    for line in format_table(RESET_HEADER, rows):
        _print(console, line)
    if args.execute:
        admin.alter_consumer_group_offsets(
            group_id, {tp: OffsetAndMetadata(offset) for tp, offset in new_offsets.items()}
        )
