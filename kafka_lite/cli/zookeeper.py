"""``kafka-lite zookeeper start CONFIG``: run ZooKeeper (Debian's package) in the foreground.

Mirrors: bin/zookeeper-server-start.sh config/zookeeper.properties
Book:    chapter 7 (the controller keeps the cluster's state in ZooKeeper)

The config file takes ZooKeeper's own keys: ``dataDir``, ``clientPort`` (0 picks a free port) and
``tickTime``. The server runs as a child of this process and stops with it (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kafka_lite.cli import CliError
from kafka_lite.utils.shutdown_signals import ShutdownSignals


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("zookeeper", help="run ZooKeeper (zookeeper-server-start.sh)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    start = actions.add_parser("start", help="start ZooKeeper from a zookeeper.properties file")
    start.add_argument("config", type=Path, metavar="CONFIG", help="a zoo.cfg-style properties file")
    start.set_defaults(handler=run)


def run(args: argparse.Namespace, console) -> int:
    from kafka_lite.common.errors import ConfigException
    from kafka_lite.server.kafka_config import read_properties
    from kafka_lite.zk.embedded import EmbeddedZooKeeper

    try:
        props = read_properties(args.config)
    except ConfigException as e:
        raise CliError(str(e), exit_code=2) from None
    if "dataDir" not in props:
        raise CliError(f"{args.config}: dataDir is required", exit_code=2)
    try:
        port = int(props.get("clientPort", "2181"))
        tick = int(props.get("tickTime", "500"))
    except ValueError as e:
        raise CliError(f"{args.config}: {e}", exit_code=2) from None
    zk = EmbeddedZooKeeper(Path(props["dataDir"]), port=port, tick_time=tick)
    stop = ShutdownSignals()
    try:
        zk.start()
    except Exception as e:  # the launcher's errors name the port, the package or the log file
        zk.stop()
        raise CliError(str(e)) from None
    console.print(f"ZooKeeper running at {zk.connect_string} (pid {zk.pid})", highlight=False)
    stop.wait()
    stop.close()
    zk.stop()
    return 0
