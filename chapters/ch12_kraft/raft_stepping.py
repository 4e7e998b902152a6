"""What the notebook ``raft_election.ipynb`` steps: three voters of chapter 12's Raft simulation on one
simulated clock, and tables of their state and their logs.

No Kafka twin: notebook tooling over ``kafka_lite.raft.simulation`` (Kafka's own simulation, its
``RaftEventSimulationTest``, has no tables to print).
"""

from __future__ import annotations

import random

from rich.console import Console
from rich.table import Table

from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.control_record_utils import deserialize_leader_change_message
from kafka_lite.raft.simulation.cluster import Cluster
from kafka_lite.raft.simulation.event_scheduler import EventScheduler
from kafka_lite.raft.simulation.message_router import MessageRouter
from kafka_lite.raft.simulation.replicated_counter import IntSerde

console = Console(width=100, force_jupyter=False, force_terminal=True, color_system="standard")


class SteppedQuorum:
    """Three voters (0, 1 and 2), their logs in memory, one MockTime: every node polls every 10 ms
    (staggered by a millisecond) and the network delivers every 2 ms, as the notebook's scheduler
    runs them."""

    def __init__(self, seed: int) -> None:
        self.cluster = Cluster(3, seed)
        self.scheduler = EventScheduler(random.Random(seed), self.cluster.time, seed)
        self.router = MessageRouter(self.cluster, self.scheduler, random.Random(f"{seed}/router"))
        self.cluster.start_all()
        for node_id in sorted(self.cluster.nodes):
            self.scheduler.schedule(
                lambda node_id=node_id: self.cluster.poll_if_running(node_id), node_id, 10, 0
            )
        self.scheduler.schedule(self.router.deliver_all, 0, 2, 0, check_invariants=False)
        self.start_ms = self.cluster.time.milliseconds()

    def node(self, node_id: int):
        return self.cluster.running[node_id]

    def quorum(self, node_id: int):
        return self.node(node_id).client.quorum()

    def high_watermark(self, node_id: int) -> int | None:
        """The node's high watermark, or None while it does not know one."""
        hw = self.quorum(node_id).high_watermark()
        return None if hw is None else hw.offset

    def show(self, title: str) -> None:
        """Every node as its QuorumState and its quorum-state store hold it."""
        table = Table(title=f"{title}  (t = {self.cluster.time.milliseconds() - self.start_ms} ms)")
        for column in ("node", "state", "epoch", "leader", "voted for (stored)", "log end", "high watermark"):
            table.add_column(column)
        for node_id in sorted(self.cluster.running):
            election = self.node(node_id).store.read_election_state()
            quorum, hw = self.quorum(node_id), self.high_watermark(node_id)
            leader = quorum.leader_id()
            table.add_row(
                str(node_id), quorum.current_state().name(), str(quorum.epoch()),
                "-" if leader is None else str(leader),
                "-" if election is None or election.voted_id_opt is None else str(election.voted_id_opt),
                str(self.node(node_id).log_end_offset()), "unknown" if hw is None else str(hw),
            )  # fmt: skip
        console.print(table)

    def entries(self, node_id: int) -> list[tuple[int, int, str]]:
        """Each record of the node's log as (offset, epoch, what it holds)."""
        out = []
        for batch in self.node(node_id).log.read_batches(0):
            for i, record in enumerate(MemoryRecords(batch.data).records()):
                if batch.is_control_batch:
                    message = deserialize_leader_change_message(record)
                    granting = sorted(v["voter_id"] for v in message["granting_voters"])
                    what = f"LeaderChange(leader={message['leader_id']}, granting voters={granting})"
                else:
                    what = f"counter = {IntSerde().deserialize(record.value)}"
                out.append((batch.base_offset + i, batch.epoch, what))
        return out

    def show_log(self, node_id: int, title: str, rows: list | None = None) -> None:
        table = Table(title=f"node {node_id}'s log: {title}")
        for column in ("offset", "epoch", "record"):
            table.add_column(column)
        for offset, epoch, what in self.entries(node_id) if rows is None else rows:
            table.add_row(str(offset), str(epoch), what)
        console.print(table)
