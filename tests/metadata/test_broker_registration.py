"""BrokerRegistration, VersionRange and the controller's replies (Kafka 3.3.0's BrokerRegistrationTest
and VersionRangeTest)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.clients.metadata import Node
from kafka_lite.common.metadata import (
    BrokerEndpoint,
    BrokerFeature,
    MetadataRecordSerde,
    RegisterBrokerRecord,
)
from kafka_lite.metadata.broker_heartbeat_reply import BrokerHeartbeatReply
from kafka_lite.metadata.broker_registration import BrokerRegistration, Endpoint
from kafka_lite.metadata.broker_registration_reply import BrokerRegistrationReply
from kafka_lite.metadata.version_range import VersionRange

pytestmark = pytest.mark.unit

INCARNATION = uuid.UUID("3d2b8f1a-3c4e-4f5a-9b6c-7d8e9f0a1b2c")
REGISTRATIONS = [
    BrokerRegistration(0, 0, INCARNATION, [Endpoint("INTERNAL", "localhost", 9090, 0)],
                       {"foo": VersionRange(1, 2)}, None, False, False),
    BrokerRegistration(1, 0, INCARNATION, [Endpoint("INTERNAL", "localhost", 9091, 0)],
                       {"foo": VersionRange(1, 2)}, None, False, False),
    BrokerRegistration(2, 0, INCARNATION, [Endpoint("INTERNAL", "localhost", 9092, 0)],
                       {"foo": VersionRange(2, 3), "bar": VersionRange(1, 4)}, "myrack", False, True),
]  # fmt: skip


def test_values_and_equality() -> None:
    assert REGISTRATIONS[0] != REGISTRATIONS[1]
    assert REGISTRATIONS[1] != REGISTRATIONS[2]
    assert REGISTRATIONS[0] == BrokerRegistration(
        0, 0, INCARNATION, {"INTERNAL": Endpoint("INTERNAL", "localhost", 9090, 0)}, {"foo": VersionRange(1, 2)},
        None, False, False,
    )  # fmt: skip
    assert hash(REGISTRATIONS[2]) == hash(REGISTRATIONS[2].clone_with())
    assert REGISTRATIONS[2].listeners["INTERNAL"].port == 9092
    assert REGISTRATIONS[2].supported_features["bar"] == VersionRange(1, 4)


@pytest.mark.parametrize("index", range(len(REGISTRATIONS)))
def test_record_round_trip_through_the_serde(index: int) -> None:
    registration = REGISTRATIONS[index]
    record = registration.to_record()
    assert record.version == 1
    serde = MetadataRecordSerde()
    assert BrokerRegistration.from_record(serde.deserialize(serde.serialize(record)).message) == registration


def test_to_record_fields() -> None:
    record = REGISTRATIONS[2].to_record().message
    assert record == RegisterBrokerRecord(
        broker_id=2, incarnation_id=INCARNATION, broker_epoch=0,
        end_points=[BrokerEndpoint(name="INTERNAL", host="localhost", port=9092, security_protocol=0)],
        features=[BrokerFeature(name="foo", min_supported_version=2, max_supported_version=3),
                  BrokerFeature(name="bar", min_supported_version=1, max_supported_version=4)],
        rack="myrack", fenced=False, in_controlled_shutdown=True,
    )  # fmt: skip


def test_to_record_at_v0_leaves_out_controlled_shutdown() -> None:
    record = REGISTRATIONS[2].to_record(0)
    assert record.message.in_controlled_shutdown is False
    serde = MetadataRecordSerde()
    back = BrokerRegistration.from_record(serde.deserialize(serde.serialize(record)).message)
    assert back == REGISTRATIONS[2].clone_with(in_controlled_shutdown=False)


def test_node() -> None:
    assert REGISTRATIONS[2].node("INTERNAL") == Node(2, "localhost", 9092, "myrack")
    assert REGISTRATIONS[0].node("INTERNAL") == Node(0, "localhost", 9090, None)
    assert REGISTRATIONS[0].node("NONEXISTENT") is None


def test_clone_with() -> None:
    fenced = REGISTRATIONS[0].clone_with(fenced=True)
    assert fenced.fenced and not REGISTRATIONS[0].fenced
    assert (fenced.id, fenced.epoch, fenced.listeners) == (0, 0, REGISTRATIONS[0].listeners)
    assert REGISTRATIONS[0].clone_with(fenced=False) is REGISTRATIONS[0]
    shutting_down = REGISTRATIONS[0].clone_with(in_controlled_shutdown=True)
    assert (shutting_down.fenced, shutting_down.in_controlled_shutdown) == (False, True)


def test_listeners_are_copied_and_checked() -> None:
    listeners = {"A": Endpoint("A", "h", 1, 0)}
    registration = BrokerRegistration(0, 0, INCARNATION, listeners)
    listeners["B"] = Endpoint("B", "h", 2, 0)
    assert list(registration.listeners) == ["A"]
    with pytest.raises(ValueError, match="named"):
        BrokerRegistration(0, 0, INCARNATION, {"": Endpoint("", "h", 1, 0)})
    with pytest.raises(ValueError, match="'A' holds an endpoint named 'B'"):
        BrokerRegistration(0, 0, INCARNATION, {"A": Endpoint("B", "h", 1, 0)})


def test_from_record_defaults() -> None:
    registration = BrokerRegistration.from_record(RegisterBrokerRecord(broker_id=3, broker_epoch=7))
    assert (registration.id, registration.epoch, registration.fenced, registration.rack) == (3, 7, True, None)
    assert registration.listeners == {}


def test_version_range() -> None:
    v1 = VersionRange.of(1, 1)
    v2 = VersionRange.of(1, 2)
    assert v1 == VersionRange(1, 1)
    assert v2.contains(2) and not v2.contains(3) and not v2.contains(0)
    assert v1.intersects(v2) and not VersionRange(3, 4).intersects(v2)
    assert (str(v1), str(v2), str(VersionRange(3, 2**15 - 1))) == ("1", "1-2", "3+")
    assert VersionRange.ALL.contains(0) and VersionRange.ALL.contains(2**15 - 1)


def test_replies() -> None:
    assert BrokerRegistrationReply(5) == BrokerRegistrationReply(epoch=5)
    assert BrokerRegistrationReply(5) != BrokerRegistrationReply(6)
    reply = BrokerHeartbeatReply(
        is_caught_up=True, is_fenced=False, in_controlled_shutdown=False, should_shut_down=False
    )
    assert reply == BrokerHeartbeatReply(True, False, False, False)
    assert reply != BrokerHeartbeatReply(True, True, False, False)
