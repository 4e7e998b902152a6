"""The producer state follows the log start (Kafka 0.11's ``ProducerStateManager.truncateHead``): a
producer whose every write is below a new log start, moved by DeleteRecords or by retention, is
forgotten with its transactions and the snapshots below the start; one with a write at or above it
stays. Driven through a leader's replica manager on a ``MockTime``, as a Produce and a DeleteRecords
reach it."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker_batch,
)
from kafka_lite.common.time import MockTime
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.producer_state_manager import ProducerStateManager
from kafka_lite.testing.in_process_replicas import in_process_replica_manager, leader_and_isr

pytestmark = pytest.mark.unit
TP = ("orders", 0)


def _batch(
    pid: int, seq: int, n: int = 2, transactional: bool = False, timestamp: int = 1000
) -> MemoryRecords:
    return MemoryRecords.with_records(
        [(timestamp + i, None, b"v") for i in range(n)],
        producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=transactional,
    )  # fmt: skip


@pytest.fixture
def time_():
    return MockTime()


@pytest.fixture
def leader(tmp_path, time_):
    """Broker 1 leading ``orders-0`` alone, so its high watermark follows its log end."""
    manager = in_process_replica_manager(tmp_path, 1, time_, **{"log.segment.bytes": 200})
    manager.become_leader_or_follower(leader_and_isr(TP, leader=1, isr=[1], replicas=[1]))
    yield manager
    manager.shutdown()


def _produce(leader, records: MemoryRecords, is_from_client: bool = True):
    answers: list = []
    leader.append_records(1000, 1, False, {TP: records}, answers.append, is_from_client=is_from_client)
    return answers[0][TP]


def _delete_records(leader, offset: int):
    answers: list = []
    leader.delete_records(1000, {TP: offset}, answers.append)
    return answers[0][TP]


def _state(leader) -> ProducerStateManager:
    return leader.get_partition(TP).producer_state


def test_delete_records_past_a_producers_writes_forgets_it_and_refuses_its_next_sequence(leader):
    assert _produce(leader, _batch(7, 0)).base_offset == 0  # producer 7: offsets 0-1, sequences 0-1
    assert _produce(leader, _batch(8, 0)).base_offset == 2  # producer 8: offsets 2-3
    assert _delete_records(leader, 2).error is Errors.NONE
    assert set(_state(leader).producers) == {8}, "producer 7 wrote nothing at or above the log start 2"

    # Producer 7 goes on with sequence 2. The broker cannot tell that from a producer whose batches
    # 0-1 were lost: Kafka 0.11 refuses a sequence other than 0 from a producer it does not know.
    refused = _produce(leader, _batch(7, 2))
    assert refused.error is Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, refused
    assert leader.get_partition(TP).log.log_end_offset == 4, "nothing of the refused batch was written"
    # Producer 8 still has records in the log: its next sequence is accepted as before.
    assert _produce(leader, _batch(8, 2)).error is Errors.NONE
    assert _state(leader).producers[8].last_seq == 3


def test_a_producer_whose_last_write_is_at_the_log_start_is_kept(leader):
    _produce(leader, _batch(7, 0, n=3))  # offsets 0-2
    _delete_records(leader, 2)  # the log start falls on producer 7's last record
    assert set(_state(leader).producers) == {7}
    accepted = _produce(leader, _batch(7, 3))
    assert (accepted.error, accepted.base_offset) == (Errors.NONE, 3)
    _delete_records(leader, 3)
    assert set(_state(leader).producers) == {7}, "offsets 3-4 are still in the log"


def test_a_marker_is_a_write_an_open_transaction_below_the_start_leaves_with_its_producer(leader):
    _produce(leader, _batch(5, 0, transactional=True))  # producer 5 opens a transaction at 0 (0-1)
    marker = build_end_transaction_marker_batch(5, 0, EndTransactionMarker(ControlRecordType.COMMIT, 3), 2000)
    _produce(leader, marker, is_from_client=False)  # its marker at 2
    _produce(leader, _batch(6, 0, transactional=True))  # producer 6 opens at 3 (3-4), still open
    partition = leader.get_partition(TP)
    assert partition.last_stable_offset() == 3

    _delete_records(leader, 2)
    assert set(_state(leader).producers) == {5, 6}, "producer 5's marker, at 2, is still in the log"
    assert _state(leader).producers[5].coordinator_epoch == 3

    _delete_records(leader, 5)
    assert set(_state(leader).producers) == set(), "producer 6's open transaction is below the start too"
    assert _state(leader).ongoing_txns == {} and _state(leader).unreplicated_txns == {}
    assert partition.last_stable_offset() == partition.high_watermark() == 5


def test_retention_deleting_segments_forgets_producers_and_the_snapshots_below_the_start(leader, time_):
    log = leader.get_partition(TP).log
    log.config = LogConfig({"segment.bytes": 200, "retention.ms": 60_000})
    for seq in range(0, 8, 2):  # ~90-byte batches in 200-byte segments: the log rolls as it goes,
        _produce(leader, _batch(3, seq))  # and each roll snapshots the producer state
    _produce(leader, _batch(4, 0, timestamp=time_.milliseconds()))  # a fresh record, in a new segment
    snapshots = [_offset(p) for p in _state(leader).snapshot_files()]
    assert min(snapshots) < log.active_segment.base_offset == 8, snapshots

    # producer 3's records carry timestamps from 1970: retention deletes every segment before the active one
    assert log.delete_old_segments() == 2
    assert log.log_start_offset == 8
    assert set(_state(leader).producers) == {4}, "producer 3 wrote only in the deleted segments"
    assert [_offset(p) for p in _state(leader).snapshot_files()] == [8], (
        "the snapshots below the new log start are deleted"
    )


def _offset(path) -> int:
    return int(path.name.split(".")[0])


def test_a_snapshot_above_the_start_loads_without_the_producers_below_it(leader):
    _produce(leader, _batch(1, 0))  # offsets 0-1
    _produce(leader, _batch(2, 0))  # offsets 2-3
    partition = leader.get_partition(TP)
    log = partition.log
    _state(leader).take_snapshot(log.log_end_offset)  # at 4: it names producers 1 and 2
    _delete_records(leader, 2)
    assert [p.name for p in _state(leader).snapshot_files()] == ["00000000000000000004.snapshot"]

    # A broker restarting from that snapshot (Kafka's loadFromSnapshot) keeps only what the log holds.
    reloaded = ProducerStateManager(log.dir)
    reloaded.load(log)
    assert set(reloaded.producers) == {2}
    assert log.producer_state_manager is reloaded, "the log's start moves now reach the state loaded last"
