"""Durability and fencing on a real KRaft cluster (Kafka 3.3, beyond the book, chapter 12): three
combined nodes, each a broker and a voter of the controller quorum; acks=all, min.insync.replicas=2,
replication 3.

One cluster (the checker's KRaft settings: 300 ms elections, 1.5 s broker sessions) serves the
three tests, in an xdist group of its own so that no other test's processes share the machine's
cores with its elections. Each test first waits until every node runs and every broker is unfenced,
so that none depends on what another left behind.
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
from kafka_lite.testing import durability_checker
from tests.support.durability import check_no_acknowledged_record_is_lost
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("durability_kraft")]

ROUNDS = 10
RECORDS_PER_ROUND = 50


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("durability-kraft-cluster")
    state = durability_checker.start(directory, kraft=True)
    try:
        yield directory
    finally:  # the pids as they are now: the restarted nodes are new processes
        stop_cluster(load_state(directory) or state)


def setting_s(directory: Path, name: str) -> float:
    """A ``*.ms`` setting the cluster's nodes run with (the last ``--override`` of it), in seconds."""
    values = [o.split("=", 1)[1] for o in load_state(directory)["overrides"] if o.split("=", 1)[0] == name]
    return int(values[-1]) / 1000


def moved_off(leader_and_isr: tuple[int, list[int]], broker: int, others: list[int]) -> bool:
    leader, isr = leader_and_isr
    return leader in others and broker not in isr


@pytest.mark.parametrize("victim", ["leader", "controller"])
def test_no_acknowledged_record_is_lost_when_the_victim_is_killed(cluster_dir, victim):
    wait_healthy(load_state(cluster_dir))
    report, summary = check_no_acknowledged_record_is_lost(cluster_dir, ROUNDS, victim, RECORDS_PER_ROUND)
    if victim == "controller":
        # The survivors stand once the fetch timeout (equal to the election timeout) has passed
        # without a word from the leader; a second is left for a split vote's retry and the
        # processes' scheduling on a busy machine.
        bound_s = setting_s(cluster_dir, "controller.quorum.election.timeout.ms") + 1
        assert all(s <= bound_s for s in report.failovers_s), summary


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
    wait_until(lambda: view.leader_and_isr(topic) == (paused, [paused, *others]), 15,
               f"broker {paused} leading {topic}-0 with the ISR full")  # fmt: skip

    quiet = durability_checker._Quiet()
    run_pause(argparse.Namespace(dir=cluster_dir, broker=paused), quiet)
    paused_at = time.monotonic()
    try:
        wait_until(lambda: paused not in cluster_kraft.listed_brokers(state), 15,
                   f"broker {paused} fenced")  # fmt: skip
        fenced_after_s = time.monotonic() - paused_at
        # The session runs from the last heartbeat the controller received, which can be up to one
        # heartbeat interval before the pause.
        session_s = setting_s(cluster_dir, "broker.session.timeout.ms")
        assert fenced_after_s >= session_s - setting_s(cluster_dir, "broker.heartbeat.interval.ms"), (
            fenced_after_s
        )
        # the fencing took it out of the ISR and its leadership in the same batch of records
        wait_until(lambda: moved_off(view.leader_and_isr(topic), paused, others), 5,
                   f"{topic}-0's leadership and ISR moved off broker {paused}")  # fmt: skip
    finally:
        run_resume(argparse.Namespace(dir=cluster_dir, broker=paused), quiet)
    wait_until(lambda: paused in cluster_kraft.listed_brokers(state), 20, f"broker {paused} unfenced")
    wait_until(
        lambda: paused in view.leader_and_isr(topic)[1], 20, f"broker {paused} back in {topic}-0's ISR"
    )
    print(f"fenced {fenced_after_s:.2f} s after the pause; wall time {time.monotonic() - started:.1f} s")
