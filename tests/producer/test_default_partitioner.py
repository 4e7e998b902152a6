"""The default partitioner: murmur2 bit-for-bit as Java's, and round-robin over available partitions."""

from __future__ import annotations

import random

import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafka_lite.clients.metadata import Cluster
from kafka_lite.producer.default_partitioner import (
    DefaultPartitioner,
    murmur2,
    to_positive,
)
from labs.lab05_producer import test_producer_lab as lab05
from tests.producer.support import cluster_of

pytestmark = pytest.mark.unit

# Kafka's own vectors (UtilsTest.testMurmur2), one table with lab 5's: each tail length 0-3 appears
# ("abc" 3, "21" 2, "foobar" 2, the 24- and 26-byte strings 0 and 2 ...).
KAFKA_VECTORS = lab05.KAFKA_VECTORS


@pytest.mark.parametrize("data,expected", KAFKA_VECTORS.items(), ids=lambda v: repr(v)[:20])
def test_murmur2_matches_kafkas_test_vectors(data, expected):
    assert murmur2(data) == expected


def test_murmur2_agrees_with_kafka_python_on_random_keys_of_every_tail_length():
    # kafka-python's murmur2 is an independent port of Java's (it returns the unsigned 32 bits).
    rng = random.Random(12)
    for length in range(0, 40):
        for _ in range(10):
            data = bytes(rng.randrange(256) for _ in range(length))
            assert murmur2(data) & 0xFFFFFFFF == kafka_python_murmur2(data), data


def test_to_positive_clears_the_sign_bit_as_java_does():
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(2**31)) == 0  # where abs() would overflow in Java
    assert to_positive(5) == 5


def test_a_keyed_record_goes_to_the_hash_of_its_key_even_without_a_leader():
    # Four partitions; partition 1 has no leader right now.
    cluster = cluster_of({("t", 0): 0, ("t", 1): None, ("t", 2): 1, ("t", 3): 1})
    partitioner = DefaultPartitioner()
    chosen = [partitioner.partition("t", None, key, None, b"v", cluster) for key in KAFKA_VECTORS]
    assert chosen == [to_positive(h) % 4 for h in KAFKA_VECTORS.values()] == [0, 2, 0, 3, 1, 3]
    # The key "lkjh..." stays on leaderless partition 1: moving it would break per-key order.


def test_null_keys_go_round_robin_over_the_partitions_with_a_leader():
    cluster = cluster_of({("t", 0): 0, ("t", 1): None, ("t", 2): 1, ("t", 3): 0})
    partitioner = DefaultPartitioner(random_start=lambda: 0)
    chosen = [partitioner.partition("t", None, None, None, b"v", cluster) for _ in range(6)]
    assert chosen == [0, 2, 3, 0, 2, 3]


def test_each_topic_has_its_own_counter():
    cluster = cluster_of({("a", 0): 0, ("a", 1): 0, ("b", 0): 0, ("b", 1): 0})
    partitioner = DefaultPartitioner(random_start=lambda: 1)
    assert [partitioner.partition("a", None, None, None, None, cluster) for _ in range(3)] == [1, 0, 1]
    assert partitioner.partition("b", None, None, None, None, cluster) == 1


def test_null_keys_with_no_partition_available_still_get_a_partition():
    cluster = cluster_of({("t", 0): None, ("t", 1): None})
    partitioner = DefaultPartitioner(random_start=lambda: -1)  # to_positive(-1) is odd: partition 1
    assert [partitioner.partition("t", None, None, None, None, cluster) for _ in range(3)] == [1, 0, 1]


def test_a_new_cluster_from_a_metadata_update_is_seen_at_once():
    partitioner = DefaultPartitioner(random_start=lambda: 0)
    before = cluster_of({("t", 0): 0, ("t", 1): None})
    assert [partitioner.partition("t", None, None, None, None, before) for _ in range(2)] == [0, 0]
    after = cluster_of({("t", 0): None, ("t", 1): 0, ("t", 2): 0})  # leaders moved, a partition added
    assert [partitioner.partition("t", None, None, None, None, after) for _ in range(2)] == [1, 2]
    assert (
        partitioner.partition("t", None, b"abc", None, None, after) == to_positive(KAFKA_VECTORS[b"abc"]) % 3
    )


class _CountingCluster(Cluster):
    """A real cluster, counting the lookups the partitioner makes."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster.nodes, cluster.partitions)
        self.lookups: list[str] = []

    def partitions_for_topic(self, topic):
        self.lookups.append("all")
        return super().partitions_for_topic(topic)

    def available_partitions_for_topic(self, topic):
        self.lookups.append("available")
        return super().available_partitions_for_topic(topic)


@pytest.mark.parametrize(
    ("key", "leaders", "lookups"),
    [
        (b"abc", {("t", 0): 0, ("t", 1): None}, ["all"]),
        (None, {("t", 0): 0, ("t", 1): None}, ["available"]),
        (None, {("t", 0): None, ("t", 1): None}, ["available", "all"]),  # the rare case: no leader at all
    ],
    ids=["keyed", "keyless", "keyless-no-leader"],
)
def test_partition_looks_the_partitions_up_once_on_the_common_paths(key, leaders, lookups):
    # partition runs on every send: one index lookup, unless no partition has a leader.
    partitioner = DefaultPartitioner(random_start=lambda: 0)
    cluster = _CountingCluster(cluster_of(leaders))
    partitioner.partition("t", None, key, None, b"v", cluster)
    assert cluster.lookups == lookups
