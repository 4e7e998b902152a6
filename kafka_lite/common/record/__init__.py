"""Record formats: how Kafka lays records out in bytes, on the wire and on disk.

Mirrors: org.apache.kafka.common.record (clients/src/main/java/.../common/record/, Kafka 0.11.0)
Book:    chapter 6, 6.1 (messages and message sets); chapter 10.2 (timestamps)

Two families live here:

* **record batch v2** (magic 2, Kafka 0.11+): ``DefaultRecordBatch`` / ``DefaultRecord``. What
  kafka_lite stores and sends.
* **message sets v0/v1** (magic 0/1, Kafka 0.8-0.10, what the book describes): ``LegacyRecord``.
  Read, written, and converted to and from v2 at the edge for old clients.

``MemoryRecords`` (bytes in memory) and ``FileRecords`` (a slice of a segment file) hold either
family and iterate over batches without copying; ``MemoryRecordsBuilder`` writes them.
"""

from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.record.constants import (
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    TimestampType,
)
from kafka_lite.common.record.default_record import DefaultRecord, Header
from kafka_lite.common.record.default_record_batch import DefaultRecordBatch
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.record.legacy_record import LegacyRecord, LegacyRecordBatch
from kafka_lite.common.record.memory_records import MemoryRecords
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder

__all__ = [
    "MAGIC_VALUE_V0",
    "MAGIC_VALUE_V1",
    "MAGIC_VALUE_V2",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "CompressionType",
    "DefaultRecord",
    "DefaultRecordBatch",
    "FileRecords",
    "Header",
    "LegacyRecord",
    "LegacyRecordBatch",
    "MemoryRecords",
    "MemoryRecordsBuilder",
    "TimestampType",
]
