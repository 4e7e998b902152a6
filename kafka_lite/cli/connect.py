"""``kafka-lite connect standalone|distributed``: run a Kafka Connect worker until Ctrl-C or SIGTERM.

No Kafka twin for this module itself: it is Kafka's ``bin/connect-standalone.sh`` (the
``org.apache.kafka.connect.cli.ConnectStandalone`` main class), argument for argument: a worker
properties file, then one properties file per connector::

    kafka-lite connect standalone config/connect-standalone.properties \\
        config/connect-file-source.properties config/connect-file-sink.properties

Kafka's quick-start files of 0.10.1 are in ``kafka_lite/connect/config/`` and work unchanged
(their ``bootstrap.servers=localhost:9092`` must point at a running broker; ``test.txt`` and
``test.sink.txt`` are relative to the working directory). Every file is read and every connector
config checked before anything starts, so a typo is one line and exit code 2, not a half-started
worker. As Kafka's, the worker also serves the REST API on ``rest.port`` (8083 unless set; its URL
is printed, and ``/docs`` there is FastAPI's interactive page for it), and its worker id is the
REST server's ``host:port``.

``kafka-lite connect distributed connect-distributed.properties`` is Kafka's
``bin/connect-distributed.sh`` (``ConnectDistributed``): one worker of the Connect cluster named by
``group.id``, which takes its connectors through the REST API (any worker's: followers forward to
the leader). Kafka 0.10.1's ``connect-distributed.properties`` works unchanged; the worker creates
the three internal topics, compacted, if they are missing. As Kafka's worker exits when its herder's
thread fails (a group it may not join, say), the command then stops, exit code 1, naming the error.

On a secure cluster the worker properties carry the login three times over, as Kafka's do: at the
top level for the worker itself, and again prefixed ``producer.`` and ``consumer.`` for its tasks
(``worker_config.py``).
"""

from __future__ import annotations

import argparse
import logging
import threading
import urllib.parse
from pathlib import Path
from typing import Any

from rich.console import Console

from kafka_lite.cli import CliError, properties_file, with_causes
from kafka_lite.utils.shutdown_signals import ShutdownSignals

CONFIG_DIR = Path(__file__).resolve().parents[1] / "connect" / "config"
LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("connect", help="Kafka Connect: copy data between files and topics")
    commands = parser.add_subparsers(dest="connect_command", metavar="CONNECT_COMMAND")
    commands.required = True
    standalone = commands.add_parser(
        "standalone",
        help="run a standalone Connect worker (connect-standalone.sh)",
        description="Run a Kafka Connect worker in standalone mode with the given connectors, until "
        "Ctrl-C or SIGTERM; source offsets are kept in offset.storage.file.filename. Kafka's "
        f"quick-start files are in {CONFIG_DIR}.",
    )
    standalone.add_argument("worker_config", type=Path, metavar="WORKER_PROPERTIES",
                            help="the worker's settings (connect-standalone.properties)")  # fmt: skip
    standalone.add_argument("connector_configs", type=Path, nargs="+", metavar="CONNECTOR_PROPERTIES",
                            help="one file per connector (connect-file-source.properties ...)")  # fmt: skip
    standalone.set_defaults(handler=run_standalone)
    distributed = commands.add_parser(
        "distributed",
        help="run a distributed Connect worker (connect-distributed.sh)",
        description="Run a Kafka Connect worker in distributed mode until Ctrl-C or SIGTERM: it joins the "
        "workers of its group.id, keeps configs, offsets and statuses in the three internal topics, and "
        f"takes connectors through its REST API. Kafka's connect-distributed.properties is in {CONFIG_DIR}.",
    )
    distributed.add_argument("worker_config", type=Path, metavar="WORKER_PROPERTIES",
                             help="the worker's settings (connect-distributed.properties)")  # fmt: skip
    distributed.set_defaults(handler=run_distributed)


def worker_logging_and_stop_signals() -> ShutdownSignals:
    """A worker's log lines (Connect's at INFO), and what waits for SIGTERM and Ctrl-C."""
    logging.basicConfig(level=logging.WARNING, format=LOG_FORMAT)
    logging.getLogger("kafka_lite.connect").setLevel(logging.INFO)
    return ShutdownSignals()


def wait_for(stop: ShutdownSignals, worker_thread: threading.Thread | None = None) -> None:
    """Until a signal, or until ``worker_thread`` (the distributed herder's) ends by itself."""
    while not stop.wait(1):
        if worker_thread is not None and not worker_thread.is_alive():
            break
    stop.close()


