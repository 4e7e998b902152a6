"""InFlightRequests (order, the per-connection cap, timeouts) and ClusterConnectionStates (back-off)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kafka_lite.clients.connection_states import ClusterConnectionStates, ConnectionState
from kafka_lite.clients.in_flight_requests import InFlightRequests
from kafka_lite.common.utils import LONG_MAX

pytestmark = pytest.mark.unit


@dataclass
class _Send:
    done: bool

    def completed(self) -> bool:
        return self.done


@dataclass
class _Request:
    destination: str
    send: _Send
    created_ms: int = 0


def test_oldest_request_completes_first_and_the_cap_holds():
    in_flight = InFlightRequests(max_in_flight_requests_per_connection=2)
    first, second = _Request("a", _Send(True), 0), _Request("a", _Send(False), 5)
    in_flight.add(first)
    assert in_flight.can_send_more("a")
    in_flight.add(second)
    assert not in_flight.can_send_more("a"), "the newest send is still being written"
    second.send.done = True
    assert not in_flight.can_send_more("a"), "two in flight: the cap"
    assert in_flight.last_sent("a") is second
    assert in_flight.nodes_with_timed_out_requests(now=31, request_timeout_ms=30) == ["a"]
    assert in_flight.complete_next("a") is first
    assert in_flight.count("a") == 1 and in_flight.can_send_more("a")
    assert in_flight.clear_all("a") == [second] and in_flight.count() == 0
    with pytest.raises(RuntimeError, match="no request in flight"):
        in_flight.complete_next("a")


def test_reconnect_backoff():
    states = ClusterConnectionStates(reconnect_backoff_ms=100)
    assert states.can_connect("n", 0) and states.connection_delay("n", 0) == 0
    states.connecting("n", 1000)
    assert states.is_connecting("n") and states.connection_delay("n", 1000) == LONG_MAX
    states.connected("n")
    assert states.is_connected("n") and not states.can_connect("n", 5000)
    states.disconnected("n", 2000)
    assert states.is_blacked_out("n", 2050) and states.connection_delay("n", 2050) == 50
    assert not states.can_connect("n", 2099) and states.can_connect("n", 2100)
    assert states.state_of("n") == ConnectionState.DISCONNECTED
