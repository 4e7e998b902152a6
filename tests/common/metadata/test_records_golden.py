"""The metadata records, framed as the metadata log holds them: golden bytes worked by hand from Kafka
3.3.0's specs (metadata/src/main/resources/common/metadata/*.json) and AbstractApiMessageSerde's frame,
one line per field, independently of kafka_lite's schemas; each case is decoded from its bytes and
encoded back to them."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.metadata import (
    AccessControlEntryRecord,
    ApiMessageAndVersion,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    MetadataRecordSerde,
    MetadataRecordType,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveAccessControlEntryRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)

pytestmark = pytest.mark.unit


def h(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields))


TOPIC_ID = uuid.UUID("0102030405060708090a0b0c0d0e0f10")
TOPIC_ID_HEX = "0102030405060708090a0b0c0d0e0f10"
INCARNATION = uuid.UUID("1112131415161718191a1b1c1d1e1f20")
INCARNATION_HEX = "1112131415161718191a1b1c1d1e1f20"

_PLAINTEXT = BrokerEndpoint(name="PLAINTEXT", host="h", port=9092, security_protocol=0)
_METADATA_VERSION = BrokerFeature(name="metadata.version", min_supported_version=1, max_supported_version=7)
_REGISTER_V0_BODY = (
    "00000001",  # broker_id 1
    INCARNATION_HEX,  # incarnation_id: uuid, 16 bytes
    "000000000000000a",  # broker_epoch 10: int64
    "02",  # end_points: compact array, 1 + 1
    "0a 504c41494e54455854",  # name: compact string, 9 + 1, "PLAINTEXT"
    "02 68",  # host "h"
    "2384",  # port 9092: uint16
    "0000",  # security_protocol 0 (PLAINTEXT): int16
    "00",  # the endpoint's tagged fields: none
    "02",  # features: 1 + 1
    "11 6d657461646174612e76657273696f6e",  # name: 16 + 1, "metadata.version"
    "0001",  # min_supported_version 1: int16
    "0007",  # max_supported_version 7
    "00",  # the feature's tagged fields: none
)

CASES = {
    "register_broker_v0": (
        ApiMessageAndVersion(
            RegisterBrokerRecord(broker_id=1, incarnation_id=INCARNATION, broker_epoch=10,
                                 end_points=[_PLAINTEXT], features=[_METADATA_VERSION]),
            0,
        ),
        h(
            "01",  # frame version 1: unsigned varint
            "00",  # api key 0, RegisterBrokerRecord
            "00",  # version 0
            *_REGISTER_V0_BODY,
            "00",  # rack: compact nullable string, null
            "01",  # fenced true (the spec's default)
            "00",  # the record's tagged fields: none
        ),
    ),
    "register_broker_v1": (
        ApiMessageAndVersion(
            RegisterBrokerRecord(broker_id=1, incarnation_id=INCARNATION, broker_epoch=10,
                                 end_points=[_PLAINTEXT], features=[_METADATA_VERSION], rack="r1",
                                 fenced=False, in_controlled_shutdown=True),
            1,
        ),
        h(
            "01",  # frame version
            "00",  # api key 0
            "01",  # version 1
            *_REGISTER_V0_BODY,
            "03 7231",  # rack: 2 + 1, "r1"
            "00",  # fenced false
            "01",  # in_controlled_shutdown true: new in v1
            "00",  # tagged fields: none
        ),
    ),
    "unregister_broker": (
        ApiMessageAndVersion(UnregisterBrokerRecord(broker_id=2, broker_epoch=5), 0),
        h(
            "01 01 00",  # frame version 1, api key 1, version 0
            "00000002",  # broker_id 2
            "0000000000000005",  # broker_epoch 5: int64
            "00",  # tagged fields: none
        ),
    ),
    "topic": (
        ApiMessageAndVersion(TopicRecord(name="t", topic_id=TOPIC_ID), 0),
        h(
            "01 02 00",  # frame version 1, api key 2, version 0
            "02 74",  # name: compact string, 1 + 1, "t"
            TOPIC_ID_HEX,  # topic_id
            "00",  # tagged fields: none
        ),
    ),
    "partition": (
        ApiMessageAndVersion(
            PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=[1, 2, 3], isr=[1, 2],
                            leader=1, leader_epoch=0, partition_epoch=0),
            0,
        ),
        h(
            "01 03 00",  # frame version 1, api key 3, version 0
            "00000000",  # partition_id 0
            TOPIC_ID_HEX,  # topic_id
            "04 00000001 00000002 00000003",  # replicas: compact array, 3 + 1
            "03 00000001 00000002",  # isr: 2 + 1
            "01",  # removing_replicas: empty, 0 + 1
            "01",  # adding_replicas: empty
            "00000001",  # leader 1
            "00000000",  # leader_epoch 0
            "00000000",  # partition_epoch 0
            "00",  # tagged fields: none (leader_recovery_state is its default, 0)
        ),
    ),
    "partition_recovering": (
        ApiMessageAndVersion(
            PartitionRecord(partition_id=1, topic_id=TOPIC_ID, replicas=[2], isr=[2], leader=2,
                            leader_recovery_state=1, leader_epoch=3, partition_epoch=4),
            0,
        ),
        h(
            "01 03 00",  # frame version 1, api key 3, version 0
            "00000001",  # partition_id 1
            TOPIC_ID_HEX,  # topic_id
            "02 00000002",  # replicas [2]
            "02 00000002",  # isr [2]
            "01",  # removing_replicas: empty
            "01",  # adding_replicas: empty
            "00000002",  # leader 2
            "00000003",  # leader_epoch 3
            "00000004",  # partition_epoch 4
            "01",  # tagged fields: one
            "00 01 01",  # tag 0 (leader_recovery_state), 1 byte: int8 1 (RECOVERING)
        ),
    ),
    "config": (
        ApiMessageAndVersion(
            ConfigRecord(resource_type=2, resource_name="t", name="retention.ms", value="1000"), 0
        ),
        h(
            "01 04 00",  # frame version 1, api key 4, version 0
            "02",  # resource_type 2 (TOPIC): int8
            "02 74",  # resource_name "t"
            "0d 726574656e74696f6e2e6d73",  # name: 12 + 1, "retention.ms"
            "05 31303030",  # value: 4 + 1, "1000"
            "00",  # tagged fields: none
        ),
    ),
    "config_deleted": (
        ApiMessageAndVersion(ConfigRecord(resource_type=4, resource_name="", name="x"), 0),
        h(
            "01 04 00",  # frame version 1, api key 4, version 0
            "04",  # resource_type 4 (BROKER)
            "01",  # resource_name "" (the cluster-wide default): 0 + 1
            "02 78",  # name "x"
            "00",  # value: null, delete the key
            "00",  # tagged fields: none
        ),
    ),
    "partition_change_nothing_tagged": (
        ApiMessageAndVersion(PartitionChangeRecord(partition_id=3, topic_id=TOPIC_ID), 0),
        h(
            "01 05 00",  # frame version 1, api key 5, version 0
            "00000003",  # partition_id 3
            TOPIC_ID_HEX,  # topic_id
            "00",  # tagged fields: none, every change field holds its default
        ),
    ),
    "partition_change_isr_and_leader": (
        ApiMessageAndVersion(PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID, isr=[1], leader=1), 0),
        h(
            "01 05 00",  # frame version 1, api key 5, version 0
            "00000000",  # partition_id 0
            TOPIC_ID_HEX,  # topic_id
            "02",  # tagged fields: two
            "00 05 02 00000001",  # tag 0 (isr), 5 bytes: compact array [1]
            "01 04 00000001",  # tag 1 (leader), 4 bytes: 1
        ),
    ),
    "partition_change_every_tag": (
        ApiMessageAndVersion(
            PartitionChangeRecord(partition_id=0, topic_id=TOPIC_ID, isr=[2], leader=-1, replicas=[2, 3],
                                  removing_replicas=[3], adding_replicas=[], leader_recovery_state=1),
            0,
        ),
        h(
            "01 05 00",  # frame version 1, api key 5, version 0
            "00000000",  # partition_id 0
            TOPIC_ID_HEX,  # topic_id
            "06",  # tagged fields: six, in tag order
            "00 05 02 00000002",  # tag 0 isr [2]
            "01 04 ffffffff",  # tag 1 leader -1: no leader now (-1 is not the default -2, so it is written)
            "02 09 03 00000002 00000003",  # tag 2 replicas [2, 3]
            "03 05 02 00000003",  # tag 3 removing_replicas [3]
            "04 01 01",  # tag 4 adding_replicas []: empty, which differs from null ("no change")
            "05 01 01",  # tag 5 leader_recovery_state 1
        ),
    ),
    "fence_broker": (
        ApiMessageAndVersion(FenceBrokerRecord(id=1, epoch=3), 0),
        h(
            "01 07 00",  # frame version 1, api key 7, version 0
            "00000001",  # id 1
            "0000000000000003",  # epoch 3: int64
            "00",  # tagged fields: none
        ),
    ),
    "unfence_broker": (
        ApiMessageAndVersion(UnfenceBrokerRecord(id=2, epoch=4), 0),
        h(
            "01 08 00",  # frame version 1, api key 8, version 0
            "00000002",  # id 2
            "0000000000000004",  # epoch 4
            "00",  # tagged fields: none
        ),
    ),
    "remove_topic": (
        ApiMessageAndVersion(RemoveTopicRecord(topic_id=TOPIC_ID), 0),
        h(
            "01 09 00",  # frame version 1, api key 9, version 0
            TOPIC_ID_HEX,  # topic_id
            "00",  # tagged fields: none
        ),
    ),
    "feature_level": (
        ApiMessageAndVersion(FeatureLevelRecord(name="metadata.version", feature_level=7), 0),
        h(
            "01 0c 00",  # frame version 1, api key 12, version 0
            "11 6d657461646174612e76657273696f6e",  # name: 16 + 1, "metadata.version"
            "0007",  # feature_level 7: int16
            "00",  # tagged fields: none
        ),
    ),
    "producer_ids": (
        ApiMessageAndVersion(ProducerIdsRecord(broker_id=1, broker_epoch=3, next_producer_id=1000), 0),
        h(
            "01 0f 00",  # frame version 1, api key 15, version 0
            "00000001",  # broker_id 1
            "0000000000000003",  # broker_epoch 3
            "00000000000003e8",  # next_producer_id 1000
            "00",  # tagged fields: none
        ),
    ),
    "broker_registration_change_v0": (
        ApiMessageAndVersion(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=3, fenced=1), 0),
        h(
            "01 11 00",  # frame version 1, api key 17, version 0
            "00000001",  # broker_id 1
            "0000000000000003",  # broker_epoch 3
            "01",  # tagged fields: one
            "00 01 01",  # tag 0 (fenced), 1 byte: 1, fenced
        ),
    ),
    "broker_registration_change_v0_no_change": (
        ApiMessageAndVersion(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=3), 0),
        h(
            "01 11 00",  # frame version 1, api key 17, version 0
            "00000001",  # broker_id 1
            "0000000000000003",  # broker_epoch 3
            "00",  # tagged fields: none (fenced 0, no change)
        ),
    ),
    "broker_registration_change_v1": (
        ApiMessageAndVersion(
            BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=3, fenced=-1, in_controlled_shutdown=1), 1
        ),
        h(
            "01 11 01",  # frame version 1, api key 17, version 1
            "00000001",  # broker_id 1
            "0000000000000003",  # broker_epoch 3
            "02",  # tagged fields: two
            "00 01 ff",  # tag 0 (fenced), 1 byte: -1, unfenced
            "01 01 01",  # tag 1 (in_controlled_shutdown), new in v1: 1
        ),
    ),
    "access_control_entry": (
        ApiMessageAndVersion(
            AccessControlEntryRecord(id=TOPIC_ID, resource_type=2, resource_name="foo", pattern_type=3,
                                     principal="User:alice", host="*", operation=3, permission_type=3),
            0,
        ),
        h(
            "01 12 00",  # frame version 1, api key 18, version 0
            TOPIC_ID_HEX,  # id: uuid
            "02",  # resource_type 2 (TOPIC): int8
            "04 666f6f",  # resource_name: compact string, 3 + 1, "foo"
            "03",  # pattern_type 3 (LITERAL)
            "0b 557365723a616c696365",  # principal: 10 + 1, "User:alice"
            "02 2a",  # host "*"
            "03",  # operation 3 (READ)
            "03",  # permission_type 3 (ALLOW)
            "00",  # tagged fields: none
        ),
    ),
    "remove_access_control_entry": (
        ApiMessageAndVersion(RemoveAccessControlEntryRecord(id=TOPIC_ID), 0),
        h(
            "01 13 00",  # frame version 1, api key 19, version 0
            TOPIC_ID_HEX,  # id: uuid
            "00",  # tagged fields: none
        ),
    ),
    "no_op": (
        ApiMessageAndVersion(NoOpRecord(), 0),
        h(
            "01 14 00",  # frame version 1, api key 20, version 0
            "00",  # tagged fields: none; a NoOpRecord has no fields
        ),
    ),
}  # fmt: skip

SERDE = MetadataRecordSerde()


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_bytes_decode_and_encode(case: str) -> None:
    record, data = CASES[case]
    assert SERDE.deserialize(data) == record
    assert SERDE.serialize(record) == data
    assert SERDE.record_size(record) == len(data)


def test_every_record_type_and_version_has_a_golden_case() -> None:
    covered = {(r.message.api_key(), r.version) for r, _ in CASES.values()}
    expected = {
        (t.value, v)
        for t in MetadataRecordType
        for v in range(t.lowest_supported_version(), t.highest_supported_version() + 1)
    }
    assert covered == expected
