"""Transactions below the coordinator (Kafka 0.11, KIP-98): the marker's bytes, the transaction
index, the producer state's open and completed transactions, and the log's aborted-transaction
lookup."""

from __future__ import annotations

import struct

import pytest

from kafka_lite.common.errors import (
    CorruptRecordException,
    InvalidTxnStateException,
    ProducerFencedException,
    TransactionCoordinatorFencedException,
)
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.crc import crc32c
from kafka_lite.common.record.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker_batch,
)
from kafka_lite.common.time import MockTime
from kafka_lite.consumer.internals.fetcher import AbortedTransactions
from kafka_lite.log.log import Log
from kafka_lite.log.log_cleaner import Cleaner, LogToClean
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.producer_state_manager import CompletedTxn, ProducerStateManager, scan_producer_batches
from kafka_lite.log.transaction_index import ENTRY_SIZE, AbortedTxn, TransactionIndex
from kafka_lite.server.replica_manager import ReplicaManager
from kafka_lite.testing.in_process_replicas import records_bytes

pytestmark = pytest.mark.unit


# -- the marker ----------------------------------------------------------------------------------------------


def test_the_marker_batch_has_kafkas_exact_bytes():
    records = build_end_transaction_marker_batch(
        producer_id=5,
        producer_epoch=1,
        marker=EndTransactionMarker(ControlRecordType.COMMIT, 3),
        timestamp=1000,
    )
    # The one record, as Kafka's DefaultRecord writes it: length 16 (zig-zag 0x20), attributes 0,
    # timestamp delta 0, offset delta 0, key of 4 bytes (version 0, type 1 COMMIT), value of 6 bytes
    # (version 0, coordinator epoch 3), no headers.
    record = bytes.fromhex("2000000008000000010c00000000000300")
    after_crc = struct.pack(
        ">hiqqqhii",
        0x30,  # attributes: transactional (0x10) and control (0x20), no codec, CreateTime
        0,  # lastOffsetDelta
        1000, 1000,  # first and max timestamp
        5, 1, -1,  # producer id, epoch, no sequence
        1,  # one record
    ) + record  # fmt: skip
    head = struct.pack(">qiib", 0, 4 + 1 + 4 + len(after_crc), -1, 2)  # base offset, length, epoch, magic
    expected = head + struct.pack(">I", crc32c(after_crc)) + after_crc
    assert bytes(records.buffer()) == expected
    (batch,) = records.batches()
    assert batch.is_control_batch and batch.is_transactional
    (r,) = batch
    assert EndTransactionMarker.from_record(r) == EndTransactionMarker(ControlRecordType.COMMIT, 3)


def test_control_record_keys_parse_as_kafka_does():
    assert ControlRecordType.parse(b"\x00\x00\x00\x00") is ControlRecordType.ABORT
    assert ControlRecordType.parse(b"\x00\x00\x00\x01") is ControlRecordType.COMMIT
    assert ControlRecordType.parse(b"\x00\x00\x00\x07") is ControlRecordType.UNKNOWN  # skipped by readers
    with pytest.raises(CorruptRecordException, match="at least 4 bytes, but found only 2"):
        ControlRecordType.parse(b"\x00\x00")
    with pytest.raises(CorruptRecordException, match="Invalid version found for control record key: -1"):
        ControlRecordType.parse(b"\xff\xff\x00\x01")
    with pytest.raises(CorruptRecordException, match="at least 6 bytes"):
        EndTransactionMarker.deserialize_value(ControlRecordType.ABORT, b"\x00\x00")
    with pytest.raises(ValueError, match="Invalid control record type"):
        EndTransactionMarker(ControlRecordType.UNKNOWN, 0)


# -- the transaction index ----------------------------------------------------------------------------------------


