"""The scenarios: a quorum warms up, something fails, and the quorum must recover within bounds.

Mirrors: org.apache.kafka.raft.RaftEventSimulationTest, its seven properties (canElectInitialLeader
         to canRecoverFromSingleNodeCommittedDataLoss)
         (raft/src/test/java/org/apache/kafka/raft/RaftEventSimulationTest.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the seed alone decides the run: the number of voters is drawn from it within Kafka's range
         (jqwik draws it beside the seed); record counts are Kafka's scaled by ``records`` (10 by
         default, as Kafka's); each wait has a bound in simulated time, not only in events; after the
         partition heals, the majority's high watermark plus ``records`` is the target (see there).

Every scenario starts the same way (``setup``): every node polls every ``POLL_INTERVAL_MS`` plus a
jitter, staggered by a millisecond per node; the router delivers every 2 ms plus jitter; the
leader's counter appends every ``APPEND_INTERVAL_MS`` plus a jitter. The bounds follow from the timeouts: an election
needs an election timeout (1 to 2 s) plus, on a split vote, a backoff and another timeout; a leader
lost silently is noticed after the fetch timeout (3 s). ``ELECTION_BOUND_MS`` allows several
rounds of that; a run that needs more has a liveness bug, not bad luck.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable
from dataclasses import dataclass

from kafka_lite.raft.simulation.cluster import (
    ELECTION_TIMEOUT_MS,
    FETCH_TIMEOUT_MS,
    Cluster,
    SequentialAppendAction,
)
from kafka_lite.raft.simulation.event_scheduler import EventScheduler
from kafka_lite.raft.simulation.invariants import (
    ConsistentCommittedData,
    MajorityReachedHighWatermark,
    MonotonicEpoch,
    MonotonicHighWatermark,
    SingleLeader,
    SnapshotAtLogStart,
)
from kafka_lite.raft.simulation.message_router import DropAllTraffic, MessageRouter, PermitAllTraffic

# Several election rounds after the failure is noticed; committing after that is quick.
ELECTION_BOUND_MS = FETCH_TIMEOUT_MS + 8 * ELECTION_TIMEOUT_MS
PROGRESS_BOUND_MS = ELECTION_BOUND_MS + 5_000
# How often each node polls and the leader appends: a third of Kafka's rates (3 ms + up to 5, and
# 2 ms + up to 3). The timeouts are Kafka's, so elections play out the same; what the slower beat
# buys is three times fewer events per simulated second, and so twenty seeds per scenario in the
# normal test suite.
POLL_INTERVAL_MS, POLL_JITTER_MS = 9, 15
APPEND_INTERVAL_MS, APPEND_JITTER_MS = 6, 9


@dataclass
class Simulation:
    """One run's parts, as a scenario and a planted-bug test use them."""

    seed: int
    cluster: Cluster
    scheduler: EventScheduler
    router: MessageRouter
    random: _random.Random


def default_invariants(cluster: Cluster) -> list:
    return [
        MonotonicHighWatermark(cluster), MonotonicEpoch(cluster), MajorityReachedHighWatermark(cluster),
        SingleLeader(cluster), SnapshotAtLogStart(cluster),
    ]  # fmt: skip


def setup(
    scenario: str, seed: int, num_voters: int, deliver_jitter_ms: int = 1, invariants: Callable | None = None
) -> Simulation:
    """A started cluster of ``num_voters`` with polling, delivery and appends scheduled."""
    random = _random.Random(seed)
    cluster = Cluster(num_voters, seed)
    scheduler = EventScheduler(random, cluster.time, seed, scenario)
    for invariant in (invariants or default_invariants)(cluster):
        scheduler.add_invariant(invariant)
    scheduler.add_validation(ConsistentCommittedData(cluster))
    router = MessageRouter(cluster, scheduler, _random.Random(f"{seed}/router"))
    cluster.start_all()
    for delay_ms, node_id in enumerate(sorted(cluster.nodes)):
        scheduler.schedule(
            lambda node_id=node_id: cluster.poll_if_running(node_id),
            delay_ms,
            POLL_INTERVAL_MS,
            POLL_JITTER_MS,
        )
    scheduler.schedule(router.deliver_all, 0, 2, deliver_jitter_ms, check_invariants=False)
    scheduler.schedule(
        SequentialAppendAction(cluster), 0, APPEND_INTERVAL_MS, APPEND_JITTER_MS, check_invariants=False
    )
    return Simulation(seed, cluster, scheduler, router, random)


def _voters(seed: int, low: int, high: int) -> int:
    return _random.Random(f"{seed}/voters").randint(low, high)


