"""``kafka-lite streams``: run Kafka's word count demo as a Streams application, and reset one.

No Kafka twin for this module itself: a command group, one sub-command per tool. ``wordcount`` is
Kafka's ``WordCountDemo`` (``kafka_lite.streams.examples.wordcount``) on ``KafkaStreams``, running
until Ctrl-C or SIGTERM, then closing cleanly (every task committed and its stores checkpointed)::

    kafka-lite streams wordcount --bootstrap-server 127.0.0.1:9092
    kafka-lite streams wordcount --bootstrap-server 127.0.0.1:9092 --property commit.interval.ms=1000
    kafka-lite streams wordcount --bootstrap-server 127.0.0.1:9092 --state-dir /tmp/wc-2 \
        --property num.standby.replicas=1          # a second instance beside the first
    kafka-lite streams wordcount --bootstrap-server 127.0.0.1:9093 --command-config alice.properties

On a secure cluster the application logs in as Kafka's Streams does, with the client security
settings among its own (``--property security.protocol=SASL_PLAINTEXT`` and so on), or all at once
from ``--command-config``, the properties file Kafka's tools take (and ``cluster up --secure``
writes): its settings become Streams settings, which every client of the application gets.

``reset`` is
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
import logging
import shlex

from rich.console import Console

from kafka_lite.cli import CliError, admin_client, properties_file, with_causes
from kafka_lite.cli.security import add_command_config
from kafka_lite.common.errors import KafkaException
from kafka_lite.common.topic import validate_topic_name
from kafka_lite.utils.shutdown_signals import ShutdownSignals


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "streams", help="Kafka Streams applications: reset one to reprocess its input"
    )
    commands = parser.add_subparsers(dest="streams_command", metavar="STREAMS_COMMAND")
    commands.required = True
    register_wordcount(commands)
    register_reset(commands)


def register_wordcount(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "wordcount",
        help="run Kafka's WordCountDemo: count the words of an input topic's lines into an output topic",
        description="Run Kafka's WordCountDemo as a Kafka Streams application until Ctrl-C or SIGTERM. "
        "Lines are split on non-word characters and lower-cased; at each commit (commit.interval.ms, "
        "30 s by default) each word counted since the last one is written to the output topic once, "
        "with the word as a UTF-8 key and its count as an 8-byte big-endian long value. "
        "Start it again, with another --state-dir, to run a second instance: the tasks are shared.",
    )
    parser.add_argument("--bootstrap-server", dest="bootstrap_server", required=True,
                        metavar="HOST:PORT[,...]", help="the brokers to connect to")  # fmt: skip
    parser.add_argument("--application-id", default="streams-wordcount", metavar="ID",
                        help="application.id: the consumer group and the internal topics' prefix "
                        "(default: streams-wordcount)")  # fmt: skip
    parser.add_argument("--input-topic", default="streams-plaintext-input", metavar="TOPIC",
                        help="the topic of lines (default: streams-plaintext-input)")  # fmt: skip
    parser.add_argument("--output-topic", default="streams-wordcount-output", metavar="TOPIC",
                        help="the topic of counts (default: streams-wordcount-output)")  # fmt: skip
    parser.add_argument("--state-dir", metavar="DIR", help="state.dir (default: /tmp/kafka-streams)")
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="any other Streams setting, such as commit.interval.ms=1000, "
                        "num.stream.threads=2, num.standby.replicas=1 or consumer.session.timeout.ms=6000; "
                        "repeatable")  # fmt: skip
    parser.add_argument("--command-config", metavar="FILE",
                        help="client properties to log in with (security.protocol, sasl.mechanism, "
                        "sasl.jaas.config), as Streams settings: every client of the application gets them; "
                        "a --property wins over the file")  # fmt: skip
    parser.set_defaults(handler=run_wordcount)


def parse_properties(properties: list[str]) -> dict[str, str]:
    """``--property KEY=VALUE`` arguments as a dict; a malformed one is a usage error naming it."""
    props = {}
    for prop in properties:
        key, sep, value = prop.partition("=")
        if not sep or not key.strip():
            raise CliError(
                f"--property {prop!r}: expected KEY=VALUE, for example num.stream.threads=2", exit_code=2
            )
        props[key.strip()] = value.strip()
    return props


def run_wordcount(args: argparse.Namespace, console: Console) -> int:
    from kafka_lite.streams.examples.wordcount import build_wordcount
    from kafka_lite.streams.kafka_streams import KafkaStreams
    from kafka_lite.streams.kstream.kstream_builder import KStreamBuilder
    from kafka_lite.streams.streams_config import StreamsConfig

    for option, topic in (("--input-topic", args.input_topic), ("--output-topic", args.output_topic)):
        try:
            validate_topic_name(topic)
        except KafkaException as e:
            raise CliError(f"{option}: {e}", exit_code=2) from None
    props = {
        **properties_file(args.command_config, "--command-config"),
        **parse_properties(args.property),
        "application.id": args.application_id,
        "bootstrap.servers": args.bootstrap_server,
    }
    if args.state_dir:
        props["state.dir"] = args.state_dir
    try:
        config = StreamsConfig(props)  # every setting checked before anything connects
        login = config.get_admin_configs(args.application_id)  # the application's own login
    except KafkaException as e:
        raise CliError(str(e), exit_code=2) from None
    with admin_client(args.bootstrap_server, **login) as admin:
        if args.input_topic not in admin.list_topics():
            create = shlex.join(["kafka-lite", "topics", "--create", "--topic", args.input_topic, "--partitions", "3",
                                 "--replication-factor", "1", "--bootstrap-server", args.bootstrap_server])  # fmt: skip
            # A secure cluster answers a topic the user may not Describe as unknown (Kafka 0.11).
            hidden = ""
            if login["security_protocol"] != "PLAINTEXT":
                hidden = f" (or {login['sasl_plain_username']} may not see it: an ACL must allow Describe)"
            raise CliError(
                f"the input topic {args.input_topic} does not exist{hidden}: create it first, for example `{create}`"
            )
    # Kafka's demo logs its warnings to the console (log4j's WARN): a store deleted and restored from
    # scratch, a task that failed to commit. The library's other loggers stay quiet, as ``main`` set.
    warnings = logging.StreamHandler()
    warnings.setLevel(logging.WARNING)
    warnings.setFormatter(logging.Formatter("WARN %(message)s"))
    logging.getLogger("kafka_lite.streams").addHandler(warnings)
    try:
        streams = KafkaStreams(build_wordcount(KStreamBuilder(), args.input_topic, args.output_topic), props)
        streams.set_state_listener(lambda new, old: console.print(f"state {old.value} -> {new.value}"))
        stop = ShutdownSignals()
        try:
            streams.start()
        except KafkaException as e:
            streams.close()
            raise CliError(str(e)) from None
        console.print(
            f"word count {args.application_id}: {args.input_topic} -> {args.output_topic}; Ctrl-C or SIGTERM stops it"
        )
        while not stop.wait(1):
            if not any(thread.is_alive() for thread in streams.threads):
                break  # every stream thread died: its error is in the log
        stop.close()
        streams.close()
        console.print("closed")
        failed = [t for t in streams.threads if t.uncaught_exception is not None]
        if failed:
            # The exception's class names the error as Kafka's stack trace would (an authorization
            # failure is ClusterAuthorizationException, GroupAuthorizationException, ...).
            error = failed[0].uncaught_exception
            raise CliError(f"{failed[0].name} stopped on an error: {with_causes(error)}")
        return 0
    finally:
        logging.getLogger("kafka_lite.streams").removeHandler(warnings)


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
    add_command_config(parser)
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

    with admin_client(args.bootstrap_server, command_config=args.command_config) as admin:
        StreamsResetter(admin, out).run(args.application_id, args.input_topics, args.intermediate_topics)
    return 0
