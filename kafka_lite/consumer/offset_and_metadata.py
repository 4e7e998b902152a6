"""An offset to commit, or that the group has committed, with the user's metadata string beside it.

Mirrors: org.apache.kafka.clients.consumer.OffsetAndMetadata
         (clients/src/main/java/org/apache/kafka/clients/consumer/OffsetAndMetadata.java, Kafka 0.10.1)
Book:    chapter 4, 4.4 (committing offsets), 4.4.2 (the fetch position is the offset committed)
Differs: ``metadata=None`` is stored as ``""``, as Kafka 0.11 does, because the broker stores a null
         metadata as an empty string and an offset fetched back must equal the one committed.

The committed offset is the offset of the *next* record to read, not of the last one read: a
consumer that has processed records up to offset 41 commits 42, and a consumer that takes the
partition over starts fetching at 42. The metadata is free text kept with the offset (which node
committed, when); the group coordinator stores it in ``__consumer_offsets`` unread.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    offset: int
    metadata: str = ""

    def __post_init__(self) -> None:
        if self.metadata is None:
            object.__setattr__(self, "metadata", "")
