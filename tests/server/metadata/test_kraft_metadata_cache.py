"""KRaftMetadataCache: chapter 7's cache questions answered from a MetadataImage built from records
(live brokers are the unfenced ones, partitions as their registrations say); its Metadata errors
are tests/server/test_partition_metadata.py's."""

from __future__ import annotations

import random
import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.common.metadata import ConfigRecord
from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from tests.server.metadata.records import change, fence, image_of, partition, register, topic, unfence

pytestmark = pytest.mark.unit

FOO = uuid.UUID(int=0xF00)


@pytest.fixture
def cache():
    cache = KRaftMetadataCache(0, rng=random.Random(7))
    cache.set_image(
        image_of(
            register(0, listeners=("PLAINTEXT", "EXTERNAL")),
            register(1),
            register(2, fenced=True),
            topic("foo", FOO),
            partition(FOO, 0, [0, 1], leader_epoch=3, partition_epoch=5),
            partition(FOO, 1, [2, 0], isr=[2, 0]),
            partition(FOO, 2, [1, 2], isr=[1]),
        )
    )
    return cache


def test_nothing_before_the_first_image():
    cache = KRaftMetadataCache(0)
    assert not cache.has_metadata()
    assert cache.alive_brokers() == [] and cache.topics() == [] and cache.controller_id == -1


def test_alive_brokers_are_the_unfenced_registrations(cache):
    assert cache.has_metadata()
    assert [(b.id, b.port) for b in cache.alive_brokers()] == [(0, 9090), (1, 9100)]
    assert [e.listener_name for e in cache.alive_brokers()[0].endpoints] == ["PLAINTEXT", "EXTERNAL"]
    assert cache.has_alive_broker(1) and not cache.has_alive_broker(2) and cache.is_broker_fenced(2)
    assert [(b.id, b.port) for b in cache.alive_endpoints("EXTERNAL")] == [(0, 9091)]


def test_an_unfence_record_brings_a_broker_to_life(cache):
    cache.set_image(image_of(unfence(2), fence(1), image=cache.current_image()))
    assert [b.id for b in cache.alive_brokers()] == [0, 2]


def test_partition_state_from_the_registration(cache):
    state = cache.partition_state("foo", 0)
    assert (state.leader, state.leader_epoch, state.isr, state.replicas) == (0, 3, (0, 1), (0, 1))
    assert state.zk_version == 5, "the partition epoch stands where the znode version stood"
    assert state.controller_epoch == -1
    assert cache.partition_state("foo", 9) is None and cache.partition_state("bar", 0) is None
    assert sorted(cache.partitions("foo")) == [0, 1, 2]
    assert cache.topics() == ["foo"] and cache.contains("foo") and not cache.contains("bar")
    assert (
        cache.topic_id("foo") == FOO and cache.topic_name(FOO) == "foo" and cache.num_partitions("foo") == 3
    )


def test_a_change_record_moves_leader_epoch_and_partition_epoch(cache):
    cache.set_image(image_of(change(FOO, 0, isr=[0], leader=1), image=cache.current_image()))
    state = cache.partition_state("foo", 0)
    assert (state.leader, state.leader_epoch, state.isr, state.zk_version) == (1, 4, (0,), 6)


def test_a_leader_without_the_listener_is_not_available(cache):
    (answer,) = cache.topic_metadata(["foo"], "EXTERNAL", error_unavailable_endpoints=True)
    by_id = {p["partition_id"]: p for p in answer["partition_metadata"]}
    assert by_id[2]["partition_error_code"] == Errors.LEADER_NOT_AVAILABLE.code, "broker 1 has no EXTERNAL"
    # Metadata v0 leaves broker 1 out of partition 0's lists: a replica it cannot describe
    assert by_id[0]["partition_error_code"] == Errors.REPLICA_NOT_AVAILABLE.code
    assert by_id[0]["replicas"] == [0] and by_id[0]["isr"] == [0]


def test_the_controller_named_is_a_live_broker(cache):
    named = {cache.controller_id for _ in range(50)}
    assert named == {0, 1}, "a random unfenced broker, which forwards to the active controller"


def test_topic_configs_from_config_records(cache):
    set_it = ConfigRecord(resource_type=2, resource_name="foo", name="retention.ms", value="60000")
    other = ConfigRecord(resource_type=2, resource_name="bar", name="retention.ms", value="1")
    cache.set_image(image_of(set_it, other, image=cache.current_image()))
    assert cache.topic_config("foo") == {"retention.ms": "60000"}
    assert cache.topic_config("baz") == {}
