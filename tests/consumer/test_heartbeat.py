"""Heartbeat's clocks on MockTime: the interval, the back-off after a failure, the session timeout and
KIP-62's poll timeout."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalArgumentException
from kafka_lite.common.time import MockTime
from kafka_lite.consumer.internals.heartbeat import Heartbeat

pytestmark = pytest.mark.unit

SESSION, INTERVAL, MAX_POLL, BACKOFF = 10_000, 3_000, 300_000, 100


@pytest.fixture
def time() -> MockTime:
    return MockTime()


@pytest.fixture
def heartbeat(time) -> Heartbeat:
    hb = Heartbeat(SESSION, INTERVAL, MAX_POLL, BACKOFF)
    hb.reset_timeouts(time.milliseconds())
    return hb


def test_a_heartbeat_is_due_an_interval_after_the_last_one_sent(time, heartbeat):
    heartbeat.sent_heartbeat(time.milliseconds())
    assert heartbeat.time_to_next_heartbeat(time.milliseconds()) == INTERVAL
    time.sleep(INTERVAL - 1)
    assert not heartbeat.should_heartbeat(time.milliseconds())
    assert heartbeat.time_to_next_heartbeat(time.milliseconds()) == 1
    time.sleep(1)
    assert heartbeat.should_heartbeat(time.milliseconds())
    assert heartbeat.time_to_next_heartbeat(time.milliseconds()) == 0


def test_the_first_heartbeat_is_due_an_interval_after_the_session_was_reset(time, heartbeat):
    time.sleep(INTERVAL - 500)
    assert heartbeat.time_to_next_heartbeat(time.milliseconds()) == 500
    time.sleep(500)
    assert heartbeat.should_heartbeat(time.milliseconds())


def test_after_a_failed_heartbeat_the_next_is_due_after_the_retry_backoff(time, heartbeat):
    heartbeat.sent_heartbeat(time.milliseconds())
    heartbeat.fail_heartbeat()
    assert heartbeat.time_to_next_heartbeat(time.milliseconds()) == BACKOFF
    time.sleep(BACKOFF)
    assert heartbeat.should_heartbeat(time.milliseconds())
    # Sending again clears the failure: the interval applies once more.
    heartbeat.sent_heartbeat(time.milliseconds())
    assert heartbeat.time_to_next_heartbeat(time.milliseconds()) == INTERVAL


def test_the_session_expires_a_session_timeout_after_the_last_answered_heartbeat(time, heartbeat):
    time.sleep(5_000)
    heartbeat.receive_heartbeat(time.milliseconds())
    time.sleep(SESSION)
    assert not heartbeat.session_timeout_expired(time.milliseconds())
    time.sleep(1)
    assert heartbeat.session_timeout_expired(time.milliseconds())
    # Finding the coordinator again restarts the session clock.
    heartbeat.reset_timeouts(time.milliseconds())
    assert not heartbeat.session_timeout_expired(time.milliseconds())


def test_sending_heartbeats_without_answers_does_not_keep_the_session(time, heartbeat):
    for _ in range(4):
        time.sleep(INTERVAL + 1)
        heartbeat.sent_heartbeat(time.milliseconds())
    assert heartbeat.session_timeout_expired(time.milliseconds())


def test_the_poll_timeout_expires_max_poll_interval_after_the_last_poll(time, heartbeat):
    time.sleep(MAX_POLL)
    assert not heartbeat.poll_timeout_expired(time.milliseconds())
    heartbeat.poll(time.milliseconds())
    time.sleep(MAX_POLL)
    assert not heartbeat.poll_timeout_expired(time.milliseconds())
    time.sleep(1)
    assert heartbeat.poll_timeout_expired(time.milliseconds())


def test_heartbeats_alone_do_not_stop_the_poll_timeout(time, heartbeat):
    # KIP-62: the heartbeat thread keeps the session, not the application's liveness.
    while not heartbeat.poll_timeout_expired(time.milliseconds()):
        time.sleep(INTERVAL + 1)
        heartbeat.sent_heartbeat(time.milliseconds())
        heartbeat.receive_heartbeat(time.milliseconds())
        assert not heartbeat.session_timeout_expired(time.milliseconds())
    assert time.milliseconds() - heartbeat.last_poll > MAX_POLL


def test_the_interval_must_be_lower_than_the_session_timeout():
    with pytest.raises(
        IllegalArgumentException, match="Heartbeat must be set lower than the session timeout"
    ):
        Heartbeat(3000, 3000, MAX_POLL, BACKOFF)
