"""Replica assignment: Kafka's own expectations, the spreading it promises, and its error messages."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from kafka_lite.common.errors import InvalidPartitionsException, InvalidReplicationFactorException
from kafka_lite.zk.admin_utils import assign_replicas_to_brokers, replica_index

KAFKA_5_BROKERS_10_PARTITIONS_RF3 = {
    0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
    5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
}  # fmt: skip


def test_matches_kafkas_admin_utils_test_for_a_fixed_start():
    """AdminUtilsTest.testReplicaAssignment: 5 brokers, 10 partitions, 3 replicas, start index 0."""
    assert assign_replicas_to_brokers([0, 1, 2, 3, 4], 10, 3, fixed_start_index=0) == (
        KAFKA_5_BROKERS_10_PARTITIONS_RF3
    )


def test_broker_list_is_sorted_first():
    assert assign_replicas_to_brokers([3, 0, 4, 2, 1], 10, 3, fixed_start_index=0) == (
        KAFKA_5_BROKERS_10_PARTITIONS_RF3
    )


def test_broker_ids_need_not_be_contiguous():
    ids = [10, 20, 30, 40, 50]
    expected = {p: [ids[b] for b in r] for p, r in KAFKA_5_BROKERS_10_PARTITIONS_RF3.items()}
    assert assign_replicas_to_brokers(ids, 10, 3, fixed_start_index=0) == expected


def test_start_partition_id_continues_the_layout():
    """Adding partitions (Kafka's addPartitions) continues the same walk from the new partition id."""
    added = assign_replicas_to_brokers([0, 1, 2, 3, 4], 5, 3, fixed_start_index=0, start_partition_id=5)
    # The shift was bumped once at partition 5 (a new round): from 0 to 1, the same as in the full layout.
    assert added == {p: r for p, r in KAFKA_5_BROKERS_10_PARTITIONS_RF3.items() if p >= 5}


def test_replica_index_never_lands_on_the_leader():
    for n in range(2, 8):
        for first in range(n):
            for shift in range(2 * n):
                followers = [replica_index(first, shift, j, n) for j in range(n - 1)]
                assert first not in followers and len(set(followers)) == n - 1


def test_a_seeded_random_gives_a_reproducible_layout():
    a = assign_replicas_to_brokers([0, 1, 2], 6, 2, rand=random.Random(42))
    b = assign_replicas_to_brokers([0, 1, 2], 6, 2, rand=random.Random(42))
    assert a == b


@pytest.mark.parametrize(
    "brokers, partitions, rf",
    [(1, 1, 1), (3, 6, 1), (3, 9, 2), (3, 7, 3), (5, 50, 3), (4, 7, 4), (6, 100, 3), (7, 3, 2)],
)
@pytest.mark.parametrize("seed", range(5))
def test_distinct_replicas_and_evenly_spread_leaders_and_followers(brokers, partitions, rf, seed):
    assignment = assign_replicas_to_brokers(list(range(brokers)), partitions, rf, rand=random.Random(seed))
    assert sorted(assignment) == list(range(partitions))
    assert all(len(r) == rf and len(set(r)) == rf for r in assignment.values())
    assert all(0 <= b < brokers for r in assignment.values() for b in r)
    # Leaders (the first replica, the preferred leader) go round-robin: counts differ by at most one.
    leaders = Counter(r[0] for r in assignment.values())
    counts = [leaders.get(b, 0) for b in range(brokers)]
    assert max(counts) - min(counts) <= 1
    # So do all replicas, for a whole number of rounds.
    if partitions % brokers == 0:
        replicas = Counter(b for r in assignment.values() for b in r)
        assert len(set(replicas.values())) == 1


def test_followers_of_one_broker_spread_over_the_others():
    """The point of the growing shift: broker 0's partitions have their followers on every other broker,
    so if broker 0 dies the new leaders are spread, not all on broker 1."""
    assignment = assign_replicas_to_brokers(list(range(5)), 20, 2, fixed_start_index=0)
    followers_of_0 = {r[1] for r in assignment.values() if r[0] == 0}
    assert followers_of_0 == {1, 2, 3, 4}


def test_errors_are_kafkas():
    with pytest.raises(
        InvalidPartitionsException, match=re.escape("Number of partitions must be larger than 0.")
    ):
        assign_replicas_to_brokers([0], 0, 1)
    with pytest.raises(InvalidPartitionsException):
        assign_replicas_to_brokers([0], -3, 1)
    with pytest.raises(
        InvalidReplicationFactorException, match=re.escape("Replication factor must be larger than 0.")
    ):
        assign_replicas_to_brokers([0], 1, 0)
    with pytest.raises(
        InvalidReplicationFactorException,
        match=re.escape("Replication factor: 3 larger than available brokers: 2."),
    ):
        assign_replicas_to_brokers([0, 1], 1, 3)
    with pytest.raises(
        InvalidReplicationFactorException,
        match=re.escape("Replication factor: 1 larger than available brokers: 0."),
    ):
        assign_replicas_to_brokers([], 1, 1)
