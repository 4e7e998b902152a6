"""``kafka-lite topics``: create, list, describe, add partitions to and delete topics.

Mirrors: bin/kafka-topics.sh (kafka.admin.TopicCommand, Kafka 0.10.1), with ``--bootstrap-server`` as
         Kafka 2.2+ takes it (the 0.10 tool wrote to ZooKeeper directly; the CreateTopics request
         of Kafka 0.10.1, KIP-4, is what replaced that). ``--delete`` also takes ``--zookeeper``,
         and then writes ``/admin/delete_topics/<topic>`` itself, as 0.11's TopicCommand does.
Book:    chapter 7, 7.1.3 (creating a topic: the assignment in ZooKeeper, the controller does the
         rest), 7.1.5 (deleting one: a mark in ZooKeeper, the controller does the rest)

``--alter --partitions N`` takes either path: with ``--zookeeper`` it rewrites the topic's assignment
in ZooKeeper itself, as Kafka 0.11's tool does (``AdminUtils.addPartitions``: 0.11 has no request for
it); with ``--bootstrap-server`` it sends CreatePartitions, the request Kafka 1.0 added (KIP-195).
Either way the controller's watch on the topic sees the new partitions and elects their leaders.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from rich.table import Table

from kafka_lite.cli import CliError, admin_client, message_with_causes
from kafka_lite.cli.security import add_command_config
from kafka_lite.common.errors import KafkaException

REQUEST_TIMEOUT_MS = 15_000  # how long each call waits for the brokers
DELETE_TIMEOUT_MS = 10_000  # how long the controller waits for a deletion before it answers


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "topics", help="create, list, describe, alter and delete topics (kafka-topics.sh)"
    )
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT[,...]", help="the brokers to connect to")
    add_command_config(parser, "with --bootstrap-server: ")
    parser.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[/CHROOT]",
        help="with --alter or --delete: write to ZooKeeper instead of asking a broker",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--create", action="store_true", help="create a topic")
    action.add_argument("--list", action="store_true", help="list the topics")
    action.add_argument("--describe", action="store_true", help="each partition's leader, replicas and ISR")
    action.add_argument("--alter", action="store_true", help="add partitions to a topic (--partitions)")
    action.add_argument("--delete", action="store_true", help="delete a topic (delete.topic.enable)")
    parser.add_argument("--topic", metavar="TOPIC", help="the topic to create, describe, alter or delete")
    parser.add_argument(
        "--partitions", type=int, metavar="N", help="partitions of a new topic, or after --alter"
    )
    parser.add_argument(
        "--replication-factor", type=int, metavar="R", help="replicas of each partition of a new topic"
    )
    parser.add_argument(
        "--replica-assignment",
        metavar="B:B,B:B",
        help="explicit assignment: partitions by ',', replicas by ':' (with --alter: the new partitions')",
    )
    parser.add_argument("--config", action="append", default=[], metavar="K=V", help="a topic setting")
    parser.add_argument(
        "--if-not-exists", action="store_true", help="with --create: no error if the topic exists"
    )
    parser.add_argument(
        "--if-exists", action="store_true", help="with --delete: no error if the topic is not there"
    )
    parser.add_argument(
        "--under-replicated-partitions",
        action="store_true",
        help="with --describe: only partitions whose ISR is smaller than their replicas",
    )
    parser.add_argument(
        "--unavailable-partitions",
        action="store_true",
        help="with --describe: only partitions whose leader is not a live broker",
    )
    parser.set_defaults(handler=run)


def _parse_assignment(text: str) -> dict[int, list[int]]:
    try:
        return {i: [int(b) for b in part.split(":")] for i, part in enumerate(text.split(","))}
    except ValueError:
        raise CliError(
            f"--replica-assignment {text!r}: expected broker ids like 0:1,1:2", exit_code=2
        ) from None


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.clients.admin import NewTopic

    if (args.under_replicated_partitions or args.unavailable_partitions) and not args.describe:
        raise CliError(
            "--under-replicated-partitions and --unavailable-partitions go with --describe", exit_code=2
        )
    if args.zookeeper is not None:
        if args.bootstrap_server is not None:
            raise CliError("give --bootstrap-server or --zookeeper, not both", exit_code=2)
        if args.command_config is not None:
            raise CliError("--command-config goes with --bootstrap-server, not --zookeeper", exit_code=2)
        if args.delete:
            return _delete_in_zookeeper(args, console)
        if not args.alter:
            raise CliError(
                "--zookeeper goes with --alter or --delete (the other actions need --bootstrap-server)",
                exit_code=2,
            )
    elif args.bootstrap_server is None:
        raise CliError(
            "--bootstrap-server is required (or --zookeeper with --alter or --delete)", exit_code=2
        )
    if args.alter:
        return _alter(args, console)
    if args.delete and not args.topic:
        raise CliError("--delete needs --topic", exit_code=2)
    with admin_client(
        args.bootstrap_server, command_config=args.command_config, request_timeout_ms=REQUEST_TIMEOUT_MS
    ) as admin:
        if args.create:
            return _create(admin, args, console, NewTopic)
        if args.list:
            for topic in admin.list_topics():
                console.print(topic, highlight=False)
            return 0
        if args.delete:
            return _delete(admin, args, console)
        return _describe(admin, args, console)


def _create(admin, args, console, NewTopic) -> int:
    if not args.topic:
        raise CliError("--create needs --topic", exit_code=2)
    configs = {}
    for item in args.config:
        key, sep, value = item.partition("=")
        if not sep:
            raise CliError(f"--config expects key=value, got {item!r}", exit_code=2)
        configs[key] = value
    if args.replica_assignment:
        topic = NewTopic(args.topic, -1, -1, _parse_assignment(args.replica_assignment), configs)
    else:
        if args.partitions is None or args.replication_factor is None:
            raise CliError(
                "--create needs --partitions and --replication-factor (or --replica-assignment)", exit_code=2
            )
        topic = NewTopic(args.topic, args.partitions, args.replication_factor, {}, configs)
    try:
        admin.create_topics([topic])
    except KafkaException as e:
        if args.if_not_exists and type(e).__name__ == "TopicExistsException":
            return 0
        raise
    console.print(f'Created topic "{args.topic}".', highlight=False)
    return 0


def _alter(args, console) -> int:
    """Grow ``--topic`` to ``--partitions`` partitions, through ZooKeeper or CreatePartitions."""
    if not args.topic or args.partitions is None:
        raise CliError("--alter needs --topic and --partitions", exit_code=2)
    if args.config:
        raise CliError(
            f"--alter takes no --config: change a topic's settings with `{_configs_command(args)}`",
            exit_code=2,
        )
    new_assignments = (
        list(_parse_assignment(args.replica_assignment).values()) if args.replica_assignment else None
    )
    # Kafka's warning: a keyed record's partition is its key's hash modulo the partition count
    console.print(
        "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering "
        "of the messages will be affected",
        highlight=False,
    )
    if args.zookeeper:
        _add_partitions_in_zookeeper(args.zookeeper, args.topic, args.partitions, new_assignments)
    else:
        from kafka_lite.clients.admin import NewPartitions

        with admin_client(
            args.bootstrap_server, command_config=args.command_config, request_timeout_ms=REQUEST_TIMEOUT_MS
        ) as admin:
            admin.create_partitions({args.topic: NewPartitions(args.partitions, new_assignments)})
    console.print("Adding partitions succeeded!", highlight=False)
    return 0


def _configs_command(args) -> str:
    """The ``kafka-lite configs`` command that sets the ``--config`` values ``--alter`` was given.
    It goes through a broker (AlterConfigs): with ``--zookeeper`` the broker's address is left for
    the user to fill in."""
    bootstrap = args.bootstrap_server or "HOST:PORT"
    login = ["--command-config", args.command_config] if args.command_config else []
    return shlex.join(["kafka-lite", "configs", "--bootstrap-server", bootstrap, *login, "--entity-type", "topics",
                       "--entity-name", args.topic, "--alter", "--add-config", ",".join(args.config)])  # fmt: skip


def _add_partitions_in_zookeeper(
    zk_connect: str, topic: str, total: int, new_assignments: list[list[int]] | None
) -> None:
    """Kafka 0.11's ``AdminUtils.addPartitions``: the grown assignment, written over the old one."""
    from kafka_lite.server.admin_manager import add_partitions_assignment
    from kafka_lite.zk.zk_utils import ZkUtils

    try:
        zk = ZkUtils(zk_connect)
    except KafkaException as e:
        raise CliError(f"--zookeeper {zk_connect!r}: {message_with_causes(e)}") from None
    try:
        existing = zk.get_partition_assignment(topic)
        if not existing:
            raise CliError(f"Topic '{topic}' does not exist as expected")
        new = add_partitions_assignment(topic, existing, zk.get_all_broker_ids(), total, new_assignments)
        zk.update_partition_assignment(topic, {**existing, **new})
    except KafkaException as e:
        raise CliError(message_with_causes(e)) from None
    finally:
        zk.close()


