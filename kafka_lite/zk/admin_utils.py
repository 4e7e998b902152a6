"""Where a new topic's replicas go: Kafka's rack-unaware replica assignment.

Mirrors: kafka.admin.AdminUtils.assignReplicasToBrokersRackUnaware (core/src/main/scala/kafka/admin/AdminUtils.scala, Kafka 0.10.1)
Book:    chapter 7, 7.1.3 (a new topic appears in ZooKeeper; the controller acts on it)
Differs: the three error messages are Kafka 1.0's wording ("Number of partitions must be larger than 0.");
         0.10.1 wrote the same sentences in lower case without the final period. Rack-aware
         assignment (``assignReplicasToBrokersRackAware``) is not here: a broker may register a ``broker.rack``, but placement ignores it.
         More partitions than one topic's znode can hold are refused up front (Kafka computes the
         assignment, then fails to write it).

Two goals: spread the partition leaders (the first replica of each) evenly over the brokers, and
spread each broker's followers over the other brokers, so that when one broker dies its load falls
on all the others rather than on one. The first replica walks the brokers round-robin from a random
start; the followers sit at a shift from it that grows by one every full round, so partition
``n`` and partition ``n + brokers`` do not get the same follower sets. For 5 brokers, 10 partitions
and 3 replicas (start 0, shift 0)::

    p0 [0,1,2]  p1 [1,2,3]  p2 [2,3,4]  p3 [3,4,0]  p4 [4,0,1]
    p5 [0,2,3]  p6 [1,3,4]  p7 [2,4,0]  p8 [3,0,1]  p9 [4,1,2]
"""

from __future__ import annotations

import random

from kafka_lite.common.errors import Errors
from kafka_lite.zk.zk_utils import ZK_MAX_BUFFER

# Each partition takes at least 8 bytes of its topic's assignment znode (``"0":[0],``): more than this
# many could never be written, and are refused before an assignment is computed for them.
MAX_PARTITIONS = ZK_MAX_BUFFER // 8


def replica_index(
    first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int
) -> int:
    """Kafka's ``replicaIndex``: the ``replica_index``-th follower sits ``1 + (shift + j) % (n - 1)``
    places after the leader, never 0 places (the leader itself) nor ``n`` (the leader again)."""
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


# --8<-- [start:assign]
def assign_replicas_to_brokers(
    broker_list: list[int],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rand: random.Random | None = None,
) -> dict[int, list[int]]:
    if n_partitions <= 0:
        raise Errors.INVALID_PARTITIONS.exception("Number of partitions must be larger than 0.")
    if max(0, start_partition_id) + n_partitions > MAX_PARTITIONS:
        raise Errors.INVALID_PARTITIONS.exception(
            f"Number of partitions must be at most {MAX_PARTITIONS}: one topic's assignment is one znode"
        )
    if replication_factor <= 0:
        raise Errors.INVALID_REPLICATION_FACTOR.exception("Replication factor must be larger than 0.")
    if replication_factor > len(broker_list):
        raise Errors.INVALID_REPLICATION_FACTOR.exception(
            f"Replication factor: {replication_factor} larger than available brokers: {len(broker_list)}."
        )
    # Sorted first, as Kafka does: the same broker set gives the same layout whatever order it came in.
    brokers = sorted(broker_list)
    n = len(brokers)
    rand = rand or random.Random()
    # Kafka's rand.nextInt(n) twice: a random start spreads the leaders of many small topics, which would
    # otherwise all land on the first broker; fixed_start_index pins both for tests.
    start_index = fixed_start_index if fixed_start_index >= 0 else rand.randrange(n)
    current_partition_id = max(0, start_partition_id)
    next_replica_shift = fixed_start_index if fixed_start_index >= 0 else rand.randrange(n)
    assignment: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if current_partition_id > 0 and current_partition_id % n == 0:
            next_replica_shift += 1  # a new round over the brokers: move the followers one place on
        first_replica_index = (current_partition_id + start_index) % n
        replicas = [brokers[first_replica_index]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[replica_index(first_replica_index, next_replica_shift, j, n)])
        assignment[current_partition_id] = replicas
        current_partition_id += 1
    return assignment


# --8<-- [end:assign]
