"""One round of replication, request by request, as it happened on a live leader.

No Kafka twin: a picture of what ``kafka.server.ReplicaManager`` does with an ``acks=all`` produce
(its ``appendRecords``, the fetch purgatory, ``updateFollowerLogReadResults``, the produce purgatory).
The book describes the steps in prose.
Book:    chapter 6, 6.2.2 (the followers' fetches move the HW), 6.3 (the delayed produce and fetch)

Nothing here is drawn by hand. ``replication_round_steps`` plays one round on three replica managers
in one process on one ``MockTime`` (no ZooKeeper, no sockets): the two followers' fetches and a
consumer's fetch are already waiting in the leader's fetch purgatory, as they are between rounds
on a running cluster; a producer sends one record with ``acks=all``; each follower appends what its
answer brought and fetches again. Every row is one request or answer as the leader's calls made it,
in the order they came: an answer is recorded by the callback the leader calls, so a fetch that the
produce completed appears under the produce, and the LEOs and the HW beside it are read from the
three brokers at that moment.

``replication_round`` returns a ``graphviz.Digraph``; ``.source`` is the DOT text, which the tests
read.
"""

from __future__ import annotations

import html
import tempfile
from dataclasses import dataclass
from pathlib import Path

import graphviz

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.fetch_request import CONSUMER_REPLICA_ID
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.time import MockTime
from kafka_lite.diagrams.style import new_graph, wrapped
from kafka_lite.server.replica_manager import (
    FetchMetadata,
    FetchPartitionRequest,
    LogReadResult,
    ReplicaManager,
)
from kafka_lite.testing.in_process_replicas import (
    append_fetched,
    in_process_brokers,
    leader_and_isr,
    records_bytes,
    replicate,
)

TP = ("orders", 0)
MAX_WAIT_MS = 500  # fetch.max.wait.ms and replica.fetch.wait.max.ms: both wait in the purgatory
REQUEST = "#dbeafe"  # a request to the leader
ANSWER = "#dcfce7"  # the leader's answer
HEAD = "#f3f4f6"
TABLE = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">{}</table>>'


@dataclass
class RoundStep:
    """One request to the leader, or one answer from it, and the replicas' state right after."""

    sender: str
    receiver: str
    message: str
    effect: str  # what it set off at the receiver
    leader_log_end_offset: int
    high_watermark: int
    follower_log_end_offsets: tuple[int, int]  # brokers 1 and 2, each from its own log

    @property
    def is_request(self) -> bool:
        return self.receiver == "leader"


class _Round:
    """Three brokers on one clock, broker 0 leading ``TP``, and the steps recorded so far."""

    def __init__(self, managers: list[ReplicaManager]) -> None:
        self.leader, *self.followers = managers
        self.steps: list[RoundStep] = []
        self.fetched: dict[int, tuple[LogReadResult, RoundStep]] = {}  # a follower's answer, until processed

    def _state(self) -> tuple[int, int, tuple[int, int]]:
        replica = self.leader.get_partition(TP).get_replica()
        own = tuple(f.get_partition(TP).get_replica().log_end_offset for f in self.followers)
        return replica.log_end_offset, replica.high_watermark, own

    def record(self, sender: str, receiver: str, message: str, effect: str = "") -> RoundStep:
        step = RoundStep(sender, receiver, message, effect, *self._state())
        self.steps.append(step)
        return step

    def handled(self, step: RoundStep) -> None:
        """A request's row shows the replicas once the leader has handled it."""
        step.leader_log_end_offset, step.high_watermark, step.follower_log_end_offsets = self._state()

    def fetch(self, replica_id: int, offset: int) -> RoundStep:
        """A Fetch from ``offset`` that waits in the purgatory if there is nothing to read."""
        who = "consumer" if replica_id == CONSUMER_REPLICA_ID else f"broker {replica_id}"
        step = self.record(who, "leader", f"Fetch from offset {offset}")
        high_watermark = step.high_watermark
        answers: list[LogReadResult] = []

        def answered(results: dict) -> None:
            result = results[TP]
            answers.append(result)
            batches = list(MemoryRecords(records_bytes(result.records)).batches())
            got = f"offset {batches[0].base_offset}" if batches else "nothing"
            answer = self.record("leader", who, f"Fetch answer: {got}, HW {result.high_watermark}")
            if replica_id == CONSUMER_REPLICA_ID:
                answer.effect = f"the consumer has {got}, committed on every in-sync replica"
            else:
                self.fetched[replica_id] = (result, answer)

        self.leader.fetch_messages(
            FetchMetadata(1, 1 << 20, replica_id, {TP: FetchPartitionRequest(offset, 1 << 20)}, MAX_WAIT_MS),
            answered,
        )
        if replica_id != CONSUMER_REPLICA_ID:
            log_end_offset = self.leader.get_partition(TP).get_replica(replica_id).log_end_offset
            step.effect = f"the leader learns broker {replica_id}'s LEO: {log_end_offset}"
            moved = self.leader.get_partition(TP).high_watermark()
            step.effect += (
                f"; the HW moves from {high_watermark} to {moved}"
                if moved != high_watermark
                else f"; the HW stays {moved}"
            )
        if not answers:
            step.effect += ("; " if step.effect else "") + "nothing to read yet: it waits"
        self.handled(step)
        return step

    def follower_appends_and_fetches(self, index: int) -> None:
        """Follower ``index`` (0 or 1) appends what its answer brought, takes the leader's HW (never
        above its own LEO), and fetches from its new LEO, as ``ReplicaFetcherThread`` does."""
        follower = self.followers[index]
        result, answer = self.fetched.pop(follower.broker_id)
        log_end_offset = append_fetched(follower, TP, result)
        high_watermark = follower.get_partition(TP).high_watermark()
        answer.effect = (
            f"broker {follower.broker_id} appends it at the leader's offsets (LEO "
            f"{log_end_offset}), takes HW {high_watermark}, fetches again"
        )
        self.fetch(follower.broker_id, log_end_offset)

    def produce(self, value: bytes) -> RoundStep:
        """A Produce with acks=all of one record."""
        step = self.record("producer", "leader", "Produce, acks=all, one record")
        before = len(self.steps)

        def answered(results: dict) -> None:
            response = results[TP]
            error = "" if response.error is Errors.NONE else f", {response.error.name}"
            answer = self.record(
                "leader", "producer", f"Produce answer: offset {response.base_offset}{error}"
            )
            answer.effect = "the producer's future completes: the record is on every in-sync replica"

        records = MemoryRecords.with_records([(self.leader.time.milliseconds(), None, value)])
        self.leader.append_records(30_000, -1, False, {TP: records}, answered)
        appended = self.leader.get_partition(TP).get_replica().log_end_offset - 1
        completed = len(self.steps) - before
        step.effect = f"appended at offset {appended}"
        if completed:
            step.effect += f"; the append completes {completed} waiting fetches"
        step.effect += f"; the produce waits for the HW to pass {appended}"
        self.handled(step)
        return step