def _warm_up(sim: Simulation, records: int, any_node: bool = True) -> None:
    sim.scheduler.run_until(sim.cluster.has_consistent_leader, "an initial leader", ELECTION_BOUND_MS)
    reached = sim.cluster.any_reached_high_watermark if any_node else sim.cluster.all_reached_high_watermark
    sim.scheduler.run_until(lambda: reached(records), f"high watermark {records}", PROGRESS_BOUND_MS)


def _leader(sim: Simulation) -> int:
    leader_id = sim.cluster.latest_leader()
    if leader_id is None:
        raise sim.scheduler.fail("a current leader", [], "Failed to find current leader")
    return leader_id


# -- the scenarios -------------------------------------------------------------------------------------


def can_elect_initial_leader(seed: int, num_voters: int | None = None, records: int = 10) -> Simulation:
    sim = setup("canElectInitialLeader", seed, num_voters or _voters(seed, 1, 5))
    _warm_up(sim, records, any_node=False)
    return sim


def can_elect_new_leader_after_old_leader_failure(
    seed: int, num_voters: int | None = None, records: int = 10, graceful: bool | None = None
) -> Simulation:
    sim = setup("canElectNewLeaderAfterOldLeaderFailure", seed, num_voters or _voters(seed, 3, 5))
    if graceful is None:
        graceful = _random.Random(f"{seed}/graceful").random() < 0.5
    _warm_up(sim, records)
    # Stop the leader and write more: the high watermark moving again proves a new leader.
    leader_id = _leader(sim)
    if graceful:
        sim.cluster.shutdown(leader_id)
    else:
        sim.cluster.kill(leader_id)
    sim.scheduler.run_until(
        lambda: sim.cluster.all_reached_high_watermark(2 * records),
        "a new leader's progress",
        PROGRESS_BOUND_MS,
    )
    high_watermark = sim.cluster.max_high_watermark_reached()
    # The old leader comes back as a follower and catches up.
    sim.cluster.kill(leader_id)
    sim.cluster.start(leader_id)
    sim.scheduler.run_until(
        lambda: sim.cluster.all_reached_high_watermark(high_watermark + records), "the restarted node catching up",
        PROGRESS_BOUND_MS,
    )  # fmt: skip
    return sim


def can_recover_after_all_nodes_killed(
    seed: int, num_voters: int | None = None, records: int = 10
) -> Simulation:
    sim = setup("canRecoverAfterAllNodesKilled", seed, num_voters or _voters(seed, 1, 5))
    _warm_up(sim, records)
    high_watermark = sim.cluster.max_high_watermark_reached()
    # Everyone dies; a bare majority comes back, with only what it had flushed, and must go on.
    sim.cluster.kill_all()
    for node_id in sorted(sim.cluster.nodes)[: sim.cluster.majority_size()]:
        sim.cluster.start(node_id)
    sim.scheduler.run_until(
        lambda: sim.cluster.all_reached_high_watermark(high_watermark + records), "progress after the restart",
        PROGRESS_BOUND_MS,
    )  # fmt: skip
    return sim


def can_elect_new_leader_after_old_leader_partitioned_away(
    seed: int, num_voters: int | None = None, records: int = 10
) -> Simulation:
    sim = setup("canElectNewLeaderAfterOldLeaderPartitionedAway", seed, num_voters or _voters(seed, 3, 5), 2)
    _warm_up(sim, records)
    leader_id = _leader(sim)
    sim.router.filter(leader_id, DropAllTraffic())
    others = set(sim.cluster.nodes) - {leader_id}
    sim.scheduler.run_until(
        lambda: sim.cluster.all_reached_high_watermark(2 * records, others), "progress without the old leader",
        PROGRESS_BOUND_MS,
    )  # fmt: skip
    return sim


