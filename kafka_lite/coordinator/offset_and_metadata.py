"""A committed offset with its metadata and timestamps, as the coordinator keeps and stores it.

Mirrors: kafka.common.OffsetAndMetadata (core/src/main/scala/kafka/common/OffsetMetadataAndError.scala,
         Kafka 0.10.1)
Book:    chapter 5, 5.2.2 (committing offsets)
Differs: Kafka's ``OffsetMetadata`` (offset and metadata) is folded in.
"""

from __future__ import annotations

from dataclasses import dataclass

# Kafka's OffsetMetadata.NoMetadata and OffsetCommitRequest.DEFAULT_TIMESTAMP.
NO_METADATA = ""
DEFAULT_TIMESTAMP = -1


@dataclass(frozen=True)
class OffsetAndMetadata:
    """A committed offset, as the coordinator caches it and an offset commit value stores it
    (Kafka's ``kafka.common.OffsetAndMetadata``). A timestamp of -1 is unset: the coordinator fills
    in the commit time and the expiry from ``offsets.retention.minutes``."""

    offset: int
    metadata: str = NO_METADATA
    commit_timestamp: int = DEFAULT_TIMESTAMP
    expire_timestamp: int = DEFAULT_TIMESTAMP

    def __str__(self) -> str:
        # Kafka's toString, which its OffsetsMessageFormatter prints for each offset record.
        metadata = self.metadata or "NO_METADATA"
        return (
            f"[OffsetMetadata[{self.offset},{metadata}],"
            f"CommitTime {self.commit_timestamp},ExpirationTime {self.expire_timestamp}]"
        )
