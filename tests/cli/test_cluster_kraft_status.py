"""The KRaft status table's state column, from a health dict as ``kraft_health`` builds it: what a
node is called when the brokers' Metadata answered, and when it did not."""

from __future__ import annotations

import os

from kafka_lite.cli import cluster_kraft

NODE = {"id": 1, "pid": os.getpid(), "roles": ["broker"], "port": 9093}


def health(**metadata) -> dict:
    return {
        "brokers_alive": {1: True},
        "registered": [],
        "controller": None,
        "topics": [],
        "quorum": None,
        **metadata,
    }


def test_a_running_broker_the_metadata_does_not_list_is_fenced():
    assert cluster_kraft.node_state(NODE, health(leaders={})) == "[red]fenced[/]"
    assert cluster_kraft.node_state(NODE, health(leaders={}, registered=[1])) == "unfenced"


def test_with_no_metadata_answer_a_broker_is_not_called_fenced():
    state = cluster_kraft.node_state(NODE, health())
    assert "fenced" not in state and "no metadata answer" in state, state
