"""An offset to commit, or that the group has committed, with the user's metadata string beside it.

Mirrors: org.apache.kafka.clients.consumer.OffsetAndMetadata
         (clients/src/main/java/org/apache/kafka/clients/consumer/OffsetAndMetadata.java, Kafka 0.10.1)
Book:    chapter 4, 4.4 (committing offsets), 4.4.2 (the fetch position is the offset committed)
Differs: kafka-python's named tuple ``(offset, metadata, leader_epoch)``, with ``metadata`` ``""``
         and ``leader_epoch`` -1 by default, so ``OffsetAndMetadata(42, '', -1)`` from a kafka-python
         program works; 0.10.1 has no epoch, and OffsetCommit v2 sends none. ``metadata=None`` is
         stored as ``""``, as Kafka 0.11 does, because the broker stores a null metadata as an
         empty string and an offset fetched back must equal the one committed.

The committed offset is the offset of the *next* record to read, not of the last one read: a
consumer that has processed records up to offset 41 commits 42, and a consumer that takes the
partition over starts fetching at 42. The metadata is free text kept with the offset (which node
committed, when); the group coordinator stores it in ``__consumer_offsets`` unread.
"""

from __future__ import annotations

from typing import NamedTuple

UNKNOWN_LEADER_EPOCH = -1


class _OffsetAndMetadataFields(NamedTuple):
    offset: int
    metadata: str = ""
    leader_epoch: int = UNKNOWN_LEADER_EPOCH


class OffsetAndMetadata(_OffsetAndMetadataFields):
    __slots__ = ()

    def __new__(
        cls, offset: int, metadata: str | None = "", leader_epoch: int = UNKNOWN_LEADER_EPOCH
    ) -> OffsetAndMetadata:
        # A typing.NamedTuple cannot define __new__ itself, hence the fields in a base class.
        return super().__new__(cls, offset, "" if metadata is None else metadata, leader_epoch)
