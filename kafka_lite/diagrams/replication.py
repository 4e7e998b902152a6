"""A partition's replicas side by side: each one's log and LEO, the leader's HW across them, the ISR.

No Kafka twin: a picture of what ``kafka.cluster.Partition`` holds on the leader (its ``Replica``s,
the ISR, the high watermark), beside the followers' own logs. The book draws it by hand.
Book:    chapter 6, 6.2.2 (replicas, the LEO and the HW, the ISR)

Nothing here is drawn by hand. ``replication_diagram`` reads the leader's ``Partition``: its local
replica's log end offset (LEO) and high watermark (HW), each remote ``Replica``'s LEO as the leader
learnt it from that follower's last fetch and when it last caught up, the ISR, and
``min.insync.replicas``. Given the followers' own partitions, it draws each follower's row from its
own log (its LEO there may be ahead of what the leader has learnt: the leader hears of an append
only at the follower's next fetch). The two read limits at the bottom are not computed from the HW
and the LEO but read: one real ``read_from_local_log`` as a consumer and one as a follower, the
reads the leader answers fetches with, and the bars end where those reads ended.

``replication`` builds the picture the docs show: three replica managers in one process on one
``MockTime`` (no ZooKeeper, no sockets), records produced to the leader and the followers' fetches
played by hand, one follower stopped until it left the ISR.

It returns a ``graphviz.Digraph``; in a notebook it renders itself, and ``.source`` is the DOT
text, which the tests read.
"""

from __future__ import annotations

import html
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import graphviz

from kafka_lite.common.errors import Errors
from kafka_lite.common.protocol.fetch_request import CONSUMER_REPLICA_ID
from kafka_lite.common.record import MemoryRecords
from kafka_lite.common.record.file_records import FileRecords
from kafka_lite.common.time import MockTime
from kafka_lite.diagrams.style import new_graph
from kafka_lite.server.partition import Partition
from kafka_lite.server.replica import UNKNOWN_OFFSET, Replica
from kafka_lite.server.replica_manager import (
    FetchMetadata,
    FetchPartitionRequest,
    ReplicaManager,
)
from kafka_lite.testing.in_process_replicas import in_process_replica_manager, leader_and_isr, replicate

COMMITTED = "#dcfce7"  # below the leader's HW: every in-sync replica has it; consumers may read it
UNCOMMITTED = "#fde68a"  # at or above the HW: not yet on every in-sync replica
MISSING = "#f9fafb"  # an offset this replica does not have
OUT_OF_SYNC = "#fecaca"  # a replica outside the ISR
HW_LINE = "#dc2626"  # the HW: a red line down every row, between offset HW-1 and offset HW
READ = "#dbeafe"  # what a fetch returned
HEAD = "#f3f4f6"
TABLE = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">{}</table>>'


@dataclass
class ReplicaRow:
    """One replica as the picture shows it."""

    broker_id: int
    role: str  # "leader" or "follower"
    log_end_offset: int  # the LEO of the log drawn (the follower's own log when given)
    leader_view: int | None  # a remote replica's LEO as the leader learnt it; None for the leader
    own_high_watermark: int | None  # a follower's own HW, when its partition is given
    in_sync: bool
    caught_up_ms_ago: int | None  # None for the leader


def _rows(
    partition: Partition, followers: Mapping[int, Partition], now: int
) -> tuple[Replica, list[ReplicaRow]]:
    leader = partition.leader_replica_if_local()
    if leader is None:
        raise ValueError(
            f"replication_diagram needs the leader's Partition: broker {partition.local_broker_id} does "
            f"not lead {partition.topic}-{partition.partition_id} (its leader is {partition.leader_replica_id})"
        )
    rows = [ReplicaRow(leader.broker_id, "leader", leader.log_end_offset, None, None, True, None)]
    for replica in sorted(partition.assigned_replicas(), key=lambda r: r.broker_id):
        if replica is leader:
            continue
        own = followers.get(replica.broker_id)
        own_replica = own.get_replica() if own is not None else None
        if own is not None and (own_replica is None or own_replica.log is None):
            raise ValueError(
                f"followers[{replica.broker_id}] is not broker {replica.broker_id}'s own partition "
                f"{partition.topic}-{partition.partition_id} (it has no local log there)"
            )
        rows.append(
            ReplicaRow(
                replica.broker_id,
                "follower",
                own_replica.log_end_offset if own_replica is not None else replica.log_end_offset,
                replica.log_end_offset,
                own_replica.high_watermark if own_replica is not None else None,
                replica in partition.in_sync_replicas,
                now - replica.last_caught_up_time_ms,
            )
        )
    return leader, rows


