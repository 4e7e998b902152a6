"""Helpers for the image tests: replay a list of records into a delta, and the snapshot round trip
(write an image's records, replay them into a delta of the empty image, apply) that Kafka's image
tests call testToImageAndBack."""

from __future__ import annotations

from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.metadata_record_serde import MetadataRecordSerde


def replay_all(delta, records: list[ApiMessageAndVersion]) -> None:
    """Kafka's RecordTestUtils.replayAll: each record's message into ``delta.replay``."""
    for record in records:
        delta.replay(record.message)


def through_the_wire(records: list[ApiMessageAndVersion]) -> list[ApiMessageAndVersion]:
    """The records as a snapshot file would give them back: serialized and read again, so that a
    field written at a version that cannot carry it is caught."""
    serde = MetadataRecordSerde()
    return [serde.deserialize(serde.serialize(record)) for record in records]


def round_trip(image, empty_delta, write=None):
    """``image`` written to records, read back through the serde, and replayed into ``empty_delta``."""
    out: list[ApiMessageAndVersion] = []
    (write or image.write)(out)
    replay_all(empty_delta, through_the_wire(out))
    return empty_delta.apply()
