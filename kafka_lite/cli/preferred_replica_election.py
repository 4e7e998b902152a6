"""``kafka-lite preferred-replica-election``: move leadership back to each partition's preferred replica.

Mirrors: bin/kafka-preferred-replica-election.sh (kafka.admin.PreferredReplicaLeaderElectionCommand,
         Kafka 0.11), which writes ``/admin/preferred_replica_election`` in ZooKeeper: Kafka had no
         request for it until ElectLeaders (Kafka 2.2, KIP-183)
Book:    chapter 7, 7.1.7 (preferred replica election)
Differs: a bad file, or an election already running, is a one-line error with exit code 2 (the
         input) or 1 (the cluster's state) where Kafka prints a stack trace and exits 0; a file none of
         whose partitions exists writes nothing (Kafka writes an empty election).

::

    kafka-lite preferred-replica-election --zookeeper Z                               # every partition
    kafka-lite preferred-replica-election --zookeeper Z --path-to-json-file parts.json

The file is ``{"partitions": [{"topic": "foo", "partition": 1}, ...]}``. The tool only writes the
path; the controller elects, logs each partition's outcome and deletes the path.
"""

from __future__ import annotations

import argparse

from kafka_lite.cli import CliError
from kafka_lite.cli.reassign_partitions import connect, read_file, say, tp_str


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "preferred-replica-election",
        help="move leadership back to the preferred replicas (kafka-preferred-replica-election.sh)",
        description="This tool causes leadership for each partition to be transferred back to the "
        "'preferred replica', it can be used to balance leadership among the servers.",
    )
    parser.add_argument(
        "--zookeeper", required=True, metavar="HOST:PORT[/CHROOT]",
        help="REQUIRED: the connection string for the zookeeper connection",
    )  # fmt: skip
    parser.add_argument(
        "--path-to-json-file", metavar="FILE",
        help='the partitions to elect for: {"partitions": [{"topic": "foo", "partition": 1}]}; '
        "defaults to all existing partitions",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def _scala_set(partitions) -> str:
    return "Set(" + ", ".join(tp_str(tp) for tp in sorted(partitions)) + ")"


def run(args: argparse.Namespace, console) -> int:
    from kazoo.exceptions import NodeExistsError

    from kafka_lite.zk.zk_utils import parse_preferred_replica_election_data

    wanted = None
    if args.path_to_json_file:
        text = read_file(args.path_to_json_file, "--path-to-json-file")
        try:
            wanted = parse_preferred_replica_election_data(text)
        except ValueError as e:
            raise CliError(f"--path-to-json-file: {e}", exit_code=2) from None
    zk = connect(args.zookeeper)
    try:
        existing = {(t, p) for t in zk.get_all_topics() for p in zk.get_partition_assignment(t)}
        if wanted is None:
            wanted = existing
        valid, invalid = wanted & existing, wanted - existing
        if not valid:
            raise CliError(
                "No partition to elect for: "
                + (f"{_scala_set(invalid)} do not exist" if invalid else "the cluster has none")
            )
        try:
            data = zk.create_preferred_replica_election_data(valid)
        except NodeExistsError:
            try:
                running = _scala_set(zk.get_partitions_undergoing_preferred_replica_election())
            except ValueError:
                running = "unreadable partitions"
            raise CliError(
                f"Preferred replica leader election currently in progress for {running}. Aborting operation"
            ) from None
        say(console, f"Created preferred replica election path with {data.decode()}")
        say(console, f"Successfully started preferred replica election for partitions {_scala_set(valid)}")
        for tp in sorted(invalid):
            say(
                console,
                f"Skipping preferred replica leader election for partition {tp_str(tp)} since it doesn't exist.",
            )
        return 0
    finally:
        zk.close()
