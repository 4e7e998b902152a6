"""The producer's record accumulator and the sender's requests, drawn from live objects.

No Kafka twin: a picture of ``RecordAccumulator`` (its per-partition deques of ``ProducerBatch``es,
and the ``BufferPool`` they draw on) beside what the ``Sender`` drained from it, one ProduceRequest
per broker. Kafka draws this only in the javadoc's prose; the book draws it by hand.
Book:    chapter 2, 2.1.1-2.1.2 (records gathered per partition; the sender draining them per node)

Nothing here is drawn by hand. ``accumulator_diagram`` reads the deques (``accumulator.batches``),
each batch's record count, size and state (open, full, backing off after a failed attempt, with its
sequence numbers when the producer is idempotent), the pool's memory, and the leaders of the
``Cluster``; the requests are the dict ``RecordAccumulator.drain`` returned. ``record_accumulator``
builds the accumulator the docs show: real records appended under a ``MockTime``, and one real drain.

It returns a ``graphviz.Digraph``; in a notebook it renders itself, and ``.source`` is the DOT text,
which the tests read.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import graphviz

from kafka_lite.clients.metadata import Cluster, Node, PartitionInfo
from kafka_lite.common.record.compression import CompressionType
from kafka_lite.common.time import MockTime
from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.diagrams.style import new_graph
from kafka_lite.producer.producer_batch import ProducerBatch
from kafka_lite.producer.record_accumulator import RecordAccumulator
from kafka_lite.producer.transaction_manager import ProducerIdAndEpoch, TransactionManager

OPEN = "#dcfce7"  # the last batch of a deque, still taking records
FULL = "#fde68a"  # no room for another record (or a newer batch behind it): ready by size
RETRY = "#fecaca"  # put back after a retriable error: waits retry.backoff.ms
SENT = "#dbeafe"  # drained into a request: its bytes are built and will not change
TABLE = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">{}</table>>'


def batch_state(batch: ProducerBatch, accumulator: RecordAccumulator, now: int, is_last: bool) -> str:
    """What a batch in a deque is waiting for, in words: the reason ``ready`` would or would not
    send it (the sender reads the same fields)."""
    if batch.in_retry():
        left = accumulator.retry_backoff_ms - batch.waited_time_ms(now)
        backoff = f", backs off {left} ms more" if left > 0 else ""
        return f"retry {batch.attempts}{backoff}"
    if batch.is_full() or not is_last:
        return "full"
    return f"open, {batch.waited_time_ms(now)} of {accumulator.linger_ms} ms linger"


def _colour(batch: ProducerBatch, is_last: bool) -> str:
    if batch.in_retry():
        return RETRY
    return FULL if batch.is_full() or not is_last else OPEN


def _sequences(batch: ProducerBatch) -> str:
    """``seq 0-2`` for an idempotent batch that has its numbers (given on its first drain)."""
    if not batch.has_sequence():
        return ""
    last = batch.base_sequence + batch.record_count - 1
    return (
        f"seq {batch.base_sequence}" if last == batch.base_sequence else f"seq {batch.base_sequence}-{last}"
    )


def _cell(text: str, bgcolor: str = "white", port: str | None = None) -> str:
    port_attr = f' port="{port}"' if port else ""
    return f'<td bgcolor="{bgcolor}"{port_attr}>{html.escape(text)}</td>'


def _records(count: int) -> str:
    return "1 record" if count == 1 else f"{count} records"


def _batches(count: int) -> str:
    return "1 batch" if count == 1 else f"{count} batches"


def _tp_name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def _port(tp: TopicPartition) -> str:
    """A partition's port name: its row in the accumulator's table, and its row in a request."""
    return f"p_{tp[0]}_{tp[1]}".replace(".", "_").replace("-", "_")


def _leader_text(leader: Node | None) -> str:
    return "leader unknown" if leader is None else f"leader: node {leader.id}"


def accumulator_diagram(
    accumulator: RecordAccumulator,
    cluster: Cluster,
    requests: Mapping[int, Sequence[ProducerBatch]] | None = None,
    now: int | None = None,
) -> graphviz.Digraph:
    """The accumulator's deques, one block of rows per partition (oldest batch on top: the end
    ``drain`` takes from), and ``requests``, the batches a drain took per node, one table per request.

    Each batch row shows its record count, its size in bytes (estimated while open, exact once
    built) out of the memory it holds in the pool, and its state. An edge goes from each partition
    to the request that took its batch. A partition the sender has muted (one request in flight at a
    time) says so.
    """
    now = accumulator.time.milliseconds() if now is None else now
    requests = requests or {}
    g = new_graph("record_accumulator", fontsize=10, nodesep="0.2", ranksep="0.6")
    g.attr("node", shape="plain")
    leaders = _leaders(accumulator, cluster)
    g.node("accumulator", _accumulator_table(accumulator, leaders, now))

    drained_from: dict[TopicPartition, int] = {}
    with g.subgraph(name="requests") as column:
        column.attr(rank="same")
        for node_id in sorted(requests):
            column.node(f"req_{node_id}", _request_table(node_id, requests[node_id]))
            for batch in requests[node_id]:
                drained_from[batch.topic_partition] = node_id
        # The leaders the round sent nothing to (nothing ready, not connected, or at their in-flight
        # limit), so that every broker of the picture is in it.
        if requests:
            for leader in sorted(set(leaders.values()) - {None}, key=lambda n: n.id):
                if leader.id not in requests:
                    column.node(
                        f"req_{leader.id}",
                        f"node {leader.id}:\nno request this round",
                        shape="box",
                        style="dashed",
                        color="#6b7280",
                    )
    for tp, node_id in drained_from.items():
        if tp in accumulator.batches:
            g.edge(f"accumulator:{_port(tp)}:e", f"req_{node_id}:{_port(tp)}:w", color="#1d4ed8")
    if requests:
        # An invisible edge from each partition of a node with no request keeps that node's box
        # beside its partitions.
        for tp, leader in leaders.items():
            if leader is not None and leader.id not in requests:
                g.edge(f"accumulator:{_port(tp)}:e", f"req_{leader.id}", style="invis")
    return g


def _leaders(accumulator: RecordAccumulator, cluster: Cluster) -> dict[TopicPartition, Node | None]:
    """The leader of each partition the accumulator has a deque for (None: unknown)."""
    return {
        (topic, partition): cluster.leader_for(topic, partition) for topic, partition in accumulator.batches
    }


def _accumulator_table(
    accumulator: RecordAccumulator, leaders: Mapping[TopicPartition, Node | None], now: int
) -> str:
    """One table: a title, then each partition's deque (a header row, then a row per batch), grouped
    by leader, then the pool's memory."""

    def by_leader(tp: TopicPartition) -> tuple:
        leader = leaders[tp]
        return (leader is None, leader.id if leader else 0, tp)

    # Bold and plain text never share a line: the browser's font is not the one graphviz measured,
    # and a line of mixed weights comes out with a gap in it.
    settings = f"batch.size {accumulator.batch_size} B, linger.ms {accumulator.linger_ms}"
    title = f"<b>RecordAccumulator</b><br/>{settings}<br/>a deque per partition, oldest batch first"
    rows = [f'<tr><td colspan="4" bgcolor="#f3f4f6">{title}</td></tr>']
    for tp in sorted(accumulator.batches, key=by_leader):
        rows.extend(_deque_rows(accumulator, leaders[tp], tp, now))
    pool = accumulator.free
    used = pool.total_memory - pool.available_memory()
    memory = f"BufferPool: {used:,} of buffer.memory {pool.total_memory:,} B held by batches"
    if pool.queued():
        memory += f"<br/>{pool.queued()} append(s) blocked, waiting for memory"
    rows.append(f'<tr><td colspan="4" bgcolor="#f3f4f6">{memory}</td></tr>')
    return TABLE.format("".join(rows))


