"""The scenarios: a quorum warms up, something fails, and the quorum must recover within bounds.

Mirrors: org.apache.kafka.raft.RaftEventSimulationTest, its seven properties (canElectInitialLeader
         to canRecoverFromSingleNodeCommittedDataLoss)
         (raft/src/test/java/org/apache/kafka/raft/RaftEventSimulationTest.java, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: the seed alone decides the run: the numbers of voters and observers are drawn from it
         (jqwik draws them beside the seed; observers 0 to 2 here); record counts are Kafka's scaled by ``records`` (10 by
         default, as Kafka's); each wait has a bound in simulated time, not only in events; after the
         partition heals, the majority's high watermark plus ``records`` is the target (see there).

Every scenario starts the same way (``setup``): every node polls every ``POLL_INTERVAL_MS`` plus a
jitter, staggered by a millisecond per node; the router delivers every 2 ms plus jitter; the
leader's counter appends every ``APPEND_INTERVAL_MS`` plus a jitter. The bounds follow from the timeouts: an election
needs an election timeout (1 to 2 s) plus, on a split vote, a backoff and another timeout; a leader
lost silently is noticed after the fetch timeout (3 s). ``ELECTION_BOUND_MS`` allows several
rounds of that; a run that needs more has a liveness bug, not bad luck.

Two more scenarios come from the Raft lab of MIT's 6.5840, which tests a student's Raft the same way:
``figure_8_unreliable`` (its TestFigure8Unreliable3C: leaders crash just after appending, over a
network that loses and reorders messages, the situation of the Raft paper's Figure 8) and ``churn``
(its TestReliableChurn3C: nodes disconnect, crash and restart at random while the counter is
written). Both end with the network healed and every node back, and ask for one more value
committed everywhere.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafka_lite.raft.simulation.cluster import (
    ELECTION_TIMEOUT_MS,
    FETCH_TIMEOUT_MS,
    REQUEST_TIMEOUT_MS,
    Cluster,
    SequentialAppendAction,
)
from kafka_lite.raft.simulation.event_scheduler import EventScheduler
from kafka_lite.raft.simulation.invariants import (
    CommittedValuesKept,
    ConsistentCommittedData,
    LeaderNeverLoadSnapshot,
    MajorityReachedHighWatermark,
    MonotonicEpoch,
    MonotonicHighWatermark,
    SingleLeader,
    SnapshotAtLogStart,
)
from kafka_lite.raft.simulation.message_router import (
    DropAllTraffic,
    MessageRouter,
    PermitAllTraffic,
    UnreliableNetwork,
)

# Several election rounds after the failure is noticed; committing after that is quick.
ELECTION_BOUND_MS = FETCH_TIMEOUT_MS + 8 * ELECTION_TIMEOUT_MS
PROGRESS_BOUND_MS = ELECTION_BOUND_MS + 5_000
OBSERVER_BOUND_MS = 10 * REQUEST_TIMEOUT_MS
# How often each node's log is cleaned up to its latest snapshot, when a scenario cleans logs.
CLEAN_INTERVAL_MS = 100
# the 6.5840 lab's "log size bounded after snapshots": the committed entries a log holds past its start.
# A snapshot comes every 10 committed offsets and a clean every 100 ms (up to 110), in which the
# leader appends at most one record per APPEND_INTERVAL_MS: so about 30, and never hundreds.
LOG_SIZE_BOUND = 100
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
        SingleLeader(cluster), SnapshotAtLogStart(cluster), LeaderNeverLoadSnapshot(cluster),
    ]  # fmt: skip


def setup(
    scenario: str, seed: int, num_voters: int, deliver_jitter_ms: int = 1, invariants: Callable | None = None,
    num_observers: int = 0, log_cleaning: bool = False, data_dir: Path | None = None,
) -> Simulation:  # fmt: skip
    """A started cluster of ``num_voters`` and ``num_observers`` with polling, delivery and appends
    scheduled; with ``log_cleaning``, each node's log start follows its latest snapshot."""
    random = _random.Random(seed)
    cluster = Cluster(num_voters, seed, num_observers=num_observers, data_dir=data_dir)
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
    if log_cleaning:
        for node_id in sorted(cluster.nodes):
            scheduler.schedule(
                lambda node_id=node_id: cluster.clean_log_if_running(node_id), 0, CLEAN_INTERVAL_MS, 10
            )
    scheduler.schedule(router.deliver_all, 0, 2, deliver_jitter_ms, check_invariants=False)
    scheduler.schedule(
        SequentialAppendAction(cluster), 0, APPEND_INTERVAL_MS, APPEND_JITTER_MS, check_invariants=False
    )
    return Simulation(seed, cluster, scheduler, router, random)


