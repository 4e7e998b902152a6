"""``kafka-lite transactions``: find a hanging transaction and abort it.

No Kafka twin: modelled on bin/kafka-transactions.sh (org.apache.kafka.tools.TransactionsCommand,
Kafka 3.0, KIP-664), with its subcommands and option names::

    kafka-lite transactions --bootstrap-server B describe-producers --topic T --partition P [--broker-id N]
    kafka-lite transactions --bootstrap-server B find-hanging (--broker-id N | --topic T [--partition P])
                                                              [--max-transaction-timeout MINUTES]
    kafka-lite transactions --bootstrap-server B abort --topic T --partition P --start-offset O
    kafka-lite transactions --bootstrap-server B abort --topic T --partition P
                                                       --producer-id I --producer-epoch E --coordinator-epoch C

Book:    chapter 10 (transactions, Kafka 0.11); the tool is Kafka 3.0's answer to the hanging
         transactions 0.11's protocol allows
Differs: ``list`` and ``describe`` (ListTransactions and DescribeTransactions, asked of the
         coordinators) are not here; so ``find-hanging`` reports every transaction open on a
         partition for longer than ``--max-transaction-timeout``, where Kafka then asks the
         coordinator and leaves out those it still knows as ongoing. A transaction open that long
         is one the coordinator would have aborted already, so either way it is hanging.

A hanging transaction is open on a partition with no coordinator to end it (a Produce that arrived
after its transaction was aborted): the partition's last stable offset stops at its first offset,
and so does every read_committed consumer. DescribeProducers shows it (its ``current transaction
start offset``); ``abort`` writes the ABORT marker the coordinator never will, with the producer's
epoch and the epoch of the coordinator that wrote its last marker, which the leader checks as it
checks a coordinator's.
"""

from __future__ import annotations

import argparse
import time

from kafka_lite.cli import CliError, admin_client
from kafka_lite.cli.security import add_command_config

