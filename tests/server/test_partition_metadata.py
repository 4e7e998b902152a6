"""Both metadata caches answer a topic by one rule, Kafka 0.11's ``getPartitionMetadata`` (3.3's
KRaftMetadataCache keeps it): which topics are internal, and when a partition is
LEADER_NOT_AVAILABLE or REPLICA_NOT_AVAILABLE, for Metadata v0 and for v1+.

The same cluster twice, once as the ZooKeeper broker's cache learns it (an UpdateMetadata) and once
as the KRaft broker's does (an image): brokers 0 and 1 alive, broker 2 gone (dead, or fenced)."""

from __future__ import annotations

import uuid

import pytest

from kafka_lite.common.errors import Errors
from kafka_lite.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from kafka_lite.server.metadata_cache import MetadataCache
from tests.server.metadata.records import image_of, partition, register, topic

pytestmark = pytest.mark.unit

# partition: (leader, replicas, isr)
PARTITIONS = {0: (0, [0, 1], [0, 1]), 1: (2, [2, 0], [2, 0]), 2: (1, [1, 2], [1, 2])}
TOPICS = ("__x", "__consumer_offsets", "__transaction_state")


def zk_cache() -> MetadataCache:
    cache = MetadataCache(0)
    live = [
        {"id": i, "rack": None,
         "end_points": [{"port": 9092 + i, "host": "h", "listener_name": "PLAINTEXT", "security_protocol_type": 0}]}
        for i in (0, 1)
    ]  # fmt: skip
    states = [
        {"topic": t, "partition": p, "controller_epoch": 1, "leader": leader, "leader_epoch": 0,
         "isr": isr, "zk_version": 0, "replicas": replicas}
        for t in TOPICS
        for p, (leader, replicas, isr) in PARTITIONS.items()
    ]  # fmt: skip
    cache.update_cache(0, 1, {"live_brokers": live, "partition_states": states}, 3)
    return cache


def kraft_cache() -> KRaftMetadataCache:
    records = [register(0), register(1), register(2, fenced=True)]
    for i, name in enumerate(TOPICS):
        topic_id = uuid.UUID(int=i + 1)
        records.append(topic(name, topic_id))
        records += [
            partition(topic_id, p, replicas, isr=isr, leader=leader)
            for p, (leader, replicas, isr) in PARTITIONS.items()
        ]
    cache = KRaftMetadataCache(0)
    cache.set_image(image_of(*records))
    return cache


@pytest.fixture(params=[zk_cache, kraft_cache], ids=["zookeeper", "kraft"])
def cache(request):
    return request.param()


def _partitions(cache, version: int) -> dict[int, tuple]:
    (answer,) = cache.topic_metadata(["__x"], "PLAINTEXT", error_unavailable_endpoints=version == 0)
    return {
        p["partition_id"]: (
            Errors.for_code(p["partition_error_code"]).name,
            p["leader"],
            p["replicas"],
            p["isr"],
        )
        for p in answer["partition_metadata"]
    }


def test_only_the_brokers_own_topics_are_internal_not_every_double_underscore_name(cache):
    answers = cache.topic_metadata(list(TOPICS), "PLAINTEXT")
    assert {a["topic"]: a["is_internal"] for a in answers} == {
        "__x": False,  # a user's topic: Kafka's Topic.isInternal names the internal ones
        "__consumer_offsets": True,
        "__transaction_state": True,
    }


def test_metadata_v0_leaves_out_unreachable_replicas_and_says_replica_not_available(cache):
    assert _partitions(cache, version=0) == {
        0: ("NONE", 0, [0, 1], [0, 1]),
        1: ("LEADER_NOT_AVAILABLE", -1, [0], []),  # its leader, 2, is gone: no leader, no ISR
        2: ("REPLICA_NOT_AVAILABLE", 1, [1], [1]),  # a usable leader; 2 is left out of both lists
    }


def test_metadata_v1_lists_every_replica_by_id_and_has_no_replica_error(cache):
    assert _partitions(cache, version=1) == {
        0: ("NONE", 0, [0, 1], [0, 1]),
        1: ("LEADER_NOT_AVAILABLE", -1, [2, 0], []),
        2: ("NONE", 1, [1, 2], [1, 2]),  # 2 is named, as Kafka's node with no address: not an error
    }
