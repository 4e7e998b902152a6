"""One batch the Raft leader is filling: records serialized as they come, built into a v2 batch
stamped with the leader's epoch.

Mirrors: org.apache.kafka.raft.internals.BatchBuilder
         (raft/src/main/java/org/apache/kafka/raft/internals/BatchBuilder.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the bytes are written by ``MemoryRecordsBuilder`` (the producer's, through the codec the
         clients choose, ``common/record/codec.py``), not a builder of its own; no compression; the
         buffer is not pooled.

The leader writes its batches itself, so the offsets are known when a record is appended: the batch
starts at the accumulator's next offset, and each record takes the next. The batch header carries
the leader's epoch (``partition_leader_epoch``), which is how every later reader of the log knows
which leader wrote it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_lite.common.record import MemoryRecords, codec
from kafka_lite.common.record.default_record_batch import set_partition_leader_epoch

# A record's framing in a v2 batch is at most this many bytes besides its value (length, attributes,
# deltas, key and header counts as varints): enough to keep the estimate an upper bound.
_RECORD_OVERHEAD_BOUND = 21
_BATCH_OVERHEAD = 61


class BatchBuilder:
    def __init__(
        self,
        base_offset: int,
        epoch: int,
        append_time_ms: int,
        max_bytes: int,
        serialize: Callable[[Any], bytes],
    ) -> None:
        self._base_offset = base_offset
        self._epoch = epoch
        self._append_time_ms = append_time_ms
        self._max_bytes = max_bytes
        self._serialize = serialize
        self._values: list[bytes] = []
        self._records: list[Any] = []
        self._estimated_size = _BATCH_OVERHEAD

    def base_offset(self) -> int:
        return self._base_offset

    def last_offset(self) -> int:
        return self._base_offset + len(self._values) - 1

    def num_records(self) -> int:
        return len(self._values)

    def records(self) -> list[Any]:
        return list(self._records)

    def append_time_ms(self) -> int:
        return self._append_time_ms

    def bytes_needed(self, records: list[Any]) -> tuple[int, list[bytes]] | None:
        """The serialized values of ``records`` if they fit this batch, else None (Kafka's
        ``bytesNeeded``, which also answers "does it fit"). A batch with no record yet takes
        anything, as Kafka's does, so a record larger than the limit still gets a batch of its own."""
        values = [self._serialize(r) for r in records]
        needed = sum(len(v) + _RECORD_OVERHEAD_BOUND for v in values)
        if self._values and self._estimated_size + needed > self._max_bytes:
            return None
        return needed, values

    def append_record(self, record: Any, value: bytes, size: int) -> int:
        offset = self._base_offset + len(self._values)
        self._records.append(record)
        self._values.append(value)
        self._estimated_size += size
        return offset

    def build(self) -> MemoryRecords:
        # The producer's builder, as the clients' codec chooses it: the leader encodes every record
        # it commits, a client's per-byte cost (the reference unless the compiled codec is chosen).
        builder = codec.MemoryRecordsBuilder(
            base_offset=self._base_offset, partition_leader_epoch=self._epoch
        )
        for value in self._values:
            builder.append(self._append_time_ms, None, value)
        data = bytearray(builder.build().buffer())
        set_partition_leader_epoch(data, 0, self._epoch)
        return MemoryRecords(bytes(data))
