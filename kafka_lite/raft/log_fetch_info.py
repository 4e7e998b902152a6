"""What a read of the replicated log returns: the records, and where the first of them sits.

Mirrors: org.apache.kafka.raft.LogFetchInfo (raft/src/main/java/org/apache/kafka/raft/, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)

``start_offset_metadata`` is the offset of the first batch returned, with the log's own metadata for
it (a segment position for ``KafkaMetadataLog``): the leader can hand it back as the high watermark's
metadata, so a committed read later starts without an index lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata


@dataclass(frozen=True)
class LogFetchInfo:
    records: MemoryRecords | FileRecords
    start_offset_metadata: LogOffsetMetadata
