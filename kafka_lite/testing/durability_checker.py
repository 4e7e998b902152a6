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
of ``kafka-lite cluster``.
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

from kafka_lite.cli.cluster import (
    _alive,
    bootstrap_servers,
    load_state,
    run_restart,
    start_cluster,
    stop_cluster,
    wait_healthy,
)
from kafka_lite.tools.verifiable_client import Acknowledgement, ConsumedValue, Verdict, consume, validate

# The brokers' settings a checker's cluster starts with: a short ZooKeeper session (the cluster's
# ZooKeeper ticks every 500 ms, so 1-20 s sessions are allowed) so a killed broker is noticed in
# about two seconds, and followers that fetch often so a restarted broker is back in the ISR soon.
CLUSTER_OVERRIDES = [
    "zookeeper.session.timeout.ms=2000",
    "replica.fetch.wait.max.ms=100",
    "replica.fetch.backoff.ms=100",
    "replica.lag.time.max.ms=4000",
    "log.cleaner.enable=false",
]
VICTIMS = ("leader", "controller")
PACE_S = 0.01  # between two flushes of 50 sends
STEP_TIMEOUT_S = 60.0  # each wait of a round: an election, a restart, the ISR


@dataclass
class DurabilityReport:
    """What a check found: the verdict, and per partition the acknowledged values read out of order."""

    verdict: Verdict
    rounds: int
    out_of_order: dict[int, int] = field(default_factory=dict)
    failed_sends: int = 0

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
            *(f"out-of-order  partition {p}: {n}" for p, n in sorted(self.out_of_order.items())),
        ]


def wait_for(condition, what: str, timeout_s: float = STEP_TIMEOUT_S):
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
        time.sleep(0.05)  # polling, bounded by the deadline


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


def _victim_of(zk, victim: str, topic: str) -> int:
    if victim == "controller":
        return zk.get_controller_id()
    return zk.get_partition_state(topic, 0).leader_and_isr.leader


def _kill(state: dict, broker_id: int) -> None:
    pid = next(b["pid"] for b in state["brokers"] if b["id"] == broker_id)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not _alive(pid), f"broker {broker_id} (pid {pid}) to die", 10)


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
    from kafka_lite.zk.zk_utils import ZkUtils

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
    zk = ZkUtils(f"127.0.0.1:{state['zookeeper']['port']}", connection_timeout_ms=5000)
    try:
        wait_for(lambda: len(zk.get_partition_state(topic, 0).leader_and_isr.isr) == 3, f"{topic}'s ISR of 3")
        producer = _Producer(servers, topic)
        producer.start()
        try:
            for r in range(1, rounds + 1):
                wait_for(lambda r=r: len(producer.acknowledged) >= r * records_per_round,
                         f"{records_per_round} acknowledgements in round {r}")  # fmt: skip
                target = _victim_of(zk, victim, topic)
                _kill(load_state(directory), target)
                wait_for(
                    lambda t=target: _victim_of(zk, victim, topic) not in (t, -1),
                    f"a new {victim} after broker {target} was killed",
                )
                run_restart(argparse.Namespace(dir=directory, broker=target), _Quiet())
                wait_for(
                    lambda t=target: t in zk.get_partition_state(topic, 0).leader_and_isr.isr,
                    f"broker {target} back in {topic}'s ISR",
                )
                log(
                    f"round {r}: killed broker {target} ({victim}), {len(producer.acknowledged)} acknowledged"
                )
            wait_for(lambda: len(producer.acknowledged) >= (rounds + 1) * records_per_round,
                     "the last round's acknowledgements")  # fmt: skip
        finally:
            producer.stop()
    finally:
        zk.close()
    consumed = consume(servers, topic)
    verdict = validate(producer.acknowledged, consumed)
    return DurabilityReport(verdict, rounds, out_of_order(consumed, producer.prefix), len(producer.failed))


class _Quiet:
    """A console that prints nothing: ``run_restart``'s status table is not the checker's output."""

    def print(self, *args, **kwargs) -> None:
        pass


def start(directory: Path, brokers: int = 3) -> dict:
    """A cluster of ``brokers`` in ``directory`` with the checker's settings, waited on until healthy."""
    from kafka_lite.utils.ports import free_ports

    zk_port = free_ports(brokers + 1)
    state = start_cluster(directory, brokers, zk_port, zk_port + 1, CLUSTER_OVERRIDES)
    try:
        wait_healthy(state)
    except BaseException:
        stop_cluster(state)
        raise
    return state