def _voters(seed: int, low: int, high: int) -> int:
    return _random.Random(f"{seed}/voters").randint(low, high)


def _observers_or_drawn(seed: int, num_observers: int | None) -> int:
    if num_observers is not None:
        return num_observers
    return _random.Random(f"{seed}/observers").randint(0, 2)


def _warm_up(sim: Simulation, records: int, any_node: bool = True) -> None:
    sim.scheduler.run_until(sim.cluster.has_consistent_leader, "an initial leader", ELECTION_BOUND_MS)
    if any_node:
        sim.scheduler.run_until(
            lambda: sim.cluster.any_reached_high_watermark(records),
            f"high watermark {records}",
            PROGRESS_BOUND_MS,
        )
    else:
        _run_until_all_reached(sim, records, f"high watermark {records}")


def _run_until_all_reached(
    sim: Simulation, offset: int, what: str, node_ids: set[int] | None = None, catch_up_ms: int = 0
) -> None:
    """Every node of ``node_ids`` (every running node) reaches ``offset``: the voters within the
    progress bound (plus ``catch_up_ms`` for a node known to be far behind), then the observers
    within ``OBSERVER_BOUND_MS``.

    An observer whose leader died or was cut off finds the new one the way Kafka's does: when its
    Fetch to the old leader times out (the request timeout, 3 s) it fetches from a random voter,
    which may be the old leader again. Kafka's simulation waits for it without a time bound; here
    the bound allows ten such draws."""

    def reached(kinds: set[int]) -> bool:
        # With no ``node_ids``, the nodes running at each check (a node shutting down leaves).
        wanted = (set(sim.cluster.running) if node_ids is None else node_ids) & kinds
        return sim.cluster.all_reached_high_watermark(offset, wanted)

    sim.scheduler.run_until(lambda: reached(sim.cluster.voters), what, PROGRESS_BOUND_MS + catch_up_ms)
    everyone = sim.cluster.voters | sim.cluster.observers
    sim.scheduler.run_until(lambda: reached(everyone), f"{what} (observers)", OBSERVER_BOUND_MS)


def _leader(sim: Simulation) -> int:
    leader_id = sim.cluster.latest_leader()
    if leader_id is None:
        raise sim.scheduler.fail("a current leader", [], "Failed to find current leader")
    return leader_id


# -- the scenarios -------------------------------------------------------------------------------------


def can_elect_initial_leader(
    seed: int, num_voters: int | None = None, records: int = 10, num_observers: int | None = None
) -> Simulation:
    sim = setup(
        "canElectInitialLeader",
        seed,
        num_voters or _voters(seed, 1, 5),
        num_observers=_observers_or_drawn(seed, num_observers),
    )
    _warm_up(sim, records, any_node=False)
    return sim


