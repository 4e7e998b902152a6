"""Producer state: for each idempotent producer, the last batches it wrote to this partition.

Mirrors: kafka.log.ProducerStateManager, ProducerIdEntry and ProducerAppendInfo
         (core/src/main/scala/kafka/log/ProducerStateManager.scala, Kafka 0.11.0), with the five
         cached batches per producer of Kafka 1.0 (``ProducerIdEntry.NumBatchesToRetain``; the class is
         ``ProducerStateEntry`` from 1.1)
Book:    beyond the book (Kafka 0.11's idempotent producer); chapter 6.1's log is where it lives
Differs: the state is kept beside the ``Log`` by the partition, not inside ``Log.append``; no
         transactions (no ongoing transaction offsets). Snapshots are written, as in Kafka, when the
         log rolls (by the partition) and at clean shutdown.

Why a broker needs this: an idempotent producer (kafka-python's default) numbers its batches per
partition (``producer_id``, ``producer_epoch``, ``base_sequence`` in the batch header). When a
response is lost and the producer retries, the broker recognises the batch and answers with the
offsets it was first written at instead of writing it twice. A gap in the numbers means a batch was
lost in between, which the broker refuses (OUT_OF_ORDER_SEQUENCE_NUMBER) rather than silently
reorder.

The snapshot file ``%020d.snapshot`` (offset = the log end offset it covers) is Kafka 0.11's:
``version int16, crc uint32 (CRC32C of what follows), entries [producer_id int64, epoch int16,
last_sequence int32, last_offset int64, offset_delta int32, timestamp int64, coordinator_epoch
int32, current_txn_first_offset int64]``. On load the manager reads the newest snapshot and replays
the batch headers of the log after it.
"""

from __future__ import annotations

import logging
import struct
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from kafka_lite.common.errors import (
    CorruptRecordException,
    DuplicateSequenceNumberException,
    OutOfOrderSequenceException,
    ProducerFencedException,
)
from kafka_lite.common.record.crc import crc32c
from kafka_lite.common.record.default_record_batch import HEADER_STRUCT, RECORD_BATCH_OVERHEAD
from kafka_lite.log.log_segment import filename_prefix

log = logging.getLogger(__name__)

SNAPSHOT_SUFFIX = ".snapshot"
BATCHES_TO_RETAIN = 5  # a producer has at most 5 requests in flight, so 5 batches cover its retries
_SNAPSHOT_HEAD = struct.Struct(">hI")
_ENTRY = struct.Struct(">qhiqiqiq")
_SNAPSHOT_VERSION = 1
_SEQ_MOD = 2**31


@dataclass(frozen=True)
class ProducerBatch:
    """The producer fields of one batch of an append (``first_offset`` is known after the append)."""

    producer_id: int
    epoch: int
    first_seq: int
    last_seq: int
    first_offset: int = -1
    last_offset: int = -1
    timestamp: int = -1


@dataclass
class ProducerStateEntry:
    producer_id: int
    epoch: int
    batches: deque[ProducerBatch] = field(default_factory=lambda: deque(maxlen=BATCHES_TO_RETAIN))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    def find_duplicate(self, batch: ProducerBatch) -> ProducerBatch | None:
        for cached in self.batches:
            if cached.first_seq == batch.first_seq and cached.last_seq == batch.last_seq:
                return cached
        return None


def scan_producer_batches(buf) -> dict[int, ProducerBatch]:
    """The idempotent batches of an append, by position in ``buf``, read from the batch headers only.

    Runs before ``Log.append`` validates the buffer, so it stops quietly at anything malformed (the
    append then rejects the buffer with the precise error). Batches with producer id -1 (a plain
    producer) carry no state and are skipped.
    """
    found = {}
    pos, end = 0, len(buf)
    while pos + RECORD_BATCH_OVERHEAD <= end:
        (_, length, _, magic, _, _, last_delta, _, max_ts, pid, epoch, base_seq, _) = (
            HEADER_STRUCT.unpack_from(buf, pos)
        )
        if magic != 2 or length < RECORD_BATCH_OVERHEAD - 12 or last_delta < 0:
            break
        if pid >= 0:
            found[pos] = ProducerBatch(
                pid, epoch, base_seq, (base_seq + last_delta) % _SEQ_MOD, timestamp=max_ts
            )
        pos += 12 + length
    return found


