"""The distributed herder without a cluster. After a rebalance: catch up with the assignment's config
offset, then start its work; or rejoin, or leave and back off (0.10.1's handleRebalanceCompleted).
A connector's new task configs: written by the leader, sent to the leader by a follower."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import TimeoutException
from kafka_lite.common.time import MockTime
from kafka_lite.connect.runtime.distributed.cluster_config_state import ClusterConfigState
from kafka_lite.connect.runtime.distributed.connect_protocol import Assignment
from kafka_lite.connect.runtime.distributed.distributed_config import DistributedConfig
from kafka_lite.connect.runtime.distributed.distributed_herder import DistributedHerder
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.storage.memory_status_backing_store import MemoryStatusBackingStore
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId as Id

JSON = "org.apache.kafka.connect.json.JsonConverter"
SOURCE = {"name": "src", "connector.class": "FileStreamSource", "topic": "t", "file": "in.txt"}
TASK = {"topic": "t", "file": "in.txt", "task.class": "org.apache.kafka.connect.file.FileStreamSourceTask"}


def state(offset: int) -> ClusterConfigState:
    return ClusterConfigState(
        offset, {"src": 1}, {"src": SOURCE}, {"src": TargetState.STARTED}, {Id("src", 0): TASK}
    )


class FakeConfigStore:
    def __init__(self, snapshot: ClusterConfigState, end: ClusterConfigState | None) -> None:
        self.current, self.end = snapshot, end  # end None: reading to the end times out

    def set_update_listener(self, listener) -> None:
        pass

    def snapshot(self) -> ClusterConfigState:
        return self.current

    def refresh(self, timeout_ms: int) -> None:
        if self.end is None:
            raise TimeoutException(f"Timed out after {timeout_ms} ms")
        self.current = self.end


class FakeMember:
    def __init__(self, member_id: str) -> None:
        self.id = member_id
        self.rejoin_requested = False
        self.left = False

    def member_id(self) -> str:
        return self.id

    def request_rejoin(self) -> None:
        self.rejoin_requested = True

    def maybe_leave_group(self) -> None:
        self.left = True


class FakeWorker:
    def __init__(self) -> None:
        self.started: list[object] = []

    def start_connector(self, name, config, ctx, listener, initial_state) -> bool:
        self.started.append(name)
        return True

    def start_task(self, id, conn_config, task_config, listener, initial_state) -> bool:
        assert task_config["task.class"].__name__ == "FileStreamSourceTask"
        self.started.append(id)
        return True

    def is_running(self, name: str) -> bool:
        return False  # no task reconfiguration in these tests


def herder(
    snapshot: ClusterConfigState, end: ClusterConfigState | None, assignment: Assignment, me: str = "m2"
):
    config = DistributedConfig({
        "bootstrap.servers": "127.0.0.1:1", "group.id": "g", "key.converter": JSON, "value.converter": JSON,
        "internal.key.converter": JSON, "internal.value.converter": JSON,
        "offset.storage.topic": "o", "config.storage.topic": "c", "status.storage.topic": "s",
    })  # fmt: skip
    time = MockTime()
    h = DistributedHerder(config, FakeWorker(), "w", MemoryStatusBackingStore(), FakeConfigStore(snapshot, end),
                          "http://me/", time)  # fmt: skip
    h.member = FakeMember(me)
    h.config_state = snapshot
    h.assignment, h.generation_id, h.rebalance_resolved = assignment, 3, False
    return h, time


def assignment(offset: int, error: int = Assignment.NO_ERROR) -> Assignment:
    return Assignment(error, "m1", "http://leader/", offset, ["src"], [Id("src", 0)])


def test_a_worker_up_to_date_starts_its_assignment():
    h, _ = herder(state(5), state(5), assignment(5))
    assert h.handle_rebalance_completed()
    assert h.worker.started == ["src", Id("src", 0)] and h.rebalance_resolved


def test_a_worker_behind_catches_up_then_starts():
    h, _ = herder(state(3), state(5), assignment(5))
    assert h.handle_rebalance_completed()
    assert h.config_state.offset == 5 and h.worker.started == ["src", Id("src", 0)]


def test_a_worker_that_cannot_catch_up_leaves_backs_off_and_rejoins_without_starting_anything():
    h, time = herder(state(3), None, assignment(5))
    start = time.milliseconds()
    assert not h.handle_rebalance_completed()
    assert h.member.left and h.member.rejoin_requested and not h.can_read_configs
    assert time.milliseconds() - start == 5 * 60 * 1000  # worker.unsync.backoff.ms
    assert h.worker.started == [] and not h.rebalance_resolved


def test_a_worker_past_the_assignments_offset_rejoins():
    h, _ = herder(state(7), state(7), assignment(5))
    assert not h.handle_rebalance_completed()
    assert h.member.rejoin_requested and h.worker.started == []


@pytest.mark.parametrize("me, start, reads", [("m1", 5, True), ("m2", 3, True), ("m2", 5, False)])
def test_a_failed_assignment_is_a_rejoin_after_reading_if_leader_or_behind(me, start, reads):
    h, _ = herder(state(start), state(6), assignment(5, Assignment.CONFIG_MISMATCH), me)
    assert not h.handle_rebalance_completed()
    assert h.member.rejoin_requested and h.worker.started == []
    assert (h.config_state.offset == 6) is reads


class RunningWorker(FakeWorker):
    """A worker whose connector runs and generates one task config."""

    def is_running(self, name: str) -> bool:
        return True

    def is_sink_connector(self, name: str) -> bool:
        return False

    def connector_task_configs(self, name, max_tasks, sink_topics):
        from kafka_lite.connect.file.file_stream_source_task import FileStreamSourceTask

        return [{"topic": "t", "file": "new.txt", "task.class": FileStreamSourceTask}]


def test_new_task_configs_are_written_by_the_leader_and_sent_to_it_by_a_follower(monkeypatch):
    from kafka_lite.connect.runtime.rest import rest_client

    sent = []
    monkeypatch.setattr(
        rest_client, "http_request", lambda url, method, body: sent.append((url, method, body))
    )
    written = []
    expected = [{**TASK, "file": "new.txt"}]  # task.class as Kafka's class name

    leader, _ = herder(state(5), state(5), assignment(5), me="m1")
    leader.worker = RunningWorker()
    leader.config_backing_store.put_task_configs = lambda name, configs: written.append((name, configs))
    leader.reconfigure_connector("src", lambda error, _: written.append(error))
    assert written == [("src", expected), None] and sent == []

    follower, _ = herder(state(5), state(5), assignment(5), me="m2")
    follower.worker = RunningWorker()
    done = []
    follower.reconfigure_connector("src", lambda error, _: done.append(error))
    follower.forward_request_executor.shutdown(wait=True)
    assert sent == [("http://leader/connectors/src/tasks", "POST", expected)] and done == [None]

    # Unchanged configs are not written again.
    same, _ = herder(state(5), state(5), assignment(5), me="m1")
    same.worker = RunningWorker()
    same.config_state = ClusterConfigState(5, {"src": 1}, {"src": SOURCE}, {"src": TargetState.STARTED},
                                           {Id("src", 0): expected[0]})  # fmt: skip
    same.config_backing_store.put_task_configs = lambda *args: pytest.fail("unchanged task configs written")
    same.reconfigure_connector("src", lambda error, _: None)
