"""``kafka-lite raft test-server``: one voter of a Raft quorum as a process, with a workload its
leader appends, timed from append to commit.

Mirrors: kafka.tools.TestRaftServer and its RaftWorkloadGenerator
         (core/src/main/scala/kafka/tools/TestRaftServer.scala, Kafka 3.3.0)
Book:    beyond the book: chapter 12 (KRaft)
Differs: a bounded run (``duration_s``) that ends with one summary line of JSON; each record carries
         a key naming its writer, so a checker can find it in every voter's log; a leader can write
         each record it saw committed to a file (``committed_file``).

Kafka wrote TestRaftServer to measure the Raft layer alone: no controller, no metadata records, just
the quorum replicating byte records as fast as it is asked. Every voter runs the same workload
generator, a Raft listener: it learns from ``handle_leader_change`` whether this node leads, and
only then appends, ``throughput`` records a second of ``record_size`` bytes, through
``schedule_append``. The commit latency of a record is measured as Kafka's is, from the call to
``schedule_append`` to the ``handle_commit`` that hands it back, so it includes the linger, the
follower's Fetch round trips and the leader's flush: all that stands between a write and a write the
quorum will never lose.

A record's value is ``<key> <padding>``, its key ``<node>.<start ms>.<sequence>``: unique across
restarts of one node, so the checker tells the writes of every leader apart.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from time import process_time
from typing import Any

from kafka_lite.common.time import SYSTEM, Time
from kafka_lite.raft.raft_client import Batch, LeaderAndEpoch, Listener
from kafka_lite.raft.raft_config import RaftConfig
from kafka_lite.raft.tools.raft_manager import KafkaRaftManager
from kafka_lite.utils.shutdown_signals import ShutdownSignals

log = logging.getLogger(__name__)


class ByteArraySerde:
    def serialize(self, record: bytes) -> bytes:
        return record

    def deserialize(self, data: bytes) -> bytes:
        return bytes(data)


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, round(p / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[index]


@dataclass
class WorkloadReport:
    node_id: int
    committed: int
    duration_s: float
    latencies_ms: list[float]
    leader_epochs: list[int]
    error: str | None = None
    batches: int = 0  # committed batches holding this workload's records: how full the leader's batches ran
    cpu_s: float = 0.0  # the process's CPU time over the run, every thread: what the node cost its machine

    def as_dict(self) -> dict[str, Any]:
        latencies = sorted(self.latencies_ms)
        return {
            "node_id": self.node_id,
            "committed": self.committed,
            "throughput": round(self.committed / self.duration_s, 1) if self.duration_s > 0 else 0.0,
            "batches": self.batches,
            "records_per_batch": round(self.committed / self.batches, 1) if self.batches else 0.0,
            "cpu_s": round(self.cpu_s, 3),
            "latency_p50_ms": round(percentile(latencies, 50), 2),
            "latency_p99_ms": round(percentile(latencies, 99), 2),
            "latency_max_ms": round(latencies[-1], 2) if latencies else 0.0,
            "leader_epochs": self.leader_epochs,
            "error": self.error,
        }


class RaftWorkloadGenerator(Listener):
    """Appends the workload while this node leads; times each record from append to commit."""

    def __init__(
        self,
        manager: KafkaRaftManager,
        throughput: int,
        record_size: int,
        time: Time = SYSTEM,
        committed_file: Path | None = None,
        out=None,
    ) -> None:
        self._manager = manager
        self._client = manager.client
        self._node_id = manager.node_id
        self._throughput = throughput
        self._record_size = record_size
        self._time = time
        self._start_ms = time.milliseconds()
        self._sequence = 0
        self._lock = threading.Lock()
        # The epoch this node leads, None when it does not; only appends of that epoch are timed.
        self._leading_epoch: int | None = None
        self._append_times_ms: dict[bytes, int] = {}
        self.latencies_ms: list[float] = []
        self.committed = 0
        self.batches = 0
        self.leader_epochs: list[int] = []
        self.first_append_ms: int | None = None
        self._committed_fd = (
            os.open(committed_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if committed_file else None
        )
        self._out = out
        self._running = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"raft-workload-{self._node_id}", daemon=True)

    # -- the Raft listener (called on the Raft IO thread) ----------------------------------------------------

    def handle_commit(self, batches: list[Batch]) -> None:
        now = self._time.milliseconds()
        lines = []
        with self._lock:
            leading = self._leading_epoch is not None
            for batch in batches:
                committed_before = self.committed
                for i, value in enumerate(batch.records):
                    key = value.split(b" ", 1)[0]
                    appended = self._append_times_ms.pop(key, None)
                    if appended is not None:
                        self.latencies_ms.append(now - appended)
                        self.committed += 1
                    if leading:
                        lines.append(f"{batch.base_offset + i} {key.decode()}\n")
                if self.committed > committed_before:
                    self.batches += 1
        if lines and self._committed_fd is not None:
            # One write per commit: the OS keeps it even if this process is SIGKILLed next.
            os.write(self._committed_fd, "".join(lines).encode())

    def handle_snapshot(self, reader: Any) -> None:
        pass

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        with self._lock:
            if leader.is_leader(self._node_id):
                self._leading_epoch = leader.epoch
                self.leader_epochs.append(leader.epoch)
            else:
                self._leading_epoch = None
                # Uncommitted appends of a lost epoch may or may not commit: stop timing them.
                self._append_times_ms.clear()
        self.say({"event": "leader_change", "node_id": self._node_id, "leader_id": leader.leader_id,
                   "epoch": leader.epoch})  # fmt: skip

    # -- the workload thread --------------------------------------------------------------------------------

    def start(self) -> None:
        self._running.set()
        self._thread.start()

    def stop(self) -> None:
        self._running.clear()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        # A token bucket of records: each pass appends what is due since the last one, so the rate
        # holds whatever the pass's own cost.
        tick_ms = 5
        due = 0.0
        last_ms = self._time.milliseconds()
        while self._running.is_set():
            self._time.sleep(tick_ms)
            now = self._time.milliseconds()
            due = min(due + (now - last_ms) * self._throughput / 1000, self._throughput)
            last_ms = now
            with self._lock:
                epoch = self._leading_epoch
            if epoch is None:
                due = 0.0
                continue
            count = int(due)
            if count == 0:
                continue
            due -= count
            self._append(epoch, count, now)

    def _append(self, epoch: int, count: int, now: int) -> None:
        records = []
        keys = []
        for _ in range(count):
            key = f"{self._node_id}.{self._start_ms}.{self._sequence}".encode()
            self._sequence += 1
            keys.append(key)
            records.append(key + b" " + b"x" * max(0, self._record_size - len(key) - 1))
        with self._lock:
            for key in keys:
                self._append_times_ms[key] = now
        try:
            self._client.schedule_append(epoch, records)
        except Exception as e:  # the leadership moved between the check and the append
            log.debug("Append of %d records in epoch %d failed: %s", count, epoch, e)
            with self._lock:
                for key in keys:
                    self._append_times_ms.pop(key, None)
            return
        if self.first_append_ms is None:
            self.first_append_ms = now

    def say(self, event: dict) -> None:
        if self._out is not None:
            self._out.write(json.dumps(event) + "\n")
            self._out.flush()

    def close(self) -> None:
        if self._committed_fd is not None:
            os.close(self._committed_fd)
            self._committed_fd = None


def run_test_server(
    node_id: int,
    raft_config: RaftConfig,
    data_dir: Path,
    throughput: int,
    record_size: int,
    duration_s: float | None,
    committed_file: Path | None = None,
    out=None,
    time: Time = SYSTEM,
) -> WorkloadReport:
    """Run one voter until ``duration_s`` has passed (for ever if None) or SIGTERM/SIGINT; return
    what its workload measured while it led."""
    manager = KafkaRaftManager(node_id, data_dir, raft_config, ByteArraySerde(), time)
    workload = RaftWorkloadGenerator(manager, throughput, record_size, time, committed_file, out)
    manager.client.register(workload)
    stop = ShutdownSignals()
    start_ms = time.milliseconds()
    start_cpu_s = process_time()
    manager.startup()
    workload.say({"event": "started", "node_id": node_id, "port": manager.socket_server.port})
    workload.start()
    try:
        while stop.received is None and manager.io_thread.is_alive():
            if duration_s is not None and time.milliseconds() - start_ms >= duration_s * 1000:
                break
            stop.wait(0.05)
    finally:
        stop.close()
        workload.stop()
        manager.shutdown()
        workload.close()
    measured_from = workload.first_append_ms or start_ms
    error = repr(manager.io_thread.error) if manager.io_thread.error is not None else None
    return WorkloadReport(
        node_id, workload.committed, (time.milliseconds() - measured_from) / 1000, workload.latencies_ms,
        workload.leader_epochs, error, workload.batches, process_time() - start_cpu_s,
    )  # fmt: skip
