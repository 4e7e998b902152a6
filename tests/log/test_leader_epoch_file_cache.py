"""LeaderEpochFileCache and its leader-epoch-checkpoint file (Kafka 0.11's KIP-101 bookkeeping)."""

from __future__ import annotations

import threading

import pytest

from kafka_lite.log.checkpoint import CheckpointException
from kafka_lite.log.epoch.leader_epoch_checkpoint_file import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    EpochEntry,
    LeaderEpochCheckpointFile,
)
from kafka_lite.log.epoch.leader_epoch_file_cache import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    LeaderEpochFileCache,
)

pytestmark = pytest.mark.unit
TP = ("orders", 0)


class Leo:
    """The log end offset the cache asks for; a test moves it as a log would."""

    def __init__(self, value: int = 0) -> None:
        self.value = value

    def __call__(self) -> int:
        return self.value


def _cache(tmp_path, leo: Leo | None = None) -> LeaderEpochFileCache:
    return LeaderEpochFileCache(TP, leo or Leo(), LeaderEpochCheckpointFile.in_dir(tmp_path))


def _file(tmp_path) -> str:
    return (tmp_path / LEADER_EPOCH_CHECKPOINT_FILE).read_text()


def test_assign_takes_only_a_newer_epoch_starting_at_or_after_the_latest_entry(tmp_path):
    cache = _cache(tmp_path)
    assert cache.latest_epoch() == UNDEFINED_EPOCH
    cache.assign(0, 0)
    cache.assign(0, 5)  # the same epoch again (every append of the leader): nothing new
    cache.assign(2, 10)
    cache.assign(1, 20)  # older than the latest epoch: out of order, ignored
    cache.assign(3, 7)  # newer, but starting before epoch 2 did: ignored
    cache.assign(3, 10)  # epoch 2 appended nothing: epoch 3 may start where it did (as in Kafka)
    assert cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(2, 10), EpochEntry(3, 10)]
    assert cache.latest_epoch() == 3
    # every change is flushed to the file at once, in Kafka's format
    assert _file(tmp_path) == "0\n3\n0 0\n2 10\n3 10\n"
    with pytest.raises(ValueError, match=r"epoch < 0 .* orders-0"):
        cache.assign(-1, 30)


def test_end_offset_for_each_epoch(tmp_path):
    leo = Leo(420)
    cache = _cache(tmp_path, leo)
    for epoch, start in ((1, 0), (2, 120), (5, 300)):
        cache.assign(epoch, start)
    assert cache.end_offset_for(1) == 120  # where the next epoch begins
    assert cache.end_offset_for(2) == 300
    assert cache.end_offset_for(3) == 300  # no record under 3 or 4 here: they end where 2 ended
    assert cache.end_offset_for(5) == 420  # the latest epoch ends at the log end offset...
    leo.value = 450
    assert cache.end_offset_for(5) == 450  # ...asked each time, not remembered
    assert cache.end_offset_for(0) == UNDEFINED_EPOCH_OFFSET  # older than the first entry
    assert cache.end_offset_for(7) == UNDEFINED_EPOCH_OFFSET  # newer than the latest
    # an empty cache knows no epoch, except Kafka's UNDEFINED_EPOCH, which is its "latest"
    empty = _cache(tmp_path / "empty", Leo(9))
    assert empty.end_offset_for(0) == UNDEFINED_EPOCH_OFFSET
    assert empty.end_offset_for(UNDEFINED_EPOCH) == 9


def test_clear_and_flush_latest_drops_entries_from_the_truncation_offset(tmp_path):
    cache = _cache(tmp_path)
    for epoch, start in ((0, 0), (1, 10), (2, 20)):
        cache.assign(epoch, start)
    cache.clear_and_flush_latest(25)  # beyond the latest entry's start: nothing to drop
    assert [e.epoch for e in cache.epoch_entries()] == [0, 1, 2]
    cache.clear_and_flush_latest(10)  # the log now ends at 10: epochs 1 and 2 began at or after it
    assert cache.epoch_entries() == [EpochEntry(0, 0)]
    assert _file(tmp_path) == "0\n1\n0 0\n"
    cache.assign(3, 10)  # a new leader's epoch starts at the new end
    assert cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(3, 10)]


