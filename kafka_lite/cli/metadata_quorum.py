"""``kafka-lite metadata-quorum``: Kafka's ``kafka-metadata-quorum.sh``, describing the KRaft quorum.

No Kafka twin for this module itself: the command-line face of
``kafka_lite.tools.metadata_quorum_command``, flag for flag with Kafka 3.3's tool, plus
``--bootstrap-controller`` (Kafka 3.7's)::

    kafka-lite metadata-quorum --bootstrap-server 127.0.0.1:9990,127.0.0.1:9991 describe --status
    kafka-lite metadata-quorum --bootstrap-controller 127.0.0.1:9990 describe --replication

As in Kafka 3.3, ``--bootstrap-server`` names brokers of a KRaft cluster (``cluster up --kraft``):
a broker forwards DescribeQuorum to the active controller, and answers the cluster id from its
Metadata. ``--bootstrap-controller`` names the voters' own listeners (``controller.quorum.voters``'
addresses), of which only the leader answers DescribeQuorum. Either way the tool asks each address
in turn until one answers as the leader would, so a voters' list works after either option (as it
does for ``raft test-server``'s quorum, which has no brokers). A ZooKeeper broker knows no quorum
and closes the connection. Like Kafka's, every bad argument is one line on stderr and exit code 1.

``--command-config FILE`` logs in as Kafka's tools do (``security.protocol=SASL_PLAINTEXT``,
``sasl.mechanism=PLAIN``, ``sasl.jaas.config``): on a secure KRaft cluster the brokers' and the
controllers' listeners take only clients that authenticate, and a controller answers DescribeQuorum
only to a principal with DESCRIBE on the cluster.
"""

from __future__ import annotations

import argparse
import functools
import sys

from kafka_lite.cli import CliError, security


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "metadata-quorum",
        help="describe the KRaft metadata quorum: its leader, high watermark and each replica's lag",
        description="This tool describes kraft metadata quorum status.",
    )
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT,...",
                        help="A comma-separated list of host:port pairs to use for establishing the connection "
                             "to the Kafka cluster")  # fmt: skip
    parser.add_argument("--bootstrap-controller", metavar="HOST:PORT,...",
                        help="A comma-separated list of host:port pairs to use for establishing the connection "
                             "to the Kafka controllers (Kafka 3.7 added this option; 3.3 has only --bootstrap-server)")  # fmt: skip
    security.add_command_config(parser, "the brokers' or the controllers' ")
    commands = parser.add_subparsers(dest="quorum_command", metavar="COMMAND")
    describe = commands.add_parser("describe", help="Describe the metadata quorum info")
    status = describe.add_argument_group("Status")
    status.add_argument("--status", action="store_true",
                        help="A short summary of the quorum status and the other provides detailed information "
                             "about the status of replication.")  # fmt: skip
    replication = describe.add_argument_group("Replication")
    replication.add_argument(
        "--replication", action="store_true", help="Detailed information about the status of replication"
    )
    parser.set_defaults(handler=run)


def bootstrap_addresses(args: argparse.Namespace) -> list[tuple[str, int]]:
    """The addresses of whichever connection option was given (exactly one must be, as Kafka 3.7's
    mutually exclusive, required group has it)."""
    if args.bootstrap_server is not None and args.bootstrap_controller is not None:
        raise CliError("--bootstrap-server and --bootstrap-controller: give one of them, not both")
    if args.bootstrap_server is None and args.bootstrap_controller is None:
        raise CliError("one of --bootstrap-server or --bootstrap-controller is required")
    option, value = (
        ("--bootstrap-server", args.bootstrap_server)
        if args.bootstrap_server is not None
        else ("--bootstrap-controller", args.bootstrap_controller)
    )
    addresses = []
    for item in value.split(","):
        host, sep, port = item.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise CliError(f"{option}: {item.strip()!r} is not HOST:PORT (a port from 1 to 65535)")
        addresses.append((host, int(port)))
    return addresses


def plain_login(client: dict[str, str]) -> tuple[str, str] | None:
    """The username and password of a ``--command-config`` that logs in with SASL/PLAIN, or None for
    PLAINTEXT. This tool sends its one request over a plain socket, which speaks PLAIN only."""
    if not client:
        return None
    if client["sasl_mechanism"] != "PLAIN":
        raise CliError(
            f"--command-config: sasl.mechanism {client['sasl_mechanism']}: metadata-quorum logs in with "
            "PLAIN only (a KRaft cluster has no SCRAM credentials before Kafka 3.5)",
            exit_code=2,
        )
    return client["sasl_plain_username"], client["sasl_plain_password"]


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.raft.tools.quorum_client import (
        describe_cluster,
        describe_cluster_of_broker,
        describe_quorum,
    )
    from kafka_lite.tools.metadata_quorum_command import QuorumAdmin, TerseFailure, describe

    addresses = bootstrap_addresses(args)
    if args.quorum_command != "describe":
        raise CliError("a command is required: describe --status | --replication")
    login = plain_login(security.command_config(args.command_config))
    # The cluster id: a controller answers DescribeCluster (Kafka 3.7), a broker its Metadata.
    cluster = describe_cluster if args.bootstrap_controller is not None else describe_cluster_of_broker
    admin = QuorumAdmin(
        addresses, functools.partial(describe_quorum, login=login), functools.partial(cluster, login=login)
    )
    try:
        lines = describe(admin, args.status, args.replication)
    except TerseFailure as e:
        raise CliError(str(e)) from None
    # Straight to stdout: the replication table ends each column with a tab, as Kafka's
    # prettyPrintTable does, which a rich console would expand into spaces.
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()
    return 0