def can_elect_new_leader_after_old_leader_failure(
    seed: int,
    num_voters: int | None = None,
    records: int = 10,
    num_observers: int | None = None,
    graceful: bool | None = None,
) -> Simulation:
    sim = setup(
        "canElectNewLeaderAfterOldLeaderFailure",
        seed,
        num_voters or _voters(seed, 3, 5),
        num_observers=_observers_or_drawn(seed, num_observers),
    )
    if graceful is None:
        graceful = _random.Random(f"{seed}/graceful").random() < 0.5
    _warm_up(sim, records)
    # Stop the leader and write more: the high watermark moving again proves a new leader.
    leader_id = _leader(sim)
    if graceful:
        sim.cluster.shutdown(leader_id)
    else:
        sim.cluster.kill(leader_id)
    _run_until_all_reached(sim, 2 * records, "a new leader's progress")
    high_watermark = sim.cluster.max_high_watermark_reached()
    # The old leader comes back as a follower and catches up. If the election took long, the new
    # leader went on committing meanwhile and the returning node is far behind: it fetches what it
    # missed two batches a Fetch, in time that grows with what it missed.
    sim.cluster.kill(leader_id)
    behind = max(0, high_watermark - sim.cluster.start(leader_id).log_end_offset())
    _run_until_all_reached(
        sim, high_watermark + records, "the restarted node catching up", catch_up_ms=_fetch_time_ms(behind)
    )
    return sim


def can_recover_after_all_nodes_killed(
    seed: int, num_voters: int | None = None, records: int = 10, num_observers: int | None = None,
    data_dir: Path | None = None,
) -> Simulation:  # fmt: skip
    sim = setup(
        "canRecoverAfterAllNodesKilled",
        seed,
        num_voters or _voters(seed, 1, 5),
        num_observers=_observers_or_drawn(seed, num_observers),
        data_dir=data_dir,
    )
    _warm_up(sim, records)
    high_watermark = sim.cluster.max_high_watermark_reached()
    # Everyone dies; a bare majority comes back, with only what it had flushed, and must go on.
    sim.cluster.kill_all()
    for node_id in sorted(sim.cluster.nodes)[: sim.cluster.majority_size()]:
        sim.cluster.start(node_id)
    _run_until_all_reached(sim, high_watermark + records, "progress after the restart")
    return sim


def can_elect_new_leader_after_old_leader_partitioned_away(
    seed: int, num_voters: int | None = None, records: int = 10, num_observers: int | None = None
) -> Simulation:
    sim = setup(
        "canElectNewLeaderAfterOldLeaderPartitionedAway",
        seed,
        num_voters or _voters(seed, 3, 5),
        2,
        num_observers=_observers_or_drawn(seed, num_observers),
    )
    _warm_up(sim, records)
    leader_id = _leader(sim)
    sim.router.filter(leader_id, DropAllTraffic())
    others = set(sim.cluster.nodes) - {leader_id}
    _run_until_all_reached(sim, 2 * records, "progress without the old leader", others)
    return sim


def can_make_progress_if_majority_is_reachable(
    seed: int, records: int = 10, num_observers: int | None = None
) -> Simulation:
    sim = setup(
        "canMakeProgressIfMajorityIsReachable",
        seed,
        5,
        2,
        num_observers=_observers_or_drawn(seed, num_observers),
    )
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
    _run_until_all_reached(sim, target, "everyone catching up")
    return sim


def can_make_progress_after_back_to_back_leader_failures(
    seed: int, num_voters: int | None = None, records: int = 10, num_observers: int | None = None
) -> Simulation:
    sim = setup(
        "canMakeProgressAfterBackToBackLeaderFailures",
        seed,
        num_voters or _voters(seed, 3, 5),
        5,
        num_observers=_observers_or_drawn(seed, num_observers),
    )
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
        PROGRESS_BOUND_MS + _catch_up_allowance_ms(sim),
    )
    return sim


def _catch_up_allowance_ms(sim: Simulation) -> int:
    """Time for a new leader to commit the uncommitted tail of its own log.

    A leader cut off is still leader of its epoch in its own view and goes on appending (as in
    Kafka, where SequentialAppendAction appends on every node that believes it leads). If the next
    election drags on, that tail grows to hundreds of entries; back, that node may have the longest
    log of the latest epoch and win again (the first leader after back-to-back failures does, a
    node healed after churn can), and nothing past the old high watermark commits until a majority
    has fetched all of it, two batches a Fetch (MockLog's read). Kafka's runUntil allows 500,000
    events, minutes of simulated time; our bounds are in time, so such a phase gets, on top of the
    usual bound, ``_fetch_time_ms`` of the longest uncommitted tail."""
    tail = max(node.log_end_offset() for node in sim.cluster.running.values())
    return _fetch_time_ms(max(0, tail - sim.cluster.max_high_watermark_reached()))


