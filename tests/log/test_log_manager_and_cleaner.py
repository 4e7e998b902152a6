"""LogManager (directories, checkpoints, scheduled retention and flush) and LogCleaner (compaction)."""

from __future__ import annotations

import pytest

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.log.checkpoint import CheckpointException, read_checkpoint, write_checkpoint
from kafka_lite.log.log import CLEAN_SHUTDOWN_FILE
from kafka_lite.log.log_cleaner import CLEANER_CHECKPOINT_FILE
from kafka_lite.log.log_config import LogConfig
from kafka_lite.log.log_manager import RECOVERY_POINT_CHECKPOINT_FILE, LogManager
from kafka_lite.testing.logs import read_all
from kafka_lite.utils.scheduler import MockScheduler

pytestmark = pytest.mark.unit
BASE_TS = 1_500_000_000_000
MINUTE = 60_000


def _manager(dirs, time, **config):
    scheduler = MockScheduler(time)
    scheduler.startup()
    manager = LogManager(
        dirs, LogConfig(config), scheduler, retention_check_ms=MINUTE, flush_checkpoint_ms=MINUTE,
        cleaner_backoff_ms=MINUTE, time=time,
    )  # fmt: skip
    manager.startup()
    return manager, scheduler


def _kv(pairs, ts=BASE_TS):
    return MemoryRecords.with_records([(ts, k, v) for k, v in pairs])


