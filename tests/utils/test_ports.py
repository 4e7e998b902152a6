"""Ports for the servers a local cluster starts: free, and out of the way of outgoing connections."""

from __future__ import annotations

import socket

import pytest

from kafka_lite.utils import ports

pytestmark = pytest.mark.unit


def test_free_ports_are_consecutive_free_and_below_the_outgoing_range():
    low, _ = ports._outgoing_port_range()
    for count in (1, 4):
        base = ports.free_ports(count)
        assert base + count <= low, "a port in the outgoing range can be any client's local port"
        for port in range(base, base + count):
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))  # raises if taken


def test_a_taken_port_is_not_free_and_a_run_skips_it(monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert not ports.port_free(port)
        # Each of the first three draws starts a run of three that holds the taken port.
        draws = iter([port - 2, port - 1, port, port + 1])
        monkeypatch.setattr(ports.random.Random, "randrange", lambda self, a, b: next(draws))
        monkeypatch.setattr(ports, "_outgoing_port_range", lambda: (65_000, 65_100))
        assert ports.free_ports(3) == port + 1


def test_without_room_below_the_range_the_ports_come_from_above_it(monkeypatch):
    monkeypatch.setattr(ports, "_outgoing_port_range", lambda: (1024, 40_000))
    base = ports.free_ports(2)
    assert 40_000 < base and base + 2 <= 65_536