def _fetch_time_ms(entries: int) -> int:
    """Time for a follower to fetch ``entries`` it lacks: the longest poll interval for each entry
    (two for each Fetch of two batches, about twice what such a catch-up takes on average)."""
    return entries * (POLL_INTERVAL_MS + POLL_JITTER_MS)


def can_recover_from_single_node_committed_data_loss(
    seed: int, num_voters: int | None = None, records: int = 10, num_observers: int | None = None
) -> Simulation:
    # Without MonotonicEpoch and MajorityReachedHighWatermark: a node that lost its disk breaks both
    # by construction, while Raft still keeps every committed record.
    sim = setup(
        "canRecoverFromSingleNodeCommittedDataLoss", seed, num_voters or _voters(seed, 3, 5), 5,
        invariants=lambda cluster: [MonotonicHighWatermark(cluster), SingleLeader(cluster)],
        num_observers=_observers_or_drawn(seed, num_observers),
    )  # fmt: skip
    sim.scheduler.run_until(
        lambda: sim.cluster.any_reached_high_watermark(records),
        f"high watermark {records}",
        PROGRESS_BOUND_MS,
    )
    node = sim.cluster.random_running(sim.random)
    # Lose one node's disk; as long as a leader is elected without it, nothing committed is lost.
    sim.cluster.kill_and_delete_persistent_state(node.node_id)
    # The voters elect; the observers learn of it later (see _run_until_all_reached).
    sim.scheduler.run_until(
        lambda: not sim.cluster.has_leader(node.node_id) and sim.cluster.has_consistent_leader(sim.cluster.voters),
        "a leader other than the lost node", ELECTION_BOUND_MS,
    )  # fmt: skip
    sim.scheduler.run_until(
        sim.cluster.has_consistent_leader, "a leader other than the lost node (observers)", OBSERVER_BOUND_MS
    )
    high_watermark = sim.cluster.max_high_watermark_reached()
    sim.cluster.start(node.node_id)
    _run_until_all_reached(sim, high_watermark + records, "the emptied node catching up")
    return sim


# -- MIT's 6.5840 scenarios --------------------------------------------------------------------------------


def _heal_and_commit_everywhere(sim: Simulation, records: int, kept: CommittedValuesKept) -> None:
    """The end of both: network healed, every node back, and every node's state machine ``records``
    values past the highest any node applied during the run (a node that crashed comes back with
    a high watermark of 0, so the running nodes' high watermarks alone would understate it)."""
    sim.router.heal()
    for node_id in sorted(set(sim.cluster.nodes) - set(sim.cluster.running)):
        sim.cluster.start(node_id)
    kept.record()
    applied = kept.max_applied
    for node_ids, bound_ms in (
        (sim.cluster.voters, PROGRESS_BOUND_MS + _catch_up_allowance_ms(sim)),
        (set(sim.cluster.nodes), OBSERVER_BOUND_MS),
    ):
        sim.scheduler.run_until(
            lambda node_ids=node_ids: all(sim.cluster.running[i].counter.committed >= applied + records for i in node_ids),
            f"every node applying value {applied + records} after the heal", bound_ms,
        )  # fmt: skip
    kept.verify_kept(sim.scheduler, applied)


def _restart_a_voter_if_below_majority(sim: Simulation) -> None:
    # 6.5840 restarts a random crashed server whenever fewer than a majority are up.
    down_voters = sorted(sim.cluster.voters - set(sim.cluster.running))
    if len(sim.cluster.voters) - len(down_voters) < sim.cluster.majority_size():
        sim.cluster.start(sim.random.choice(down_voters))


