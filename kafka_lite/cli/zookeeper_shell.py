"""``kafka-lite zookeeper-shell``: look at the znodes a Kafka cluster keeps in ZooKeeper.

Mirrors: bin/zookeeper-shell.sh (Kafka's wrapper around ZooKeeper's ``ZooKeeperMain``, Kafka 0.10.1)
Book:    chapter 7, 7.1 (the controller's state lives in ZooKeeper: ``/controller``,
         ``/brokers/ids``, ``/brokers/topics/<t>/partitions/<p>/state``, the ``/admin`` paths)
Differs: only the reading commands, ``ls``, ``get`` and ``stat``, as ZooKeeper 3.4 prints them; the
         shell changes nothing (``create``, ``set`` and ``delete`` are left to the controller and the
         admin tools, which write these znodes in the formats the brokers expect).

::

    kafka-lite zookeeper-shell 127.0.0.1:2181 ls /brokers/ids
    [0, 1, 2]
    kafka-lite zookeeper-shell 127.0.0.1:2181 get /controller
    {"version":1,"brokerid":0,"timestamp":"1764060000000"}
    cZxid = 0x1a
    ...

The connect string may end in a chroot (``127.0.0.1:2181/kafka``), as ``zookeeper.connect`` does;
paths are then under it. With no command, the shell reads commands from its standard input, one a
line, until ``quit`` or the end of input: ``kafka-lite zookeeper-shell 127.0.0.1:2181`` is a small
interactive shell, and a here-document runs several commands on one connection.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable

from kafka_lite.cli import CliError

COMMANDS = ("ls", "get", "stat")
CONNECT_TIMEOUT_S = 10


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "zookeeper-shell",
        help="list, read and stat the cluster's znodes (zookeeper-shell.sh)",
        description="Read the znodes a kafka_lite (or Kafka) cluster keeps in ZooKeeper.",
    )
    parser.add_argument(
        "server", metavar="HOST:PORT[/CHROOT]", help="ZooKeeper's address, as zookeeper.connect"
    )
    parser.add_argument(
        "command", nargs="?", choices=COMMANDS, metavar="COMMAND",
        help="ls PATH (the children), get PATH (the data, then its stat) or stat PATH; none: read "
        "commands from standard input",
    )  # fmt: skip
    parser.add_argument("path", nargs="?", metavar="PATH", help="the znode, an absolute path")
    parser.set_defaults(handler=run)


def _check_path(path: str | None) -> str:
    if not path:
        raise CliError("a path is required, e.g. /brokers/ids", exit_code=2)
    if not path.startswith("/") or (len(path) > 1 and path.endswith("/")) or "//" in path:
        raise CliError(f"Path must start with / character and not end with one: {path!r}", exit_code=2)
    return path


def _zxid(zxid: int) -> str:
    return hex(zxid)


def _time(ms: int) -> str:
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(ms / 1000))


def format_stat(stat) -> list[str]:
    """A znode's stat, field by field in ZooKeeper 3.4's order and spelling. ``ephemeralOwner`` is the
    session that owns an ephemeral znode (a broker's registration, the controller's), 0x0 otherwise."""
    return [
        f"cZxid = {_zxid(stat.czxid)}",
        f"ctime = {_time(stat.ctime)}",
        f"mZxid = {_zxid(stat.mzxid)}",
        f"mtime = {_time(stat.mtime)}",
        f"pZxid = {_zxid(stat.pzxid)}",
        f"cversion = {stat.cversion}",
        f"dataVersion = {stat.version}",
        f"aclVersion = {stat.aversion}",
        f"ephemeralOwner = {_zxid(stat.ephemeralOwner)}",
        f"dataLength = {stat.dataLength}",
        f"numChildren = {stat.numChildren}",
    ]


def execute(client, command: str, path: str) -> list[str]:
    """One command's output lines; a missing znode is ZooKeeper's own message."""
    from kazoo.exceptions import NoNodeError

    path = _check_path(path)
    try:
        if command == "ls":
            return ["[" + ", ".join(sorted(client.get_children(path))) + "]"]
        if command == "get":
            data, stat = client.get(path)
            shown = "null" if data is None else data.decode("utf-8", errors="backslashreplace")
            return [shown, *format_stat(stat)]
        stat = client.exists(path)
        if stat is None:
            raise NoNodeError
        return format_stat(stat)
    except NoNodeError:
        raise CliError(f"Node does not exist: {path}") from None


def _interactive(client, lines: Iterable[str], out, prompt: str | None) -> int:
    """Run commands read a line at a time; a bad line is reported and the shell goes on, as ZooKeeper's."""
    failures = 0
    if prompt:
        print(prompt, end="", flush=True, file=out)
    for line in lines:
        words = line.split()
        if words and words[0] in ("quit", "exit"):
            break
        if words:
            if words[0] not in COMMANDS or len(words) != 2:
                print(f"usage: {' | '.join(c + ' path' for c in COMMANDS)} | quit", file=out)
                failures += 1
            else:
                try:
                    print("\n".join(execute(client, words[0], words[1])), file=out)
                except CliError as e:
                    print(e, file=out)
                    failures += 1
        if prompt:
            print(prompt, end="", flush=True, file=out)
    return 1 if failures else 0


def run(args: argparse.Namespace, console) -> int:
    from kazoo.client import KazooClient
    from kazoo.handlers.threading import KazooTimeoutError

    if args.command is not None:
        _check_path(args.path)  # before connecting: a typo needs no ZooKeeper to be told
    client = KazooClient(hosts=args.server, read_only=True)
    try:
        client.start(timeout=CONNECT_TIMEOUT_S)
    except (KazooTimeoutError, ValueError) as e:
        client.close()
        raise CliError(f"cannot connect to ZooKeeper at {args.server}: {e or 'timed out'}") from None
    try:
        if args.command is not None:
            print("\n".join(execute(client, args.command, args.path)))
            return 0
        prompt = f"[zk: {args.server}] " if sys.stdin.isatty() else None
        return _interactive(client, sys.stdin, sys.stdout, prompt)
    finally:
        client.stop()
        client.close()
