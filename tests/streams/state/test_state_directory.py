"""The task directories, their locks, and the .checkpoint file."""

import os

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.streams.errors import LockException
from kafka_lite.streams.state.internals.offset_checkpoint import CheckpointException, OffsetCheckpoint
from kafka_lite.streams.state.state_directory import StateDirectory
from tests.streams.state.support import TaskId

pytestmark = pytest.mark.unit


def test_checkpoint_round_trip_in_kafkas_format(tmp_path):
    checkpoint = OffsetCheckpoint(tmp_path / ".checkpoint")
    assert checkpoint.read() == {}  # no file yet: nothing restored
    offsets = {TopicPartition("app-b-changelog", 3): 880, TopicPartition("app-a-changelog", 3): 1500}
    checkpoint.write(offsets)
    assert (tmp_path / ".checkpoint").read_text() == "0\n2\napp-a-changelog 3 1500\napp-b-changelog 3 880\n"
    assert checkpoint.read() == offsets
    assert all(isinstance(tp, TopicPartition) for tp in checkpoint.read())
    checkpoint.delete()
    assert not (tmp_path / ".checkpoint").exists()


def test_checkpoint_is_written_through_a_temp_file_and_renamed(tmp_path, monkeypatch):
    checkpoint = OffsetCheckpoint(tmp_path / ".checkpoint")
    checkpoint.write({TopicPartition("t", 0): 1})
    renames = []
    real_replace = os.replace

    def replace(src, dst):
        # Only this test's renames: a broker of the session's cluster, in the same process, may be
        # writing its own checkpoints meanwhile.
        if os.path.dirname(dst) == str(tmp_path):
            renames.append((os.path.basename(src), os.path.basename(dst)))
            # at the moment of the rename the old checkpoint is still whole
            assert OffsetCheckpoint(dst).read() == {TopicPartition("t", 0): 1}
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    checkpoint.write({TopicPartition("t", 0): 2})
    assert renames == [(".checkpoint.tmp", ".checkpoint")]
    assert checkpoint.read() == {TopicPartition("t", 0): 2}
    assert not (tmp_path / ".checkpoint.tmp").exists()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("0\n1\nt 0\n", ":3:"),
        ("0\n1\nt zero 5\n", ":3:"),
        ("1\n0\n", ":1:"),
        ("0\n2\nt 0 5\n", ":2:"),
    ],
)
def test_a_malformed_checkpoint_names_the_file_and_line(tmp_path, text, where):
    path = tmp_path / ".checkpoint"
    path.write_text(text)
    with pytest.raises(CheckpointException, match=f"{path}{where}"):
        OffsetCheckpoint(path).read()


def test_task_directories_are_under_the_application(tmp_path):
    state = StateDirectory("app", tmp_path, MockTime())
    assert state.directory_for_task(TaskId(0, 3)) == tmp_path / "app" / "0_3"
    assert (tmp_path / "app" / "0_3").is_dir()


def test_a_second_holder_is_refused_until_the_first_unlocks(tmp_path):
    time = MockTime()
    first, second = StateDirectory("app", tmp_path, time), StateDirectory("app", tmp_path, time)
    task = TaskId(0, 1)
    assert first.lock(task)
    assert first.lock(task)  # held already
    assert (tmp_path / "app" / "0_1" / ".lock").exists()
    start = time.milliseconds()
    assert not second.lock(task, retry=2)
    assert time.milliseconds() - start == 400  # two waits of 200 ms, on mock time
    with pytest.raises(LockException, match=r"task \[0_1\] Failed to lock the state directory .*0_1"):
        second.lock_or_raise(task)
    first.unlock(task)
    assert second.lock(task)
    second.unlock(task)


def test_clean_removed_tasks_deletes_only_old_unlocked_directories(tmp_path):
    time = MockTime(start_ms=0)
    owner, cleaner = StateDirectory("app", tmp_path, time), StateDirectory("app", tmp_path, time)
    for task in (TaskId(0, 0), TaskId(0, 1)):  # two tasks that ran here: their .lock files exist
        assert cleaner.lock(task)
        cleaner.unlock(task)
    owner.lock(TaskId(0, 1))
    (tmp_path / "app" / "not-a-task").mkdir()
    old = 1_000  # seconds since the epoch
    for name in ("0_0", "0_1"):
        os.utime(tmp_path / "app" / name, (old, old))

    time.advance(old * 1000 + 500)
    assert cleaner.clean_removed_tasks(cleanup_delay_ms=1000) == []  # not old enough yet
    time.advance(1000)
    assert cleaner.clean_removed_tasks(cleanup_delay_ms=1000) == ["0_0"]
    assert sorted(p.name for p in (tmp_path / "app").iterdir()) == ["0_1", "not-a-task"]
    owner.unlock(TaskId(0, 1))
