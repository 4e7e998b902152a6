"""``kafka-lite streams``: the commands of Kafka Streams applications, starting with ``reset``.

No Kafka twin for this module itself: a command group, one sub-command per tool. ``reset`` is
Kafka's ``kafka-streams-application-reset.sh`` (``kafka_lite.tools.streams_resetter``), flag for
flag with Kafka 0.10.1's (``--bootstrap-servers`` is also spelled ``--bootstrap-server``, as the
other kafka-lite tools take it, and is required; ``--zookeeper`` is accepted and ignored, as in
Kafka 1.0, since the topics are deleted over the wire)::

    kafka-lite streams reset --application-id wordcount --bootstrap-server 127.0.0.1:9092 \\
        --input-topics lines --intermediate-topics words-by-key

A sub-command registers itself on the group's parser with a ``register_*`` function of its own.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from kafka_lite.cli import CliError, admin_client
from kafka_lite.common.errors import KafkaException
from kafka_lite.common.topic import validate_topic_name


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "streams", help="Kafka Streams applications: reset one to reprocess its input"
    )
    commands = parser.add_subparsers(dest="streams_command", metavar="STREAMS_COMMAND")
    commands.required = True
    register_reset(commands)


def register_reset(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "reset",
        help="reset an application's offsets and delete its internal topics (kafka-streams-application-reset.sh)",
        description="Reset a stopped Kafka Streams application so that it reprocesses its input: the "
        "group's offsets of input topics go to their beginning, of intermediate topics to their end, "
        "and the application's internal topics (<application.id>-...-changelog, -repartition) are "
        "deleted. Output topics and local state directories are left alone.",
    )
    parser.add_argument("--application-id", required=True, metavar="ID",
                        help="the Kafka Streams application ID (application.id), its consumer group's id")  # fmt: skip
    parser.add_argument("--bootstrap-server", "--bootstrap-servers", dest="bootstrap_server", required=True,
                        metavar="HOST:PORT[,...]", help="the brokers to connect to")  # fmt: skip
    parser.add_argument("--input-topics", type=topic_list("--input-topics"), default=[], metavar="LIST",
                        help="comma-separated user input topics: offsets reset to the beginning")  # fmt: skip
    parser.add_argument("--intermediate-topics", type=topic_list("--intermediate-topics"), default=[],
                        metavar="LIST", help="comma-separated intermediate user topics (written with "
                        "through() and read back): offsets moved to the end")  # fmt: skip
    parser.add_argument("--zookeeper", metavar="HOST:PORT",
                        help="ignored: the tool reaches the cluster through the brokers only (Kafka 1.0 deprecated it)")  # fmt: skip
    parser.set_defaults(handler=run_reset)


def topic_list(option: str):
    """An argparse type for a comma-separated list of topic names: no empty name, none twice."""

    def parse(text: str) -> list[str]:
        topics = [name.strip() for name in text.split(",")]
        for name in topics:
            if not name:
                raise argparse.ArgumentTypeError(
                    f"{text!r} has an empty topic name; give names separated by commas"
                )
            try:
                validate_topic_name(name)
            except KafkaException as e:
                raise argparse.ArgumentTypeError(f"{name!r}: {e}") from None
        repeated = sorted({name for name in topics if topics.count(name) > 1})
        if repeated:
            raise argparse.ArgumentTypeError(f"{', '.join(repeated)} given more than once in {option}")
        return topics

    return parse


def run_reset(args: argparse.Namespace, console: Console) -> int:
    from kafka_lite.tools.streams_resetter import StreamsResetter

    if not args.application_id.strip():
        raise CliError("--application-id cannot be empty: give the application's application.id", exit_code=2)
    both = sorted(set(args.input_topics) & set(args.intermediate_topics))
    if both:
        raise CliError(
            f"{', '.join(both)} given in both --input-topics and --intermediate-topics: an input topic's "
            "offsets go to its beginning, an intermediate topic's to its end; name each topic once",
            exit_code=2,
        )

    def out(line: str) -> None:
        console.print(line, highlight=False, markup=False, soft_wrap=True)

    with admin_client(args.bootstrap_server) as admin:
        StreamsResetter(admin, out).run(args.application_id, args.input_topics, args.intermediate_topics)
    return 0
