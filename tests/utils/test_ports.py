"""Ports for the servers a local cluster starts: free, and out of the way of outgoing connections."""

from __future__ import annotations

import os
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


def test_a_taken_port_is_not_free_and_a_run_skips_it(tmp_path, monkeypatch):
    # Six free ports below the outgoing range, where no client's connection can take one meanwhile
    # (ports next to one the kernel hands out for port 0 are other connections' local ports); their
    # reservations dropped, so that only the bound one counts as taken below.
    monkeypatch.setattr(ports, "RESERVATIONS", tmp_path)
    base = ports.free_ports(6)
    for reservation in tmp_path.iterdir():
        reservation.unlink()
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


def test_a_port_handed_out_is_not_handed_out_again_while_its_server_is_down(tmp_path, monkeypatch):
    """A broker killed and restarted leaves its port free for a moment; another cluster starting
    then (in any process) must choose another, or the restart finds its port taken."""
    monkeypatch.setattr(ports, "RESERVATIONS", tmp_path)
    first = ports.free_ports(2)  # nothing listens on either port: the server is down
    drawn = iter([first, first + 1, first - 1, first + 5])

    class Draws:
        def randrange(self, start, stop):
            return next(drawn)

    monkeypatch.setattr(ports.random, "Random", Draws)
    again = ports.free_ports(2)
    assert again not in (first - 1, first, first + 1), f"{again} overlaps the ports {first}-{first + 1}"
    assert again == first + 5


def test_an_old_reservation_is_taken_over(tmp_path, monkeypatch):
    monkeypatch.setattr(ports, "RESERVATIONS", tmp_path)
    base = ports.free_ports(1)
    old = ports.time.time() - ports.RESERVATION_S - 1
    os.utime(tmp_path / str(base), (old, old))
    assert ports._reserve(range(base, base + 1))
