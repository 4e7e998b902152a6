"""Durability and fencing on a real KRaft cluster (Kafka 3.3, beyond the book, chapter 12): three
combined nodes, each a broker and a voter of the controller quorum; acks=all, min.insync.replicas=2,
replication 3.

One cluster (the checker's KRaft settings: 300 ms elections, 1.5 s broker sessions) serves the
three tests, in an xdist group so that they share one worker and its cluster. Other workers' tests
run beside it on the same cores, so no check here assumes an idle machine: a wait ends when its
condition holds, within a deadline derived from the settings; a time is read where the cluster
wrote it (a metadata batch's timestamp), not where a test happened to look; and a bound on one
leaves a margin its comment justifies. Each test first waits until every node runs and every broker
is unfenced, so that none depends on what another left behind.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_lite.cli import cluster_kraft
from kafka_lite.cli.cluster import load_state, run_pause, run_resume, stop_cluster, wait_healthy
from kafka_lite.common.metadata import FenceBrokerRecord, PartitionChangeRecord, TopicRecord
from kafka_lite.raft.raft_config import DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS
from kafka_lite.testing import durability_checker
from tests.kraft.nodes import metadata_batches
from tests.support.durability import check_no_acknowledged_record_is_lost
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("durability_kraft")]

# Three kills of each victim: the Jepsen runs (tests/jepsen/test_run.py) kill and pause nodes in both
# modes too, and check every acknowledged send against what the final reads find.
ROUNDS = 3
RECORDS_PER_ROUND = 50


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("durability-kraft-cluster")
    state = durability_checker.start(directory, kraft=True)
    try:
        yield directory
    finally:  # the pids as they are now: the restarted nodes are new processes
        stop_cluster(load_state(directory) or state)


def setting_s(directory: Path, name: str, default_ms: int | None = None) -> float:
    """A ``*.ms`` setting the cluster's nodes run with (the last ``--override`` of it, else
    ``default_ms``), in seconds."""
    values = [o.split("=", 1)[1] for o in load_state(directory)["overrides"] if o.split("=", 1)[0] == name]
    if not values and default_ms is None:
        raise KeyError(f"the cluster in {directory} has no --override of {name}")
    return (int(values[-1]) if values else default_ms) / 1000


def step_s(directory: Path) -> float:
    """A wait's deadline: a step here (a broker fenced, a controller elected, a broker back) takes a
    session and an election on an idle machine. A wait ends as soon as its condition holds, so the
    deadline only bounds how long a broken run takes to fail: ten steps' worth leaves a loaded
    machine room to run the nodes late."""
    return 10 * sum(
        setting_s(directory, name)
        for name in ("broker.session.timeout.ms", "controller.quorum.fetch.timeout.ms",
                     "controller.quorum.election.timeout.ms")
    )  # fmt: skip


def metadata_log(directory: Path, node_id: int) -> list[tuple[int, list[tuple[int, object]]]]:
    """Node ``node_id``'s metadata log, batch by batch, as its segment files hold it now."""
    state = load_state(directory)
    node = next(n for n in state["brokers"] if n["id"] == node_id)
    return metadata_batches(cluster_kraft.node_directory(state, node) / "metadata")


def log_ends(directory: Path, nodes: list[int]) -> dict[int, int]:
    """Where each node's metadata log ends now: the offset its next record will have."""
    return {
        n: max((o + 1 for _, records in metadata_log(directory, n) for o, _ in records), default=0)
        for n in nodes
    }


def fence_batch(directory: Path, broker: int, since: dict[int, int]) -> tuple[int, list, list] | None:
    """The first batch, at or after ``since[node]`` in one of the nodes' metadata logs, that fences
    ``broker``: ``(append_ms, its records, the whole log)``. The fence is committed, so on a majority
    of the voters; the nodes of ``since`` are two of three, so one of them holds it."""
    for node, start in since.items():
        log = metadata_log(directory, node)
        for append_ms, records in log:
            if any(o >= start and isinstance(r, FenceBrokerRecord) and r.id == broker for o, r in records):
                return append_ms, records, log
    return None


def moved_off(leader_and_isr: tuple[int, list[int]], broker: int, others: list[int]) -> bool:
    leader, isr = leader_and_isr
    return leader in others and broker not in isr


