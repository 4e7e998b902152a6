"""The round-of-replication picture is recorded from live replica managers: every request and answer in
the order the leader's calls made them, with the LEOs and the HW read from the three brokers."""

from __future__ import annotations

import pytest

from kafka_lite.diagrams import DIAGRAMS
from kafka_lite.diagrams.replication_round import (
    replication_round,
    replication_round_diagram,
    replication_round_steps,
)

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def steps():
    return replication_round_steps()


def test_a_round_is_a_produce_one_fetch_per_follower_and_the_answers_they_set_off(steps):
    assert [(s.sender, s.receiver) for s in steps] == [
        ("producer", "leader"),
        # the append completes the followers' waiting fetches at once, before the produce parks
        ("leader", "broker 1"),
        ("leader", "broker 2"),
        ("broker 1", "leader"),
        ("broker 2", "leader"),
        # the second follower's fetch moves the HW: the consumer's waiting fetch and the produce complete
        ("leader", "consumer"),
        ("leader", "producer"),
    ]
    assert sum(s.is_request for s in steps) == 3


def test_the_hw_moves_only_when_the_last_in_sync_follower_reports(steps):
    produce, to_1, to_2, from_1, from_2, to_consumer, to_producer = steps
    assert (produce.leader_log_end_offset, produce.high_watermark) == (3, 2)
    assert to_1.message == to_2.message == "Fetch answer: offset 2, HW 2"
    assert (from_1.follower_log_end_offsets, from_1.high_watermark) == ((3, 2), 2)
    assert "the HW stays 2" in from_1.effect and "it waits" in from_1.effect
    assert (from_2.follower_log_end_offsets, from_2.high_watermark) == ((3, 3), 3)
    assert "the HW moves from 2 to 3" in from_2.effect and "it waits" in from_2.effect
    assert to_consumer.message == "Fetch answer: offset 2, HW 3"
    assert to_producer.message == "Produce answer: offset 2"


def test_the_picture_lists_the_steps_in_order(steps):
    source = replication_round_diagram(steps).source
    positions = [source.index(s.message) for s in steps if s.message != steps[1].message]
    assert positions == sorted(positions)
    assert source.count("Fetch answer: offset 2, HW 2") == 2
    assert "3 in the round" in source


def test_the_docs_draw_it():
    assert DIAGRAMS["replication_round"] is replication_round
