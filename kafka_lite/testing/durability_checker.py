"""The durability checker: acks=all records produced while a broker is killed with SIGKILL, then read back.

No Kafka twin: modelled on Kafka's system tests' ``ProduceConsumeValidateTest`` run with a
broker-bounce nemesis, and on Jepsen's kill nemesis. A real ``KafkaProducer`` (acks=all, retries on,
not idempotent, one request in flight so that a retry cannot reorder) produces distinct values in a
thread. Each round SIGKILLs the victim (the partition's leader, or the controller's broker), waits
until another broker leads the partition (or is the controller), restarts the victim and waits until
it is back in the ISR. At the end every partition is read from the beginning to its high watermark
and compared with what was acknowledged (``verifiable_client.validate``).

Book: chapter 7, 7.1.3 (a dead broker's partitions get a new leader from the ISR) and chapter 6
(acks=all with ``min.insync.replicas``: an acknowledged record is on every replica of the ISR).
Differs: Kafka's system tests bounce with ``kill -9`` over ssh; here the brokers are local processes
of ``kafka-lite cluster``. On a KRaft cluster (``kafka-lite cluster up --kraft``, beyond the book,
chapter 12) the same rounds run, with the controller the quorum's leader and the partition's leader
and ISR read from the brokers' metadata rather than from ZooKeeper.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from kafka_lite.cli import cluster_kraft
from kafka_lite.cli.cluster import (
    _alive,
    bootstrap_servers,
    load_state,
    metadata_health,
    run_restart,
    start_cluster,
    stop_cluster,
    wait_healthy,
    zookeeper_connect,
)
from kafka_lite.tools.verifiable_client import Acknowledgement, ConsumedValue, Verdict, consume, validate

# What every checker's cluster runs with: followers that fetch often, so that a restarted broker is
# back in the ISR soon.
REPLICATION_OVERRIDES = [
    "replica.fetch.wait.max.ms=100",
    "replica.fetch.backoff.ms=100",
    "replica.lag.time.max.ms=4000",
    "log.cleaner.enable=false",
]
# A ZooKeeper cluster's: a short session (the cluster's ZooKeeper ticks every 500 ms, so 1-20 s
# sessions are allowed), so that a killed broker is noticed in about two seconds.
CLUSTER_OVERRIDES = ["zookeeper.session.timeout.ms=2000", *REPLICATION_OVERRIDES]
# A KRaft cluster's. A voter that has heard nothing from the leader for the fetch timeout stands for
# election; an election not won within the election timeout (plus a random part of it) starts again.
# Kafka's defaults are 2 s and 1 s. Here both are 300 ms, and equal: a killed active controller is
# then replaced about one election timeout after its last answer, where with the fetch timeout the
# longer the survivors would first wait that out before any election began. A broker heartbeats every
# 200 ms and is fenced 1.5 s after its last heartbeat, so that a killed broker's partitions move
# about as soon as a ZooKeeper broker's do.
KRAFT_OVERRIDES = [
    "controller.quorum.election.timeout.ms=300",
    "controller.quorum.fetch.timeout.ms=300",
    "broker.session.timeout.ms=1500",
    "broker.heartbeat.interval.ms=200",
    *REPLICATION_OVERRIDES,
]
VICTIMS = ("leader", "controller")
PACE_S = 0.01  # between two flushes of 50 sends
STEP_TIMEOUT_S = 60.0  # each wait of a round: an election, a restart, the ISR
FAILOVER_POLL_S = 0.02  # how often a round asks who took over from the victim: the failover's resolution


@dataclass
class DurabilityReport:
    """What a check found: the verdict, and per partition the acknowledged values read out of order."""

    verdict: Verdict
    rounds: int
    out_of_order: dict[int, int] = field(default_factory=dict)
    failed_sends: int = 0
    # per round, seconds from the SIGKILL to the first answer naming another leader or controller
    failovers_s: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict.ok and not any(self.out_of_order.values())

    def lines(self) -> list[str]:
        v = self.verdict
        return [
            f"rounds        {self.rounds}",
            f"acknowledged  {v.acknowledged}",
            f"found         {len(v.found)}",
            f"duplicated    {len(v.duplicated)}",
            f"lost          {len(v.lost)}",
            f"failed sends  {self.failed_sends}",
            *([f"failover      {max(self.failovers_s):.2f} s at the most"] if self.failovers_s else []),
            *(f"out-of-order  partition {p}: {n}" for p, n in sorted(self.out_of_order.items())),
        ]


def wait_for(condition, what: str, timeout_s: float = STEP_TIMEOUT_S, poll_s: float = 0.05):
    """Until ``condition()`` is truthy, or raise ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            result = condition()
        except Exception:  # a broker restarting, a ZooKeeper reconnecting: not yet
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)  # polling, bounded by the deadline


