"""A connector's lifecycle follows its state table; a bad move is refused in Kafka's wording."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import IllegalStateException
from kafka_lite.connect.file.file_stream_source_connector import FileStreamSourceConnector
from kafka_lite.connect.runtime.worker_connector import VALID_PREVIOUS_STATES, State, WorkerConnector

pytestmark = pytest.mark.unit


def connector(state: State) -> WorkerConnector:
    wc = WorkerConnector("c", FileStreamSourceConnector(), ctx=None)
    wc.state = state
    return wc


@pytest.mark.parametrize(
    ("current", "target"),
    [(s, t) for t, previous in VALID_PREVIOUS_STATES.items() for s in State if s not in previous],
)
def test_every_move_the_table_does_not_allow_is_refused(current, target):
    with pytest.raises(IllegalStateException, match=f"Instead it is in {current.value} state"):
        connector(current).transition_to(target)


def test_start_and_shutdown_walk_the_table():
    wc = connector(State.INIT)
    wc.initialize({"name": "c", "file": "in.txt", "topic": "t"})
    assert wc.start() and wc.state is State.STARTED
    wc.shutdown()
    assert wc.state is State.STOPPED


def test_a_connector_that_fails_to_start_is_failed():
    wc = connector(State.INIT)
    wc.initialize({"name": "c", "file": "in.txt"})  # no topic: FileStreamSourceConnector.start raises
    assert not wc.start()
    assert wc.state is State.FAILED
