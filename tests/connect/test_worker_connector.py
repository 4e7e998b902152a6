"""A connector's lifecycle follows its state table; a bad move is refused in Kafka's wording, and
every change of target state is reported to the status listener."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.connect.file.file_stream_source_connector import FileStreamSourceConnector
from kafka_lite.connect.runtime.target_state import TargetState
from kafka_lite.connect.runtime.worker_connector import VALID_PREVIOUS_STATES, State, WorkerConnector
from tests.connect.recording_listener import RecordingListener

pytestmark = pytest.mark.unit

GOOD = {"name": "c", "file": "in.txt", "topic": "t"}


def connector(state: State) -> WorkerConnector:
    wc = WorkerConnector("c", FileStreamSourceConnector(), ctx=None, status_listener=RecordingListener())
    wc.state = state
    return wc


@pytest.mark.parametrize(
    ("current", "target"),
    [(s, t) for t, previous in VALID_PREVIOUS_STATES.items() for s in State if s not in previous],
)
def test_every_move_the_table_does_not_allow_is_refused(current, target):
    with pytest.raises(IllegalStateException, match=f"Instead it is in {current.value} state"):
        connector(current)._move_to(target)


def test_start_pause_resume_and_shutdown_walk_the_table_and_are_reported():
    wc = connector(State.INIT)
    wc.initialize(GOOD)
    wc.transition_to(TargetState.STARTED)
    assert wc.state is State.STARTED
    wc.transition_to(TargetState.PAUSED)  # a paused connector is stopped
    assert wc.state is State.STOPPED
    wc.transition_to(TargetState.STARTED)
    assert wc.state is State.STARTED
    wc.shutdown()
    assert wc.state is State.STOPPED
    assert wc.status_listener.names() == ["startup", "pause", "resume", "shutdown"]


def test_a_connector_created_paused_is_not_started_until_resumed():
    wc = connector(State.INIT)
    wc.initialize(GOOD)
    wc.transition_to(TargetState.PAUSED)
    assert wc.state is State.STOPPED
    wc.transition_to(TargetState.STARTED)
    assert wc.state is State.STARTED
    assert wc.status_listener.names() == ["pause", "resume"]


def test_a_connector_that_fails_to_start_is_failed_and_stays_so():
    wc = connector(State.INIT)
    wc.initialize({"name": "c", "file": "in.txt"})  # no topic: FileStreamSourceConnector.start raises
    wc.transition_to(TargetState.STARTED)
    assert wc.state is State.FAILED
    wc.transition_to(TargetState.PAUSED)
    assert wc.state is State.FAILED
    assert wc.status_listener.names() == ["failure"]
