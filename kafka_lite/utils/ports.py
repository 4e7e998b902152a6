"""Loopback ports for the servers kafka_lite starts: ZooKeeper and the brokers of a local cluster.

No Kafka twin: Kafka's tests let each server bind port 0 and ask it which port it got; a cluster of
separate processes started from configuration files must name its ports first, so it looks for free
ones, and this is where.
"""

from __future__ import annotations

import os
import random
import socket
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    """A loopback port nobody listens on now, for a server to bind (see ``free_ports``)."""
    return free_ports(1)


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive loopback ports nobody listens on now, for servers to bind.

    Not the kernel's choice of a port (a bind to port 0): the kernel takes that from the range it
    gives every outgoing connection its local port from, so any client on the machine may take the
    port before the server binds it. The ports are chosen below that range, where only another
    server's bind can take them."""
    low, high = _outgoing_port_range()
    first, last = (10_000, low - count) if low - count > 10_000 else (high + 1, 65_536 - count)
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(first, last)
        if all(port_free(base + i) for i in range(count)) and _reserve(range(base, base + count)):
            return base
    raise OSError(f"found no {count} free consecutive loopback ports between {first} and {last + count - 1}")


# Ports handed out, remembered for a while by every process on the machine: a server that is down
# for a moment (a broker killed and restarted on its configured port) leaves its port free to bind,
# and another cluster starting meanwhile must not take it. A file per port, created exclusively.
RESERVATIONS = Path(tempfile.gettempdir()) / "kafka-lite-ports"
RESERVATION_S = 6 * 3600


def _reserve(ports: range) -> bool:
    """Take ``ports`` for this caller, unless another took one of them within ``RESERVATION_S``."""
    RESERVATIONS.mkdir(exist_ok=True)
    taken = []
    for port in ports:
        if not _reserve_one(RESERVATIONS / str(port)):
            for path in taken:
                path.unlink(missing_ok=True)
            return False
        taken.append(RESERVATIONS / str(port))
    return True


def _reserve_one(path: Path) -> bool:
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        pass
    try:
        if time.time() - path.stat().st_mtime < RESERVATION_S:
            return False
        path.unlink()  # an old reservation: its cluster is long gone
    except FileNotFoundError:
        pass
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False  # another process took it first


def _outgoing_port_range() -> tuple[int, int]:
    """The local ports of outgoing connections (Linux's ``net.ipv4.ip_local_port_range``)."""
    try:
        low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default
    return low, high


def port_free(port: int) -> bool:
    """Whether ``port`` can be bound on loopback now (a port in TIME_WAIT counts as free, as for a server)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
