"""The constants every record format shares: magic values, timestamp types, "none" sentinels.

Mirrors: org.apache.kafka.common.record.RecordBatch (the interface's constants), TimestampType
         (clients/src/main/java/org/apache/kafka/common/record/, Kafka 0.11.0)
Book:    chapter 6, 6.1 (message format); chapter 10.2 (timestamps)
"""

from __future__ import annotations

import enum

MAGIC_VALUE_V0 = 0  # Kafka 0.8-0.9: no timestamp
MAGIC_VALUE_V1 = 1  # Kafka 0.10: adds a timestamp (KIP-32) and relative inner offsets (KIP-31)
MAGIC_VALUE_V2 = 2  # Kafka 0.11: the record batch (KIP-98): varints, headers, producer id

# "Absent" values. Kafka uses -1 throughout rather than nulls, because they must fit fixed-width
# fields on the wire.
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

# Every batch, of any magic, starts with the offset (int64) and a size (int32, at SIZE_OFFSET):
# LOG_OVERHEAD bytes that a reader can parse before knowing the format. The magic byte sits at byte 16 in all three
# formats, which is how a reader tells them apart.
SIZE_OFFSET = 8
LOG_OVERHEAD = 12
MAGIC_OFFSET = 16


class TimestampType(enum.IntEnum):
    """Who set a record's timestamp: the producer (CreateTime) or the broker (LogAppendTime)."""

    NO_TIMESTAMP_TYPE = -1  # magic 0 has no timestamps at all
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def display_name(self) -> str:
        return {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[self.value]
