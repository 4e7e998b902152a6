"""Snapshot files (KIP-630): their names and how a directory's files parse back to ids, the writer's
partial file frozen by a rename or discarded on close, and the reader's slices."""

from __future__ import annotations

import pytest

from kafka_lite.common.record import MemoryRecords
from kafka_lite.raft import snapshots
from kafka_lite.raft.file_raw_snapshot_reader import FileRawSnapshotReader
from kafka_lite.raft.file_raw_snapshot_writer import FileRawSnapshotWriter
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.snapshot_path import SnapshotPath
from tests.raft.test_kafka_metadata_log import batch, open_metadata_log

pytestmark = pytest.mark.unit
SNAPSHOT_ID = OffsetAndEpoch(10, 3)


def test_a_snapshot_is_named_by_its_end_offset_and_epoch(tmp_path):
    assert snapshots.filename_from_snapshot_id(SNAPSHOT_ID) == "00000000000000000010-0000000003"
    assert (
        snapshots.snapshot_path(tmp_path, SNAPSHOT_ID)
        == tmp_path / "00000000000000000010-0000000003.checkpoint"
    )


def test_parse_reads_the_three_kinds_of_snapshot_file_and_ignores_the_rest(tmp_path):
    name = "00000000000000000010-0000000003"
    assert snapshots.parse(tmp_path / f"{name}.checkpoint") == SnapshotPath(
        tmp_path / f"{name}.checkpoint", SNAPSHOT_ID, partial=False, deleted=False
    )
    partial = snapshots.parse(tmp_path / f"{name}-98765.checkpoint.part")
    assert (partial.snapshot_id, partial.partial, partial.deleted) == (SNAPSHOT_ID, True, False)
    deleted = snapshots.parse(tmp_path / f"{name}.checkpoint.deleted")
    assert (deleted.snapshot_id, deleted.partial, deleted.deleted) == (SNAPSHOT_ID, False, True)
    for other in ["00000000000000000000.log", "leader-epoch-checkpoint", "recovery-point-offset-checkpoint"]:
        assert snapshots.parse(tmp_path / other) is None, other


def test_a_writer_writes_a_partial_file_and_freezes_it_by_renaming(tmp_path):
    metadata_log = open_metadata_log(tmp_path)  # told of the snapshot when it freezes
    directory = metadata_log.log.dir
    writer = FileRawSnapshotWriter.create(directory, SNAPSHOT_ID, metadata_log)
    writer.append(batch(0, 2))
    writer.append(bytes(batch(2, 3).buffer()))
    assert writer.size_in_bytes() == batch(0, 2).size_in_bytes() + batch(2, 3).size_in_bytes()
    assert [p for p in directory.iterdir() if snapshots.parse(p) and snapshots.parse(p).partial]
    assert not snapshots.snapshot_path(directory, SNAPSHOT_ID).exists()
    assert metadata_log.latest_snapshot_id() is None
    writer.freeze()
    writer.close()
    assert writer.is_frozen()
    names = [p.name for p in directory.iterdir() if snapshots.parse(p)]
    assert names == ["00000000000000000010-0000000003.checkpoint"]
    assert metadata_log.latest_snapshot_id() == SNAPSHOT_ID
    with pytest.raises(RuntimeError, match=r"Append is not supported\. Snapshot is already frozen"):
        writer.append(b"more")
    metadata_log.close()


def test_closing_an_unfrozen_writer_discards_the_snapshot(tmp_path):
    writer = FileRawSnapshotWriter.create(tmp_path, SNAPSHOT_ID)
    writer.append(b"half")
    writer.close()
    assert list(tmp_path.iterdir()) == []


def test_a_reader_slices_across_batch_boundaries(tmp_path):
    data = bytes(batch(0, 2).buffer()) + bytes(batch(2, 3).buffer())
    with FileRawSnapshotWriter.create(tmp_path, SNAPSHOT_ID) as writer:
        writer.append(data)
        writer.freeze()
    reader = FileRawSnapshotReader.open(tmp_path, SNAPSHOT_ID)
    assert reader.size_in_bytes() == len(data)
    # slices as FetchSnapshot sends them: each may cut a batch; joined, they are the snapshot
    slices = [reader.slice(position, 50) for position in range(0, len(data), 50)]
    assert all(len(s) <= 50 for s in slices) and b"".join(slices) == data
    assert [r.offset for r in MemoryRecords(reader.records().read_bytes()).records()] == [0, 1, 2, 3, 4]
    reader.close()
    with pytest.raises(FileNotFoundError):
        FileRawSnapshotReader.open(tmp_path, OffsetAndEpoch(11, 3))


def test_a_snapshot_is_marked_for_deletion_then_deleted(tmp_path):
    with FileRawSnapshotWriter.create(tmp_path, SNAPSHOT_ID) as writer:
        writer.freeze()
    marked = snapshots.mark_for_delete(tmp_path, SNAPSHOT_ID)
    assert marked.name == "00000000000000000010-0000000003.checkpoint.deleted"
    assert snapshots.parse(marked).deleted
    assert snapshots.delete_if_exists(tmp_path, SNAPSHOT_ID) is True
    assert list(tmp_path.iterdir()) == []
    assert snapshots.delete_if_exists(tmp_path, SNAPSHOT_ID) is False
