"""MetadataRecordSerde on bytes it must refuse: each refusal names the frame version, the record type,
the version, or the field and byte where the bytes stop making sense."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.metadata import (
    ApiMessageAndVersion,
    MetadataParseException,
    MetadataRecordSerde,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnsupportedVersionException,
)

pytestmark = pytest.mark.unit

SERDE = MetadataRecordSerde()
TOPIC = ApiMessageAndVersion(TopicRecord(name="t", topic_id=uuid.UUID(int=7)), 0)


def refused(data: bytes) -> str:
    with pytest.raises(MetadataParseException) as e:
        SERDE.deserialize(data)
    return str(e.value)


def test_frame_version_0_is_the_28_preview_and_is_refused() -> None:
    assert "frame version 0" in refused(bytes.fromhex("00 02 00 02 74") + bytes(17))


def test_an_unknown_frame_version_is_named() -> None:
    message = refused(bytes.fromhex("02 02 00"))
    assert "unknown frame version 2" in message
    assert "only frame version 1" in message


def test_an_unknown_record_type_is_named() -> None:
    assert "Unknown metadata id 13" in refused(bytes.fromhex("01 0d 00 00"))


def test_a_kafka_record_type_kafka_lite_does_not_keep_is_named() -> None:
    message = refused(bytes.fromhex("01 06 00 00"))
    assert "AccessControlRecord" in message
    assert "6" in message


def test_an_unsupported_version_names_the_record_and_its_versions() -> None:
    message = refused(bytes.fromhex("01 02 01 02 74") + bytes(17))
    assert "version 1 of TopicRecord" in message
    assert "0-0" in message


def test_truncated_bytes_name_the_record_the_field_and_the_byte() -> None:
    data = SERDE.serialize(TOPIC)
    message = refused(data[:10])
    assert "TopicRecord" in message
    assert "topic_id" in message
    assert "byte 5" in message  # frame (3 bytes) + the name (2): the uuid starts at byte 5


def test_trailing_bytes_are_garbage() -> None:
    message = refused(SERDE.serialize(TOPIC) + b"\x00")
    assert "1 byte(s) of garbage after TopicRecord" in message


def test_empty_bytes_stop_in_the_frame_version() -> None:
    assert "Error while reading frame version" in refused(b"")


def test_a_type_too_large_for_a_short_is_refused() -> None:
    assert "Value for type was too large" in refused(bytes.fromhex("01 ffff03 00"))


def test_a_tagged_field_whose_size_disagrees_with_its_value_is_refused() -> None:
    good = SERDE.serialize(
        ApiMessageAndVersion(PartitionRecord(topic_id=uuid.UUID(int=1), leader_recovery_state=1), 0)
    )
    assert good.endswith(bytes.fromhex("01 00 01 01"))
    bad = good[:-4] + bytes.fromhex("01 00 02 01 00")  # tag 0 claims 2 bytes for a 1-byte int8
    assert "leader_recovery_state" in refused(bad)


def test_unknown_tagged_fields_are_kept_and_written_back() -> None:
    # A newer writer's tag 9 on a TopicRecord: read past, kept, and written back as it came.
    data = SERDE.serialize(TOPIC)[:-1] + bytes.fromhex("01 09 02 abcd")
    record = SERDE.deserialize(data)
    assert record.message.unknown_tagged_fields == [(9, bytes.fromhex("abcd"))]
    assert record.message != TOPIC.message
    assert SERDE.serialize(record) == data


def test_writing_a_field_the_version_does_not_have_is_refused() -> None:
    record = RegisterBrokerRecord(broker_id=1, in_controlled_shutdown=True)
    with pytest.raises(UnsupportedVersionException, match="non-default in_controlled_shutdown at version 0"):
        SERDE.serialize(ApiMessageAndVersion(record, 0))
    # Its default is what version 0 means, so the same record not shutting down writes at v0.
    record.in_controlled_shutdown = False
    assert SERDE.deserialize(SERDE.serialize(ApiMessageAndVersion(record, 0))).message == record


def test_writing_at_a_version_the_record_does_not_have_is_refused() -> None:
    with pytest.raises(UnsupportedVersionException, match="version 1 of TopicRecord"):
        SERDE.serialize(ApiMessageAndVersion(TOPIC.message, 1))