def test_clear_and_flush_earliest_moves_the_covering_epoch_up_to_the_log_start(tmp_path):
    cache = _cache(tmp_path)
    for epoch, start in ((0, 0), (1, 10), (2, 20)):
        cache.assign(epoch, start)
    cache.clear_and_flush_earliest(15)  # the log starts at 15, inside epoch 1
    assert cache.epoch_entries() == [EpochEntry(1, 15), EpochEntry(2, 20)]
    cache.clear_and_flush_earliest(20)  # exactly where epoch 2 begins: it stays as it is
    assert cache.epoch_entries() == [EpochEntry(2, 20)]
    cache.clear_and_flush_earliest(30)  # past every start: the latest epoch now begins at 30
    assert cache.epoch_entries() == [EpochEntry(2, 30)]
    assert _file(tmp_path) == "0\n1\n2 30\n"
    cache.clear_and_flush_earliest(10)  # before the earliest entry: nothing changes
    assert cache.epoch_entries() == [EpochEntry(2, 30)]


def test_clear_drops_entries_in_memory_and_clear_and_flush_in_the_file_too(tmp_path):
    cache = _cache(tmp_path)
    cache.assign(4, 0)
    cache.clear()
    assert cache.epoch_entries() == [] and cache.latest_epoch() == UNDEFINED_EPOCH
    assert _file(tmp_path) == "0\n1\n4 0\n"
    cache.clear_and_flush()
    assert _file(tmp_path) == "0\n0\n"


def test_a_new_cache_reloads_the_entries_from_the_file(tmp_path):
    cache = _cache(tmp_path, Leo(50))
    for epoch, start in ((0, 0), (3, 12), (4, 40)):
        cache.assign(epoch, start)
    again = _cache(tmp_path, Leo(50))
    assert again.epoch_entries() == cache.epoch_entries()
    assert again.latest_epoch() == 4 and again.end_offset_for(3) == 40
    # no file, an empty file, or a version alone: no entries (Kafka creates the file empty)
    assert _cache(tmp_path / "none").epoch_entries() == []
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / LEADER_EPOCH_CHECKPOINT_FILE).write_text("")
    assert _cache(tmp_path / "empty").epoch_entries() == []


@pytest.mark.parametrize(
    "text, line, why",
    [
        ("0\n2\n0 0\n3 twelve\n", 4, "epoch and start offset must be numbers, found '3 twelve'"),
        ("0\n1\n0 0 7\n", 3, "expected 'epoch startOffset', found '0 0 7'"),
        ("0\n3\n0 0\n", 2, "says 3 entries but the file holds 1"),
        ("0\nmany\n", 2, "entry count 'many' is not a number"),
        ("1\n0\n", 1, "unrecognized version '1'"),
    ],
)
def test_a_corrupt_file_is_an_error_naming_the_file_and_the_line(tmp_path, text, line, why):
    path = tmp_path / LEADER_EPOCH_CHECKPOINT_FILE
    path.write_text(text)
    with pytest.raises(CheckpointException) as e:
        _cache(tmp_path)
    assert str(e.value).startswith(f"{path}:{line}: ")
    assert why in str(e.value)


def test_the_file_is_replaced_whole_never_written_in_place(tmp_path):
    cache = _cache(tmp_path)
    cache.assign(0, 0)
    path = tmp_path / LEADER_EPOCH_CHECKPOINT_FILE
    before = path.stat().st_ino
    cache.assign(1, 5)
    assert path.stat().st_ino != before  # a new file renamed over the old one
    assert not (tmp_path / (LEADER_EPOCH_CHECKPOINT_FILE + ".tmp")).exists()


def test_concurrent_assigns_keep_the_entries_ordered(tmp_path):
    cache = _cache(tmp_path)

    def leader(first_epoch: int) -> None:
        for epoch in range(first_epoch, 200, 4):
            cache.assign(epoch, epoch * 10)

    threads = [threading.Thread(target=leader, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries = cache.epoch_entries()
    assert entries == sorted(entries) and len({e.epoch for e in entries}) == len(entries)
    assert entries[-1] == EpochEntry(199, 1990)  # the newest epoch at the largest offset always wins
    assert LeaderEpochCheckpointFile.in_dir(tmp_path).read() == entries