class _Producer(threading.Thread):
    """Sends "<run>-<n>" for n = 0, 1, ... until stopped, recording each acknowledgement."""

    def __init__(self, servers: str, topic: str):
        super().__init__(name="durability-producer", daemon=True)
        from kafka_lite.producer.kafka_producer import KafkaProducer

        self.topic = topic
        self.prefix = uuid.uuid4().hex[:8]
        self.acknowledged: list[Acknowledgement] = []
        self.failed: dict[str, str] = {}
        self.stopping = threading.Event()
        self.error: BaseException | None = None
        self.producer = KafkaProducer(
            bootstrap_servers=servers,
            acks=-1,
            retries=2**31 - 1,
            retry_backoff_ms=50,
            max_in_flight_requests_per_connection=1,  # a retried batch cannot pass a later one
            linger_ms=5,
            value_serializer=str.encode,
        )

    def run(self) -> None:
        n = 0
        try:
            while not self.stopping.is_set():
                value = f"{self.prefix}-{n}"
                future = self.producer.send(self.topic, value)
                future.add_callback(
                    lambda md, value=value: self.acknowledged.append(
                        Acknowledgement(value, md.partition, md.offset)
                    )
                )
                future.add_errback(lambda e, value=value: self.failed.__setitem__(value, type(e).__name__))
                n += 1
                if n % 50 == 0:
                    self.producer.flush()  # bounds the records waiting while a leader is elected
                    # a paced load, not a flood: the rounds, not the volume, are what the check is of
                    self.stopping.wait(PACE_S)
            self.producer.flush()
        except BaseException as e:  # reported by stop(): a producer that died must not pass as a check
            self.error = e
        finally:
            self.producer.close()

    def stop(self) -> None:
        self.stopping.set()
        self.join(STEP_TIMEOUT_S)
        if self.is_alive():
            raise TimeoutError("the producer did not finish its last sends")
        if self.error is not None:
            raise RuntimeError(f"the producer failed: {self.error!r}") from self.error


def sequence(value: str) -> int:
    return int(value.rsplit("-", 1)[1])


def out_of_order(consumed: list[ConsumedValue], prefix: str) -> dict[int, int]:
    """Per partition, how many values (first occurrences, this run's) come after a later-sent one."""
    counts: dict[int, int] = {}
    seen: set[str] = set()
    highest: dict[int, int] = {}
    for c in sorted(consumed, key=lambda c: (c.partition, c.offset)):
        if not c.value.startswith(prefix + "-") or c.value in seen:
            continue  # a duplicate repeats a value already placed
        seen.add(c.value)
        s = sequence(c.value)
        counts.setdefault(c.partition, 0)
        if s < highest.get(c.partition, -1):
            counts[c.partition] += 1
        highest[c.partition] = max(s, highest.get(c.partition, -1))
    return counts


class _ZooKeeperView:
    """Who the controller is and who leads and follows in sync, as ZooKeeper says (book 7.1)."""

    def __init__(self, state: dict) -> None:
        from kafka_lite.zk.zk_utils import ZkUtils

        self.zk = ZkUtils(zookeeper_connect(state), connection_timeout_ms=5000)

    def controller(self) -> int:
        return self.zk.get_controller_id()

    def leader_and_isr(self, topic: str) -> tuple[int, list[int]]:
        leader_and_isr = self.zk.get_partition_state(topic, 0).leader_and_isr
        return leader_and_isr.leader, leader_and_isr.isr

    def close(self) -> None:
        self.zk.close()


class _KRaftView:
    """The same on a KRaft cluster (Kafka 3.3, beyond the book, chapter 12), where no one store holds
    them: the active controller is the quorum's leader, which DescribeQuorum to a live voter names,
    and the partition's leader and ISR are what the live brokers' metadata caches have from the
    metadata log. (A Metadata response's ``controller_id`` is a random broker there.)"""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def controller(self) -> int:
        quorum = cluster_kraft.describe_quorum(load_state(self.directory))
        return -1 if quorum is None else quorum.leader_id

    def leader_and_isr(self, topic: str) -> tuple[int, list[int]]:
        state = load_state(self.directory)
        # A partition whose replica is down comes with REPLICA_NOT_AVAILABLE, and its leader and ISR.
        health = metadata_health(state, {}, cluster_kraft.answering_brokers(state))
        for name, partition, leader, _, isr in health.get("partitions", []):
            if (name, partition) == (topic, 0):
                return -1 if leader is None else leader, list(isr)
        raise LookupError(f"no live broker knows {topic}-0")

    def close(self) -> None:
        pass


