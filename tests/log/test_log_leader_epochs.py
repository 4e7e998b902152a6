"""Log and its leader epoch cache (Kafka 0.11, KIP-101): stamped by a leader's append, taken from the
batches by a follower's, trimmed by truncation, retention and reopening."""

from __future__ import annotations

import pytest

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_lite.common.time import MockTime
from kafka_lite.log.epoch.leader_epoch_checkpoint_file import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    EpochEntry,
    LeaderEpochCheckpointFile,
)
from kafka_lite.log.log import Log
from kafka_lite.log.log_config import LogConfig

pytestmark = pytest.mark.unit
BASE_TS = 1_500_000_000_000


def _batch(n: int, base_offset: int = 0, epoch: int = -1, ts: int = BASE_TS) -> bytes:
    """One v2 batch of ``n`` records, its header saying ``base_offset`` and ``epoch``."""
    builder = MemoryRecordsBuilder(base_offset=base_offset, partition_leader_epoch=epoch)
    for i in range(n):
        builder.append(ts + i, b"k%d" % i, b"v" * 40)
    return bytes(builder.build().buffer())


def _log(directory, time=None, **config) -> Log:
    return Log(directory / "orders-0", LogConfig(config), time=time or MockTime())


def _stored_batches(log: Log) -> list[tuple[int, int]]:
    """(base offset, partitionLeaderEpoch) of every batch the log holds, as read back from its segments."""
    out = []
    for segment in log.log_segments():
        data = segment.read(segment.base_offset, None, 1 << 30, min_one_message=True)
        if data is None:
            continue
        for batch in MemoryRecords(data.records.read_bytes()).batches():
            batch.ensure_valid()  # the epoch is outside the CRC: stamping it keeps every checksum valid
            out.append((batch.base_offset, batch.partition_leader_epoch))
    return out


def test_a_leader_stamps_its_epoch_into_every_batch_and_the_cache(tmp_path):
    log = _log(tmp_path)
    # two batches in one append (a produce request may carry several), both written with no epoch
    log.append(MemoryRecords(_batch(2) + _batch(3)), leader_epoch=4)
    log.append(MemoryRecords(_batch(1)), leader_epoch=4)
    log.append(MemoryRecords(_batch(2)), leader_epoch=6)  # a new leader: a new epoch at the LEO
    assert _stored_batches(log) == [(0, 4), (2, 4), (5, 4), (6, 6)]
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(4, 0), EpochEntry(6, 6)]
    assert log.leader_epoch_cache.end_offset_for(4) == 6
    assert log.leader_epoch_cache.end_offset_for(6) == log.log_end_offset == 8
    checkpoint = (tmp_path / "orders-0" / LEADER_EPOCH_CHECKPOINT_FILE).read_text()
    assert checkpoint == "0\n2\n4 0\n6 6\n"


def test_a_leader_with_no_epoch_stamps_none_and_assigns_nothing(tmp_path):
    log = _log(tmp_path)
    log.append(MemoryRecords(_batch(2, epoch=9)))  # whatever the producer wrote is overwritten
    assert _stored_batches(log) == [(0, -1)]
    assert log.leader_epoch_cache.epoch_entries() == []


def test_a_follower_takes_the_epochs_its_leader_stamped(tmp_path):
    log = _log(tmp_path)
    fetched = (
        _batch(2, base_offset=0, epoch=-1)  # written by a leader before Kafka 0.11: no epoch
        + _batch(2, base_offset=2, epoch=1)
        + _batch(3, base_offset=4, epoch=1)
        + _batch(1, base_offset=7, epoch=3)
    )
    log.append(MemoryRecords(fetched), assign_offsets=False)
    log.append(MemoryRecords(_batch(2, base_offset=8, epoch=3)), assign_offsets=False)
    log.append(MemoryRecords(_batch(1, base_offset=10, epoch=5)), assign_offsets=False)
    assert _stored_batches(log) == [(0, -1), (2, 1), (4, 1), (7, 3), (8, 3), (10, 5)]  # kept as sent
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(1, 2), EpochEntry(3, 7), EpochEntry(5, 10)]