def _deque_rows(
    accumulator: RecordAccumulator, leader: Node | None, tp: TopicPartition, now: int
) -> list[str]:
    muted = ", muted: a batch in flight" if tp in accumulator.muted else ""
    title = f"{_tp_name(tp)} ({_leader_text(leader)}{muted})"
    rows = [f'<tr><td colspan="4" port="{_port(tp)}" align="left"><b>{html.escape(title)}</b></td></tr>']
    dq = list(accumulator.batches[tp])
    if not dq:
        rows.append('<tr><td colspan="4"><i>(empty)</i></td></tr>')
    for i, batch in enumerate(dq):
        is_last = i == len(dq) - 1
        colour = _colour(batch, is_last)
        state = batch_state(batch, accumulator, now, is_last)
        sequences = _sequences(batch)
        rows.append(
            "<tr>"
            + _cell(str(i + 1), colour)
            + _cell(_records(batch.record_count), colour)
            + _cell(f"{batch.size_in_bytes()} of {batch.initial_capacity} B", colour)
            + _cell(f"{state}; {sequences}" if sequences else state, colour)
            + "</tr>"
        )
    return rows


def _request_table(node_id: int, batches: Sequence[ProducerBatch]) -> str:
    size = sum(b.size_in_bytes() for b in batches)
    title = f"<b>ProduceRequest to node {node_id}</b><br/>{_batches(len(batches))}, {size} B"
    rows = [f'<tr><td colspan="3">{title}</td></tr>']
    if not batches:
        rows.append('<tr><td colspan="3"><i>(nothing drained)</i></td></tr>')
    for batch in batches:
        rows.append(
            "<tr>"
            + _cell(_tp_name(batch.topic_partition), SENT, port=_port(batch.topic_partition))
            + _cell(f"{_records(batch.record_count)}, {batch.size_in_bytes()} B", SENT)
            + _cell(_sequences(batch) or "sealed", SENT)
            + "</tr>"
        )
    return TABLE.format("".join(rows))