def figure_8_unreliable(
    seed: int, num_voters: int | None = None, records: int = 10, num_observers: int | None = None,
    rounds: int = 20,
) -> Simulation:  # fmt: skip
    """6.5840's TestFigure8Unreliable3C, with its crashes: a leader crashes a few milliseconds after
    it appended, again and again, over a network that loses and reorders messages.

    A leader killed just after an append leaves entries of its epoch on a minority; the next leader
    may overwrite them, and an old leader back from a crash may win again and try to finish
    replicating them. That is the paper's Figure 8: such an entry must never be counted as committed
    by counting replicas alone, only by committing an entry of the leader's own epoch after it."""
    sim = setup(
        "figure_8_unreliable", seed, num_voters or 5, num_observers=_observers_or_drawn(seed, num_observers)
    )
    kept = CommittedValuesKept(sim.cluster)
    sim.scheduler.schedule(kept.record, 0, 50, 10, check_invariants=False)
    network = UnreliableNetwork(_random.Random(f"{seed}/unreliable"))
    for node_id in sim.cluster.nodes:
        sim.router.filter(node_id, network)
    for _ in range(rounds):
        # 6.5840 crashes whoever leads at each step; its elections take a few hundred milliseconds,
        # ours one to two seconds, so each round first waits for a leader, then lets it append for
        # a few milliseconds (one round in ten, up to half an election timeout) and crashes it.
        # The wait is not an assertion: over this network an election may take many rounds, and
        # only after the heal is progress required.
        waited_ms = 0
        while sim.cluster.leader_node() is None and waited_ms < ELECTION_BOUND_MS:
            sim.scheduler.run_for(POLL_INTERVAL_MS)
            waited_ms += POLL_INTERVAL_MS
        if sim.random.randrange(10) == 0:
            sim.scheduler.run_for(sim.random.randrange(ELECTION_TIMEOUT_MS // 2))
        else:
            sim.scheduler.run_for(sim.random.randrange(13))
        leader = sim.cluster.leader_node()
        if leader is not None:
            sim.cluster.kill(leader.node_id)
        _restart_a_voter_if_below_majority(sim)
    _heal_and_commit_everywhere(sim, records, kept)
    return sim


def churn(
    seed: int, num_voters: int | None = None, records: int = 10, num_observers: int | None = None,
    rounds: int = 20, unreliable: bool = False,
) -> Simulation:  # fmt: skip
    """6.5840's TestReliableChurn3C (TestUnreliableChurn3C with ``unreliable``): every 0.7 of an
    election timeout, a random node may be disconnected, one brought back (restarted if it had
    crashed) and one crashed, while the counter keeps being written.

    What is checked at the end is what the application was promised: every value any node applied
    as committed, at any moment, is in every node's log, in order (``CommittedValuesKept``)."""
    sim = setup("churn", seed, num_voters or 5, num_observers=_observers_or_drawn(seed, num_observers))
    kept = CommittedValuesKept(sim.cluster)
    sim.scheduler.schedule(kept.record, 0, 50, 10, check_invariants=False)
    network = UnreliableNetwork(_random.Random(f"{seed}/unreliable")) if unreliable else PermitAllTraffic()
    for node_id in sim.cluster.nodes:
        sim.router.filter(node_id, network)
    nodes = sorted(sim.cluster.nodes)
    for _ in range(rounds):
        if sim.random.randrange(1000) < 200:
            sim.router.filter(sim.random.choice(nodes), DropAllTraffic())
        if sim.random.randrange(1000) < 500:
            node_id = sim.random.choice(nodes)
            if node_id not in sim.cluster.running:
                sim.cluster.start(node_id)
            sim.router.filter(node_id, network)
        if sim.random.randrange(1000) < 200:
            sim.cluster.kill(sim.random.choice(nodes))
        sim.scheduler.run_for(ELECTION_TIMEOUT_MS * 7 // 10)
    _heal_and_commit_everywhere(sim, records, kept)
    return sim


def snapshot_install(
    seed: int, num_voters: int | None = None, records: int = 10, num_observers: int | None = None,
    crash: bool | None = None, data_dir: Path | None = None,
) -> Simulation:  # fmt: skip
    """6.5840's TestSnapshotInstall3D (``crash``: TestSnapshotInstallCrash3D) and TestSnapshotSize3D:
    a voter is cut off (or crashes) while the others go on, snapshot and clean their logs past
    everything it holds; back, it can only catch up by fetching the leader's snapshot (FetchSnapshot),
    loading it (``handle_snapshot``) and fetching the log from the snapshot's end. Meanwhile no
    node's log grows past ``LOG_SIZE_BOUND`` committed entries: snapshots keep logs short."""
    sim = setup(
        "snapshot_install", seed, num_voters or _voters(seed, 3, 5),
        num_observers=_observers_or_drawn(seed, num_observers), log_cleaning=True, data_dir=data_dir,
    )  # fmt: skip
    if crash is None:
        crash = _random.Random(f"{seed}/crash").random() < 0.5
    sim.scheduler.schedule(lambda: _check_log_size(sim), 0, CLEAN_INTERVAL_MS, 10, check_invariants=False)
    _warm_up(sim, records)
    leader_id = _leader(sim)
    away_id = sim.random.choice(sorted(sim.cluster.voters - {leader_id}))
    held = sim.cluster.running[away_id].log_end_offset()
    if crash:
        sim.cluster.kill(away_id)
    else:
        sim.router.filter(away_id, DropAllTraffic())

    def leader_cleaned_past_held() -> bool:
        leader = sim.cluster.leader_node()
        return leader is not None and leader.node_id != away_id and leader.log.start_offset() > held

    sim.scheduler.run_until(
        leader_cleaned_past_held, f"the leader's log start past {held}", PROGRESS_BOUND_MS
    )
    if crash:
        sim.cluster.start(away_id)
    else:
        sim.router.filter(away_id, PermitAllTraffic())
    target = sim.cluster.max_high_watermark_reached() + records
    _run_until_all_reached(sim, target, "the absent node catching up from a snapshot")
    node = sim.cluster.running[away_id]
    if node.log.start_offset() <= held or node.counter.snapshots_loaded == 0:
        raise sim.scheduler.fail(
            "caught up by snapshot", [away_id],
            f"node {away_id} held up to {held} and caught up without loading a snapshot "
            f"(log start {node.log.start_offset()}, snapshots loaded {node.counter.snapshots_loaded})",
        )  # fmt: skip
    return sim


def _check_log_size(sim: Simulation) -> None:
    for node_id in sorted(sim.cluster.running):
        node = sim.cluster.running[node_id]
        size = node.high_watermark() - node.log.start_offset()
        if size > LOG_SIZE_BOUND:
            raise sim.scheduler.fail(
                "log size bounded", [node_id],
                f"node {node_id} holds {size} committed entries past its log start {node.log.start_offset()} "
                f"(bound {LOG_SIZE_BOUND}): its snapshots do not shorten its log",
            )  # fmt: skip


SCENARIOS: dict[str, Callable[..., Simulation]] = {
    "canElectInitialLeader": can_elect_initial_leader,
    "canElectNewLeaderAfterOldLeaderFailure": can_elect_new_leader_after_old_leader_failure,
    "canRecoverAfterAllNodesKilled": can_recover_after_all_nodes_killed,
    "canElectNewLeaderAfterOldLeaderPartitionedAway": can_elect_new_leader_after_old_leader_partitioned_away,
    "canMakeProgressIfMajorityIsReachable": can_make_progress_if_majority_is_reachable,
    "canMakeProgressAfterBackToBackLeaderFailures": can_make_progress_after_back_to_back_leader_failures,
    "canRecoverFromSingleNodeCommittedDataLoss": can_recover_from_single_node_committed_data_loss,
    "figure_8_unreliable": figure_8_unreliable,
    "churn": churn,
    "snapshot_install": snapshot_install,
}
