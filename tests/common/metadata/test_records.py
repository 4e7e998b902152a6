"""The record classes: keyword construction with the specs' defaults, value equality, repr, api keys
and versions, as the agreed interface and Kafka 3.3.0's generated classes have them."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.metadata import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    MetadataRecordType,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from kafka_lite.common.protocol.types import ZERO_UUID

pytestmark = pytest.mark.unit


def test_defaults_are_the_specs() -> None:
    change = PartitionChangeRecord()
    assert (change.partition_id, change.topic_id, change.isr, change.leader) == (-1, ZERO_UUID, None, -2)
    assert (change.replicas, change.removing_replicas, change.adding_replicas) == (None, None, None)
    assert change.leader_recovery_state == -1
    partition = PartitionRecord()
    assert (partition.replicas, partition.isr, partition.leader, partition.leader_epoch) == ([], [], -1, -1)
    assert (partition.partition_epoch, partition.leader_recovery_state) == (-1, 0)
    broker = RegisterBrokerRecord()
    assert (broker.rack, broker.fenced, broker.in_controlled_shutdown, broker.end_points) == (
        None,
        True,
        False,
        [],
    )
    assert ConfigRecord().value is None
    assert ProducerIdsRecord().broker_epoch == -1
    assert BrokerRegistrationChangeRecord().fenced == 0


def test_array_defaults_are_not_shared() -> None:
    a, b = PartitionRecord(), PartitionRecord()
    a.replicas.append(1)
    assert b.replicas == []


def test_a_tuple_becomes_a_list_so_records_compare_by_value() -> None:
    assert PartitionChangeRecord(isr=(1, 2)) == PartitionChangeRecord(isr=[1, 2])
    assert PartitionChangeRecord(isr=[1, 2]) != PartitionChangeRecord(isr=[2, 1])


def test_equality_and_hash_are_by_value() -> None:
    topic_id = uuid.uuid4()
    assert TopicRecord(name="t", topic_id=topic_id) == TopicRecord(name="t", topic_id=topic_id)
    assert hash(TopicRecord(name="t", topic_id=topic_id)) == hash(TopicRecord(name="t", topic_id=topic_id))
    assert TopicRecord(name="t", topic_id=topic_id) != TopicRecord(name="u", topic_id=topic_id)
    assert NoOpRecord() == NoOpRecord()
    assert NoOpRecord() != TopicRecord()


def test_an_unknown_keyword_names_the_fields() -> None:
    with pytest.raises(TypeError, match=r"no field 'topic'.*'topic_id'"):
        TopicRecord(name="t", topic="x")


def test_repr_names_every_field() -> None:
    record = RegisterBrokerRecord(
        broker_id=1, end_points=[BrokerEndpoint(name="PLAINTEXT", host="h", port=1)]
    )
    text = repr(record)
    assert text.startswith("RegisterBrokerRecord(broker_id=1, ")
    assert "BrokerEndpoint(name='PLAINTEXT', host='h', port=1, security_protocol=0)" in text
    assert text.endswith("fenced=True, in_controlled_shutdown=False)")


def test_api_keys_and_versions() -> None:
    assert MetadataRecordType.TOPIC_RECORD == 2
    assert TopicRecord.api_key() == MetadataRecordType.TOPIC_RECORD
    assert MetadataRecordType.from_id(3).new_metadata_record() == PartitionRecord()
    assert RegisterBrokerRecord.highest_supported_version() == 1
    assert BrokerRegistrationChangeRecord.highest_supported_version() == 1
    assert MetadataRecordType.NO_OP_RECORD.highest_supported_version() == 0
    assert all(t.record_class.api_key() == t for t in MetadataRecordType)


def test_duplicate_is_a_deep_copy() -> None:
    record = RegisterBrokerRecord(broker_id=1, end_points=[BrokerEndpoint(name="A", host="h", port=1)])
    copy = record.duplicate()
    assert copy == record
    copy.end_points[0].port = 2
    assert record.end_points[0].port == 1