def test_txn_index_round_trip_truncation_and_search(tmp_path):
    path = tmp_path / "00000000000000000010.txnindex"
    index = TransactionIndex(10, path)
    assert not path.exists(), "created only at the first aborted transaction"
    entries = [AbortedTxn(1, 10, 14, 15), AbortedTxn(2, 12, 20, 21), AbortedTxn(3, 25, 30, 31)]
    for e in entries:
        index.append(e)
    with pytest.raises(ValueError, match="must increase sequentially"):
        index.append(AbortedTxn(4, 26, 30, 31))
    assert path.stat().st_size == 3 * ENTRY_SIZE == 102
    assert path.read_bytes()[:ENTRY_SIZE] == struct.pack(">hqqqq", 0, 1, 10, 14, 15)
    index.close()

    reopened = TransactionIndex(10, path)
    assert reopened.all_aborted_txns() == entries and reopened.last_offset == 30
    # overlapping [13, 22): the first two; the third's LSO (31) reaches 22: later segments hold none
    found = reopened.collect_aborted_txns(13, 22)
    assert found.aborted_transactions == entries[:2] and found.is_complete
    found = reopened.collect_aborted_txns(0, 15)
    assert found.aborted_transactions == entries[:1] and found.is_complete  # LSO 15 >= 15: stop there
    found = reopened.collect_aborted_txns(13, 40)  # no LSO reaches 40: the next segment must be searched
    assert found.aborted_transactions == entries and not found.is_complete

    reopened.truncate_to(20)  # the marker at 20 is cut: it and everything after go
    assert reopened.all_aborted_txns() == entries[:1] and reopened.last_offset == 14
    assert path.stat().st_size == ENTRY_SIZE
    reopened.append(AbortedTxn(5, 16, 18, 19))  # appends follow the truncated end
    assert [e.producer_id for e in reopened.all_aborted_txns()] == [1, 5]
    reopened.delete()
    assert not path.exists()


# -- producer state ---------------------------------------------------------------------------------------------


def _txn(pid, epoch, seq, n=2, offset=0):
    return MemoryRecords.with_records(
        [(1000 + i, None, b"v") for i in range(n)],
        producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True, base_offset=offset,
    )  # fmt: skip


def _marker(pid, epoch, commit, coordinator_epoch=0, offset=0):
    control = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    return build_end_transaction_marker_batch(
        pid, epoch, EndTransactionMarker(control, coordinator_epoch), 2000, base_offset=offset
    )


def _batches(records, offset):
    """The producer batches of ``records`` as if appended at ``offset``."""
    from dataclasses import replace

    out = []
    for batch in scan_producer_batches(records.buffer()).values():
        span = batch.last_seq - batch.first_seq if not batch.is_control else 0
        out.append(replace(batch, first_offset=offset, last_offset=offset + span))
        offset += span + 1
    return out


def _apply(state, records, offset):
    completed = []
    for batch in _batches(records, offset):
        done = state.update(batch)
        if done is not None:
            completed.append((done, state.complete_txn(done)))
    return completed


def test_the_first_unstable_offset_follows_transactions_as_they_open_and_end(tmp_path):
    state = ProducerStateManager(tmp_path)
    assert state.first_unstable_offset(high_watermark=0) is None
    _apply(state, _txn(1, 0, 0), 0)  # producer 1 opens at 0 (offsets 0-1)
    _apply(state, _txn(2, 0, 0), 2)  # producer 2 opens at 2 (offsets 2-3)
    assert state.first_unstable_offset(high_watermark=4) == 0
    assert state.producers[1].current_txn_first_offset == 0
    (completed, lso) = _apply(state, _marker(1, 0, commit=True), 4)[0]
    assert completed == CompletedTxn(1, 0, 4, is_aborted=False)
    assert lso == 2, "the LSO after the marker: producer 2's transaction is still open"
    # the marker at 4 is above the high watermark 4: the decision could still be lost with the leader
    assert state.first_unstable_offset(high_watermark=4) == 0
    assert state.first_unstable_offset(high_watermark=5) == 2  # replicated: only producer 2 holds it
    (completed, lso) = _apply(state, _marker(2, 0, commit=False), 5)[0]
    assert completed.is_aborted and lso == 6
    assert state.first_unstable_offset(high_watermark=6) is None


def test_a_marker_with_no_open_transaction_ends_an_empty_one(tmp_path):
    state = ProducerStateManager(tmp_path)
    ((completed, lso),) = _apply(state, _marker(9, 0, commit=False), 7)
    assert completed == CompletedTxn(9, 7, 7, is_aborted=True) and lso == 8


