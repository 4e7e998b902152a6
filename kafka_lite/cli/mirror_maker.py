"""``kafka-lite mirror-maker --consumer.config F --producer.config F --whitelist R``: Kafka's
``kafka-mirror-maker.sh``.

No Kafka twin for this module itself: the command-line face of ``kafka_lite.tools.mirror_maker``,
with the option names of Kafka's tool::

    kafka-lite mirror-maker --consumer.config source.properties --producer.config target.properties \\
        --whitelist 'orders.*,payments' --num.streams 2

The consumer config names the source cluster and the group (``bootstrap.servers``, ``group.id``),
the producer config the target (``bootstrap.servers``); any other setting by Kafka's name may sit
beside them. A secure cluster's login goes in the file of its side (``security.protocol``,
``sasl.mechanism``, ``sasl.jaas.config``, the lines of a ``cluster up --secure`` user's properties
file): the source's principal needs Read on the topics and the group, the target's Write on them. MirrorMaker copies until SIGTERM or Ctrl-C, which stop it cleanly, as Kafka's shutdown
hook does: every thread flushes the producer and commits, then the producer closes; the exit code is
then a JVM's after that signal (130 for SIGINT, 143 for SIGTERM). A thread that stops by itself (a
failed send with ``--abort.on.send.failure true``) stops the others: one line on stderr, exit code 1.
A bad option, a config file that is missing or names an unknown setting, or a whitelist that is not
a regular expression: one line, exit code 2, before anything connects.

MirrorMaker's own log (what Kafka's tool writes through log4j: starting, committing, shutting down)
goes to stderr at INFO.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from rich.console import Console

from kafka_lite.cli import CliError, message_with_causes, positive_int, properties_file, whole_number


def _boolean(text: str) -> bool:
    """An argparse type for Kafka's ``String.toBoolean``: true or false, in any case."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise argparse.ArgumentTypeError(f"{text!r} is not true or false")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mirror-maker", help="continuously copy topics from one cluster to another (kafka-mirror-maker.sh)"
    )
    parser.add_argument("--consumer.config", dest="consumer_config", type=Path, required=True, metavar="FILE",
                        help="consumer settings for the source cluster (bootstrap.servers, group.id, ...)")  # fmt: skip
    parser.add_argument("--producer.config", dest="producer_config", type=Path, required=True, metavar="FILE",
                        help="producer settings for the target cluster (bootstrap.servers, ...)")  # fmt: skip
    parser.add_argument("--whitelist", required=True, metavar="REGEX",
                        help="the topics to mirror: a regular expression of whole names, ',' meaning '|'")  # fmt: skip
    parser.add_argument("--num.streams", dest="num_streams", type=positive_int("streams"), default=1,
                        metavar="N", help="consumer threads, one group (default: 1)")  # fmt: skip
    parser.add_argument("--offset.commit.interval.ms", dest="offset_commit_interval_ms",
                        type=whole_number("ms"), default=60_000, metavar="MS",
                        help="flush the producer, then commit, this often (default: 60000)")  # fmt: skip
    parser.add_argument("--abort.on.send.failure", dest="abort_on_send_failure", type=_boolean, default=True,
                        metavar="true|false", help="stop MirrorMaker when a send fails (default: true)")  # fmt: skip
    parser.add_argument("--message.handler", dest="message_handler", metavar="module:Class",
                        help="a MirrorMakerMessageHandler subclass for every record in between")  # fmt: skip
    parser.add_argument("--message.handler.args", dest="message_handler_args", metavar="ARGS",
                        help="the one string the message handler is built with")  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, console: Console) -> int:
    from kafka_lite.tools.mirror_maker import MirrorMaker, MirrorMakerException, load_message_handler

    consumer_props = properties_file(args.consumer_config, "--consumer.config")
    producer_props = properties_file(args.producer_config, "--producer.config")
    _show_log()
    try:
        handler = None
        if args.message_handler is not None:
            handler = load_message_handler(args.message_handler, args.message_handler_args)
        elif args.message_handler_args is not None:
            raise MirrorMakerException("--message.handler.args needs a --message.handler")
        mirror_maker = MirrorMaker.from_configs(
            consumer_props,
            producer_props,
            args.whitelist,
            args.num_streams,
            message_handler=handler,
            offset_commit_interval_ms=args.offset_commit_interval_ms,
            abort_on_send_failure=args.abort_on_send_failure,
        )
    except MirrorMakerException as e:
        if e.config is not None:  # a setting that is missing or refused: name the file it is in
            path = args.consumer_config if e.config == "consumer" else args.producer_config
            raise CliError(f"--{e.config}.config {path}: {message_with_causes(e)}", exit_code=2) from None
        raise CliError(message_with_causes(e), exit_code=2) from None

    received: list[int] = []
    restore = _shutdown_on_signals(mirror_maker, received)
    try:
        code = mirror_maker.run()
    finally:
        restore()
    if code != 0:
        failure = mirror_maker.state.failure
        raise CliError(f"MirrorMaker stopped: {type(failure).__name__}: {failure}" if failure
                       else "MirrorMaker stopped: a thread exited abnormally")  # fmt: skip
    return 128 + received[0] if received else 0


def _show_log() -> None:
    logger = logging.getLogger("kafka_lite.tools.mirror_maker")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[%(asctime)s] %(levelname)s [%(threadName)s] %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def _shutdown_on_signals(mirror_maker, received: list[int]):
    """SIGTERM and SIGINT begin a clean shutdown (Kafka's shutdown hook). Returns what puts the
    previous handlers back. Only the main thread may set handlers: elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_signal(signum, frame) -> None:
        received.append(signum)
        mirror_maker.shutdown()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)

    return restore