def can_make_progress_if_majority_is_reachable(seed: int, records: int = 10) -> Simulation:
    sim = setup("canMakeProgressIfMajorityIsReachable", seed, 5, 2)
    _warm_up(sim, records)
    minority, majority = {0, 1}, {2, 3, 4}
    sim.router.partition(minority, majority)
    partition_log_end_offset = sim.cluster.max_log_end_offset()
    minority_high_watermark_before = sim.cluster.max_high_watermark_reached(minority)
    sim.scheduler.run_until(
        lambda: sim.cluster.any_reached_high_watermark(2 * partition_log_end_offset),
        "progress in the majority", PROGRESS_BOUND_MS,
    )  # fmt: skip
    minority_high_watermark = sim.cluster.max_high_watermark_reached(minority)
    majority_high_watermark = sim.cluster.max_high_watermark_reached(majority)
    # The minority may still learn what the majority committed just before the cut, never more.
    if minority_high_watermark > max(minority_high_watermark_before, partition_log_end_offset):
        raise sim.scheduler.fail(
            "minority high watermark held", minority,
            f"the minority's high watermark moved to {minority_high_watermark} while partitioned "
            f"(log end at the partition: {partition_log_end_offset})",
        )  # fmt: skip
    if not majority_high_watermark > minority_high_watermark:
        raise sim.scheduler.fail(
            "majority makes progress", majority,
            f"majorityHighWatermark = {majority_high_watermark}, minorityHighWatermark = {minority_high_watermark}",
        )  # fmt: skip
    sim.router.heal()
    # Past what the majority had committed, plus ``records``: Kafka aims at twice the largest log
    # end, but a leader cut off in the minority goes on appending entries that will never commit,
    # and that target then measures how fast a follower fetches, not whether the quorum healed.
    target = majority_high_watermark + records
    sim.scheduler.run_until(
        lambda: sim.cluster.all_reached_high_watermark(target), "everyone catching up", PROGRESS_BOUND_MS
    )
    return sim


def can_make_progress_after_back_to_back_leader_failures(
    seed: int, num_voters: int | None = None, records: int = 10
) -> Simulation:
    sim = setup("canMakeProgressAfterBackToBackLeaderFailures", seed, num_voters or _voters(seed, 3, 5), 5)
    _warm_up(sim, records)
    leader_id = _leader(sim)
    sim.router.filter(leader_id, DropAllTraffic())
    sim.scheduler.run_until(
        lambda: sim.cluster.latest_leader() not in (None, leader_id), "a second leader", ELECTION_BOUND_MS
    )
    # As soon as there is a new leader, the old one returns and the new one is cut off.
    new_leader_id = sim.cluster.latest_leader()
    sim.router.filter(leader_id, PermitAllTraffic())
    sim.router.filter(new_leader_id, DropAllTraffic())
    target = sim.cluster.max_high_watermark_reached() + records
    sim.scheduler.run_until(
        lambda: sim.cluster.any_reached_high_watermark(target),
        "progress after two failures",
        PROGRESS_BOUND_MS,
    )
    return sim


def can_recover_from_single_node_committed_data_loss(
    seed: int, num_voters: int | None = None, records: int = 10
) -> Simulation:
    # Without MonotonicEpoch and MajorityReachedHighWatermark: a node that lost its disk breaks both
    # by construction, while Raft still keeps every committed record.
    sim = setup(
        "canRecoverFromSingleNodeCommittedDataLoss", seed, num_voters or _voters(seed, 3, 5), 5,
        invariants=lambda cluster: [MonotonicHighWatermark(cluster), SingleLeader(cluster)],
    )  # fmt: skip
    sim.scheduler.run_until(
        lambda: sim.cluster.any_reached_high_watermark(records),
        f"high watermark {records}",
        PROGRESS_BOUND_MS,
    )
    node = sim.cluster.random_running(sim.random)
    # Lose one node's disk; as long as a leader is elected without it, nothing committed is lost.
    sim.cluster.kill_and_delete_persistent_state(node.node_id)
    sim.scheduler.run_until(
        lambda: not sim.cluster.has_leader(node.node_id) and sim.cluster.has_consistent_leader(),
        "a leader other than the lost node", ELECTION_BOUND_MS,
    )  # fmt: skip
    high_watermark = sim.cluster.max_high_watermark_reached()
    sim.cluster.start(node.node_id)
    sim.scheduler.run_until(
        lambda: sim.cluster.all_reached_high_watermark(high_watermark + records), "the emptied node catching up",
        PROGRESS_BOUND_MS,
    )  # fmt: skip
    return sim


SCENARIOS: dict[str, Callable[..., Simulation]] = {
    "canElectInitialLeader": can_elect_initial_leader,
    "canElectNewLeaderAfterOldLeaderFailure": can_elect_new_leader_after_old_leader_failure,
    "canRecoverAfterAllNodesKilled": can_recover_after_all_nodes_killed,
    "canElectNewLeaderAfterOldLeaderPartitionedAway": can_elect_new_leader_after_old_leader_partitioned_away,
    "canMakeProgressIfMajorityIsReachable": can_make_progress_if_majority_is_reachable,
    "canMakeProgressAfterBackToBackLeaderFailures": can_make_progress_after_back_to_back_leader_failures,
    "canRecoverFromSingleNodeCommittedDataLoss": can_recover_from_single_node_committed_data_loss,
}