# TopicCommand's words: a broker whose delete.topic.enable is false keeps the mark and does nothing.
DISABLED_NOTE = "Note: This will have no impact if delete.topic.enable is not set to true."


# --8<-- [start:delete]
def _delete(admin, args, console) -> int:
    """DeleteTopics to the controller, which answers once the topic has left its metadata."""
    from kafka_lite.common.errors import TimeoutException, UnknownTopicOrPartitionException

    try:
        admin.delete_topics([args.topic], timeout_ms=DELETE_TIMEOUT_MS)
    except UnknownTopicOrPartitionException:
        if args.if_exists:
            return 0
        raise CliError(f"Topic '{args.topic}' does not exist as expected") from None
    except TimeoutException:  # the answer came: the mark is written, the topic is still there
        console.print(f"Topic {args.topic} is marked for deletion.", highlight=False)
        raise CliError(
            f"topic {args.topic} still exists after {DELETE_TIMEOUT_MS} ms. {DISABLED_NOTE}"
        ) from None
    console.print(f"Topic {args.topic} is deleted.", highlight=False)
    return 0


def _delete_in_zookeeper(args, console) -> int:
    """TopicCommand.deleteTopic: write the mark; the controller's watch does the rest."""
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.zk.zk_utils import TopicAlreadyMarkedForDeletionException, ZkUtils

    if not args.topic:
        raise CliError("--delete needs --topic", exit_code=2)
    if args.topic.startswith("__"):
        raise CliError(
            f"Topic {args.topic} is a kafka internal topic and is not allowed to be marked for deletion."
        )
    try:
        zk = ZkUtils(args.zookeeper)
    except (KafkaException, ValueError) as e:
        raise CliError(f"--zookeeper {args.zookeeper!r}: {message_with_causes(e)}") from None
    try:
        zk.create_delete_topic_path(args.topic)
    except TopicAlreadyMarkedForDeletionException:
        console.print(f"Topic {args.topic} is already marked for deletion.", highlight=False)
        return 0
    except KafkaException:  # the topic is not there
        if args.if_exists:
            return 0
        raise CliError(f"Topic {args.topic} does not exist on ZK path {args.zookeeper}") from None
    finally:
        zk.close()
    console.print(f"Topic {args.topic} is marked for deletion.", highlight=False)
    console.print(DISABLED_NOTE, highlight=False)
    return 0


