"""BrokerHeartbeatManager: sessions on MockTime, the stale broker found oldest first, the usable
brokers, and the decision table of calculate_next_broker_state (Kafka's BrokerHeartbeatManagerTest)."""

from __future__ import annotations

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.metadata.controller.broker_control_states import BrokerControlState, BrokerControlStates
from kafka_lite.metadata.controller.broker_heartbeat_manager import LONG_MAX, BrokerHeartbeatManager
from kafka_lite.metadata.placement import UsableBroker

pytestmark = pytest.mark.unit

FENCED = BrokerControlState.FENCED
UNFENCED = BrokerControlState.UNFENCED
CONTROLLED_SHUTDOWN = BrokerControlState.CONTROLLED_SHUTDOWN
SHUTDOWN_NOW = BrokerControlState.SHUTDOWN_NOW


def new_manager():
    # Kafka's test: a 10 ms session, the monotonic clock starting at 0.
    return BrokerHeartbeatManager(MockTime(start_ms=1_000_000, start_ns=0), session_timeout_ms=10)


def heartbeat(want_fence=False, want_shut_down=False, offset=0):
    return {
        "broker_id": 0,
        "broker_epoch": 0,
        "current_metadata_offset": offset,
        "want_fence": want_fence,
        "want_shut_down": want_shut_down,
    }


def test_a_session_is_valid_for_the_timeout_after_the_last_contact():
    manager = new_manager()
    time = manager.time
    assert not manager.has_valid_session(0)
    manager.touch(0, False, 0)
    time.sleep(5)
    manager.touch(1, False, 0)
    manager.touch(2, False, 0)
    assert [manager.has_valid_session(b) for b in range(4)] == [True, True, True, False]
    time.sleep(6)
    assert [manager.has_valid_session(b) for b in range(4)] == [False, True, True, False]
    manager.remove(2)
    assert not manager.has_valid_session(2)
    manager.remove(1)
    assert not manager.has_valid_session(1)


def test_a_fenced_broker_has_no_session_however_recent_its_contact():
    manager = new_manager()
    manager.touch(0, True, 0)
    assert not manager.has_valid_session(0) and not manager.is_broker_unfenced(0)
    manager.touch(0, False, 0)
    assert manager.has_valid_session(0) and manager.is_broker_unfenced(0)


def test_find_one_stale_broker_looks_at_the_oldest_contact():
    manager = new_manager()
    time = manager.time
    manager.touch(0, False, 0)
    time.sleep(5)
    manager.touch(1, False, 0)
    time.sleep(1)
    manager.touch(2, False, 0)
    assert list(manager.unfenced) == [0, 1, 2]
    assert manager.find_one_stale_broker() is None
    time.sleep(5)
    assert manager.find_one_stale_broker() == 0
    manager.fence(0)
    assert manager.find_one_stale_broker() is None
    assert list(manager.unfenced) == [1, 2]
    time.sleep(20)
    assert manager.find_one_stale_broker() == 1
    manager.fence(1)
    assert manager.find_one_stale_broker() == 2
    manager.fence(2)
    assert manager.find_one_stale_broker() is None
    assert list(manager.unfenced) == []


def test_a_heartbeat_moves_a_broker_to_the_end_of_the_unfenced_list():
    manager = new_manager()
    for broker in (0, 1, 2):
        manager.touch(broker, False, 0)
        manager.time.sleep(1)
    manager.touch(0, False, 5)
    assert list(manager.unfenced) == [1, 2, 0]
    manager.time.sleep(9)
    assert manager.find_one_stale_broker() == 1
    manager.fence(1)
    assert manager.find_one_stale_broker() is None


def test_next_check_time_is_the_oldest_session_expiry():
    manager = new_manager()
    time = manager.time
    assert manager.next_check_time_ns() == LONG_MAX
    manager.touch(0, False, 0)
    time.sleep(2)
    manager.touch(1, False, 0)
    time.sleep(1)
    manager.touch(2, False, 0)
    time.sleep(1)
    manager.touch(3, False, 0)
    assert manager.find_one_stale_broker() is None
    assert manager.next_check_time_ns() == 10_000_000
    time.sleep(7)
    assert manager.next_check_time_ns() == 10_000_000
    assert manager.find_one_stale_broker() == 0
    manager.fence(0)
    assert manager.next_check_time_ns() == 12_000_000
    time.sleep(3)
    assert manager.find_one_stale_broker() == 1
    manager.fence(1)
    assert manager.find_one_stale_broker() == 2
    manager.fence(2)
    assert manager.next_check_time_ns() == 14_000_000