def replication_round_steps() -> list[RoundStep]:
    """One ``acks=all`` round on ``orders-0`` (broker 0 leading, brokers 1 and 2 following, all in
    the ISR, two records already on all three), recorded request by request."""
    time = MockTime()
    with tempfile.TemporaryDirectory() as d, in_process_brokers(Path(d), time) as managers:
        for manager in managers:
            manager.become_leader_or_follower(leader_and_isr(TP, 0, [0, 1, 2], [0, 1, 2]))
        leader = managers[0]
        leader.append_records(
            30_000,
            1,
            False,
            {TP: MemoryRecords.with_records([(0, None, b"a"), (0, None, b"b")])},
            lambda _: None,
        )
        for _ in range(2):  # fetch the records, then fetch from the LEO: caught up, and the HW is 2
            for follower in managers[1:]:
                replicate(leader, follower, TP)
        played = _Round(managers)
        # Between rounds: the followers' and the consumer's fetches wait for something new.
        for follower in managers[1:]:
            played.fetch(follower.broker_id, follower.get_partition(TP).get_replica().log_end_offset)
        played.fetch(CONSUMER_REPLICA_ID, leader.get_partition(TP).high_watermark())
        waiting = len(played.steps)
        played.produce(b"c")
        played.follower_appends_and_fetches(0)
        played.follower_appends_and_fetches(1)
        return played.steps[waiting:]


def replication_round_diagram(steps: list[RoundStep]) -> graphviz.Digraph:
    """The round as a table: one row per request (blue) or answer (green), in order, with what it
    set off, and the leader's LEO and HW and each follower's own LEO once the leader had handled the
    request, or as the answer left."""
    head = (
        f'<tr><td bgcolor="{HEAD}">#</td><td bgcolor="{HEAD}">from → to: request or answer</td>'
        f'<td bgcolor="{HEAD}">what it sets off</td>'
        f'<td bgcolor="{HEAD}">leader<br/>LEO, HW</td><td bgcolor="{HEAD}">broker 1<br/>LEO</td>'
        f'<td bgcolor="{HEAD}">broker 2<br/>LEO</td></tr>'
    )
    requests = sum(1 for s in steps if s.is_request)
    title = (
        f"<b>One round of replication: {TP[0]}-{TP[1]}, acks=all</b><br/>"
        "leader broker 0, followers 1 and 2, all in the ISR;<br/>"
        "the followers' and a consumer's fetches were waiting in the purgatory"
    )
    rows = [f'<tr><td colspan="6" bgcolor="{HEAD}">{title}</td></tr>', head]
    for i, step in enumerate(steps, 1):
        colour = REQUEST if step.is_request else ANSWER
        sender = "broker 0" if step.sender == "leader" else step.sender
        receiver = "broker 0" if step.receiver == "leader" else step.receiver
        rows.append(
            f'<tr><td>{i}</td><td bgcolor="{colour}" align="left" balign="left">'
            f"{html.escape(sender)} → {html.escape(receiver)}<br/>{html.escape(step.message)}</td>"
            f'<td align="left" balign="left">{wrapped(step.effect)}</td>'
            f"<td>{step.leader_log_end_offset}, {step.high_watermark}</td>"
            f"<td>{step.follower_log_end_offsets[0]}</td><td>{step.follower_log_end_offsets[1]}</td></tr>"
        )
    rows.append(
        f'<tr><td colspan="6" border="0">blue: a request to the leader ({requests} in the round, and the '
        "consumer's Fetch, sent before it)<br/>green: the leader's answer</td></tr>"
    )
    g = new_graph("replication_round", fontsize=10)
    g.attr("node", shape="plain")
    g.node("round", TABLE.format("".join(rows)))
    return g


def replication_round() -> graphviz.Digraph:
    """The docs' picture: one round of ``replication_round_steps``."""
    return replication_round_diagram(replication_round_steps())