# --8<-- [end:delete]


def _describe(admin, args, console) -> int:
    """Kafka's ``describeTopic``: a row per partition, or, with the two filters, only the partitions
    that need a look. Under-replicated: a replica has fallen out of the ISR (it stopped fetching, or
    lags more than ``replica.lag.time.max.ms``; chapter 6). Unavailable: no live broker leads it, so
    neither producers nor consumers can use it until the controller elects a leader (chapter 7)."""
    cluster = admin.describe_cluster()
    topics = [args.topic] if args.topic else sorted(cluster.topics())
    if args.topic and args.topic not in cluster.topics():
        raise CliError(f"Topic '{args.topic}' does not exist as expected")
    under, unavailable = args.under_replicated_partitions, args.unavailable_partitions
    table = Table("Topic", "Partition", "Leader", "Replicas", "Isr")
    for topic in topics:
        for p in cluster.partitions_for_topic(topic):
            # (The Metadata response lists only live brokers, so a leader not among them is none.)
            needs_a_look = (under and len(p.in_sync_replicas) < len(p.replicas)) or (
                unavailable and p.leader is None
            )
            if (under or unavailable) and not needs_a_look:
                continue
            leader = str(p.leader.id) if p.leader else "none"
            table.add_row(
                topic,
                str(p.partition),
                leader,
                ",".join(map(str, p.replicas)),
                ",".join(map(str, p.in_sync_replicas)),
            )
    if table.row_count:
        console.print(table)
    else:  # as Kafka's tool, nothing on stdout; a word for whoever is watching
        wanted = " or ".join(
            w for w, asked in (("under-replicated", under), ("unavailable", unavailable)) if asked
        )
        print(f"(no partition is {wanted})", file=sys.stderr)
    return 0
