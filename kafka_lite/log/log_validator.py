"""The leader's timestamp checks on a produce request's batches, before offsets are assigned.

Mirrors: kafka.log.LogValidator (core/src/main/scala/kafka/log/LogValidator.scala, Kafka 0.11.0):
         ``validateTimestamp`` and the walk over a batch's records that calls it
Book:    chapter 10, 10.2 (message timestamps)
Differs: a record's timestamp is decoded only when the topic's
         ``message.timestamp.difference.max.ms`` is below its default; Kafka decodes every record
         of every batch whatever the setting.

A topic says who stamps its records (``message.timestamp.type``). With ``CreateTime`` the log keeps
the producer's timestamps, and ``message.timestamp.difference.max.ms`` bounds how far from the
broker's clock they may be: a record outside ``[now - max, now + max]`` fails the whole partition's
append with INVALID_TIMESTAMP, and nothing of the request is written to that partition (Kafka
0.10.1's check, KIP-32). Without it a producer with a wrong clock would plant a timestamp years away,
and time-based retention would delete the segment at once or keep it for ever. With
``LogAppendTime`` the producer's timestamps do not matter: ``Log.append`` stamps every batch with
the broker's time, so there is nothing to check against the clock.

Either way a producer may not send a batch that already claims ``LogAppendTime``: consumers would
take the producer's time for the broker's. That bit is in the batch header, so checking it costs
nothing per record.

Why decode only for a non-default maximum: a v2 batch's header has its first timestamp and its max
timestamp, but not its least one, since a record's timestamp delta may be negative (a producer that
sets timestamps may send them out of order). So no header bounds every record from below, and the
only exact check reads each record. The default maximum, Java's ``Long.MAX_VALUE``, admits every
timestamp, so the check can never fail and the produce path stays free of a Python object per
record, as the rest of ``Log.append`` is (``log.py``'s header says why).
"""

from __future__ import annotations

from kafka_lite.common.errors import InvalidTimestampException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.constants import NO_TIMESTAMP, TimestampType
from kafka_lite.common.utils import LONG_MAX

# message.timestamp.difference.max.ms's default: any timestamp is within it
DEFAULT_TIMESTAMP_DIFF_MAX_MS = LONG_MAX


# --8<-- [start:validate_timestamps]
def validate_timestamps(
    records: MemoryRecords, now: int, log_append_time: bool, timestamp_diff_max_ms: int
) -> None:
    """Check every batch's timestamp type and, for a ``CreateTime`` topic whose maximum difference is
    set, every record's timestamp; raise ``InvalidTimestampException`` at the first bad one.

    Called before any offset is written, so a refused request leaves the log and the request's
    bytes as they were.
    """
    check_records = not log_append_time and timestamp_diff_max_ms < DEFAULT_TIMESTAMP_DIFF_MAX_MS
    for batch in records.batches():
        if batch.timestamp_type == TimestampType.LOG_APPEND_TIME:
            raise InvalidTimestampException(
                f"Invalid timestamp type in the record batch at byte {batch.position}: "
                "Producer should not set timestamp type to LogAppendTime."
            )
        if check_records:
            for delta, record in enumerate(batch):
                validate_timestamp(record.timestamp, now, timestamp_diff_max_ms, batch.position, delta)


# --8<-- [end:validate_timestamps]


def validate_timestamp(
    timestamp: int, now: int, timestamp_diff_max_ms: int, batch_position: int, record_index: int
) -> None:
    """Kafka's ``validateTimestamp`` for a ``CreateTime`` topic: ``timestamp`` within
    ``timestamp_diff_max_ms`` of ``now``. A record with no timestamp (-1) passes, as in Kafka 0.11."""
    if timestamp != NO_TIMESTAMP and abs(timestamp - now) > timestamp_diff_max_ms:
        raise InvalidTimestampException(
            f"Timestamp {timestamp} of record {record_index} in the record batch at byte {batch_position} "
            f"is out of range. The timestamp should be within [{now - timestamp_diff_max_ms}, "
            f"{now + timestamp_diff_max_ms}]: the broker's time {now}, give or take "
            f"message.timestamp.difference.max.ms ({timestamp_diff_max_ms})."
        )