def _view(directory: Path, state: dict):
    return _KRaftView(directory) if "kraft" in state else _ZooKeeperView(state)


def _victim_of(view, victim: str, topic: str) -> int:
    if victim == "controller":
        return view.controller()
    return view.leader_and_isr(topic)[0]


def _kill(state: dict, broker_id: int) -> float:
    """SIGKILL the broker and wait until it is gone; the ``time.monotonic()`` of the signal."""
    pid = next(b["pid"] for b in state["brokers"] if b["id"] == broker_id)
    killed_at = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not _alive(pid), f"broker {broker_id} (pid {pid}) to die", 10)
    return killed_at


def _failover_s(view, victim: str, topic: str, target: int, killed_at: float) -> float:
    """Seconds from the SIGKILL of ``target`` to the first answer that names another ``victim``."""
    wait_for(
        lambda: _victim_of(view, victim, topic) not in (target, -1),
        f"a new {victim} after broker {target} was killed",
        poll_s=FAILOVER_POLL_S,
    )
    return time.monotonic() - killed_at


def check(
    directory: Path,
    rounds: int,
    victim: str,
    records_per_round: int = 100,
    topic: str | None = None,
    log=print,
) -> DurabilityReport:
    """Run the check on the cluster in ``directory`` (which must be running, 3 brokers or more)."""
    from kafka_lite.clients.admin import KafkaAdminClient, NewTopic

    if victim not in VICTIMS:
        raise ValueError(f"victim must be one of {VICTIMS}, got {victim!r}")
    state = load_state(directory)
    if state is None:
        raise ValueError(f"no cluster in {directory}")
    servers = bootstrap_servers(state)
    topic = topic or f"durability-{victim}-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        admin.create_topics([NewTopic(topic, 1, 3, configs={"min.insync.replicas": "2"})])
    finally:
        admin.close()
    view = _view(directory, state)
    failovers_s: list[float] = []
    try:
        wait_for(lambda: len(view.leader_and_isr(topic)[1]) == 3, f"{topic}'s ISR of 3")
        producer = _Producer(servers, topic)
        producer.start()
        try:
            for r in range(1, rounds + 1):
                wait_for(lambda r=r: len(producer.acknowledged) >= r * records_per_round,
                         f"{records_per_round} acknowledgements in round {r}")  # fmt: skip
                target = _victim_of(view, victim, topic)
                killed_at = _kill(load_state(directory), target)
                failovers_s.append(_failover_s(view, victim, topic, target, killed_at))
                # A KRaft restart also waits for the old registration to be fenced and the new one
                # unfenced: run_restart does both before it returns.
                run_restart(argparse.Namespace(dir=directory, broker=target), _Quiet())
                wait_for(
                    lambda t=target: t in view.leader_and_isr(topic)[1],
                    f"broker {target} back in {topic}'s ISR",
                )
                log(
                    f"round {r}: killed broker {target} ({victim}), a new {victim} after "
                    f"{failovers_s[-1]:.2f} s, {len(producer.acknowledged)} acknowledged"
                )
            wait_for(lambda: len(producer.acknowledged) >= (rounds + 1) * records_per_round,
                     "the last round's acknowledgements")  # fmt: skip
        finally:
            producer.stop()
    finally:
        view.close()
    consumed = consume(servers, topic)
    verdict = validate(producer.acknowledged, consumed)
    return DurabilityReport(
        verdict, rounds, out_of_order(consumed, producer.prefix), len(producer.failed), failovers_s
    )


class _Quiet:
    """A console that prints nothing: ``run_restart``'s status table is not the checker's output."""

    def print(self, *args, **kwargs) -> None:
        pass


def start(directory: Path, brokers: int = 3, kraft: bool = False) -> dict:
    """A cluster of ``brokers`` in ``directory`` with the checker's settings, waited on until healthy:
    with ``kraft``, as many combined nodes (broker and controller, the quorum's voters), no ZooKeeper."""
    from kafka_lite.utils.ports import free_ports

    zk_port = free_ports(brokers + 1)  # with ``kraft`` the first is left unused
    overrides = KRAFT_OVERRIDES if kraft else CLUSTER_OVERRIDES
    state = start_cluster(directory, brokers, zk_port, zk_port + 1, overrides, kraft=kraft)
    try:
        wait_healthy(state)
    except BaseException:
        stop_cluster(state)
        raise
    return state
