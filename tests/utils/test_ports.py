"""Ports for the servers a local cluster starts: free, and out of the way of outgoing connections."""

from __future__ import annotations

import socket

import pytest

from kafka_lite.utils import ports

pytestmark = pytest.mark.unit


def _bind(port: int) -> socket.socket:
    """A socket bound to ``port`` as a server binds it (SO_REUSEADDR, so a closed connection's
    TIME_WAIT does not count as taken); raises if the port is taken."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    return s


def test_free_ports_are_consecutive_free_and_below_the_outgoing_range():
    low, _ = ports._outgoing_port_range()
    for count in (1, 4):
        base = ports.free_ports(count)
        assert base + count <= low, "a port in the outgoing range can be any client's local port"
        for port in range(base, base + count):
            _bind(port).close()


def test_a_taken_port_is_not_free_and_a_run_skips_it(monkeypatch):
    # Six free ports below the outgoing range, where no client's connection can take one meanwhile
    # (ports next to one the kernel hands out for port 0 are other connections' local ports).
    base = ports.free_ports(6)
    with _bind(base + 2) as taken:
        taken.listen()
        assert not ports.port_free(base + 2)
        # Each of the first three draws starts a run of three that holds the taken port; the fourth's
        # run, base + 3 to base + 5, is free.
        draws = iter([base, base + 1, base + 2, base + 3])
        monkeypatch.setattr(ports.random.Random, "randrange", lambda self, a, b: next(draws))
        assert ports.free_ports(3) == base + 3


def test_without_room_below_the_range_the_ports_come_from_above_it(monkeypatch):
    monkeypatch.setattr(ports, "_outgoing_port_range", lambda: (1024, 40_000))
    base = ports.free_ports(2)
    assert 40_000 < base and base + 2 <= 65_536