def test_markers_are_fenced_by_producer_and_coordinator_epoch(tmp_path):
    state = ProducerStateManager(tmp_path)
    _apply(state, _txn(1, 3, 0), 0)
    _apply(state, _marker(1, 3, commit=True, coordinator_epoch=5), 2)
    with pytest.raises(ProducerFencedException, match="Invalid producer epoch: 2 \\(zombie\\): 3"):
        state.check(_batches(_marker(1, 2, commit=False, coordinator_epoch=5), 3), is_from_client=False)
    with pytest.raises(TransactionCoordinatorFencedException, match="Invalid coordinator epoch: 4"):
        state.check(_batches(_marker(1, 3, commit=False, coordinator_epoch=4), 3), is_from_client=False)
    assert (
        state.check(_batches(_marker(1, 3, commit=False, coordinator_epoch=5), 3), is_from_client=False)
        is None
    )
    # a non-transactional write inside an open transaction is refused
    _apply(state, _txn(1, 3, 2), 3)
    plain = MemoryRecords.with_records([(1, None, b"x")], producer_id=1, producer_epoch=3, base_sequence=4)
    with pytest.raises(InvalidTxnStateException, match="Expected transactional write"):
        state.check(_batches(plain, 5))


def _log(tmp_path, **config) -> Log:
    return Log(tmp_path / "t-0", LogConfig(**config))


def _append(log, state, records, is_from_client=True):
    """What the partition does: append, then update the state and the transaction index."""
    info = log.append(records, is_from_client=is_from_client)
    for done, lso in _apply(state, records, info.first_offset):
        log.update_txn_index(done, lso)
    return info


def test_snapshot_and_load_keep_an_open_transaction(tmp_path):
    log = _log(tmp_path)
    state = ProducerStateManager(log.dir)
    _append(log, state, _txn(1, 0, 0))  # opens at 0
    _append(log, state, _marker(1, 0, commit=False, coordinator_epoch=2), is_from_client=False)
    _append(log, state, _txn(1, 0, 2))  # opens again at 3
    state.take_snapshot(log.log_end_offset)
    _append(log, state, _txn(2, 0, 0))  # after the snapshot: only in the log (opens at 5)

    reloaded = ProducerStateManager(log.dir)
    reloaded.load(log)
    assert reloaded.producers[1].current_txn_first_offset == 3
    assert reloaded.producers[1].coordinator_epoch == 2
    assert reloaded.producers[2].current_txn_first_offset == 5
    assert reloaded.first_unstable_offset(high_watermark=log.log_end_offset) == 3

    # with no snapshot at all, the log's batch headers, markers included, give the same state
    for path in reloaded.snapshot_files():
        path.unlink()
    replayed = ProducerStateManager(log.dir)
    replayed.load(log)
    assert replayed.producers[1].current_txn_first_offset == 3
    assert replayed.producers[1].coordinator_epoch == 2
    assert replayed.first_unstable_offset(high_watermark=log.log_end_offset) == 3


def test_collect_aborted_transactions_spans_segments(tmp_path):
    log = _log(tmp_path, segment_bytes=300)
    state = ProducerStateManager(log.dir)
    _append(log, state, _txn(1, 0, 0))  # 0-1, producer 1 (aborted below)
    _append(log, state, _txn(2, 0, 0))  # 2-3, producer 2 (committed below)
    _append(log, state, _txn(3, 0, 0))  # 4-5, producer 3 (aborted below)
    _append(log, state, _marker(1, 0, commit=False), is_from_client=False)  # 6
    _append(log, state, _marker(2, 0, commit=True), is_from_client=False)  # 7
    _append(log, state, _marker(3, 0, commit=False), is_from_client=False)  # 8
    assert log.number_of_segments > 1, "the markers and the transactions they end sit in different segments"
    found = log.collect_aborted_transactions(0, log.log_end_offset)
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in found] == [(1, 0, 6), (3, 4, 8)]
    assert [t.producer_id for t in log.collect_aborted_transactions(2, 4)] == [1]  # producer 3 starts at 4
    # [7, 8) holds only the commit marker, but producer 3's transaction (4 to its marker at 8) spans it
    assert [t.producer_id for t in log.collect_aborted_transactions(7, 8)] == [3]
    # a truncation below the last marker removes its entry with it
    log.truncate_to(8)
    assert [t.producer_id for t in log.collect_aborted_transactions(0, 8)] == [1]


def test_a_client_may_not_append_a_control_batch(tmp_path):
    log = _log(tmp_path)
    log.append(MemoryRecords.with_records([(1, None, b"x")]))
    with pytest.raises(CorruptRecordException, match="Clients are not allowed to write control records"):
        log.append(_marker(1, 0, commit=True))
    assert log.log_end_offset == 1 and log.size_in_bytes() == log.active_segment.size_in_bytes()
    log.append(_marker(1, 0, commit=True), is_from_client=False)  # the broker may
    assert log.log_end_offset == 2