class ProducerStateManager:
    def __init__(self, log_dir: Path) -> None:
        self.log_dir = Path(log_dir)
        self.producers: dict[int, ProducerStateEntry] = {}
        self.map_end_offset = 0  # the log offset up to which ``producers`` is up to date

    # --8<-- [start:check]
    def check(self, batches: list[ProducerBatch]) -> ProducerBatch | None:
        """Validate an append's idempotent batches against the state; raise Kafka's error for a
        fenced epoch or a sequence gap. Return the earlier write when the (single) batch is a retry
        of one already in the log, so the caller answers with its offsets and writes nothing."""
        pending: dict[int, tuple[int, int]] = {}  # producer -> (epoch, last seq) within this append
        for batch in batches:
            entry = self.producers.get(batch.producer_id)
            epoch, last_seq = pending.get(
                batch.producer_id, (entry.epoch, entry.last_seq) if entry else (-1, -1)
            )
            if entry is not None and batch.epoch < entry.epoch:
                raise ProducerFencedException(
                    f"Producer {batch.producer_id}'s epoch {batch.epoch} is older than the current {entry.epoch}"
                )
            if entry is not None and batch.epoch == entry.epoch and batch.producer_id not in pending:
                duplicate = entry.find_duplicate(batch)
                if duplicate is not None:
                    if len(batches) == 1:
                        return duplicate
                    raise DuplicateSequenceNumberException(
                        f"Duplicate batch of producer {batch.producer_id} (sequences "
                        f"{batch.first_seq}..{batch.last_seq}) inside a multi-batch append"
                    )
            if batch.epoch != epoch:  # a new epoch (or a new producer) starts at sequence 0
                if batch.first_seq != 0:
                    raise OutOfOrderSequenceException(
                        f"Producer {batch.producer_id} epoch {batch.epoch} must start at sequence 0, "
                        f"got {batch.first_seq}"
                    )
            elif batch.first_seq != (last_seq + 1) % _SEQ_MOD:
                if _seq_before(batch.first_seq, last_seq + 1):
                    raise DuplicateSequenceNumberException(
                        f"Producer {batch.producer_id} sent sequence {batch.first_seq} again; "
                        f"it is no longer among the {BATCHES_TO_RETAIN} batches the broker remembers"
                    )
                raise OutOfOrderSequenceException(
                    f"Out of order sequence number for producer {batch.producer_id}: "
                    f"{batch.first_seq} (incoming seq. number), {last_seq} (current end sequence number)"
                )
            pending[batch.producer_id] = (batch.epoch, batch.last_seq)
        return None

    # --8<-- [end:check]

    def update(self, batch: ProducerBatch) -> None:
        """Record a batch that was appended (``first_offset``/``last_offset`` filled in)."""
        entry = self.producers.get(batch.producer_id)
        if entry is None or entry.epoch != batch.epoch:
            entry = ProducerStateEntry(batch.producer_id, batch.epoch)
            self.producers[batch.producer_id] = entry
        entry.batches.append(batch)
        self.map_end_offset = max(self.map_end_offset, batch.last_offset + 1)

    # -- snapshots ------------------------------------------------------------------------------------------

    def snapshot_files(self) -> list[Path]:
        return sorted(self.log_dir.glob("*" + SNAPSHOT_SUFFIX))

    def take_snapshot(self, end_offset: int) -> Path:
        """Write the state as of ``end_offset`` (the log end offset) and drop all but the last two."""
        body = bytearray(struct.pack(">i", len(self.producers)))
        for entry in self.producers.values():
            last = entry.batches[-1]
            body += _ENTRY.pack(
                entry.producer_id, entry.epoch, last.last_seq, last.last_offset,
                last.last_offset - last.first_offset, last.timestamp, -1, -1,
            )  # fmt: skip
        data = _SNAPSHOT_HEAD.pack(_SNAPSHOT_VERSION, crc32c(bytes(body))) + bytes(body)
        path = self.log_dir / (filename_prefix(end_offset) + SNAPSHOT_SUFFIX)
        tmp = path.with_suffix(".snapshot.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        for old in self.snapshot_files()[:-2]:
            old.unlink(missing_ok=True)
        return path

    def load(self, partition_log) -> None:
        """Rebuild the state of ``log``: the newest readable snapshot at or below its end, then the
        batch headers after it."""
        self.producers.clear()
        self.map_end_offset = partition_log.log_start_offset
        end = partition_log.log_end_offset
        for path in reversed(self.snapshot_files()):
            offset = int(path.name[: -len(SNAPSHOT_SUFFIX)])
            if offset > end:
                path.unlink(missing_ok=True)  # from a log since truncated
                continue
            try:
                self._read_snapshot(path)
                self.map_end_offset = offset
                break
            except CorruptRecordException as e:
                log.warning("Ignoring producer state snapshot %s: %s", path, e)
                self.producers.clear()
        self._replay(partition_log, self.map_end_offset)

    def _read_snapshot(self, path: Path) -> None:
        data = path.read_bytes()
        if len(data) < _SNAPSHOT_HEAD.size + 4:
            raise CorruptRecordException(f"snapshot of {len(data)} bytes is too short")
        version, crc = _SNAPSHOT_HEAD.unpack_from(data)
        if version != _SNAPSHOT_VERSION:
            raise CorruptRecordException(f"snapshot version {version} is not {_SNAPSHOT_VERSION}")
        body = data[_SNAPSHOT_HEAD.size :]
        if crc32c(body) != crc:
            raise CorruptRecordException("snapshot CRC does not match")
        (count,) = struct.unpack_from(">i", body)
        if count < 0 or 4 + count * _ENTRY.size != len(body):
            raise CorruptRecordException(f"snapshot claims {count} entries in {len(body)} bytes")
        for i in range(count):
            pid, epoch, last_seq, last_offset, delta, ts, _, _ = _ENTRY.unpack_from(body, 4 + i * _ENTRY.size)
            first_seq = (last_seq - delta) % _SEQ_MOD
            self.update(ProducerBatch(pid, epoch, first_seq, last_seq, last_offset - delta, last_offset, ts))

    def _replay(self, partition_log, from_offset: int) -> None:
        for segment in partition_log.log_segments():
            if segment.next_offset() <= from_offset:
                continue
            records = segment.log
            for header in records.batch_headers():
                if header.last_offset < from_offset:
                    continue
                head = records.read_bytes(header.position, RECORD_BATCH_OVERHEAD)
                if len(head) < RECORD_BATCH_OVERHEAD or head[16] != 2:
                    continue
                fields = HEADER_STRUCT.unpack_from(head)
                pid, epoch, base_seq = fields[9], fields[10], fields[11]
                if pid >= 0:
                    delta = header.last_offset - header.base_offset
                    self.update(
                        ProducerBatch(
                            pid, epoch, base_seq, (base_seq + delta) % _SEQ_MOD,
                            header.base_offset, header.last_offset, header.max_timestamp,
                        )
                    )  # fmt: skip
        self.map_end_offset = max(self.map_end_offset, partition_log.log_end_offset)


def _seq_before(a: int, b: int) -> bool:
    """Whether sequence ``a`` comes before ``b``, allowing for wrap-around at 2**31."""
    return 0 < (b - a) % _SEQ_MOD < _SEQ_MOD // 2
