"""Snapshots end to end: the record-level writer and reader (Kafka's RecordsSnapshotWriter and
RecordsSnapshotReader), ``KafkaRaftClient.create_snapshot``, and a listener behind the log start
loading the latest snapshot before any commit (kafka_lite.raft.records_snapshot_*)."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalArgumentException, IllegalStateException
from kafka_lite.common.record.control_record_utils import (
    deserialize_snapshot_footer_record,
    deserialize_snapshot_header_record,
)
from kafka_lite.common.time import MockTime
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.records_snapshot_reader import RecordsSnapshotReader
from kafka_lite.raft.records_snapshot_writer import RecordsSnapshotWriter
from kafka_lite.raft.simulation.mock_log import MockLog
from kafka_lite.testing.raft_client_test_context import (
    METADATA_PARTITION,
    MockListener,
    RaftClientTestContext,
    StringSerde,
)

pytestmark = pytest.mark.unit

SNAPSHOT_ID = OffsetAndEpoch(10, 3)


def _writer(log: MockLog, time: MockTime, max_batch_size: int = 1024) -> RecordsSnapshotWriter:
    writer = RecordsSnapshotWriter.create_with_header(
        lambda: log.store_snapshot(SNAPSHOT_ID), max_batch_size, time, 1234, StringSerde()
    )
    assert writer is not None
    return writer


def test_a_snapshot_is_a_header_the_records_and_a_footer_in_the_snapshots_epoch() -> None:
    log, time = MockLog(METADATA_PARTITION), MockTime()
    with _writer(log, time) as writer:
        assert (writer.last_contained_log_offset(), writer.last_contained_log_epoch()) == (9, 3)
        writer.append(["a", "b"])
        writer.append(["c"])
        writer.freeze()
    batches = list(log.read_snapshot(SNAPSHOT_ID).records().batches())
    header, *state, footer = batches
    assert header.is_control_batch and footer.is_control_batch and not any(b.is_control_batch for b in state)
    assert deserialize_snapshot_header_record(next(iter(header)))["last_contained_log_timestamp"] == 1234
    assert deserialize_snapshot_footer_record(next(iter(footer)))["version"] == 0
    # Offsets count from 0 inside the snapshot, and every batch carries the snapshot's epoch.
    # The records wait in the accumulator (no linger deadline) and go out as one batch at freeze.
    assert [b.base_offset for b in batches] == [0, 1, 4]
    assert {b.partition_leader_epoch for b in batches} == {3}
    assert [bytes(r.value).decode() for b in state for r in b] == ["a", "b", "c"]


def test_the_reader_yields_the_state_batches_and_the_headers_time() -> None:
    log, time = MockLog(METADATA_PARTITION), MockTime()
    with _writer(log, time) as writer:
        writer.append(["x"])
        time.sleep(5)
        writer.append(["y", "z"])
        writer.freeze()
    reader = RecordsSnapshotReader.of(log.read_snapshot(SNAPSHOT_ID), StringSerde())
    assert reader.snapshot_id() == SNAPSHOT_ID and reader.last_contained_log_offset() == 9
    # As Kafka's reader: the append time of the first batch, the header's.
    assert reader.last_contained_log_timestamp() == time.milliseconds() - 5
    assert [r for batch in reader for r in batch.records] == ["x", "y", "z"]


def test_an_unfrozen_snapshot_is_discarded_and_a_frozen_one_takes_no_more() -> None:
    log, time = MockLog(METADATA_PARTITION), MockTime()
    with _writer(log, time) as writer:
        writer.append(["lost"])
    assert log.read_snapshot(SNAPSHOT_ID) is None
    with _writer(log, time) as writer:
        writer.freeze()
        with pytest.raises(IllegalStateException, match="already frozen"):
            writer.append(["late"])
    # The snapshot exists now: the log gives no second writer for it.
    assert (
        RecordsSnapshotWriter.create_with_header(
            lambda: log.store_snapshot(SNAPSHOT_ID), 1024, time, 0, StringSerde()
        )
        is None
    )


def _single_voter_leader_with(values: list[str]) -> RaftClientTestContext:
    """A quorum of one (node 0 leads at once) that has committed ``values``."""
    ctx = RaftClientTestContext(0, {0})
    ctx.poll()
    assert ctx.quorum().is_leader()
    epoch = ctx.quorum().epoch()
    ctx.client.schedule_append(epoch, values)
    ctx.poll(3)
    assert ctx.listener.committed_records() == values
    return ctx


def test_create_snapshot_takes_committed_state_only() -> None:
    ctx = _single_voter_leader_with(["a", "b", "c"])
    epoch, high_watermark = ctx.quorum().epoch(), ctx.log.high_watermark().offset
    with pytest.raises(IllegalArgumentException, match="greater than the high-watermark"):
        ctx.client.create_snapshot(OffsetAndEpoch(high_watermark + 1, epoch), 0)
    with ctx.client.create_snapshot(OffsetAndEpoch(high_watermark, epoch), 0) as writer:
        writer.append(["abc"])
        writer.freeze()
    assert ctx.log.latest_snapshot_id() == OffsetAndEpoch(high_watermark, epoch)
    assert ctx.client.create_snapshot(OffsetAndEpoch(high_watermark, epoch), 0) is None


def test_a_listener_behind_the_log_start_loads_the_latest_snapshot_before_any_commit() -> None:
    ctx = _single_voter_leader_with(["a", "b", "c"])
    epoch, high_watermark = ctx.quorum().epoch(), ctx.log.high_watermark().offset
    with ctx.client.create_snapshot(OffsetAndEpoch(high_watermark, epoch), 0) as writer:
        writer.append(["abc"])
        writer.freeze()
    assert ctx.log.delete_before_snapshot(OffsetAndEpoch(high_watermark, epoch))
    assert ctx.log.start_offset() == high_watermark
    ctx.client.schedule_append(epoch, ["d"])
    ctx.poll(3)
    # The first listener was never behind: it goes on from the log and loads nothing.
    assert ctx.listener.committed_records() == ["a", "b", "c", "d"] and ctx.listener.snapshots == []
    events = []

    class Late(MockListener):
        def handle_snapshot(self, reader) -> None:
            events.append(("snapshot", reader.snapshot_id(), [r for b in reader for r in b.records]))

        def handle_commit(self, batches) -> None:
            events.append(("commit", [r for b in batches for r in b.records]))

    ctx.client.register(Late())
    ctx.poll(2)
    # Its next offset, 0, is below the log start: the snapshot first, then the log from its end.
    assert events[0] == ("snapshot", OffsetAndEpoch(high_watermark, epoch), ["abc"])
    assert [r for kind, *rest in events[1:] if kind == "commit" for r in rest[0]] == ["d"]
