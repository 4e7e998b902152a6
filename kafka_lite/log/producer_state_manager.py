"""Producer state: for each idempotent producer, the last batches it wrote to this partition; for
each transactional one, where its open transaction began.

Mirrors: kafka.log.ProducerStateManager, ProducerIdEntry and ProducerAppendInfo
         (core/src/main/scala/kafka/log/ProducerStateManager.scala, Kafka 0.11.0), with the five
         cached batches per producer of Kafka 1.0 (``ProducerIdEntry.NumBatchesToRetain``; the class is
         ``ProducerStateEntry`` from 1.1)
Book:    beyond the book (Kafka 0.11's idempotent producer); chapter 6.1's log is where it lives
Differs: the state is kept beside the ``Log`` by the partition, not inside ``Log.append``, and
         checked before the append rather than after offsets are assigned, so it has a lock of its
         own; completed transactions leave the "unreplicated" set when the LSO is next asked for,
         not at each HW move. Snapshots are written, as in Kafka, when the log rolls (by the
         partition) and at clean shutdown; producers do not expire, they leave only with the log
         start (``truncate_head``). KIP-890 part 1's verification entries (Kafka 3.6) hold the
         guard only, not the lowest sequence that 3.6.1 added to them.

Why a broker needs this: an idempotent producer (kafka-python's default) numbers its batches per
partition (``producer_id``, ``producer_epoch``, ``base_sequence`` in the batch header). When a
response is lost and the producer retries, the broker recognises the batch and answers with the
offsets it was first written at instead of writing it twice. A gap in the numbers means a batch was
lost in between, which the broker refuses (OUT_OF_ORDER_SEQUENCE_NUMBER) rather than silently
reorder.

Transactions (KIP-98) add three things. A producer's first transactional batch opens a transaction
at its offset (``current_txn_first_offset``); the COMMIT or ABORT marker its coordinator writes
later closes it (``CompletedTxn``). The smallest first offset of the transactions still open, or
closed by a marker not yet below the high watermark, is the partition's *first unstable offset*: a
``read_committed`` consumer reads only below it (the last stable offset, LSO). And a marker is
refused from a fenced producer epoch (INVALID_PRODUCER_EPOCH) or from a coordinator older than the
last one that wrote a marker for that producer (TRANSACTION_COORDINATOR_FENCED), so a zombie cannot
end a transaction twice.

The snapshot file ``%020d.snapshot`` (offset = the log end offset it covers) is Kafka 0.11's:
``version int16, crc uint32 (CRC32C of what follows), entries [producer_id int64, epoch int16,
last_sequence int32, last_offset int64, offset_delta int32, timestamp int64, coordinator_epoch
int32, current_txn_first_offset int64]``. On load the manager reads the newest snapshot and replays
the batch headers of the log after it, control batches included (their marker is read from
their one record), so an open transaction survives a restart.

The state describes the log from its start. When the log start moves (DeleteRecords, or retention
deleting segments), ``truncate_head`` forgets every producer whose last write is below it, as a
broker rebuilding the state from the log would never learn of it, and deletes the snapshots below
it. A forgotten producer is one the partition has never seen: its next batch with a later sequence
is refused (OUT_OF_ORDER_SEQUENCE_NUMBER, Kafka 0.11's answer to a producer it does not know).
"""

from __future__ import annotations

import functools
import logging
import struct
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path

from kafka_lite.common.errors import (
    CorruptRecordException,
    DuplicateSequenceNumberException,
    InvalidTxnStateException,
    OutOfOrderSequenceException,
    ProducerFencedException,
    TransactionCoordinatorFencedException,
)
from kafka_lite.common.record.crc import crc32c
from kafka_lite.common.record.default_record_batch import (
    CONTROL_FLAG_MASK,
    HEADER_STRUCT,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
    DefaultRecordBatch,
)
from kafka_lite.common.record.end_transaction_marker import EndTransactionMarker
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
    is_transactional: bool = False
    is_control: bool = False
    marker: EndTransactionMarker | None = None  # a control batch's, when its record could be read