def record_accumulator() -> graphviz.Digraph:
    """The accumulator of an idempotent producer (records of 100 bytes, ``batch.size`` 512,
    ``linger.ms`` 10) after one round of the sender: ``orders-0`` filled two batches and is ready
    by size, so node 0 is ready and its drain takes the first batch of *each* partition it leads,
    the lingering ``orders-1`` included; node 1's only partition is still lingering."""
    time = MockTime()
    node0, node1 = Node(0, "broker0", 9092), Node(1, "broker1", 9093)
    leaders = {("orders", 0): node0, ("orders", 1): node0, ("orders", 2): node1}
    cluster = Cluster(
        {0: node0, 1: node1},
        {
            tp: PartitionInfo(tp[0], tp[1], leader, (leader.id,), (leader.id,))
            for tp, leader in leaders.items()
        },
    )
    transaction_manager = TransactionManager()
    transaction_manager.set_producer_id_and_epoch(ProducerIdAndEpoch(4000, 0))
    accumulator = RecordAccumulator(
        batch_size=512,
        total_size=8192,
        compression=CompressionType.NONE,
        linger_ms=10,
        retry_backoff_ms=100,
        time=time,
        transaction_manager=transaction_manager,
    )

    def send(partition: int, n: int) -> None:
        for i in range(n):
            key = b"order-%d" % i
            accumulator.append(("orders", partition), time.milliseconds(), key, b"x" * 100, (), 0)

    send(0, 7)
    send(1, 1)
    send(2, 2)
    time.advance(4)
    ready = accumulator.ready(cluster, time.milliseconds())
    drained = accumulator.drain(cluster, ready.ready_nodes, 1024 * 1024, time.milliseconds())
    send(1, 1)  # a record after the drain starts a new batch: the drained one is sealed
    return accumulator_diagram(accumulator, cluster, drained)
