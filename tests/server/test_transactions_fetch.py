"""The LSO and read_committed fetches on replica managers in one process (Kafka 0.11, KIP-98): what
a transaction's records, its marker, replication and a change of leader do to them."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.fetch_request import READ_COMMITTED, READ_UNCOMMITTED
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker_batch,
)
from kafka_lite.common.time import MockTime
from kafka_lite.server.replica_manager import FetchMetadata, FetchPartitionRequest, ReplicaManager
from kafka_lite.testing.in_process_replicas import leader_and_isr, replicate, replicated_partition

pytestmark = pytest.mark.unit

TP = ("t", 0)


def _txn(pid: int, seq: int, n: int = 2) -> MemoryRecords:
    return MemoryRecords.with_records(
        [(1000 + i, None, b"v") for i in range(n)],
        producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=True,
    )  # fmt: skip


def _write_marker(leader: ReplicaManager, pid: int, commit: bool, epoch: int = 0) -> Errors:
    control = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    marker = build_end_transaction_marker_batch(pid, epoch, EndTransactionMarker(control, 0), 2000)
    answers: list = []
    leader.append_records(1000, 1, True, {TP: marker}, answers.append, is_from_client=False)
    return answers[0][TP].error


def _fetch(leader: ReplicaManager, isolation_level: int, offset: int = 0):
    got = {}
    fetch = FetchMetadata(
        1, 1 << 20, -1, {TP: FetchPartitionRequest(offset, 1 << 20)}, isolation_level=isolation_level
    )
    leader.fetch_messages(fetch, got.update)
    return got[TP]


def _offsets(result) -> list[int]:
    return [
        o
        for b in MemoryRecords(result.records.read_bytes()).batches()
        for o in range(b.base_offset, b.last_offset + 1)
    ]


@pytest.fixture
def brokers(tmp_path):
    with replicated_partition(tmp_path, MockTime(), TP) as managers:
        yield managers


def _replicate_all(managers):
    leader, *followers = managers
    # the first round brings the records, the second tells the leader the followers have them (the
    # HW moves), the third brings the followers that HW
    for _ in range(3):
        for follower in followers:
            replicate(leader, follower, TP)


def test_read_committed_stops_at_the_lso_until_the_commit(brokers):
    leader = brokers[0]
    leader.append_records(
        1000, 1, False, {TP: MemoryRecords.with_records([(1, None, b"plain")])}, lambda _: None
    )
    leader.append_records(1000, 1, False, {TP: _txn(7, 0)}, lambda _: None)  # offsets 1-2, open
    _replicate_all(brokers)
    partition = leader.get_partition(TP)
    assert partition.high_watermark() == 3 and partition.last_stable_offset() == 1

    committed = _fetch(leader, READ_COMMITTED)
    assert committed.last_stable_offset == 1 and _offsets(committed) == [0]
    assert committed.aborted_transactions == []
    uncommitted = _fetch(leader, READ_UNCOMMITTED)
    assert _offsets(uncommitted) == [0, 1, 2] and uncommitted.last_stable_offset == -1
    assert uncommitted.aborted_transactions is None

    assert _write_marker(leader, 7, commit=True) is Errors.NONE  # offset 3
    assert partition.last_stable_offset() == 1, "the marker is not yet below the high watermark"
    _replicate_all(brokers)
    assert partition.high_watermark() == partition.last_stable_offset() == 4
    committed = _fetch(leader, READ_COMMITTED)
    assert _offsets(committed) == [0, 1, 2, 3] and committed.aborted_transactions == []


def test_an_abort_is_named_in_the_fetch_and_survives_a_new_leader(brokers):
    leader, follower, other = brokers
    leader.append_records(1000, 1, False, {TP: _txn(7, 0)}, lambda _: None)  # 0-1, aborted below
    leader.append_records(1000, 1, False, {TP: _txn(8, 0)}, lambda _: None)  # 2-3, still open
    assert _write_marker(leader, 7, commit=False) is Errors.NONE  # 4
    _replicate_all(brokers)
    result = _fetch(leader, READ_COMMITTED)
    assert result.last_stable_offset == 2
    assert result.aborted_transactions == [{"producer_id": 7, "first_offset": 0}]

    # broker 1 takes over: what it replicated gives it the same LSO and aborted list
    for manager in brokers:
        manager.become_leader_or_follower(leader_and_isr(TP, 1, [1, 2], [0, 1, 2], leader_epoch=2))
    new_leader = follower.get_partition(TP)
    assert new_leader.last_stable_offset() == 2
    assert follower.get_partition(TP).log.collect_aborted_transactions(0, 5)[0].producer_id == 7
    assert _write_marker(follower, 8, commit=False) is Errors.NONE  # 5: producer 8 aborts too
    replicate(follower, other, TP)
    replicate(follower, other, TP)
    result = _fetch(follower, READ_COMMITTED)
    assert result.last_stable_offset == 6
    assert result.aborted_transactions == [
        {"producer_id": 7, "first_offset": 0},
        {"producer_id": 8, "first_offset": 2},
    ]


def test_a_fenced_marker_leaves_the_log_and_the_transaction_as_they_were(brokers):
    leader = brokers[0]
    leader.append_records(
        1000, 1, False,
        {TP: MemoryRecords.with_records([(1, None, b"v")], producer_id=7, producer_epoch=3, base_sequence=0, is_transactional=True)},
        lambda _: None,
    )  # fmt: skip
    log = leader.get_partition(TP).log
    end = log.log_end_offset
    assert _write_marker(leader, 7, commit=True, epoch=2) is Errors.INVALID_PRODUCER_EPOCH
    assert log.log_end_offset == end
    assert leader.get_partition(TP).producer_state.producers[7].current_txn_first_offset == 0


def test_a_read_committed_fetch_waits_for_the_lso(brokers):
    leader = brokers[0]
    leader.append_records(1000, 1, False, {TP: _txn(7, 0)}, lambda _: None)
    _replicate_all(brokers)
    got = {}
    fetch = FetchMetadata(
        1,
        1 << 20,
        -1,
        {TP: FetchPartitionRequest(0, 1 << 20)},
        max_wait_ms=10_000,
        isolation_level=READ_COMMITTED,
    )
    leader.fetch_messages(fetch, got.update)
    assert got == {}, "the HW is past the records, but the LSO is not: the fetch waits"
    _write_marker(leader, 7, commit=True)
    assert got == {}
    _replicate_all(brokers)  # the marker reaches the HW: the LSO moves, and the fetch completes
    assert TP in got and got[TP].last_stable_offset == 3