@dataclass(frozen=True)
class CompletedTxn:
    """A transaction a marker just ended (Kafka's ``CompletedTxn``): from its first record to the marker."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass
class TxnMetadata:
    """An open transaction, or a completed one whose marker is not yet below the high watermark."""

    producer_id: int
    first_offset: int
    last_offset: int | None = None


class VerificationStateEntry:
    """KIP-890 part 1 (Kafka 3.6's ``VerificationStateEntry``): a producer's first transactional write
    to this partition waiting for its coordinator to say that the partition is in the transaction.
    The guard is a fresh object per entry; the verified append must bring back this very object,
    and any transactional batch or marker written meanwhile removes the entry. So a verification
    answered before an abort marker landed cannot let the write in after it (the ABA case: verified,
    aborted, a new transaction begun without this partition, then the stale answer arrives)."""

    __slots__ = ("timestamp", "verification_guard")

    def __init__(self, timestamp: int) -> None:
        self.timestamp = timestamp
        self.verification_guard = object()


@dataclass
class ProducerStateEntry:
    producer_id: int
    epoch: int
    batches: deque[ProducerBatch] = field(default_factory=lambda: deque(maxlen=BATCHES_TO_RETAIN))
    coordinator_epoch: int = -1  # of the coordinator that wrote this producer's last marker
    current_txn_first_offset: int = -1  # where its open transaction began; -1: none open
    # the offset of its last write, batch or marker (Kafka's ``lastOffset``): what the log start is
    # compared with to decide whether the log still holds anything of this producer
    last_offset: int = -1

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
            found[pos] = _producer_batch(buf, pos, pid, epoch, base_seq, last_delta, max_ts)
        pos += 12 + length
    return found


def _producer_batch(buf, pos: int, pid: int, epoch: int, base_seq: int, last_delta: int, max_ts: int):
    """The producer fields of the batch at ``pos``; a control batch's marker is read from its record
    (one small record: the only decoding the append path does)."""
    (attributes,) = struct.unpack_from(">h", buf, pos + 21)
    is_control = bool(attributes & CONTROL_FLAG_MASK)
    marker = None
    if is_control:
        try:
            marker = EndTransactionMarker.from_record(next(iter(DefaultRecordBatch(buf, pos))))
        except (CorruptRecordException, StopIteration, ValueError):
            marker = None  # not a marker this version reads: it changes no transaction
    return ProducerBatch(
        pid, epoch, base_seq, (base_seq + last_delta) % _SEQ_MOD, timestamp=max_ts,
        is_transactional=bool(attributes & TRANSACTIONAL_FLAG_MASK), is_control=is_control, marker=marker,
    )  # fmt: skip


def _synchronized(method):
    """Run ``method`` under the manager's lock (Kafka's are called under the log's lock)."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


class ProducerStateManager:
    def __init__(self, log_dir: Path) -> None:
        self.log_dir = Path(log_dir)
        # Kafka's manager needs no lock: its appends and ``truncateHead`` both run under the log's.
        # Here the partition's lock covers check, append and update, while the log start moves
        # under the log's lock; taking the partition's there could deadlock with an append, which
        # holds it while it waits for the log's. So the maps have a lock of their own, always taken
        # last (nothing calls into the log while holding it). An append checked before a move and
        # recorded after it finds its producer forgotten, and records it afresh.
        self._lock = threading.RLock()
        self.producers: dict[int, ProducerStateEntry] = {}
        self.map_end_offset = 0  # the log offset up to which ``producers`` is up to date
        # open transactions, by first offset (Kafka's ``ongoingTxns``)
        self.ongoing_txns: dict[int, TxnMetadata] = {}
        # completed transactions whose marker may still be above the high watermark (``unreplicatedTxns``)
        self.unreplicated_txns: dict[int, TxnMetadata] = {}
        # producers whose first transactional write here awaits its coordinator's verification
        self.verification_states: dict[int, VerificationStateEntry] = {}

    @_synchronized
    def active_producers(self) -> list[dict]:
        """Every producer this partition knows, as DescribeProducers answers it (Kafka 3.0's
        ``activeProducers``, KIP-664): an open transaction's first offset is what the last stable
        offset stops at, so the admin can find a transaction no coordinator will end."""
        return [
            {
                "producer_id": e.producer_id,
                "producer_epoch": e.epoch,
                "last_sequence": e.last_seq,
                "last_timestamp": e.batches[-1].timestamp if e.batches else -1,
                "coordinator_epoch": e.coordinator_epoch,
                "current_txn_start_offset": e.current_txn_first_offset,
            }
            for e in self.producers.values()
        ]

    # -- KIP-890 part 1: verification before the first transactional write (Kafka 3.6) -----------------

    @_synchronized
    def has_ongoing_transaction(self, producer_id: int) -> bool:
        entry = self.producers.get(producer_id)
        return entry is not None and entry.current_txn_first_offset >= 0

    @_synchronized
    def kafka_3_6_maybe_start_transaction_verification(self, producer_id: int, now_ms: int) -> object | None:
        """The guard a leader's first transactional write of ``producer_id`` must carry back after the
        coordinator verified it (Kafka 3.6's ``maybeStartTransactionVerification``); None when the
        producer has a transaction open here, which the coordinator already knows of (the write that
        opened it was verified), so no question is needed."""
        if self.has_ongoing_transaction(producer_id):
            return None
        entry = self.verification_states.get(producer_id)
        if entry is None:
            entry = self.verification_states[producer_id] = VerificationStateEntry(now_ms)
        return entry.verification_guard

    def _verification_guard(self, producer_id: int) -> object | None:
        entry = self.verification_states.get(producer_id)
        return None if entry is None else entry.verification_guard

    # --8<-- [start:check]
    @_synchronized
    def check(
        self,
        batches: list[ProducerBatch],
        is_from_client: bool = True,
        verification_guard: object | None = None,
        verification_required: bool = False,
    ) -> ProducerBatch | None:
        """Validate an append's idempotent batches against the state; raise Kafka's error for a
        fenced epoch or a sequence gap. Return the earlier write when the (single) batch is a retry
        of one already in the log, so the caller answers with its offsets and writes nothing.

        A control batch (a transaction marker) is checked only when the broker writes it: from a
        client the log refuses it outright. ``verification_required`` (KIP-890 part 1, on): a
        client's transactional batch with no transaction open here must carry the guard its
        verification started with."""
        pending: dict[int, tuple[int, int]] = {}  # producer -> (epoch, last seq) within this append
        for batch in batches:
            entry = self.producers.get(batch.producer_id)
            if batch.is_control:
                if not is_from_client:
                    self._check_end_txn_marker(entry, batch)
                    same_epoch = entry is not None and entry.epoch == batch.epoch
                    pending[batch.producer_id] = (batch.epoch, entry.last_seq if same_epoch else -1)
                continue
            if entry is not None and entry.current_txn_first_offset >= 0 and not batch.is_transactional:
                raise InvalidTxnStateException(
                    f"Expected transactional write from producer {batch.producer_id}: its transaction "
                    f"begun at offset {entry.current_txn_first_offset} is still open"
                )
            epoch, last_seq = pending.get(
                batch.producer_id, (entry.epoch, entry.last_seq) if entry else (-1, -1)
            )
            if entry is not None and batch.epoch < entry.epoch:
                raise ProducerFencedException(
                    f"Producer {batch.producer_id}'s epoch {batch.epoch} is older than the current {entry.epoch}"
                )
            if not is_from_client:
                # the broker's own transactional batch (a TxnOffsetCommit's offsets): Kafka 0.11
                # checks its epoch only, not its sequence (validateSequenceNumbers = isFromClient)
                pending[batch.producer_id] = (batch.epoch, batch.last_seq)
                continue
            if entry is not None and batch.epoch == entry.epoch and batch.producer_id not in pending:
                duplicate = entry.find_duplicate(batch)
                if duplicate is not None:
                    if len(batches) == 1:
                        return duplicate
                    raise DuplicateSequenceNumberException(
                        f"Duplicate batch of producer {batch.producer_id} (sequences "
                        f"{batch.first_seq}..{batch.last_seq}) inside a multi-batch append"
                    )
            if verification_required:  # after the duplicate check, as in Kafka: a retry is answered
                self._kafka_3_6_check_verified(entry, batch, verification_guard)
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

    def _kafka_3_6_check_verified(
        self, entry: ProducerStateEntry | None, batch: ProducerBatch, verification_guard: object | None
    ) -> None:
        """Kafka 3.6's ``batchMissingRequiredVerification``: a transactional batch that would open a
        transaction here is written only with the guard of a verification still current. A
        transaction already open here needs none: the coordinator knew of it when it began, and
        its end marker closes it before any later write could need a new verification."""
        if not batch.is_transactional or (entry is not None and entry.current_txn_first_offset >= 0):
            return
        if verification_guard is None or verification_guard is not self._verification_guard(
            batch.producer_id
        ):
            raise InvalidTxnStateException(
                f"Record of producer {batch.producer_id} was not part of an ongoing transaction"
            )

    @staticmethod
    def _check_end_txn_marker(entry: ProducerStateEntry | None, batch: ProducerBatch) -> None:
        """Kafka's ``appendEndTxnMarker`` checks: a marker from a fenced producer epoch, or from a
        coordinator older than the one that wrote this producer's last marker, is refused."""
        if entry is None or batch.marker is None:
            return
        if batch.epoch < entry.epoch:
            raise ProducerFencedException(
                f"Invalid producer epoch: {batch.epoch} (zombie): {entry.epoch} (current) "
                f"for the transaction marker of producer {batch.producer_id}"
            )
        if entry.coordinator_epoch > batch.marker.coordinator_epoch:
            raise TransactionCoordinatorFencedException(
                f"Invalid coordinator epoch: {batch.marker.coordinator_epoch} (zombie), "
                f"{entry.coordinator_epoch} (current) for producer {batch.producer_id}"
            )

    # --8<-- [start:update]
    @_synchronized
    def update(self, batch: ProducerBatch) -> CompletedTxn | None:
        """Record a batch that was appended (``first_offset``/``last_offset`` filled in). A
        transactional batch may open a transaction; a marker closes one, returned for the caller to
        pass to ``complete_txn`` and the transaction index."""
        entry = self.producers.get(batch.producer_id)
        if entry is None or entry.epoch != batch.epoch:
            # a new epoch starts its sequences afresh; its open transaction and coordinator stay
            entry = ProducerStateEntry(
                batch.producer_id, batch.epoch,
                coordinator_epoch=entry.coordinator_epoch if entry else -1,
                current_txn_first_offset=entry.current_txn_first_offset if entry else -1,
            )  # fmt: skip
            self.producers[batch.producer_id] = entry
        self.map_end_offset = max(self.map_end_offset, batch.last_offset + 1)
        entry.last_offset = batch.last_offset
        if batch.is_transactional or batch.is_control:
            # a transaction opened (its first offset is known) or closed: either way the
            # verification that let it in is used up (Kafka 3.6's updateProducers)
            self.verification_states.pop(batch.producer_id, None)
        if batch.is_control:
            return self._append_end_txn_marker(entry, batch) if batch.marker is not None else None
        entry.batches.append(batch)
        if batch.is_transactional and entry.current_txn_first_offset < 0:
            entry.current_txn_first_offset = batch.first_offset
            self.ongoing_txns[batch.first_offset] = TxnMetadata(batch.producer_id, batch.first_offset)
        return None

    def _append_end_txn_marker(self, entry: ProducerStateEntry, batch: ProducerBatch) -> CompletedTxn:
        """A marker ends the producer's transaction. With none open (the coordinator re-sends its
        markers after a failover) it ends an empty one, at the marker itself, as in Kafka."""
        first_offset = entry.current_txn_first_offset
        if first_offset < 0:
            first_offset = batch.first_offset
            self.ongoing_txns[first_offset] = TxnMetadata(batch.producer_id, first_offset)
        entry.current_txn_first_offset = -1
        entry.coordinator_epoch = batch.marker.coordinator_epoch
        return CompletedTxn(batch.producer_id, first_offset, batch.last_offset, not batch.marker.is_commit)

    @_synchronized
    def complete_txn(self, completed: CompletedTxn) -> int:
        """Move a transaction from open to completed; return the last stable offset just after its
        marker, which the transaction index records (Kafka's ``completeTxn``)."""
        txn = self.ongoing_txns.pop(completed.first_offset, None)
        if txn is None:
            raise ValueError(f"Attempted to complete a transaction which was not started: {completed}")
        txn.last_offset = completed.last_offset
        self.unreplicated_txns[completed.first_offset] = txn
        first_undecided = self.first_undecided_offset()
        return completed.last_offset + 1 if first_undecided is None else first_undecided

    def first_undecided_offset(self) -> int | None:
        """The first offset of the oldest open transaction."""
        return min(self.ongoing_txns, default=None)

    @_synchronized
    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """The first offset a ``read_committed`` consumer may not read yet: the oldest transaction
        still open, or completed by a marker not yet below ``high_watermark`` (a marker that could
        still be lost with a leader is no decision yet). None: everything is stable."""
        for first, txn in list(self.unreplicated_txns.items()):
            if txn.last_offset < high_watermark:
                del self.unreplicated_txns[first]
        return min([*self.ongoing_txns, *self.unreplicated_txns], default=None)

    # --8<-- [end:update]

    # --8<-- [start:truncate_head]
    @_synchronized
    def truncate_head(self, log_start_offset: int) -> None:
        """The log now starts at ``log_start_offset``: forget the producers whose last write is below
        it, with their open transactions, and the completed transactions wholly below it; delete the
        snapshots below it (Kafka 0.11's ``truncateHead``, called by ``Log.maybe_increment_log_start_offset``
        for a DeleteRecords and after retention deletes segments).

        A forgotten producer's next batch is checked as a stranger's: it must begin at sequence 0.
        One that continues its old sequence is refused, as the broker can no longer tell whether
        the batches before it were deleted or lost."""
        evicted = {pid for pid, entry in self.producers.items() if not _is_retained(entry, log_start_offset)}
        for pid in evicted:
            del self.producers[pid]
        self.ongoing_txns = {
            first: txn for first, txn in self.ongoing_txns.items() if txn.producer_id not in evicted
        }
        self.unreplicated_txns = {
            first: txn for first, txn in self.unreplicated_txns.items() if txn.last_offset >= log_start_offset
        }
        self.map_end_offset = max(self.map_end_offset, log_start_offset)
        self.delete_snapshots_before(log_start_offset)

    # --8<-- [end:truncate_head]

    # -- snapshots ------------------------------------------------------------------------------------------

    def snapshot_files(self) -> list[Path]:
        return sorted(self.log_dir.glob("*" + SNAPSHOT_SUFFIX))

    def delete_snapshots_before(self, offset: int) -> None:
        """Delete the snapshots of offsets below ``offset`` (Kafka's ``deleteSnapshotsBefore``)."""
        for path in self.snapshot_files():
            if _snapshot_offset(path) < offset:
                path.unlink(missing_ok=True)

    @_synchronized
    def take_snapshot(self, end_offset: int) -> Path:
        """Write the state as of ``end_offset`` (the log end offset) and drop all but the last two."""
        body = bytearray(struct.pack(">i", len(self.producers)))
        for entry in self.producers.values():
            # Kafka's entry: the last batch's sequences, at the producer's last offset. After a
            # marker that is the marker's offset, read back as a one-offset batch there (Kafka's
            # ``appendEndTxnMarker``); a new epoch with only a marker has no sequence yet (-1).
            last = entry.batches[-1] if entry.batches else None
            last_seq = last.last_seq if last is not None else -1
            at_batch = last is not None and last.last_offset == entry.last_offset
            body += _ENTRY.pack(
                entry.producer_id, entry.epoch, last_seq, entry.last_offset,
                last.last_offset - last.first_offset if at_batch else 0,
                last.timestamp if last is not None else -1,
                entry.coordinator_epoch, entry.current_txn_first_offset,
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
        """Rebuild the state of ``log`` from its start: the newest readable snapshot between its
        start and its end, keeping the producers the log still holds, then the batch headers after
        it. From here on the log's start moves reach this manager (``truncate_head``)."""
        partition_log.producer_state_manager = self
        segments = partition_log.log_segments()  # the log's lock, taken before this one
        with self._lock:
            self.producers.clear()
            self.ongoing_txns.clear()
            self.unreplicated_txns.clear()
            start, end = partition_log.log_start_offset, partition_log.log_end_offset
            self.delete_snapshots_before(start)  # they describe records no longer in the log
            self.map_end_offset = start
            for path in reversed(self.snapshot_files()):
                offset = _snapshot_offset(path)
                if offset > end:
                    path.unlink(missing_ok=True)  # from a log since truncated
                    continue
                try:
                    self._read_snapshot(path, start)
                    self.map_end_offset = offset
                    break
                except CorruptRecordException as e:
                    log.warning("Ignoring producer state snapshot %s: %s", path, e)
                    self.producers.clear()
                    self.ongoing_txns.clear()
            self._replay(segments, self.map_end_offset, end)

    def _read_snapshot(self, path: Path, log_start_offset: int) -> None:
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
            pid, epoch, last_seq, last_offset, delta, ts, coordinator_epoch, txn_first_offset = (
                _ENTRY.unpack_from(body, 4 + i * _ENTRY.size)
            )
            entry = ProducerStateEntry(
                pid, epoch, coordinator_epoch=coordinator_epoch, last_offset=last_offset
            )
            if not _is_retained(entry, log_start_offset):
                continue  # Kafka's loadFromSnapshot: its writes are all below the log start
            if last_seq >= 0:
                first_seq = (last_seq - delta) % _SEQ_MOD
                entry.batches.append(
                    ProducerBatch(pid, epoch, first_seq, last_seq, last_offset - delta, last_offset, ts)
                )
            if txn_first_offset >= 0:  # Kafka's loadProducerEntry: the transaction is open again
                entry.current_txn_first_offset = txn_first_offset
                self.ongoing_txns[txn_first_offset] = TxnMetadata(pid, txn_first_offset)
            self.producers[pid] = entry

    def _replay(self, segments, from_offset: int, log_end_offset: int) -> None:
        """Replay the batch headers of ``segments`` from ``from_offset``. A control batch is read
        whole (its marker); an aborted transaction it ends goes back into its segment's transaction
        index if a crash lost the entry (the index is written after the log)."""
        for segment in segments:
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
                attributes, pid, epoch, base_seq = fields[5], fields[9], fields[10], fields[11]
                if pid < 0:
                    continue
                if attributes & CONTROL_FLAG_MASK:
                    head = records.read_bytes(header.position, header.size)
                delta = header.last_offset - header.base_offset
                batch = replace(
                    _producer_batch(head, 0, pid, epoch, base_seq, delta, header.max_timestamp),
                    first_offset=header.base_offset,
                    last_offset=header.last_offset,
                )
                completed = self.update(batch)
                if completed is not None:
                    last_stable_offset = self.complete_txn(completed)
                    indexed = segment.txn_index.last_offset
                    if indexed is None or indexed < completed.last_offset:
                        segment.update_txn_index(completed, last_stable_offset)
        self.map_end_offset = max(self.map_end_offset, log_end_offset)


def _is_retained(entry: ProducerStateEntry, log_start_offset: int) -> bool:
    """Whether the log still holds the producer's last write (Kafka's ``isProducerRetained``)."""
    return entry.last_offset >= log_start_offset


def _snapshot_offset(path: Path) -> int:
    return int(path.name[: -len(SNAPSHOT_SUFFIX)])


def _seq_before(a: int, b: int) -> bool:
    """Whether sequence ``a`` comes before ``b``, allowing for wrap-around at 2**31."""
    return 0 < (b - a) % _SEQ_MOD < _SEQ_MOD // 2
