"""RequestManager: one request in flight per destination, the retry backoff after an error, the
request timeout, and finding a ready voter (Kafka's RequestManagerTest)."""

from __future__ import annotations

import random

import pytest

from kafka_lite.raft.request_manager import RequestManager
from kafka_lite.raft.timer import LONG_MAX

pytestmark = pytest.mark.unit

BACKOFF_MS = 100
TIMEOUT_MS = 1000


def manager(voters=(1, 2, 3), seed=1):
    return RequestManager(set(voters), BACKOFF_MS, TIMEOUT_MS, random.Random(seed))


def test_request_in_flight_then_answered():
    conn = manager().get_or_create(1)
    assert conn.is_ready(0)
    conn.on_request_sent(7, 0)
    assert not conn.is_ready(10) and conn.has_inflight_request(10)
    assert conn.remaining_request_time_ms(10) == TIMEOUT_MS - 10
    assert conn.is_response_expected(7) and not conn.is_response_expected(8)
    conn.on_response_received(8)  # a stale answer changes nothing
    assert not conn.is_ready(10)
    conn.on_response_received(7)
    assert conn.is_ready(10)


def test_error_backs_off_then_ready():
    conn = manager().get_or_create(1)
    conn.on_request_sent(1, 0)
    conn.on_response_error(1, 50)
    assert conn.is_backing_off(50 + BACKOFF_MS - 1)
    assert conn.remaining_backoff_ms(60) == BACKOFF_MS - 10
    assert not conn.is_ready(50 + BACKOFF_MS - 1)
    assert conn.is_ready(50 + BACKOFF_MS)


def test_timed_out_request_frees_the_connection():
    conn = manager().get_or_create(1)
    conn.on_request_sent(1, 0)
    assert not conn.has_request_timed_out(TIMEOUT_MS - 1)
    assert conn.has_request_timed_out(TIMEOUT_MS)
    assert conn.is_ready(TIMEOUT_MS)
    # The answer that finally comes is no longer awaited once another request is sent.
    conn.on_request_sent(2, TIMEOUT_MS)
    assert not conn.is_response_expected(1)


def test_find_ready_voter_waits_while_one_request_is_in_flight():
    rm = manager()
    chosen = rm.find_ready_voter(0)
    assert chosen in {1, 2, 3}
    rm.get_or_create(chosen).on_request_sent(1, 0)
    assert rm.find_ready_voter(0) is None
    assert rm.backoff_before_available_voter(0) == 0  # the others are ready
    for v in (1, 2, 3):
        rm.get_or_create(v).on_request_sent(v, 0)
    assert rm.backoff_before_available_voter(10) == TIMEOUT_MS - 10
    rm.reset_all()
    assert rm.find_ready_voter(10) is not None
    assert manager(voters=()).backoff_before_available_voter(0) == LONG_MAX
