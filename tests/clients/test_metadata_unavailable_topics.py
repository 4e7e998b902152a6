"""Which topics a Metadata response leaves undescribed (``unavailable_topics``), and that an update keeps
them beside the Cluster for the consumer's coordinator to read."""

from __future__ import annotations

import pytest

from kafka_lite.clients.metadata import Cluster, Metadata, unavailable_topics
from kafka_lite.common.errors import Errors
from kafka_lite.common.time import MockTime

pytestmark = pytest.mark.unit


def topic(
    name: str, error: Errors = Errors.NONE, partition_errors: tuple[Errors, ...] = (Errors.NONE,)
) -> dict:
    partitions = [
        {"partition_error_code": e.code, "partition_id": i, "leader": -1 if e is not Errors.NONE else 0,
         "replicas": [0], "isr": [0]}
        for i, e in enumerate(partition_errors)
    ]  # fmt: skip
    return {
        "topic_error_code": error.code,
        "topic": name,
        "is_internal": False,
        "partition_metadata": partitions,
    }


def test_unknown_just_created_and_leaderless_topics_are_unavailable_and_unauthorized_ones_are_not():
    body = {
        "brokers": [{"node_id": 0, "host": "127.0.0.1", "port": 9092, "rack": None}],
        "topic_metadata": [
            topic("ready"),
            topic("missing", Errors.UNKNOWN_TOPIC_OR_PARTITION, ()),
            topic("just-created", Errors.LEADER_NOT_AVAILABLE, ()),
            topic("one-leaderless", partition_errors=(Errors.NONE, Errors.LEADER_NOT_AVAILABLE)),
            topic("forbidden", Errors.TOPIC_AUTHORIZATION_FAILED, ()),
        ],
    }
    assert unavailable_topics(body) == {"missing", "just-created", "one-leaderless"}


def test_an_update_keeps_the_unavailable_topics_until_the_next_one():
    clock = MockTime()
    metadata = Metadata(time=clock)
    metadata.update(Cluster(), clock.milliseconds(), frozenset({"connect-test"}))
    assert metadata.unavailable_topics == {"connect-test"}
    metadata.update(Cluster(), clock.milliseconds())
    assert metadata.unavailable_topics == frozenset()