DESCRIBE_HEADERS = ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                    "CurrentTransactionStartOffset"]  # fmt: skip
HANGING_HEADERS = ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                   "LastTimestamp", "Duration(min)"]  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "transactions", help="find hanging transactions and abort them (kafka-transactions.sh)"
    )
    parser.add_argument(
        "--bootstrap-server", required=True, metavar="HOST:PORT[,...]", help="the brokers to connect to"
    )
    add_command_config(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    describe = commands.add_parser("describe-producers", help="the producers of a partition")
    describe.add_argument("--topic", required=True, help="the topic")
    describe.add_argument("--partition", required=True, type=int, help="the partition")
    describe.add_argument("--broker-id", type=int, help="ask this replica (default: the leader)")
    describe.set_defaults(handler=run_describe_producers)

    hanging = commands.add_parser("find-hanging", help="find hanging transactions")
    hanging.add_argument("--broker-id", type=int, help="search the partitions this broker leads")
    hanging.add_argument(
        "--max-transaction-timeout", type=int, default=15, metavar="MINUTES",
        help="report transactions open longer than this (15 minutes by default)",
    )  # fmt: skip
    hanging.add_argument("--topic", help="limit the search to this topic (required with --partition)")
    hanging.add_argument("--partition", type=int, help="limit the search to this partition")
    hanging.set_defaults(handler=run_find_hanging)

    abort = commands.add_parser("abort", help="abort a hanging transaction")
    abort.add_argument("--topic", required=True, help="the topic of the partition")
    abort.add_argument("--partition", required=True, type=int, help="the partition")
    abort.add_argument("--start-offset", type=int, help="the first offset of the transaction to abort")
    abort.add_argument("--producer-id", type=int, help="without --start-offset: the producer id")
    abort.add_argument("--producer-epoch", type=int, help="without --start-offset: the producer epoch")
    abort.add_argument("--coordinator-epoch", type=int, help="without --start-offset: the coordinator epoch")
    abort.set_defaults(handler=run_abort)


def _admin(args: argparse.Namespace):
    return admin_client(args.bootstrap_server, command_config=args.command_config)


def _print_table(headers: list[str], rows: list[list]) -> None:
    table = [headers, *([str(c) for c in row] for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for row in table:  # plain, as Kafka's prettyPrintTable: columns padded, no borders
        print("\t".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def run_describe_producers(args: argparse.Namespace, console) -> int:
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.common.topic_partition import TopicPartition

    tp = TopicPartition(args.topic, args.partition)
    with _admin(args) as admin:
        try:
            producers = admin.describe_producers([tp], broker_id=args.broker_id)[tp]
        except KafkaException as e:
            where = f"broker {args.broker_id}" if args.broker_id is not None else "leader"
            raise CliError(
                f"Failed to describe producers for partition {tp[0]}-{tp[1]} on {where}: {e}"
            ) from None
    rows = [
        [p["producer_id"], p["producer_epoch"], p["coordinator_epoch"], p["last_sequence"], p["last_timestamp"],
         p["current_txn_start_offset"] if p["current_txn_start_offset"] >= 0 else "None"]
        for p in producers
    ]  # fmt: skip
    _print_table(DESCRIBE_HEADERS, rows)
    return 0


def run_find_hanging(args: argparse.Namespace, console) -> int:
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.common.topic_partition import TopicPartition

    if args.partition is not None and args.topic is None:
        raise CliError("--partition requires --topic", exit_code=2)
    if args.broker_id is None and args.topic is None:
        raise CliError("find-hanging needs --broker-id or --topic", exit_code=2)
    if args.max_transaction_timeout < 0:
        raise CliError(
            f"--max-transaction-timeout must be 0 or more, got {args.max_transaction_timeout}", exit_code=2
        )
    with _admin(args) as admin:
        try:
            cluster = admin.describe_cluster()
            topics = [args.topic] if args.topic is not None else sorted(cluster.topics())
            partitions = [
                TopicPartition(t, p.partition)
                for t in topics
                for p in cluster.partitions_for_topic(t)
                if (args.partition is None or p.partition == args.partition)
                and (args.broker_id is None or (p.leader is not None and p.leader.id == args.broker_id))
            ]
            if args.topic is not None and not partitions:
                raise CliError(f"no partition {args.topic}-{args.partition} to search", exit_code=2)
            producers = admin.describe_producers(partitions, broker_id=args.broker_id) if partitions else {}
        except KafkaException as e:
            raise CliError(f"Failed to describe producers: {e}") from None
    now = int(time.time() * 1000)
    rows = []
    for tp, states in sorted(producers.items()):
        for p in states:
            open_ms = now - p["last_timestamp"]
            if p["current_txn_start_offset"] >= 0 and open_ms > args.max_transaction_timeout * 60_000:
                rows.append([tp[0], tp[1], p["producer_id"], p["producer_epoch"], p["coordinator_epoch"],
                             p["current_txn_start_offset"], p["last_timestamp"], open_ms // 60_000])  # fmt: skip
    _print_table(HANGING_HEADERS, rows)
    return 0


def run_abort(args: argparse.Namespace, console) -> int:
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.common.topic_partition import TopicPartition

    tp = TopicPartition(args.topic, args.partition)
    by_id = (args.producer_id, args.producer_epoch, args.coordinator_epoch)
    if args.start_offset is None and args.producer_id is None:
        raise CliError(
            "The transaction to abort must be identified either with --start-offset or with "
            "--producer-id, --producer-epoch, and --coordinator-epoch",
            exit_code=2,
        )
    if args.start_offset is None and None in by_id:
        missing = "--producer-epoch" if args.producer_epoch is None else "--coordinator-epoch"
        raise CliError(f"Missing required argument {missing}", exit_code=2)
    with _admin(args) as admin:
        try:
            if args.start_offset is not None:
                producers = admin.describe_producers([tp])[tp]
                found = [p for p in producers if p["current_txn_start_offset"] == args.start_offset]
                if not found:
                    raise CliError(
                        f"Could not find any open transactions starting at offset {args.start_offset} "
                        f"on partition {tp[0]}-{tp[1]}"
                    )
                p = found[0]
                by_id = (p["producer_id"], p["producer_epoch"], p["coordinator_epoch"])
            producer_id, producer_epoch, coordinator_epoch = by_id
            # a producer whose first transaction hangs has had no marker: no coordinator epoch (-1),
            # and 0 is at most any coordinator's (as Kafka's tool reasons)
            admin.abort_transaction(tp, producer_id, producer_epoch, max(coordinator_epoch, 0))
        except KafkaException as e:
            raise CliError(f"Failed to abort the transaction on {tp[0]}-{tp[1]}: {e}") from None
    print(f"Aborted the transaction of producer {producer_id} (epoch {producer_epoch}) on {tp[0]}-{tp[1]}")
    return 0
