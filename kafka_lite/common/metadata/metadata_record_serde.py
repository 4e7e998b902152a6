"""How a metadata record is framed in the metadata log: a frame version, the record's type and
version, then the record.

Mirrors: org.apache.kafka.metadata.MetadataRecordSerde over
         org.apache.kafka.server.common.serialization.AbstractApiMessageSerde
         (metadata/src/main/java/org/apache/kafka/metadata/ and server-common/src/main/java/
         org/apache/kafka/server/common/serialization/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the error names the record type by name as well as by id, and where a record's bytes stop
         (the field and byte offset ``types.SchemaException`` gives).

The value of each record in a metadata batch is::

    frame_version  unsigned varint, 1
    api_key        unsigned varint, the record type (MetadataRecordType)
    version        unsigned varint, the record's version
    message        the record at that version (its flexible schema)

The frame version lets the framing change without touching any record; version 0 was the framing of
KRaft's preview in Kafka 2.8, which 3.x no longer reads. Three unsigned varints of small numbers
are three bytes: a TopicRecord of a one-letter name is 22 bytes in all.

This is the ``RecordSerde`` the Raft client is given (``kafka_lite.raft``): it turns an
``ApiMessageAndVersion`` into a record value and back.
"""

from __future__ import annotations

from kafka_lite.common.errors import KafkaException
from kafka_lite.common.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_lite.common.metadata.metadata_record_type import MetadataRecordType
from kafka_lite.common.protocol.types import UNSIGNED_VARINT, Reader, SchemaException

DEFAULT_FRAME_VERSION = 1
_SHORT_MAX = 2**15 - 1


class MetadataParseException(KafkaException):
    """Bytes of the metadata log that are not a record kafka_lite can read (Kafka's
    ``org.apache.kafka.server.common.serialization.MetadataParseException``)."""


class MetadataRecordSerde:
    """Serializes ``ApiMessageAndVersion`` to a record value and back (one shared ``INSTANCE``)."""

    def serialize(self, record: ApiMessageAndVersion) -> bytes:
        out = bytearray()
        UNSIGNED_VARINT.write(out, DEFAULT_FRAME_VERSION)
        UNSIGNED_VARINT.write(out, record.message.api_key())
        UNSIGNED_VARINT.write(out, record.version)
        record.message.write(out, record.version)
        return bytes(out)

    def record_size(self, record: ApiMessageAndVersion) -> int:
        return len(self.serialize(record))

    def deserialize(self, data: bytes | bytearray | memoryview) -> ApiMessageAndVersion:
        """The record in ``data``, which must be exactly one framed record."""
        r = Reader(data)
        frame_version = _read_unsigned_short(r, "frame version")
        if frame_version == 0:
            raise MetadataParseException(
                "Could not deserialize metadata record with frame version 0. Note that upgrades from "
                "the preview release of KRaft in 2.8 to newer versions are not supported."
            )
        if frame_version != DEFAULT_FRAME_VERSION:
            raise MetadataParseException(
                f"Could not deserialize metadata record due to unknown frame version {frame_version} "
                f"(only frame version {DEFAULT_FRAME_VERSION} is supported)"
            )
        api_key = _read_unsigned_short(r, "type")
        version = _read_unsigned_short(r, "version")
        try:
            record_type = MetadataRecordType.from_id(api_key)
        except ValueError as e:
            raise MetadataParseException(str(e)) from None
        cls = record_type.record_class
        if not cls.lowest_supported_version() <= version <= cls.highest_supported_version():
            raise MetadataParseException(
                f"Can't read version {version} of {cls.__name__} (type {api_key}): versions "
                f"{cls.lowest_supported_version()}-{cls.highest_supported_version()} are supported"
            )
        try:
            message = cls.read(r, version)
        except SchemaException as e:
            raise MetadataParseException(
                f"Failed to deserialize record with type {api_key} ({cls.__name__}) at version {version}: {e}"
            ) from None
        if r.remaining > 0:
            raise MetadataParseException(
                f"Found {r.remaining} byte(s) of garbage after {cls.__name__} (type {api_key}) "
                f"at byte {r.pos}"
            )
        return ApiMessageAndVersion(message, version)


def _read_unsigned_short(r: Reader, entity: str) -> int:
    """An unsigned varint that must fit a Java short, as the frame's three numbers are."""
    try:
        value = UNSIGNED_VARINT.read(r)
    except SchemaException as e:
        raise MetadataParseException(f"Error while reading {entity}: {e}") from None
    if value > _SHORT_MAX:
        raise MetadataParseException(f"Value for {entity} was too large: {value}")
    return value


INSTANCE = MetadataRecordSerde()