@pytest.mark.parametrize("victim", ["leader", "controller"])
def test_no_acknowledged_record_is_lost_when_the_victim_is_killed(cluster_dir, victim):
    wait_healthy(load_state(cluster_dir))
    report, summary = check_no_acknowledged_record_is_lost(cluster_dir, ROUNDS, victim, RECORDS_PER_ROUND)
    if victim == "controller":
        # Each round's new controller was elected while the killed one was still down: the checker
        # restarts it only once another voter leads. How soon: a survivor stands once the fetch
        # timeout has passed without a word from the leader, and an election ends within the
        # election timeout and its random part (twice the timeout); a split vote waits out a backoff
        # of at most election.backoff.max.ms and tries again. Five such rounds leave room for split
        # votes and for a loaded machine running the survivors late, and still fail a failover
        # several times slower than Raft's timeouts allow.
        election_s = 2 * setting_s(cluster_dir, "controller.quorum.election.timeout.ms") + setting_s(
            cluster_dir, "controller.quorum.election.backoff.max.ms", DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS
        )
        bound_s = setting_s(cluster_dir, "controller.quorum.fetch.timeout.ms") + 5 * election_s
        assert len(report.failovers_s) == ROUNDS and all(s <= bound_s for s in report.failovers_s), (
            f"a failover took over {bound_s:.1f} s\n{summary}"
        )


def test_a_paused_broker_is_fenced_its_leaders_move_and_it_rejoins_when_it_runs_again(cluster_dir):
    """SIGSTOP: the broker's process lives but sends no heartbeat; the active controller fences it
    once its session has expired (Metadata then no longer lists it) and moves its leaderships to
    the ISR's others. After SIGCONT it heartbeats again, catches up with the metadata log, is
    unfenced, and its replica fetches its way back into the ISR."""
    from kafka_lite.clients.admin import KafkaAdminClient, NewTopic

    state = load_state(cluster_dir)
    wait_healthy(state)
    started = time.monotonic()
    nodes = {b["id"] for b in state["brokers"]}
    controller = cluster_kraft.describe_quorum(state).leader_id  # healthy: the quorum has a leader
    paused = min(nodes - {controller})
    others = sorted(nodes - {paused})
    topic = f"fencing-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=durability_checker.bootstrap_servers(state))
    try:  # the paused broker first among the replicas: the partition's leader
        admin.create_topics([NewTopic(topic, replica_assignment={0: [paused, *others]})])
    finally:
        admin.close()
    view = durability_checker._KRaftView(cluster_dir)
    step = step_s(cluster_dir)
    wait_until(lambda: view.leader_and_isr(topic) == (paused, [paused, *others]), step,
               f"broker {paused} leading {topic}-0 with the ISR full")  # fmt: skip

    quiet = durability_checker._Quiet()
    ends = log_ends(cluster_dir, others)
    paused_ms = time.time() * 1000  # before the signal: the wall clock the controller stamps batches with
    run_pause(argparse.Namespace(dir=cluster_dir, broker=paused), quiet)
    try:
        wait_until(lambda: paused not in cluster_kraft.listed_brokers(state), step,
                   f"broker {paused} fenced")  # fmt: skip
        # The brokers that no longer list it have replayed its fence: when the controller began that
        # batch is the time it fenced the broker, however late the test looked.
        fence = fence_batch(cluster_dir, paused, ends)
        assert fence is not None, f"broker {paused} is no longer listed, but no metadata log holds its fence"
        fence_ms, fence_records, log = fence
        fenced_after_s = (fence_ms - paused_ms) / 1000
        # The session runs from the last heartbeat the controller received: up to a heartbeat
        # interval before the pause on an idle machine, earlier when a loaded one ran the broker
        # late. Half the session leaves a late heartbeat (session/2 - interval) and still fails a
        # controller that fences a broker for a missed heartbeat or two.
        session_s = setting_s(cluster_dir, "broker.session.timeout.ms")
        assert fenced_after_s >= session_s / 2, (
            f"broker {paused} fenced {fenced_after_s:.2f} s after the pause, its session being {session_s} s"
        )
        # The fencing took it out of the ISR and moved its leadership in the fence's own batch.
        topic_id = next(r.topic_id for _, records in log for _, r in records
                        if isinstance(r, TopicRecord) and r.name == topic)  # fmt: skip
        assert any(
            isinstance(r, PartitionChangeRecord) and r.topic_id == topic_id and r.leader in others
            and r.isr is not None and paused not in r.isr
            for _, r in fence_records
        ), f"the batch that fenced broker {paused} leaves {topic}-0 as it was: {fence_records}"  # fmt: skip
        wait_until(lambda: moved_off(view.leader_and_isr(topic), paused, others), step,
                   f"{topic}-0's leadership and ISR moved off broker {paused}")  # fmt: skip
    finally:
        run_resume(argparse.Namespace(dir=cluster_dir, broker=paused), quiet)
    wait_until(lambda: paused in cluster_kraft.listed_brokers(state), step, f"broker {paused} unfenced")
    wait_until(
        lambda: paused in view.leader_and_isr(topic)[1], step, f"broker {paused} back in {topic}-0's ISR"
    )
    print(f"fenced {fenced_after_s:.2f} s after the pause; wall time {time.monotonic() - started:.1f} s")