def _read_limit(manager: ReplicaManager, partition: Partition, replica_id: int, start: int) -> int:
    """Where a real read by ``replica_id`` from ``start`` ends (the offset after its last record),
    as the leader would answer that fetch. A read records nothing: only ``fetch_messages`` tells the
    leader about a follower's progress."""
    fetch = FetchMetadata(1, 1 << 30, replica_id, {partition.tp: FetchPartitionRequest(start, 1 << 30)})
    result = manager.read_from_local_log(fetch)[partition.tp]
    if result.error is not Errors.NONE:
        raise ValueError(f"a read of {partition.topic}-{partition.partition_id} failed: {result.error.name}")
    records = result.records
    data = records.read_bytes() if isinstance(records, FileRecords) else bytes(records.buffer())
    last = start - 1
    for batch in MemoryRecords(data).batches():
        last = batch.last_offset
    return last + 1


def _offsets_word(first: int, end: int) -> str:
    if end <= first:
        return "nothing"
    return f"offset {first}" if end == first + 1 else f"offsets {first}-{end - 1}"


def _ago(ms: int) -> str:
    return f"{ms:,} ms ago"


def _status(row: ReplicaRow, high_watermark: int) -> str:
    """The right-hand cell: the replica's LEO, and where it stands with the ISR."""
    if row.role == "leader":
        return f"LEO {row.log_end_offset}, HW {high_watermark}<br/>in the ISR (the leader)"
    lines = [f"LEO {row.log_end_offset}"]
    if row.own_high_watermark is not None:
        lines[0] += f", its own HW {row.own_high_watermark}"
    if row.leader_view == UNKNOWN_OFFSET:
        lines.append("the leader knows no LEO: no fetch yet")
    elif row.leader_view != row.log_end_offset:
        lines.append(f"the leader knows LEO {row.leader_view}, from its last fetch")
    in_out = "in the ISR" if row.in_sync else "out of the ISR"
    lines.append(f"{in_out}, caught up {_ago(row.caught_up_ms_ago)}")
    return "<br/>".join(lines)