def test_checkpoint_file_format_and_errors(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    write_checkpoint(path, {("orders", 1): 1432, ("orders", 0): 1500})
    assert path.read_text() == "0\n2\norders 0 1500\norders 1 1432\n"
    assert read_checkpoint(path) == {("orders", 0): 1500, ("orders", 1): 1432}
    path.write_text("0\n3\norders 0 1500\n")
    with pytest.raises(CheckpointException, match="says 3 entries but the file holds 1"):
        read_checkpoint(path)
    path.write_text("0\n1\norders zero 1500\n")
    with pytest.raises(CheckpointException, match=":3: partition and offset must be numbers"):
        read_checkpoint(path)


def test_logs_spread_over_directories_and_survive_restart(tmp_path):
    time = MockTime(start_ms=BASE_TS)
    dirs = [tmp_path / "d1", tmp_path / "d2"]
    manager, scheduler = _manager(dirs, time)
    for p in range(4):
        manager.create_log(("orders", p)).append(_kv([(b"k", b"v%d" % p)]))
    assert {d: len(logs) for d, logs in manager.logs_by_dir().items()} == {dirs[0]: 2, dirs[1]: 2}
    scheduler.advance(MINUTE)  # the recovery-point checkpoint job runs
    assert (dirs[0] / RECOVERY_POINT_CHECKPOINT_FILE).exists()
    manager.shutdown()
    assert all((d / CLEAN_SHUTDOWN_FILE).exists() for d in dirs)
    again, _ = _manager(dirs, time)
    assert sorted(tp for log in again.all_logs() for tp in [(log.topic, log.partition)]) == [
        ("orders", p) for p in range(4)
    ]
    assert [r.value for r in read_all(again.get_log(("orders", 3)))] == [b"v3"]
    assert not any((d / CLEAN_SHUTDOWN_FILE).exists() for d in dirs)  # only a clean stop writes it


def test_a_kraft_nodes_metadata_log_in_a_log_dir_is_left_to_its_raft_manager(tmp_path):
    # A KRaft node's metadata.log.dir defaults to its first log dir, so __cluster_metadata-0 sits
    # beside the replicas; the LogManager neither loads it nor (so) takes it for a stray to delete.
    time = MockTime(start_ms=BASE_TS)
    d = tmp_path / "d1"
    manager, _ = _manager([d], time)
    manager.create_log(("orders", 0)).append(_kv([(b"k", b"v")]))
    manager.shutdown()
    metadata = d / "__cluster_metadata-0"
    metadata.mkdir()
    (metadata / "00000000000000000000.log").write_bytes(b"the Raft manager's")
    again, _ = _manager([d], time)
    assert [(log.topic, log.partition) for log in again.all_logs()] == [("orders", 0)]
    again.shutdown()
    assert (metadata / "00000000000000000000.log").read_bytes() == b"the Raft manager's"


def test_retention_runs_on_schedule(tmp_path):
    time = MockTime(start_ms=BASE_TS)
    manager, scheduler = _manager([tmp_path], time, segment_bytes=300, retention_ms=10 * MINUTE)
    log = manager.create_log(("clicks", 0))
    for _ in range(10):
        log.append(_kv([(b"k", b"x" * 50)], ts=BASE_TS))
    segments = log.number_of_segments
    assert segments > 3
    scheduler.advance(5 * MINUTE)
    assert log.number_of_segments == segments
    scheduler.advance(10 * MINUTE)
    assert log.number_of_segments == 1 and log.log_start_offset == 10


def test_compaction_keeps_the_latest_value_per_key_and_drops_old_tombstones(tmp_path):
    time = MockTime(start_ms=BASE_TS)
    manager, scheduler = _manager(
        [tmp_path], time, cleanup_policy="compact", segment_bytes=400, delete_retention_ms=MINUTE
    )
    log = manager.create_log(("users", 0))
    for round_ in range(6):
        log.append(_kv([(b"alice", b"a%d" % round_), (b"bob", b"b%d" % round_)], ts=time.milliseconds()))
        log.roll()
    log.append(_kv([(b"bob", None)], ts=time.milliseconds()))  # a tombstone: delete bob
    log.roll()
    log.append(_kv([(b"carol", b"c0")], ts=time.milliseconds()))  # stays in the active segment
    before = log.size_in_bytes()
    stats = manager.cleaner.clean_once()
    assert stats is not None and stats.records_kept < stats.records_read
    records = list(read_all(log))
    assert [(r.key, r.value) for r in records] == [(b"alice", b"a5"), (b"bob", None), (b"carol", b"c0")]
    assert [r.offset for r in records] == [10, 12, 13]  # offsets are kept: compaction leaves gaps
    assert log.size_in_bytes() < before
    assert read_checkpoint(tmp_path / CLEANER_CHECKPOINT_FILE)[("users", 0)] == 13
    assert manager.cleaner.clean_once() is None  # nothing dirty is left
    # New writes make the log dirty again. The tombstone stays while the clean head's newest record
    # is less than delete.retention.ms younger than it: consumers must get a chance to see it.
    time.advance(2 * MINUTE)
    log.roll()
    for _ in range(3):
        log.append(_kv([(b"alice", b"a-new")], ts=time.milliseconds()))
        log.roll()
    scheduler.advance(MINUTE)  # the cleaner's scheduled pass
    assert [(r.key, r.value) for r in read_all(log)] == [
        (b"bob", None),
        (b"carol", b"c0"),
        (b"alice", b"a-new"),
    ]
    # One more round (enough to pass min.cleanable.dirty.ratio): the clean head now ends two minutes
    # after the tombstone, past the horizon, so this pass removes it.
    for _ in range(4):
        log.append(_kv([(b"dave", b"d")], ts=time.milliseconds()))
        log.roll()
    scheduler.advance(MINUTE)
    assert [(r.key, r.value) for r in read_all(log)] == [
        (b"carol", b"c0"),
        (b"alice", b"a-new"),
        (b"dave", b"d"),
    ]


def test_compaction_survives_a_crash_between_delete_and_swap(tmp_path):
    time = MockTime(start_ms=BASE_TS)
    manager, _ = _manager([tmp_path], time, cleanup_policy="compact", segment_bytes=400)
    log = manager.create_log(("users", 0))
    for round_ in range(4):
        log.append(_kv([(b"k", b"v%d" % round_)]))
        log.roll()
    log.flush()
    # Simulate the crash: rename a live segment to .swap as if compaction had built it and the old
    # files were already gone.
    log.close()
    partition = tmp_path / "users-0"
    first_log = sorted(partition.glob("*.log"))[0]
    first_log.rename(first_log.with_name(first_log.name + ".swap"))
    for idx in partition.glob(first_log.stem + ".*index"):
        idx.unlink()
    reopened, _ = _manager([tmp_path], time, cleanup_policy="compact", segment_bytes=400)
    log = reopened.get_log(("users", 0))
    assert [r.value for r in read_all(log)] == [b"v0", b"v1", b"v2", b"v3"]
    assert not list(partition.glob("*.swap"))
