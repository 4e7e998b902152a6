"""MockLog's own behaviour, beyond the suite it shares with KafkaMetadataLog (test_kafka_metadata_log.py):
a crash that loses what was not flushed, a high watermark refused out of bounds or with a stale entry's
metadata, and reads of at most two batches. Ported from Kafka 3.3.0's MockLogTest."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import OffsetOutOfRangeException
from kafka_lite.raft.isolation import Isolation
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.simulation.mock_log import MockLog
from tests.raft.test_kafka_metadata_log import TP, append_as_leader, offsets, write_snapshot

pytestmark = pytest.mark.unit


def test_a_crash_loses_what_was_not_flushed():
    log = MockLog(TP)
    append_as_leader(log, 3, epoch=1)
    log.flush()
    assert log.last_flushed_offset() == 3
    append_as_leader(log, 2, epoch=2)  # offsets 3-4, a new epoch, never flushed
    log.update_high_watermark(LogOffsetMetadata(3))
    log.reopen()
    assert log.end_offset().offset == 3
    assert log.last_fetched_epoch() == 1  # epoch 2's start went with its entries
    assert log.high_watermark().offset == 0  # never persisted: learned again from the leader
    assert offsets(log.read(0, Isolation.UNCOMMITTED).records) == [0, 1, 2]


def test_a_crash_keeps_frozen_snapshots():
    log = MockLog(TP)
    append_as_leader(log, 4, epoch=1)
    log.update_high_watermark(LogOffsetMetadata(4))
    write_snapshot(log, OffsetAndEpoch(4, 1))
    log.reopen()  # nothing was flushed: the log is empty, the snapshot remains
    assert log.latest_snapshot_id() == OffsetAndEpoch(4, 1)
    assert log.end_offset().offset == 4  # an empty log ends where its latest snapshot does


def test_the_high_watermark_is_refused_out_of_bounds_or_going_back():
    log = MockLog(TP)
    append_as_leader(log, 3, epoch=1)
    with pytest.raises(ValueError, match="larger than the current end offset"):
        log.update_high_watermark(LogOffsetMetadata(4))
    log.update_high_watermark(LogOffsetMetadata(2))
    with pytest.raises(ValueError, match="Non-monotonic update of current high watermark"):
        log.update_high_watermark(LogOffsetMetadata(1))


def test_a_high_watermark_with_a_replaced_entrys_metadata_is_refused():
    log = MockLog(TP)
    append_as_leader(log, 2, epoch=1)
    append_as_leader(log, 1, epoch=1)
    stale = log.read(2, Isolation.UNCOMMITTED).start_offset_metadata
    log.truncate_to(2)
    append_as_leader(log, 1, epoch=2)  # offset 2 written again: a new entry, a new id
    with pytest.raises(ValueError, match="metadata uuid"):
        log.update_high_watermark(stale)
    fresh = log.read(2, Isolation.UNCOMMITTED).start_offset_metadata
    log.update_high_watermark(fresh)  # the entry's own metadata is accepted
    assert log.high_watermark() == fresh


def test_a_read_returns_at_most_two_batches():
    log = MockLog(TP)
    for _ in range(3):
        append_as_leader(log, 2, epoch=1)
    assert offsets(log.read(0, Isolation.UNCOMMITTED).records) == [0, 1, 2, 3]
    assert offsets(log.read(4, Isolation.UNCOMMITTED).records) == [4, 5]
    assert [b.first_offset() for b in log.read_batches(1)] == [0, 2, 4]


def test_delete_before_snapshot_above_the_high_watermark_is_refused():
    log = MockLog(TP)
    append_as_leader(log, 6, epoch=1)
    log.update_high_watermark(LogOffsetMetadata(6))
    write_snapshot(log, OffsetAndEpoch(6, 1))
    log.truncate_to(6)
    fresh = MockLog(TP)
    append_as_leader(fresh, 6, epoch=1)
    write_snapshot(fresh, OffsetAndEpoch(6, 1), trusted=True)
    with pytest.raises(OffsetOutOfRangeException, match="greater than the high watermark"):
        fresh.delete_before_snapshot(OffsetAndEpoch(6, 1))
    assert log.delete_before_snapshot(OffsetAndEpoch(6, 1)) is True
    with pytest.raises(OffsetOutOfRangeException, match="less than the current log start offset"):
        log.delete_before_snapshot(OffsetAndEpoch(3, 1))
