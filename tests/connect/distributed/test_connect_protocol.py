"""ConnectProtocol's bytes and the 0.10.1 leader's round-robin assignment, without a cluster."""

from __future__ import annotations

import pytest

from kafka_lite.common.protocol.types import SchemaException
from kafka_lite.common.time import MockTime
from kafka_lite.connect.runtime.distributed.cluster_config_state import ClusterConfigState
from kafka_lite.connect.runtime.distributed.connect_protocol import (
    Assignment,
    WorkerState,
    deserialize_assignment,
    deserialize_metadata,
    serialize_assignment,
    serialize_metadata,
)
from kafka_lite.connect.runtime.distributed.worker_coordinator import WorkerCoordinator
from kafka_lite.connect.util.connector_task_id import ConnectorTaskId as Id


def test_worker_state_round_trips_in_kafkas_layout():
    data = serialize_metadata(WorkerState("http://w1:8083/", 42))
    # version 0, then the URL as an INT16-length string, then the offset as an INT64.
    url = b"http://w1:8083/"
    assert data == b"\x00\x00" + len(url).to_bytes(2, "big") + url + (42).to_bytes(8, "big")
    assert deserialize_metadata(data) == WorkerState("http://w1:8083/", 42)


def test_assignment_round_trips_with_the_connector_as_task_minus_one():
    assignment = Assignment(Assignment.NO_ERROR, "leader-1", "http://l:8083/", 7, ["a", "b"],
                            [Id("a", 0), Id("c", 2), Id("a", 1)])  # fmt: skip
    data = serialize_assignment(assignment)
    back = deserialize_assignment(data)
    assert back.connectors == ["a", "b"]
    assert sorted(back.tasks) == [Id("a", 0), Id("a", 1), Id("c", 2)]
    assert (back.error, back.leader, back.leader_url, back.offset) == (0, "leader-1", "http://l:8083/", 7)
    assert assignment.as_map() == {"a": [-1, 0, 1], "b": [-1], "c": [2]}
    assert not back.failed()


def test_a_short_assignment_names_the_missing_field():
    data = serialize_assignment(Assignment(Assignment.CONFIG_MISMATCH, "l", "u", 3))
    assert deserialize_assignment(data).failed()
    with pytest.raises(SchemaException, match="assignment"):
        deserialize_assignment(data[:-3])


class FakeConfigStorage:
    def __init__(self, *snapshots: ClusterConfigState) -> None:
        self.snapshots = list(snapshots)

    def snapshot(self) -> ClusterConfigState:
        return self.snapshots.pop(0) if len(self.snapshots) > 1 else self.snapshots[0]


def coordinator(*snapshots: ClusterConfigState) -> WorkerCoordinator:
    return WorkerCoordinator(None, "connect-cluster", 60000, 10000, 3000, MockTime(), 100, "http://me/",
                             FakeConfigStorage(*snapshots), listener=None)  # fmt: skip


def member_metadata(**offsets: int) -> dict[str, bytes]:
    return {
        member: serialize_metadata(WorkerState(f"http://{member}/", offset))
        for member, offset in offsets.items()
    }


def test_the_leader_deals_connectors_and_tasks_round_robin_over_sorted_members():
    state = ClusterConfigState(10, {"a": 2, "b": 1}, {"a": {}, "b": {}})
    c = coordinator(state)
    c.metadata()  # the snapshot the leader assigns from
    result = c.perform_assignment("w1", "default", member_metadata(w2=10, w1=10, w3=10))
    got = {member: deserialize_assignment(data) for member, data in result.items()}
    # a -> w1, a-0 -> w2, a-1 -> w3, b -> w1, b-0 -> w2: one iterator for connectors and tasks.
    assert got["w1"].connectors == ["a", "b"] and got["w1"].tasks == []
    assert got["w2"].connectors == [] and got["w2"].tasks == [Id("a", 0), Id("b", 0)]
    assert got["w3"].tasks == [Id("a", 1)]
    assert {a.leader_url for a in got.values()} == {"http://w1/"}
    assert {a.offset for a in got.values()} == {10}
    assert c.leader_state.owner_url(Id("a", 1)) == "http://w3/"


def test_a_leader_behind_a_member_answers_config_mismatch_to_everyone():
    c = coordinator(ClusterConfigState(5), ClusterConfigState(6))
    c.metadata()
    result = c.perform_assignment("w1", "default", member_metadata(w1=5, w2=9))
    assert all(deserialize_assignment(d).error == Assignment.CONFIG_MISMATCH for d in result.values())
    assert {deserialize_assignment(d).offset for d in result.values()} == {9}


def test_a_leader_that_has_read_further_since_its_join_assigns_from_its_fresh_snapshot():
    c = coordinator(ClusterConfigState(5), ClusterConfigState(9, {"a": 0}, {"a": {}}))
    c.metadata()
    result = c.perform_assignment("w1", "default", member_metadata(w1=5, w2=9))
    assert deserialize_assignment(result["w1"]).connectors == ["a"]
    assert deserialize_assignment(result["w2"]).error == Assignment.NO_ERROR
