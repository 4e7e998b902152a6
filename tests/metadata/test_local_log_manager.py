"""LocalLogManager, the test RaftClient, as Kafka 3.3's LocalLogManagerTest: one shared log, the
test elects the leader and says when appends commit, listeners hear in Raft's order."""

import pytest

from kafka_lite.common.time import MockTime
from kafka_lite.raft.offset_and_epoch import OffsetAndEpoch
from kafka_lite.raft.raft_client import LeaderAndEpoch, Listener, NotLeaderException
from kafka_lite.testing.local_log_manager import LocalLogManager, SharedLogData

pytestmark = pytest.mark.unit


class RecordingListener(Listener):
    def __init__(self):
        self.events = []

    def handle_commit(self, batches):
        for batch in batches:
            self.events.append(("commit", batch.base_offset, batch.last_offset, list(batch.records)))

    def handle_snapshot(self, reader):
        records = [r for batch in reader for r in batch.records]
        self.events.append(("snapshot", reader.last_contained_log_offset(), records))

    def handle_leader_change(self, leader):
        self.events.append(("leader", leader.leader_id, leader.epoch))


def _cluster(n=2):
    shared = SharedLogData(MockTime())
    managers, listeners = [], []
    for node in range(n):
        manager = LocalLogManager(node, shared)
        listener = RecordingListener()
        manager.register(listener)
        managers.append(manager)
        listeners.append(listener)
    return shared, managers, listeners


def test_the_elected_leader_appends_and_everyone_hears_the_commit_after_the_leader():
    shared, managers, listeners = _cluster()
    shared.elect_leader(0)
    assert managers[0].schedule_atomic_append(1, ["a", "b"]) == 1
    assert managers[0].schedule_append(1, ["c"]) == 2
    shared.poll_all()
    for listener in listeners:
        assert listener.events == [("commit", 0, 1, ["a", "b"]), ("commit", 2, 2, ["c"]), ("leader", 0, 1)]
    with pytest.raises(NotLeaderException):
        managers[1].schedule_append(1, ["x"])
    with pytest.raises(NotLeaderException):
        managers[0].schedule_append(0, ["x"])


def test_without_auto_commit_nothing_is_delivered_until_committed():
    shared, managers, listeners = _cluster()
    shared.elect_leader(0)
    shared.set_auto_commit(False)
    shared.poll_all()
    managers[0].schedule_append(1, ["a"])
    managers[0].schedule_append(1, ["b"])
    shared.poll_all()
    assert listeners[1].events == [("leader", 0, 1)]
    shared.commit_up_to(0)
    shared.poll_all()
    assert listeners[1].events[-1] == ("commit", 0, 0, ["a"])
    assert shared.high_watermark == 1


def test_an_election_drops_the_uncommitted_tail_and_resign_leaves_no_leader():
    shared, managers, listeners = _cluster()
    shared.elect_leader(0)
    shared.set_auto_commit(False)
    managers[0].schedule_append(1, ["lost"])
    shared.elect_leader(1)
    assert managers[1].schedule_append(2, ["kept"]) == 0
    shared.commit_all()
    shared.poll_all()
    # The leader is told after the committed batches, and the first leader's append never arrives.
    assert listeners[0].events == [("commit", 0, 0, ["kept"]), ("leader", 1, 2)]
    managers[1].resign(1)  # an older epoch: ignored
    assert shared.leader == LeaderAndEpoch(1, 2)
    managers[1].resign(2)
    assert shared.leader == LeaderAndEpoch(None, 3)


def test_a_listener_behind_a_snapshot_loads_it_then_reads_the_tail():
    shared, managers, _ = _cluster(1)
    shared.elect_leader(0)
    managers[0].schedule_append(1, ["a", "b"])
    managers[0].schedule_append(1, ["c"])
    writer = managers[0].create_snapshot(OffsetAndEpoch(2, 1), 123)
    writer.append(["a+b"])
    writer.freeze()
    assert managers[0].create_snapshot(OffsetAndEpoch(2, 1), 123) is None
    assert shared.log_start_offset == 2
    late = LocalLogManager(7, shared)
    listener = RecordingListener()
    late.register(listener)
    late.poll()
    assert listener.events == [("snapshot", 1, ["a+b"]), ("commit", 2, 2, ["c"]), ("leader", 0, 1)]