def test_truncation_drops_the_epochs_that_began_at_or_after_the_new_end(tmp_path):
    log = _log(tmp_path, segment_bytes=400)
    for epoch in (0, 0, 2, 2, 5, 5):
        log.append(MemoryRecords(_batch(2)), leader_epoch=epoch)
    assert log.number_of_segments > 1
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(2, 4), EpochEntry(5, 8)]
    log.truncate_to(8)  # the follower learned that epoch 2 ended at 8 on the new leader
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(2, 4)]
    assert log.leader_epoch_cache.end_offset_for(2) == log.log_end_offset == 8
    log.truncate_to(3)
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(0, 0)]
    assert LeaderEpochCheckpointFile.in_dir(log.dir).read() == [EpochEntry(0, 0)]  # flushed too
    log.truncate_fully_and_start_at(50)
    assert log.leader_epoch_cache.epoch_entries() == []
    assert LeaderEpochCheckpointFile.in_dir(log.dir).read() == []


def test_retention_moves_the_first_epoch_up_to_the_new_log_start(tmp_path):
    time = MockTime(start_ms=BASE_TS + 1000)
    log = _log(tmp_path, time, segment_bytes=400, retention_ms=3_600_000)  # two batches a segment
    log.append(MemoryRecords(_batch(2, ts=BASE_TS)), leader_epoch=1)  # offsets 0-1, old
    log.append(MemoryRecords(_batch(2, ts=BASE_TS)), leader_epoch=2)  # 2-3, old
    time.advance(3_600_001)
    now = time.milliseconds()
    for epoch in (2, 2, 3):  # 4-5, 6-7 (epoch 2 still), 8-9: recent
        log.append(MemoryRecords(_batch(2, ts=now)), leader_epoch=epoch)
    assert [s.base_offset for s in log.log_segments()] == [0, 4, 8]
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(1, 0), EpochEntry(2, 2), EpochEntry(3, 8)]
    assert log.delete_old_segments() == 1
    # the log starts at 4, inside epoch 2: epoch 1 is gone, and epoch 2 now begins at 4
    assert log.log_start_offset == 4
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(2, 4), EpochEntry(3, 8)]
    assert LeaderEpochCheckpointFile.in_dir(log.dir).read() == log.leader_epoch_cache.epoch_entries()


def test_the_cache_survives_reopening_and_is_trimmed_to_the_log(tmp_path):
    log = _log(tmp_path)
    log.append(MemoryRecords(_batch(3)), leader_epoch=0)
    log.append(MemoryRecords(_batch(3)), leader_epoch=1)
    log.flush()
    log.close()
    again = _log(tmp_path)
    assert again.leader_epoch_cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(1, 3)]
    assert again.leader_epoch_cache.end_offset_for(1) == 6
    again.append(MemoryRecords(_batch(1)), leader_epoch=2)
    again.close()
    # A crash lost the records of epoch 2 but not the checkpoint, which is flushed before them:
    # reopening drops the entry beyond the log end offset.
    LeaderEpochCheckpointFile.in_dir(again.dir).write(
        [EpochEntry(0, 0), EpochEntry(1, 3), EpochEntry(2, 6), EpochEntry(4, 9)]
    )
    third = _log(tmp_path)
    assert third.log_end_offset == 7
    assert third.leader_epoch_cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(1, 3), EpochEntry(2, 6)]
    assert LeaderEpochCheckpointFile.in_dir(third.dir).read() == third.leader_epoch_cache.epoch_entries()


def test_deleting_the_log_deletes_the_checkpoint_and_clears_the_cache(tmp_path):
    log = _log(tmp_path)
    log.append(MemoryRecords(_batch(1)), leader_epoch=0)
    log.delete()
    assert not (tmp_path / "orders-0").exists()
    assert log.leader_epoch_cache.epoch_entries() == []
