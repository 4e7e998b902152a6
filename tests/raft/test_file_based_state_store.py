"""FileBasedStateStore: the quorum-state file's JSON, the atomic write, and clear errors on a corrupt
file (Kafka's FileBasedStateStoreTest); the in-memory store behaves the same."""

from __future__ import annotations

import json
import os

import pytest

from kafka_lite.raft.election_state import ElectionState
from kafka_lite.raft.file_based_state_store import DATA_VERSION, FileBasedStateStore
from kafka_lite.raft.simulation.mock_quorum_state_store import MockQuorumStateStore

pytestmark = pytest.mark.unit

VOTERS = {1, 2, 3}


@pytest.fixture(params=["file", "memory"])
def store(request, tmp_path):
    return (
        FileBasedStateStore(tmp_path / "quorum-state") if request.param == "file" else MockQuorumStateStore()
    )


@pytest.mark.parametrize(
    "election",
    [
        ElectionState.with_elected_leader(2, 1, VOTERS),
        ElectionState.with_voted_candidate(7, 3, VOTERS),
        ElectionState.with_unknown_leader(0, VOTERS),
    ],
)
def test_read_back_what_was_written(store, election):
    assert store.read_election_state() is None
    store.write_election_state(election)
    read = store.read_election_state()
    assert read == election
    assert read.voters() == VOTERS


def test_overwrite_and_clear(store):
    store.write_election_state(ElectionState.with_voted_candidate(1, 2, VOTERS))
    store.write_election_state(ElectionState.with_elected_leader(2, 3, VOTERS))
    assert store.read_election_state() == ElectionState.with_elected_leader(2, 3, VOTERS)
    store.clear()
    assert store.read_election_state() is None


def test_file_is_kafkas_json(tmp_path):
    path = tmp_path / "quorum-state"
    FileBasedStateStore(path).write_election_state(ElectionState.with_elected_leader(2, 1, VOTERS))
    text = path.read_text()
    assert text.count("\n") == 0  # one line, as Kafka writes it
    assert json.loads(text) == {
        "clusterId": "",
        "leaderId": 1,
        "leaderEpoch": 2,
        "votedId": -1,
        "appliedOffset": 0,
        "currentVoters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}],
        DATA_VERSION: 0,
    }


def test_reads_a_file_kafka_wrote(tmp_path):
    path = tmp_path / "quorum-state"
    path.write_text(
        '{"clusterId":"","leaderId":-1,"leaderEpoch":4,"votedId":2,"appliedOffset":0,'
        '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}'
    )
    assert FileBasedStateStore(path).read_election_state() == ElectionState.with_voted_candidate(4, 2, VOTERS)


def test_write_leaves_no_temporary_file_and_replaces_atomically(tmp_path, monkeypatch):
    path = tmp_path / "quorum-state"
    store = FileBasedStateStore(path)
    store.write_election_state(ElectionState.with_voted_candidate(1, 2, VOTERS))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quorum-state"]

    # A crash at the rename: the old state is intact, and the temporary file is cleaned up.
    def failing_replace(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="Error while writing the Quorum status"):
        store.write_election_state(ElectionState.with_elected_leader(2, 3, VOTERS))
    monkeypatch.undo()
    assert store.read_election_state() == ElectionState.with_voted_candidate(1, 2, VOTERS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quorum-state"]


def test_clear_removes_a_leftover_temporary_file(tmp_path):
    path = tmp_path / "quorum-state"
    (tmp_path / "quorum-state.tmp").write_text("half")
    store = FileBasedStateStore(path)
    store.write_election_state(ElectionState.with_unknown_leader(0, VOTERS))
    (tmp_path / "quorum-state.tmp").write_text("half")
    store.clear()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("", "File ended prematurely"),
        ("{not json", "Expecting property name"),
        ("[1, 2]", "is not an object node"),
        ('{"leaderId": 1}', "does not have data_version field"),
        ('{"data_version": 0, "leaderId": 1}', "unable to locate field 'clusterId'"),
        (
            '{"clusterId":"","leaderId":"one","leaderEpoch":1,"votedId":-1,"appliedOffset":0,'
            '"currentVoters":[],"data_version":0}',
            "expected an integer leaderId",
        ),
        ('{"data_version": 5}', "unsupported data_version 5"),
    ],
)
def test_corrupt_file_is_a_clear_error(tmp_path, content, reason):
    path = tmp_path / "quorum-state"
    path.write_text(content)
    with pytest.raises(OSError) as error:
        FileBasedStateStore(path).read_election_state()
    message = str(error.value)
    assert "Error while reading the Quorum status from the file" in message and str(path) in message
    assert reason in message