def test_usable_brokers_leave_out_those_shutting_down():
    manager = new_manager()

    def rack(broker_id):
        return "rack1" if broker_id % 2 == 0 else "rack2"

    assert set(manager.usable_brokers(rack)) == set()
    manager.touch(0, False, 100)
    manager.touch(1, False, 100)
    manager.touch(2, False, 98)
    manager.touch(3, False, 100)
    manager.touch(4, True, 100)
    assert manager.lowest_active_offset() == 98
    expected = {
        UsableBroker(0, "rack1", False),
        UsableBroker(1, "rack2", False),
        UsableBroker(2, "rack1", False),
        UsableBroker(3, "rack2", False),
        UsableBroker(4, "rack1", True),
    }
    assert set(manager.usable_brokers(rack)) == expected
    manager.update_controlled_shutdown_offset(2, 0)
    assert manager.lowest_active_offset() == 100
    with pytest.raises(RuntimeError, match="Fenced brokers cannot enter controlled shutdown"):
        manager.update_controlled_shutdown_offset(4, 0)
    manager.touch(4, False, 100)
    manager.update_controlled_shutdown_offset(4, 0)
    expected -= {UsableBroker(2, "rack1", False), UsableBroker(4, "rack1", True)}
    assert set(manager.usable_brokers(rack)) == expected


def test_calculate_next_broker_state():
    manager = new_manager()
    manager.touch(0, True, 100)
    manager.touch(1, False, 98)
    manager.touch(2, False, 100)
    manager.touch(3, False, 100)
    manager.touch(4, True, 100)
    manager.touch(5, False, 99)
    manager.update_controlled_shutdown_offset(5, 99)
    assert manager.lowest_active_offset() == 98

    def next_state(broker, request, leads):
        return manager.calculate_next_broker_state(broker, request, 100, lambda: leads)

    # A fenced broker: shuts down at once if it asks; unfenced once caught up to its registration.
    assert next_state(0, heartbeat(want_shut_down=True), False) == BrokerControlStates(FENCED, SHUTDOWN_NOW)
    assert next_state(0, heartbeat(offset=100), False) == BrokerControlStates(FENCED, UNFENCED)
    assert next_state(0, heartbeat(offset=50), False) == BrokerControlStates(FENCED, FENCED)
    assert next_state(0, heartbeat(want_fence=True), False) == BrokerControlStates(FENCED, FENCED)
    # An unfenced broker that wants to shut down: controlled while it leads, at once otherwise.
    assert next_state(1, heartbeat(want_shut_down=True), True) == BrokerControlStates(
        UNFENCED, CONTROLLED_SHUTDOWN
    )
    assert next_state(1, heartbeat(want_shut_down=True), False) == BrokerControlStates(UNFENCED, SHUTDOWN_NOW)
    assert next_state(1, heartbeat(), False) == BrokerControlStates(UNFENCED, UNFENCED)
    assert next_state(1, heartbeat(want_fence=True), False) == BrokerControlStates(UNFENCED, FENCED)
    assert next_state(1, heartbeat(want_fence=True, want_shut_down=True), True) == BrokerControlStates(
        UNFENCED, SHUTDOWN_NOW
    )
    # In controlled shutdown: it stays while it leads, and also while an active broker (1, at 98)
    # has not yet reached its shutdown offset 99.
    assert next_state(5, heartbeat(want_shut_down=True), True) == BrokerControlStates(
        CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN
    )
    assert next_state(5, heartbeat(want_shut_down=True), False) == BrokerControlStates(
        CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN
    )
    manager.fence(1)
    assert next_state(5, heartbeat(want_shut_down=True), False) == BrokerControlStates(
        CONTROLLED_SHUTDOWN, SHUTDOWN_NOW
    )
    # A broker the manager never heard of is treated as fenced.
    assert next_state(9, heartbeat(offset=100), False) == BrokerControlStates(FENCED, UNFENCED)


def test_touching_a_broker_as_fenced_ends_its_controlled_shutdown():
    manager = new_manager()
    manager.touch(0, False, 10)
    manager.update_controlled_shutdown_offset(0, 10)
    assert manager.current_broker_state(manager.brokers[0]) is CONTROLLED_SHUTDOWN
    manager.touch(0, True, 10)
    assert manager.current_broker_state(manager.brokers[0]) is FENCED


def test_the_control_states_answer_the_reply_questions():
    assert [(s.fenced(), s.in_controlled_shutdown(), s.should_shut_down()) for s in BrokerControlState] == [
        (True, False, False),
        (False, False, False),
        (False, True, False),
        (True, False, True),
    ]
