"""``kafka-lite broker start CONFIG``: run one broker in the foreground until Ctrl-C or SIGTERM.

Mirrors: bin/kafka-server-start.sh and kafka.Kafka (core/src/main/scala/kafka/Kafka.scala)
Book:    chapter 2, 2.3 (the server side)

The config file is a Kafka ``server.properties`` (``broker.id``, ``listeners``, ``log.dirs``,
``zookeeper.connect`` ...); ``--override k=v`` replaces one setting, as Kafka's script allows. Log
lines go to stderr in Kafka's layout: ``[time] LEVEL message (logger)``.

With ``process.roles`` set, the same command starts a KRaft node (chapter 12) instead, as Kafka 3.3's
``kafka.Kafka.buildServer`` picks ``KafkaRaftServer`` over ``KafkaServer``: its directories must
have been formatted with ``kafka-lite storage format`` first.
"""

from __future__ import annotations

import argparse
import gc
import logging
from pathlib import Path

from kafka_lite.cli import CliError
from kafka_lite.common.errors import ConfigException, KafkaException
from kafka_lite.utils.shutdown_signals import ShutdownSignals

LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("broker", help="run a broker (kafka-server-start.sh)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    start = actions.add_parser("start", help="start a broker from a server.properties file")
    start.add_argument("config", type=Path, metavar="CONFIG", help="server.properties")
    start.add_argument("--override", action="append", default=[], metavar="K=V", help="override one setting")
    start.set_defaults(handler=run)


def parse_overrides(items: list[str]) -> dict[str, str]:
    overrides = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--override expects key=value, got {item!r}", exit_code=2)
        overrides[key.strip()] = value.strip()
    return overrides


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.server.kafka_config import KafkaConfig

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    try:
        config = KafkaConfig.from_file(args.config, parse_overrides(args.override))
    except ConfigException as e:
        raise CliError(str(e), exit_code=2) from None
    try:
        server = build_server(config)
    except KafkaException as e:  # a KRaft node's directories not formatted, or for another node
        raise CliError(f"node {config.node_id} failed to start: {e}") from None
    stop = ShutdownSignals()
    try:
        server.startup()
    except (KafkaException, OSError) as e:
        server.shutdown()
        raise CliError(f"{_describe(config)} failed to start: {e}") from None
    # The process's garbage-collector setting, as kafka-run-class.sh's JVM settings are the JVM's
    # (G1 with -XX:MaxGCPauseMillis=20: Kafka bounds its collector's pauses, because every request
    # stalls while one lasts). Python's full collection walks every object the process has, holding
    # the interpreter lock throughout, and under a steady load it runs every few seconds: the
    # purgatories keep completed operations until their next purge, long enough to reach the oldest
    # generation and so to set a full collection off. Most of the objects it would walk were made
    # during start-up (modules, classes, functions, protocol schemas, configs) and live as long as
    # the process: frozen, they are left out of every later collection, and a full collection walks
    # only what the broker made since.
    gc.freeze()
    stop.wait()
    stop.close()
    server.shutdown()
    return 0


def build_server(config):
    """A KRaft node when ``process.roles`` is set, else the book's ZooKeeper-mode broker (Kafka's
    ``kafka.Kafka.buildServer``)."""
    if config.process_roles:
        from kafka_lite.server.kafka_raft_server import KafkaRaftServer

        return KafkaRaftServer(config)
    from kafka_lite.server.kafka_server import KafkaServer

    return KafkaServer(config)


def _describe(config) -> str:
    return f"node {config.node_id}" if config.process_roles else f"broker {config.broker_id}"