def _columns(start: int, end: int, high_watermark: int, max_offsets: int) -> list[tuple[int, int]]:
    """The table's columns as offset ranges [lo, hi), left to right: one per offset, the HW line as
    the empty range (HW, HW), and where there are more than ``max_offsets`` offsets, the ones far
    from the HW folded into a range at either end. The window keeps the HW in view, so a folded range
    lies wholly below the HW (the leading one) or wholly above it (the trailing one)."""
    lo = max(start, min(end - max_offsets, high_watermark - max_offsets // 2))
    hi = min(end, lo + max_offsets)
    columns = [(start, lo)] if lo > start else []
    for offset in range(lo, hi):
        if offset == high_watermark:
            columns.append((high_watermark, high_watermark))
        columns.append((offset, offset + 1))
    if high_watermark >= hi:
        columns.append((high_watermark, high_watermark))
    if hi < end:
        columns.append((hi, end))
    return columns


def replication_diagram(
    partition: Partition,
    followers: Mapping[int, Partition | ReplicaManager] | None = None,
    max_offsets: int = 12,
) -> graphviz.Digraph:
    """The replicas of the leader's ``partition``, one row each: a cell per offset the replica has
    (green below the HW, yellow above it), its LEO, whether it is in the ISR and how long ago it last
    caught up; a red column at the HW; and the ends of a consumer's and a follower's read.

    ``followers`` maps a follower's broker id to its own ``Partition`` (or its ``ReplicaManager``):
    its row is then drawn from its own log, with the LEO the leader has learnt beside it when they
    differ. Without it, a follower's row is the leader's view. With more than ``max_offsets`` offsets,
    those far from the HW fold into one cell at either end.
    """
    # Bold and plain text never share a line: the browser's font is not the one graphviz measured,
    # and a line of mixed weights comes out with a gap in it.
    manager = partition.replica_manager
    now = partition.time.milliseconds()
    own_partitions: dict[int, Partition] = {}
    for broker_id, given in (followers or {}).items():
        own = given.get_partition(partition.tp) if isinstance(given, ReplicaManager) else given
        if own is None:
            raise ValueError(
                f"broker {broker_id} holds no replica of {partition.topic}-{partition.partition_id}"
            )
        own_partitions[broker_id] = own
    leader, rows = _rows(partition, own_partitions, now)
    high_watermark = leader.high_watermark
    start = leader.log.log_start_offset
    consumer_end = _read_limit(manager, partition, CONSUMER_REPLICA_ID, start)
    follower_id = next((r.broker_id for r in rows if r.role == "follower"), leader.broker_id)
    follower_end = _read_limit(manager, partition, follower_id, start)

    columns = _columns(start, max([r.log_end_offset for r in rows] + [start]), high_watermark, max_offsets)
    width = len(columns)

    def offset_cells(row_end: int) -> list[str]:
        cells = []
        for lo, hi in columns:
            if lo == hi:  # the HW line
                cells.append(f'<td bgcolor="{HW_LINE}" width="3" cellpadding="0"></td>')
                continue
            have = min(row_end, hi)
            if have <= lo:
                cells.append(f'<td bgcolor="{MISSING}"> </td>')
                continue
            # a column lies wholly on one side of the HW (the HW line is a column boundary)
            colour = COMMITTED if hi <= high_watermark else UNCOMMITTED
            word = str(lo) if hi == lo + 1 else _offsets_word(lo, have)
            cells.append(f'<td bgcolor="{colour}">{html.escape(word)}</td>')
        return cells

    min_isr = leader.log.config.min_insync_replicas
    lag_ms = manager.config["replica.lag.time.max.ms"]
    waiting = manager.delayed_produce_purgatory.delayed()
    title = (
        f"<b>{html.escape(partition.topic)}-{partition.partition_id}</b><br/>leader broker {leader.broker_id}, "
        f"leader epoch {partition.leader_epoch}, ISR {partition.isr}, HW {high_watermark}"
        f"<br/>replica.lag.time.max.ms {lag_ms:,}, min.insync.replicas {min_isr}, "
        f"acks=all produces waiting: {waiting}"
    )
    table = [f'<tr><td colspan="{width + 2}" bgcolor="{HEAD}">{title}</td></tr>']
    for row in rows:
        label = f"broker {row.broker_id}<br/>{row.role}"
        label_colour = "white" if row.in_sync else OUT_OF_SYNC
        table.append(
            f'<tr><td bgcolor="{label_colour}" port="b{row.broker_id}">{label}</td>'
            + "".join(offset_cells(row.log_end_offset))
            + f'<td bgcolor="{label_colour}" align="left" balign="left">{_status(row, high_watermark)}</td></tr>'
        )

    def read_row(label: str, read_end: int, says: str) -> str:
        # The bar covers the columns the read returned offsets from (and the HW line, if it passed it).
        span = sum(1 for lo, _ in columns if lo < read_end)
        cells = f'<td bgcolor="{HEAD}">{label}</td>'
        if span:
            cells += (
                f'<td colspan="{span}" bgcolor="{READ}">{html.escape(_offsets_word(start, read_end))}</td>'
            )
        if width - span:
            cells += f'<td colspan="{width - span}" border="0"> </td>'
        return f'<tr>{cells}<td bgcolor="{HEAD}" align="left" balign="left">{says}</td></tr>'

    table.append(
        read_row(
            "consumer<br/>replica_id -1",
            consumer_end,
            f"a consumer's read stops at the HW ({high_watermark})",
        )
    )
    table.append(
        read_row(
            f"follower<br/>replica_id {follower_id}",
            follower_end,
            f"a follower's read goes to the LEO ({leader.log_end_offset})",
        )
    )
    legend = (
        f'<tr><td colspan="{width + 2}" border="0"><font color="{HW_LINE}">|</font> the HW   '
        "green: committed (every in-sync replica has it)   yellow: not yet</td></tr>"
    )
    table.append(legend)
    g = new_graph(f"replication_{partition.topic}_{partition.partition_id}", fontsize=10)
    g.attr("node", shape="plain")
    g.node("replicas", TABLE.format("".join(table)))
    return g


# -- the docs' example ---------------------------------------------------------------------------------------

LAG_MS = 10_000


def replication() -> graphviz.Digraph:
    """``orders-0`` on three brokers, broker 0 leading: eight records written; follower 1 has them all
    but the leader has only learnt of six (its next fetch will say); follower 2 stopped at offset 3,
    and after ``replica.lag.time.max.ms`` without catching up it left the ISR, which let the HW move
    from 3 to 6. An acks=all produce of the last two records waits for the HW to reach 8."""
    tp = ("orders", 0)
    time = MockTime()
    with tempfile.TemporaryDirectory() as d:
        managers = [
            in_process_replica_manager(Path(d), i, time, **{"replica.lag.time.max.ms": LAG_MS})
            for i in range(3)
        ]
        leader, f1, f2 = managers
        try:
            for m in managers:
                m.become_leader_or_follower(leader_and_isr(tp, 0, [0, 1, 2], [0, 1, 2]))

            def produce(acks: int, n: int) -> None:
                records = MemoryRecords.with_records(
                    [(time.milliseconds(), None, b"order") for _ in range(n)]
                )
                leader.append_records(30_000, acks, False, {tp: records}, lambda answer: None)

            produce(1, 3)
            for _ in range(2):  # fetch the records, then fetch from the LEO: caught up
                replicate(leader, f1, tp)
                replicate(leader, f2, tp)
            time.sleep(4_000)  # follower 2 stops fetching here
            produce(1, 3)
            for _ in range(2):
                replicate(leader, f1, tp)
            time.sleep(7_000)  # 11 s since follower 2 last caught up
            leader.maybe_shrink_isr()
            produce(-1, 2)
            replicate(leader, f1, tp)  # follower 1 has offsets 6-7; the leader learns it next time
            return replication_diagram(leader.get_partition(tp), {1: f1, 2: f2})
        finally:
            for m in managers:
                m.shutdown(checkpoint_hw=False)
                m.log_manager.shutdown()
