"""Reading a log back whole, and leaving one as a crash would: for notebooks, labs and tests.

No Kafka twin: Kafka's tests have the same helpers in their own sources (``LogTest`` reads a log back
batch by batch, and tears a segment's tail to test recovery); kafka_lite keeps them here so that the
chapter notebooks, the labs and the tests read and break logs the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kafka_lite.common.record.default_record import DefaultRecord
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.record.memory_records import iter_batches
from kafka_lite.log.log import Log


def read_all(log: Log, start_offset: int | None = None, chunk: int = 1 << 20) -> Iterator[DefaultRecord]:
    """Every record of ``log`` from ``start_offset`` (the log start by default), read as a consumer
    reads it: ``chunk`` bytes at a time, whole batches, skipping the records of the first batch
    below the offset asked for."""
    offset = log.log_start_offset if start_offset is None else start_offset
    while offset < log.log_end_offset:
        records = log.read(offset, chunk, min_one_message=True).records
        data = records.read_bytes() if isinstance(records, FileRecords) else bytes(records.buffer())
        batches = list(iter_batches(data, allow_partial_tail=True))
        if not batches:
            break
        for batch in batches:
            for record in batch:
                if record.offset >= offset:
                    yield record
        offset = batches[-1].next_offset


def crash_mid_write(log: Log, lost_bytes: int) -> Path:
    """Close ``log`` as a crash in the middle of its last write leaves it: no clean-shutdown marker,
    and the active segment's file short of its last ``lost_bytes``. Returns that file; the next
    ``Log`` opened on the directory must recover it."""
    active = log.active_segment.log.path
    log.close()
    with open(active, "r+b") as f:
        f.truncate(active.stat().st_size - lost_bytes)
    return active