def run_standalone(args: argparse.Namespace, console: Console) -> int:
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.connect.runtime.rest.rest_server import RestServer
    from kafka_lite.connect.runtime.worker_config import StandaloneConfig
    from kafka_lite.connect.util.callback import FutureCallback

    worker_props = properties_file(args.worker_config, "worker config")
    connector_props = [(path, properties_file(path, "connector config")) for path in args.connector_configs]
    try:
        config = StandaloneConfig(worker_props)
    except KafkaException as e:
        raise CliError(f"{args.worker_config}: {e}", exit_code=2) from None
    try:
        rest = RestServer(config)  # binds rest.host.name:rest.port now, so the URL is known
    except OSError as e:
        raise CliError(f"cannot serve the REST API on rest.port {config.get('rest.port')}: {e}") from None
    try:
        herder, connectors = _standalone_herder(args, config, rest, connector_props)
    except BaseException:
        rest.stop()
        raise

    stop = worker_logging_and_stop_signals()
    herder.start()
    try:
        rest.start(herder)
        console.print(f"REST API at {rest.advertised_url()} (try {rest.advertised_url()}docs)")
        for props in connectors:
            created = FutureCallback()
            herder.put_connector_config(props["name"], props, False, created)
            tasks = len(created.result().result.tasks)
            console.print(f"connector {props['name']} ({props['connector.class']}): {tasks} task(s) running")
        console.print("Kafka Connect started (standalone); Ctrl-C or SIGTERM stops it")
        wait_for(stop)
    except KafkaException as e:
        raise CliError(str(e)) from None
    finally:
        rest.stop()
        herder.stop()
        console.print("Kafka Connect stopped")
    return 0


def _standalone_herder(
    args: argparse.Namespace, config: Any, rest: Any, connector_props: list[tuple[Path, dict[str, str]]]
) -> tuple[Any, list[dict[str, str]]]:
    """The herder over a worker whose id is the REST server's ``host:port`` (as Kafka's), and the
    connector configs, each checked first: a bad one is a ``CliError`` naming its file."""
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.connect.runtime.standalone.standalone_herder import StandaloneHerder
    from kafka_lite.connect.runtime.worker import Worker
    from kafka_lite.connect.storage.file_offset_backing_store import FileOffsetBackingStore

    advertised = urllib.parse.urlsplit(rest.advertised_url())
    try:
        worker = Worker(f"{advertised.hostname}:{advertised.port}", config, FileOffsetBackingStore())
    except KafkaException as e:
        raise CliError(f"{args.worker_config}: {e}", exit_code=2) from None
    herder = StandaloneHerder(worker)
    connectors = []
    for path, props in connector_props:
        try:
            infos = herder.validate_connector_config(props)
        except KafkaException as e:
            raise CliError(f"{path}: {e}", exit_code=2) from None
        errors = [error for info in infos.configs if info.value is not None for error in info.value.errors]
        if errors:
            raise CliError(f"{path}: {'; '.join(errors)}", exit_code=2)
        connectors.append(props)
    return herder, connectors


def run_distributed(args: argparse.Namespace, console: Console) -> int:
    """``connect-distributed.sh``: one worker of a Connect cluster; its connectors come through REST."""
    from kafka_lite.common.errors import KafkaException
    from kafka_lite.connect.runtime.distributed.connect_distributed import connect_distributed

    worker_props = properties_file(args.worker_config, "worker config")
    try:
        connect = connect_distributed(worker_props)
    except KafkaException as e:
        raise CliError(f"{args.worker_config}: {e}", exit_code=2) from None
    except OSError as e:
        raise CliError(
            f"cannot serve the REST API on rest.port {worker_props.get('rest.port', 8083)}: {e}"
        ) from None

    stop = worker_logging_and_stop_signals()
    connect.start()
    try:
        url = connect.rest.advertised_url()
        console.print(f"Kafka Connect started (distributed, group {worker_props.get('group.id')}); "
                      f"REST API at {url}; Ctrl-C or SIGTERM stops it", soft_wrap=True)  # fmt: skip
        wait_for(stop, connect.herder.herder_thread)
    finally:
        connect.stop()
        console.print("Kafka Connect stopped")
    failure = connect.herder.failure
    if failure is not None:  # as Kafka's worker exits when its herder's thread dies
        raise CliError(f"the herder stopped on an error: {with_causes(failure)}")
    return 0
