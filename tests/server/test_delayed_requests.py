"""The broker's own delayed operations on a MockTime purgatory: a CreateTopics waiting for its
leaders, a DeleteTopics waiting for its topics to leave the metadata cache, and a client request
waiting for the controller's first UpdateMetadata."""

from __future__ import annotations

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.api_keys import ApiKeys
from kafka_lite.common.protocol.requests import RequestHeader
from kafka_lite.common.time import MockTime
from kafka_lite.network.request_channel import Request
from kafka_lite.server.delayed_client_request import FIRST_METADATA, DelayedClientRequest
from kafka_lite.server.delayed_create_topics import CreateTopicMetadata, DelayedCreateTopics
from kafka_lite.server.delayed_delete_topics import DelayedDeleteTopics, DeleteTopicMetadata
from kafka_lite.server.metadata_cache import MetadataCache
from kafka_lite.utils.delayed_operation import DelayedOperationPurgatory
from tests.support.waiting import wait_until

pytestmark = pytest.mark.unit

LIVE = [{"id": 0, "end_points": [{"port": 9092, "host": "h", "listener_name": "PLAINTEXT", "security_protocol_type": 0}], "rack": None}]  # fmt: skip


def update_metadata(cache: MetadataCache, *leaders: tuple[str, int, int]) -> None:
    """An UpdateMetadata from controller 0 naming ``(topic, partition, leader)``s."""
    states = [
        {"topic": t, "partition": p, "controller_epoch": 1, "leader": leader, "leader_epoch": 0,
         "isr": [0], "zk_version": 0, "replicas": [0]}
        for t, p, leader in leaders
    ]  # fmt: skip
    cache.update_cache(0, 1, {"live_brokers": LIVE, "partition_states": states}, 3)


@pytest.fixture
def time():
    return MockTime()


@pytest.fixture
def purgatory(time):
    p = DelayedOperationPurgatory("test", time)
    yield p
    p.shutdown()


def test_create_topics_answers_once_every_created_partition_has_a_leader(time, purgatory):
    cache, answers = MetadataCache(0), []
    created = CreateTopicMetadata("t", (0, 1), Errors.NONE)
    refused = CreateTopicMetadata("old", (), Errors.TOPIC_ALREADY_EXISTS, "Topic 'old' already exists.")
    op = DelayedCreateTopics(30_000, [created, refused], cache, answers.append)
    assert not purgatory.try_complete_else_watch(op, ["t", "old"])
    update_metadata(cache, ("t", 0, 0), ("t", 1, -1))  # partition 1 has no leader yet
    assert purgatory.check_and_complete("t") == 0 and not answers
    update_metadata(cache, ("t", 0, 0), ("t", 1, 0))
    assert purgatory.check_and_complete("t") == 1
    assert answers == [
        {"t": (Errors.NONE, None), "old": (Errors.TOPIC_ALREADY_EXISTS, "Topic 'old' already exists.")}
    ]


def test_create_topics_times_out_for_the_topics_still_without_leaders(time, purgatory):
    cache, answers = MetadataCache(0), []
    metadata = [CreateTopicMetadata("led", (0,), Errors.NONE), CreateTopicMetadata("slow", (0,), Errors.NONE)]
    op = DelayedCreateTopics(1000, metadata, cache, answers.append)
    purgatory.try_complete_else_watch(op, ["led", "slow"])
    update_metadata(cache, ("led", 0, 0))
    purgatory.check_and_complete("led")
    time.advance(1000)
    wait_until(lambda: answers, what="the CreateTopics to expire")
    (answer,) = answers
    assert answer["led"] == (Errors.NONE, None)
    assert answer["slow"][0] is Errors.REQUEST_TIMED_OUT


def test_delete_topics_answers_once_the_topics_leave_the_metadata_cache(time, purgatory):
    """The controller's UpdateMetadata marks a deleted topic's partitions with leader -2; the cache
    drops them, and the DeleteTopics waiting on the topic completes once all of them are gone."""
    cache, answers = MetadataCache(0), []
    update_metadata(cache, ("t", 0, 0), ("t", 1, 0))
    marked = DeleteTopicMetadata("t", Errors.NONE)
    refused = DeleteTopicMetadata("x", Errors.UNKNOWN)
    op = DelayedDeleteTopics(30_000, [marked, refused], cache, answers.append)
    assert not purgatory.try_complete_else_watch(op, ["t", "x"])
    update_metadata(cache, ("t", 0, -2))  # partition 1 is still there
    assert cache.contains("t") and purgatory.check_and_complete("t") == 0 and not answers
    update_metadata(cache, ("t", 1, -2))
    assert not cache.contains("t") and purgatory.check_and_complete("t") == 1
    assert answers == [{"t": Errors.NONE, "x": Errors.UNKNOWN}]


def test_delete_topics_times_out_for_the_topics_still_in_the_cache(time, purgatory):
    """What a DeleteTopics gets from a cluster whose ``delete.topic.enable`` is false."""
    cache, answers = MetadataCache(0), []
    update_metadata(cache, ("kept", 0, 0))
    op = DelayedDeleteTopics(1000, [DeleteTopicMetadata("kept", Errors.NONE)], cache, answers.append)
    purgatory.try_complete_else_watch(op, ["kept"])
    time.advance(1000)
    wait_until(lambda: answers, what="the DeleteTopics to expire")
    assert answers == [{"kept": Errors.REQUEST_TIMED_OUT}]


def metadata_request() -> Request:
    header = RequestHeader(ApiKeys.METADATA, 1, 7, "early-client")
    return Request(0, "conn-1", header, {"topics": None}, 20, "127.0.0.1", 0)


def test_a_client_request_waits_for_the_first_update_metadata(time, purgatory):
    cache, handled = MetadataCache(0), []
    request = metadata_request()
    op = DelayedClientRequest(30_000, request, cache, lambda r: handled.append((r, cache.alive_brokers())))
    assert not purgatory.try_complete_else_watch(op, [FIRST_METADATA])
    assert not handled and purgatory.watched() == 1
    update_metadata(cache)
    assert purgatory.check_and_complete(FIRST_METADATA) == 1
    ((r, brokers),) = handled
    assert r is request and [b.id for b in brokers] == [0], "handled with the controller's metadata"


def test_a_client_request_is_handled_anyway_when_no_controller_comes(time, purgatory, caplog):
    cache, handled = MetadataCache(0), []
    op = DelayedClientRequest(30_000, metadata_request(), cache, handled.append)
    purgatory.try_complete_else_watch(op, [FIRST_METADATA])
    time.advance(30_000)
    wait_until(lambda: handled, what="the waiting request to expire")
    assert "No UpdateMetadata from the controller within 30000 ms" in caplog.text