def test_a_lost_txn_index_entry_is_rebuilt_when_the_producer_state_is_replayed(tmp_path):
    log = _log(tmp_path)
    state = ProducerStateManager(log.dir)
    _append(log, state, _txn(1, 0, 0))
    _append(log, state, _marker(1, 0, commit=False), is_from_client=False)  # 2
    log.close()
    (index_file,) = log.dir.glob("*.txnindex")
    index_file.unlink()  # a crash between the marker's append and its index entry
    reopened = _log(tmp_path)
    assert reopened.collect_aborted_transactions(0, 3) == []
    ProducerStateManager(reopened.dir).load(reopened)  # what the partition does as it opens the log
    assert reopened.collect_aborted_transactions(0, 3) == [AbortedTxn(1, 0, 2, 3)]
    reopened.close()
    again = _log(tmp_path)
    ProducerStateManager(again.dir).load(again)  # the entry is there already: not added twice
    assert again.collect_aborted_transactions(0, 3) == [AbortedTxn(1, 0, 2, 3)]


# -- the cleaner and transactions (Kafka 0.11's transactional cleaning) -----------------------------------------


def _txn_keyed(pid, *keys, value=b"v"):
    return MemoryRecords.with_records(
        [(1000, k, value) for k in keys], producer_id=pid, producer_epoch=0, base_sequence=0,
        is_transactional=True,
    )  # fmt: skip


def _transactional_log(tmp_path):
    """Two aborted transactions and a committed one, rolled so that all of it is cleanable."""
    log = _log(tmp_path, segment_bytes=300, cleanup_policy="compact")
    state = ProducerStateManager(log.dir)
    _append(log, state, _txn_keyed(1, b"a", b"b", value=b"aborted"))  # 0-1, aborted
    _append(log, state, _marker(1, 0, commit=False), is_from_client=False)  # 2
    _append(log, state, _txn_keyed(2, b"a", value=b"aborted"))  # 3, aborted
    _append(log, state, _marker(2, 0, commit=False), is_from_client=False)  # 4
    _append(log, state, _txn_keyed(3, b"c", value=b"committed"))  # 5, committed
    _append(log, state, _marker(3, 0, commit=True), is_from_client=False)  # 6
    log.roll()
    return log, state


def _clean(log):
    Cleaner(MockTime()).clean(LogToClean(("t", 0), log, 0, log.log_end_offset, 0, log.size_in_bytes()))


def _read_committed(log) -> list[tuple[int, bytes, bytes]]:
    """What a read_committed consumer gets from the whole log: Fetch by Fetch, the broker's aborted
    transactions for each read, the consumer's filtering of them, and control batches skipped."""
    out, offset = [], log.log_start_offset
    while offset < log.log_end_offset:
        records = log.read(offset, 1 << 20).records
        aborted = AbortedTransactions(("t", 0), ReplicaManager._aborted_transactions(log, offset, records))
        batches = list(MemoryRecords(records_bytes(records)).batches())
        for batch in batches:
            if not aborted.skips(batch) and not batch.is_control_batch:
                out.extend((r.offset, r.key, r.value) for r in batch if r.offset >= offset)
        offset = batches[-1].last_offset + 1
    return out


def _batches_in(log):
    return [
        b
        for s in log.log_segments()
        for b in MemoryRecords(records_bytes(log.read(s.base_offset, 1 << 20).records)).batches()
    ]


def test_after_cleaning_a_read_committed_read_returns_no_aborted_record(tmp_path):
    log, state = _transactional_log(tmp_path)
    # The producers are still active: each one's last batch keeps its last record (Kafka's
    # retainLastBatchSequence), so an aborted record stays in the log and only the transaction
    # index, rebuilt by the cleaner, keeps it from a read_committed consumer.
    log.producer_state_manager = state
    before = log.collect_aborted_transactions(0, log.log_end_offset)
    assert _read_committed(log) == [(5, b"c", b"committed")]

    _clean(log)

    assert _read_committed(log) == [(5, b"c", b"committed")]
    assert log.collect_aborted_transactions(0, log.log_end_offset) == before
    kept = [(r.offset, r.value) for b in _batches_in(log) if not b.is_control_batch for r in b]
    assert kept == [(1, b"aborted"), (3, b"aborted"), (5, b"committed")], "the last sequences stay"


