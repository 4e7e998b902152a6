"""The replicated log's behaviour, run against both implementations: KafkaMetadataLog over a Log in a
temporary directory, and the in-memory MockLog. Ported from Kafka 3.3.0's KafkaMetadataLogTest and
MockLogTest; the logs are small and worked by hand in each test's comments. KafkaMetadataLog's own
cases (reopening, snapshot recovery, the high watermark held in bounds) follow the shared suite."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalArgumentException, KafkaException, OffsetOutOfRangeException
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.control_record_utils import with_leader_change_message
from kafka_lite.common.record.memory_records_builder import MemoryRecordsBuilder
from kafka_lite.common.time import MockTime
from kafka_lite.raft import snapshots
from kafka_lite.raft.isolation import Isolation
from kafka_lite.raft.kafka_metadata_log import KafkaMetadataLog
from kafka_lite.raft.log_offset_metadata import LogOffsetMetadata
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.simulation.mock_log import MockLog
from kafka_lite.raft.valid_offset_and_epoch import ValidOffsetAndEpoch

pytestmark = pytest.mark.unit
TP = ("__cluster_metadata", 0)
BASE_TS = 1_700_000_000_000


def batch(base_offset: int, n: int, epoch: int = -1) -> MemoryRecords:
    """One v2 batch of ``n`` records starting at ``base_offset``, stamped with ``epoch``."""
    builder = MemoryRecordsBuilder(base_offset=base_offset, partition_leader_epoch=epoch)
    for i in range(n):
        builder.append(BASE_TS + i, b"k%d" % (base_offset + i), b"v%d" % (base_offset + i))
    return builder.build()


def append_as_leader(log, n: int, epoch: int):
    """``n`` records in one batch at the log end, as the leader of ``epoch``."""
    return log.append_as_leader(batch(log.end_offset().offset, n, epoch), epoch)


def offsets(records) -> list[int]:
    data = records.read_bytes() if hasattr(records, "read_bytes") else records.buffer()
    return [r.offset for r in MemoryRecords(data).records()]


def open_metadata_log(directory) -> KafkaMetadataLog:
    return KafkaMetadataLog.create(TP, directory / "__cluster_metadata-0", MockTime(), segment_bytes=1024)


@pytest.fixture(params=["kafka_metadata_log", "mock_log"])
def log(request, tmp_path):
    if request.param == "mock_log":
        yield MockLog(TP)
    else:
        metadata_log = open_metadata_log(tmp_path)
        yield metadata_log
        metadata_log.close()


def write_snapshot(log, snapshot_id: OffsetAndEpoch, data: bytes = b"state", *, trusted: bool = False):
    writer = log.store_snapshot(snapshot_id) if trusted else log.create_new_snapshot(snapshot_id)
    assert writer is not None, f"a writer for {snapshot_id}"
    with writer:
        writer.append(data)
        writer.freeze()


def hand_worked_leader(log) -> None:
    """epoch 1 at offsets 0-3, epoch 3 at 4-6; end offset 7 (epoch 2 led and wrote nothing here)."""
    append_as_leader(log, 4, epoch=1)
    append_as_leader(log, 3, epoch=3)


# -- appends, epochs, reads ---------------------------------------------------------------------------------


def test_an_empty_log_starts_at_zero_in_the_primordial_epoch(log):
    assert (log.start_offset(), log.end_offset().offset, log.high_watermark().offset) == (0, 0, 0)
    assert log.last_fetched_epoch() == 0
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(0, 0)
    assert log.latest_snapshot_id() is None and log.earliest_snapshot_id() is None


def test_a_leader_append_keeps_its_epoch_and_returns_its_offsets(log):
    info = append_as_leader(log, 3, epoch=2)
    assert (info.first_offset, info.last_offset) == (0, 2)
    info = append_as_leader(log, 2, epoch=4)
    assert (info.first_offset, info.last_offset) == (3, 4)
    assert log.end_offset().offset == 5
    assert log.last_fetched_epoch() == 4
    fetched = log.read(0, Isolation.UNCOMMITTED)
    assert [b.partition_leader_epoch for b in MemoryRecords(_bytes(fetched.records)).batches()] == [2, 4]
    assert offsets(fetched.records) == [0, 1, 2, 3, 4]
    assert fetched.start_offset_metadata.offset == 0


def _bytes(records) -> bytes:
    return records.read_bytes() if hasattr(records, "read_bytes") else bytes(records.buffer())


def test_a_follower_append_keeps_the_epochs_its_leader_wrote(log):
    log.append_as_follower(
        MemoryRecords(bytes(batch(0, 2, epoch=1).buffer()) + bytes(batch(2, 3, epoch=3).buffer()))
    )
    assert log.end_offset().offset == 5
    assert log.last_fetched_epoch() == 3
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(2, 1)  # no epoch 2 here: epoch 1 ends at 2
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(5, 3)


def test_an_append_must_start_at_the_log_end_and_hold_records(log):
    append_as_leader(log, 2, epoch=1)
    with pytest.raises(ValueError, match="empty record set"):
        log.append_as_leader(MemoryRecords(b""), 1)
    with pytest.raises(ValueError, match="empty record set"):
        log.append_as_follower(MemoryRecords(b""))
    with pytest.raises(KafkaException, match="Illegal append at offset 5 with current end offset of 2"):
        log.append_as_follower(batch(5, 1, epoch=1))
    with pytest.raises(KafkaException, match="Illegal append at offset 0 with current end offset of 2"):
        log.append_as_leader(batch(0, 1, epoch=1), 1)
    assert log.end_offset().offset == 2


def test_end_offset_for_epoch_answers_the_largest_epoch_at_or_below_and_where_it_ends(log):
    hand_worked_leader(log)
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(0, 0)  # before every epoch
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(4, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(4, 1)  # epoch 2 wrote nothing: epoch 1's end
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(7, 3)  # the latest epoch ends at the log end
    assert log.end_offset_for_epoch(9) == OffsetAndEpoch(7, 3)


def test_initialize_leader_epoch_begins_an_epoch_at_the_log_end(log):
    append_as_leader(log, 4, epoch=1)
    log.initialize_leader_epoch(3)
    assert log.last_fetched_epoch() == 3
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(4, 3)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(4, 1)
    # epoch 3 wrote nothing before epoch 5 began at the same offset: only epoch 1 holds entries
    log.initialize_leader_epoch(5)
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(4, 1)
    assert log.end_offset_for_epoch(5) == OffsetAndEpoch(4, 5)
    append_as_leader(log, 2, epoch=5)
    assert log.end_offset_for_epoch(5) == OffsetAndEpoch(6, 5)


def test_a_committed_read_stops_at_the_high_watermark(log):
    append_as_leader(log, 3, epoch=1)
    append_as_leader(log, 3, epoch=1)
    log.update_high_watermark(LogOffsetMetadata(3))
    assert offsets(log.read(0, Isolation.COMMITTED).records) == [0, 1, 2]
    assert offsets(log.read(3, Isolation.COMMITTED).records) == []
    assert offsets(log.read(3, Isolation.UNCOMMITTED).records) == [3, 4, 5]
    assert offsets(log.read(6, Isolation.UNCOMMITTED).records) == []


def test_a_read_outside_the_log_is_refused(log):
    append_as_leader(log, 3, epoch=1)
    with pytest.raises(OffsetOutOfRangeException):
        log.read(4, Isolation.UNCOMMITTED)


# -- validate_offset_and_epoch: the leader's answer to a follower's fetch position ---------------------------


def test_a_follower_that_matches_the_leader_is_valid(log):
    hand_worked_leader(log)
    assert log.validate_offset_and_epoch(0, 0) == ValidOffsetAndEpoch.valid(OffsetAndEpoch(0, 0))
    assert log.validate_offset_and_epoch(3, 1) == ValidOffsetAndEpoch.valid(OffsetAndEpoch(3, 1))
    assert log.validate_offset_and_epoch(4, 1) == ValidOffsetAndEpoch.valid(OffsetAndEpoch(4, 1))
    assert log.validate_offset_and_epoch(7, 3) == ValidOffsetAndEpoch.valid(OffsetAndEpoch(7, 3))


def test_a_follower_with_an_epoch_the_leader_never_had_is_told_where_they_agree(log):
    hand_worked_leader(log)
    # The follower wrote offsets 4-5 under epoch 2, a leader whose entries never reached this one.
    # Epoch 2 is not here; the largest epoch below it is 1, which ends at 4: truncate to 4.
    assert log.validate_offset_and_epoch(6, 2) == ValidOffsetAndEpoch.diverging(OffsetAndEpoch(4, 1))


def test_a_follower_with_more_of_an_epoch_than_the_leader_diverges_at_the_epochs_end(log):
    hand_worked_leader(log)
    # The follower has epoch 1 up to offset 5; here epoch 1 ended at 4.
    assert log.validate_offset_and_epoch(6, 1) == ValidOffsetAndEpoch.diverging(OffsetAndEpoch(4, 1))
    assert log.validate_offset_and_epoch(5, 1) == ValidOffsetAndEpoch.diverging(OffsetAndEpoch(4, 1))
    # And ahead of the leader within its own epoch: they agree up to the leader's end.
    assert log.validate_offset_and_epoch(8, 3) == ValidOffsetAndEpoch.diverging(OffsetAndEpoch(7, 3))
    assert log.validate_offset_and_epoch(9, 3) == ValidOffsetAndEpoch.diverging(OffsetAndEpoch(7, 3))


def test_a_diverging_follower_truncates_to_the_answer_and_then_matches(log, tmp_path):
    hand_worked_leader(log)
    follower = MockLog(TP)
    append_as_leader(follower, 4, epoch=1)
    append_as_leader(follower, 2, epoch=2)  # offsets 4-5 under epoch 2: not in the leader's log
    answer = log.validate_offset_and_epoch(follower.end_offset().offset, follower.last_fetched_epoch())
    assert answer == ValidOffsetAndEpoch.diverging(OffsetAndEpoch(4, 1))
    assert follower.truncate_to_end_offset(answer.offset_and_epoch) == 4
    assert (follower.end_offset().offset, follower.last_fetched_epoch()) == (4, 1)
    assert log.validate_offset_and_epoch(4, 1) == ValidOffsetAndEpoch.valid(OffsetAndEpoch(4, 1))


def test_truncate_to_end_offset_on_this_log(log):
    append_as_leader(log, 3, epoch=1)
    append_as_leader(log, 1, epoch=1)
    append_as_leader(log, 2, epoch=2)
    # The leader says its epoch 1 ends at 3: this log has epoch 1 to 4, so the shorter end wins.
    assert log.truncate_to_end_offset(OffsetAndEpoch(3, 1)) == 3
    assert (log.end_offset().offset, log.last_fetched_epoch()) == (3, 1)


# -- truncation and the high watermark ---------------------------------------------------------------------


def test_truncation_removes_the_entries_and_their_epochs(log):
    hand_worked_leader(log)
    log.truncate_to(4)
    assert log.end_offset().offset == 4
    assert log.last_fetched_epoch() == 1
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(4, 1)
    append_as_leader(log, 1, epoch=4)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(5, 4)


def test_truncation_below_the_high_watermark_is_refused(log):
    hand_worked_leader(log)
    log.update_high_watermark(LogOffsetMetadata(4))
    with pytest.raises(ValueError, match="below the current high watermark"):
        log.truncate_to(3)
    log.truncate_to(4)
    assert log.end_offset().offset == 4


# -- snapshots -----------------------------------------------------------------------------------------------


def snapshotted_log(log) -> None:
    """epoch 1 at 0-9, epoch 2 at 10-14, high watermark 12."""
    append_as_leader(log, 10, epoch=1)
    append_as_leader(log, 5, epoch=2)
    log.update_high_watermark(LogOffsetMetadata(12))


def test_a_snapshot_is_created_frozen_and_read_back(log):
    snapshotted_log(log)
    writer = log.create_new_snapshot(OffsetAndEpoch(10, 1))
    with writer:
        writer.append(bytes(batch(0, 3).buffer()))
        assert log.read_snapshot(OffsetAndEpoch(10, 1)) is None  # not readable until frozen
        writer.freeze()
    reader = log.read_snapshot(OffsetAndEpoch(10, 1))
    assert reader.snapshot_id() == OffsetAndEpoch(10, 1)
    assert offsets(reader.records()) == [0, 1, 2]
    assert reader.slice(0, 10) == bytes(batch(0, 3).buffer())[:10]
    assert log.latest_snapshot_id() == log.earliest_snapshot_id() == OffsetAndEpoch(10, 1)
    assert log.latest_snapshot().size_in_bytes() == batch(0, 3).size_in_bytes()
    assert log.create_new_snapshot(OffsetAndEpoch(10, 1)) is None  # it exists
    assert log.start_offset() == 0  # creating a snapshot moves nothing


def test_a_snapshot_above_the_high_watermark_is_refused(log):
    snapshotted_log(log)
    with pytest.raises(ValueError, match=r"greater than the high-watermark \(12\)"):
        log.create_new_snapshot(OffsetAndEpoch(13, 2))


def test_a_snapshot_at_a_position_the_log_does_not_have_is_refused(log):
    snapshotted_log(log)
    # epoch 3 is not in the log: offset 10 with epoch 3 names no entry here
    with pytest.raises(ValueError, match="is not valid according to the log"):
        log.create_new_snapshot(OffsetAndEpoch(10, 3))


def test_an_unfrozen_snapshot_is_discarded_on_close(log):
    snapshotted_log(log)
    writer = log.create_new_snapshot(OffsetAndEpoch(10, 1))
    writer.append(b"half a snapshot")
    writer.close()
    assert log.latest_snapshot_id() is None
    assert log.read_snapshot(OffsetAndEpoch(10, 1)) is None


def test_delete_before_snapshot_moves_the_log_start_and_drops_older_snapshots(log):
    snapshotted_log(log)
    write_snapshot(log, OffsetAndEpoch(5, 1))
    write_snapshot(log, OffsetAndEpoch(10, 1))
    assert log.delete_before_snapshot(OffsetAndEpoch(10, 1)) is True
    assert log.start_offset() == 10
    assert log.earliest_snapshot_id() == OffsetAndEpoch(10, 1)
    assert log.read_snapshot(OffsetAndEpoch(5, 1)) is None
    # epochs before the log start: the snapshot at the start stands for them
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(10, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(15, 2)
    with pytest.raises(OffsetOutOfRangeException):
        log.read(5, Isolation.UNCOMMITTED)
    assert offsets(log.read(10, Isolation.UNCOMMITTED).records) == [10, 11, 12, 13, 14]
    # a snapshot below the new log start is not created
    assert log.create_new_snapshot(OffsetAndEpoch(8, 1)) is None


def test_a_follower_behind_the_log_start_is_sent_the_snapshot(log):
    snapshotted_log(log)
    write_snapshot(log, OffsetAndEpoch(10, 1))
    log.delete_before_snapshot(OffsetAndEpoch(10, 1))
    snapshot = ValidOffsetAndEpoch.snapshot(OffsetAndEpoch(10, 1))
    assert log.validate_offset_and_epoch(5, 1) == snapshot  # its next entry is gone
    assert log.validate_offset_and_epoch(10, 0) == snapshot  # an epoch older than the snapshot's
    # at the start, but its entry 9 is of epoch 2 where the snapshot's is of epoch 1
    assert log.validate_offset_and_epoch(10, 2) == snapshot
    assert log.validate_offset_and_epoch(12, 0) == snapshot  # past the start, from before every epoch
    # at the start, and its last entry is the snapshot's: it goes on from there
    assert log.validate_offset_and_epoch(10, 1) == ValidOffsetAndEpoch.valid(OffsetAndEpoch(10, 1))
    assert log.validate_offset_and_epoch(12, 2) == ValidOffsetAndEpoch.valid(OffsetAndEpoch(12, 2))


def test_truncate_to_latest_snapshot_when_the_leaders_snapshot_is_ahead(log):
    append_as_leader(log, 5, epoch=1)
    assert log.truncate_to_latest_snapshot() is False  # no snapshot
    write_snapshot(log, OffsetAndEpoch(20, 3), trusted=True)  # fetched from the leader
    assert log.truncate_to_latest_snapshot() is True
    assert (log.start_offset(), log.end_offset().offset, log.high_watermark().offset) == (20, 20, 20)
    assert log.last_fetched_epoch() == 3
    log.append_as_follower(batch(20, 2, epoch=3))
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(22, 3)
    assert log.truncate_to_latest_snapshot() is False  # the log is past its snapshot now


def test_an_emptied_log_is_truncated_to_a_fetched_snapshot_of_its_own_epoch(log):
    # A follower snapshots everything it holds and deletes every batch before that snapshot; then
    # the leader, its log start now past the follower, sends a later snapshot of the same epoch.
    append_as_leader(log, 6, epoch=1)
    log.update_high_watermark(LogOffsetMetadata(6))
    write_snapshot(log, OffsetAndEpoch(6, 1))
    assert log.delete_before_snapshot(OffsetAndEpoch(6, 1)) is True
    assert (log.start_offset(), log.end_offset().offset) == (6, 6)  # no batch left
    write_snapshot(log, OffsetAndEpoch(9, 1), trusted=True)  # fetched from the leader, frozen
    # the snapshot is ahead of the log's entries even though an empty MockLog ends at its latest
    # snapshot: the log starts afresh there
    assert log.truncate_to_latest_snapshot() is True
    assert (log.start_offset(), log.end_offset().offset, log.high_watermark().offset) == (9, 9, 9)
    assert log.earliest_snapshot_id() == OffsetAndEpoch(9, 1)


def test_a_snapshot_behind_the_log_does_not_truncate_it(log):
    append_as_leader(log, 5, epoch=2)
    write_snapshot(log, OffsetAndEpoch(3, 2), trusted=True)
    assert log.truncate_to_latest_snapshot() is False
    assert log.end_offset().offset == 5


# -- KafkaMetadataLog only ---------------------------------------------------------------------------------


def test_a_reopened_metadata_log_keeps_its_entries_epochs_and_snapshots(tmp_path):
    metadata_log = open_metadata_log(tmp_path)
    hand_worked_leader(metadata_log)
    metadata_log.update_high_watermark(LogOffsetMetadata(5))
    write_snapshot(metadata_log, OffsetAndEpoch(4, 1))
    metadata_log.flush()
    assert metadata_log.last_flushed_offset() == 7
    metadata_log.close()
    reopened = open_metadata_log(tmp_path)
    assert reopened.end_offset().offset == 7
    assert reopened.end_offset_for_epoch(2) == OffsetAndEpoch(4, 1)
    assert reopened.latest_snapshot_id() == OffsetAndEpoch(4, 1)
    assert reopened.read_snapshot(OffsetAndEpoch(4, 1)).slice(0, 5) == b"state"
    reopened.close()


def test_opening_deletes_partial_and_deleted_snapshot_files(tmp_path):
    metadata_log = open_metadata_log(tmp_path)
    directory = metadata_log.log.dir
    metadata_log.close()
    partial = snapshots.create_temp_file(directory, OffsetAndEpoch(3, 1))
    deleted = directory / (
        snapshots.filename_from_snapshot_id(OffsetAndEpoch(2, 1)) + snapshots.DELETE_SUFFIX
    )
    deleted.write_bytes(b"x")
    reopened = open_metadata_log(tmp_path)
    assert not partial.exists() and not deleted.exists()
    assert reopened.latest_snapshot_id() is None
    assert (directory / "00000000000000000000.log").exists()  # other files are left alone
    reopened.close()


def test_a_snapshot_ahead_of_the_log_at_open_empties_the_log(tmp_path):
    # A follower crashed after fetching the leader's snapshot, before truncating its log.
    metadata_log = open_metadata_log(tmp_path)
    append_as_leader(metadata_log, 5, epoch=1)
    write_snapshot(metadata_log, OffsetAndEpoch(30, 2), trusted=True)
    metadata_log.log.close()
    reopened = open_metadata_log(tmp_path)
    assert (reopened.start_offset(), reopened.end_offset().offset) == (30, 30)
    reopened.close()


def test_the_metadata_log_refuses_a_leader_batch_of_another_epoch(tmp_path):
    metadata_log = open_metadata_log(tmp_path)
    with pytest.raises(IllegalArgumentException, match="did not set the batch epoch correctly"):
        metadata_log.append_as_leader(batch(0, 2, epoch=1), 2)
    assert metadata_log.end_offset().offset == 0
    metadata_log.close()


def test_the_metadata_logs_high_watermark_stays_within_the_log(tmp_path):
    # As Kafka's UnifiedLog: an out-of-range high watermark is held to the log end, not refused.
    metadata_log = open_metadata_log(tmp_path)
    append_as_leader(metadata_log, 3, epoch=1)
    metadata_log.update_high_watermark(LogOffsetMetadata(10))
    assert metadata_log.high_watermark().offset == 3
    metadata_log.close()


def test_delete_before_snapshot_deletes_the_segments_and_files_below_it(tmp_path):
    metadata_log = open_metadata_log(tmp_path)  # 1 KiB segments: one batch of 10 fills most of one
    for _ in range(4):
        append_as_leader(metadata_log, 10, epoch=1)
        metadata_log.log.roll()
    metadata_log.update_high_watermark(LogOffsetMetadata(40))
    write_snapshot(metadata_log, OffsetAndEpoch(10, 1))
    write_snapshot(metadata_log, OffsetAndEpoch(30, 1))
    assert metadata_log.delete_before_snapshot(OffsetAndEpoch(30, 1))
    assert [s.base_offset for s in metadata_log.log.log_segments()] == [30, 40]
    names = sorted(p.name for p in metadata_log.log.dir.iterdir() if snapshots.parse(p))
    assert names == ["00000000000000000030-0000000001.checkpoint"]
    assert (metadata_log.log.dir / names[0]).stat().st_mode & 0o222 == 0  # frozen snapshots are read-only
    metadata_log.close()


def test_a_metadata_log_reopened_after_delete_before_snapshot_starts_at_the_snapshot(tmp_path):
    metadata_log = open_metadata_log(tmp_path)
    for _ in range(3):
        append_as_leader(metadata_log, 10, epoch=1)
        metadata_log.log.roll()
    metadata_log.update_high_watermark(LogOffsetMetadata(30))
    write_snapshot(metadata_log, OffsetAndEpoch(20, 1))
    metadata_log.delete_before_snapshot(OffsetAndEpoch(20, 1))
    metadata_log.close()
    reopened = open_metadata_log(tmp_path)
    assert reopened.start_offset() == 20  # the first segment left begins at the snapshot's end
    assert reopened.earliest_snapshot_id() == OffsetAndEpoch(20, 1)
    assert reopened.validate_offset_and_epoch(10, 1) == ValidOffsetAndEpoch.snapshot(OffsetAndEpoch(20, 1))
    assert reopened.validate_offset_and_epoch(25, 1) == ValidOffsetAndEpoch.valid(OffsetAndEpoch(25, 1))
    reopened.close()


def test_the_leaders_control_batches_are_appended_and_read_back(log):
    # A new leader's first batch is its LeaderChange control record; the log takes it from the
    # leader (Kafka's RaftLeader origin), where a client's control batch would be refused.
    append_as_leader(log, 2, epoch=1)
    change = with_leader_change_message(
        2, 0, 2, {"version": 0, "leader_id": 0, "voters": [{"voter_id": 0}], "granting_voters": []}
    )
    log.initialize_leader_epoch(2)
    log.append_as_leader(change, 2)
    assert log.end_offset().offset == 3 and log.last_fetched_epoch() == 2
    read = log.read(2, Isolation.UNCOMMITTED).records
    data = read.read_bytes() if hasattr(read, "read_bytes") else bytes(read.buffer())
    assert [b.is_control_batch for b in MemoryRecords(data).batches()] == [True]