def test_the_cleaner_drops_aborted_records_and_keeps_the_markers_as_control_batches(tmp_path):
    log, _ = _transactional_log(tmp_path)

    _clean(log)

    abort, commit = bytes(4), b"\x00\x00\x00\x01"  # a marker's key: version 0, then its type
    kept = [
        (r.offset, r.key, b.is_control_batch, b.is_transactional, b.producer_id)
        for b in _batches_in(log)
        for r in b
    ]
    # No producer is active, so the aborted records all go; the two ABORT markers have equal keys
    # and both stay, as does the COMMIT marker, each still a transactional control batch.
    assert kept == [
        (2, abort, True, True, 1),
        (4, abort, True, True, 2),
        (5, b"c", False, True, 3),
        (6, commit, True, True, 3),
    ]
    assert _read_committed(log) == [(5, b"c", b"committed")]
    assert [(t.producer_id, t.first_offset) for t in log.collect_aborted_transactions(0, 7)] == [
        (1, 0),
        (2, 3),
    ]


def test_committed_transactional_records_compact_by_key_as_others_do(tmp_path):
    log = _log(tmp_path, segment_bytes=300, cleanup_policy="compact")
    state = ProducerStateManager(log.dir)
    _append(log, state, _txn_keyed(1, b"a", b"b", value=b"first"))  # 0-1
    _append(log, state, _marker(1, 0, commit=True), is_from_client=False)  # 2
    _append(log, state, _txn_keyed(2, b"a", value=b"second"))  # 3
    _append(log, state, _marker(2, 0, commit=True), is_from_client=False)  # 4
    _append(log, state, MemoryRecords.with_records([(1000, b"c", b"plain")]))  # 5
    _append(log, state, _txn_keyed(3, b"a", value=b"aborted"))  # 6: no later value of a
    _append(log, state, _marker(3, 0, commit=False), is_from_client=False)  # 7
    log.roll()

    _clean(log)

    kept = [
        (r.offset, r.key, r.value, b.is_transactional, b.producer_id, r.sequence)
        for b in _batches_in(log)
        if not b.is_control_batch
        for r in b
    ]
    # Producer 1's batch lost its first record: built again, it keeps its flags and producer
    # fields, and its record keeps its offset and sequence.
    assert kept == [
        (1, b"b", b"first", True, 1, 1),
        (3, b"a", b"second", True, 2, 0),
        (5, b"c", b"plain", False, -1, -1),
    ]
    assert _read_committed(log) == [(1, b"b", b"first"), (3, b"a", b"second"), (5, b"c", b"plain")]


# -- KIP-890 part 1: the verification guard (Kafka 3.6) -------------------------------------------------------


def test_a_transactional_write_that_would_open_a_transaction_needs_its_verifications_guard(tmp_path):
    state = ProducerStateManager(tmp_path)
    first = _batches(_txn(1, 0, 0), 0)
    with pytest.raises(InvalidTxnStateException, match="not part of an ongoing transaction"):
        state.check(first, verification_required=True)  # never verified
    guard = state.kafka_3_6_maybe_start_transaction_verification(1, now_ms=0)
    assert state.kafka_3_6_maybe_start_transaction_verification(1, now_ms=5) is guard, (
        "one entry per producer"
    )
    with pytest.raises(InvalidTxnStateException):
        state.check(first, verification_guard=object(), verification_required=True)  # someone else's guard
    assert state.check(first, verification_guard=guard, verification_required=True) is None
    _apply(state, _txn(1, 0, 0), 0)  # the transaction opens here: the guard is used up
    assert state.kafka_3_6_maybe_start_transaction_verification(1, now_ms=0) is None, "open: no question"
    assert state.check(_batches(_txn(1, 0, 2), 2), verification_required=True) is None, (
        "later writes need none"
    )
    assert state.check(first, verification_required=False) is not None, (
        "off: Kafka 0.11's check (a duplicate)"
    )


def test_an_abort_marker_between_verification_and_append_voids_the_guard(tmp_path):
    """The ABA case of Kafka 3.6's comment: verified while the transaction was open, aborted, and the
    stale verification's write arrives after the marker. The marker removed the entry, so the guard
    it carries is no longer the partition's."""
    state = ProducerStateManager(tmp_path)
    guard = state.kafka_3_6_maybe_start_transaction_verification(1, now_ms=0)
    _apply(state, _marker(1, 0, commit=False), 0)  # the coordinator's ABORT, with no data here
    late = _batches(_txn(1, 0, 0), 1)
    with pytest.raises(InvalidTxnStateException):
        state.check(late, verification_guard=guard, verification_required=True)
    fresh = state.kafka_3_6_maybe_start_transaction_verification(1, now_ms=0)
    assert fresh is not guard
    assert state.check(late, verification_guard=fresh, verification_required=True) is None
