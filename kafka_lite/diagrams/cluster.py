"""A cluster at a glance: its topics' partitions, where their replicas live, the leaders, the ISR, the
high watermarks and the groups' committed offsets.

No Kafka twin: the picture of the book's 1.1-1.3 (topic, partition, offset, consumer group, replica,
leader, ISR, HW), drawn from what a client can learn of a running cluster: a Metadata request (the
brokers, the controller, each partition's replicas, leader and ISR), ListOffsets (each partition's
log start offset and its HW, which is what "latest" answers a consumer) and OffsetFetch (a group's
committed offsets). Kafka's ``kafka-topics.sh --describe`` and ``kafka-consumer-groups.sh --describe``
print the same facts as text.
Book:    chapter 1, 1.1-1.3

The picture is drawn from a ``ClusterDescription``, plain data, so it can be captured from a live
cluster (``describe_cluster``) or kept as a recording (``ClusterDescription.to_json``). The docs
build draws a recording, ``cluster_example.json``, captured from ``kafka-lite cluster up`` with
``describe_cluster``: starting ZooKeeper and three brokers for every build would be too slow. To draw
your own cluster, see ``concepts`` below.
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import graphviz

from kafka_lite.clients.admin import KafkaAdminClient, OffsetSpec
from kafka_lite.diagrams.style import new_graph

RECORDING = Path(__file__).with_name("cluster_example.json")

LEADER = "#86efac"  # the replica that takes the partition's produces and fetches
IN_SYNC = "#dcfce7"  # a follower in the ISR: it has every record below the HW
OUT_OF_SYNC = "#fecaca"  # a follower the leader dropped from the ISR
HEAD = "#f3f4f6"
TABLE = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">{}</table>>'


@dataclass
class PartitionDescription:
    """One partition as a client sees it: its replicas (broker ids, in assignment order), its leader
    (None while it has none), its ISR, and its offsets as a consumer reads them."""

    topic: str
    partition: int
    replicas: list[int]
    leader: int | None
    isr: list[int]
    log_start_offset: int
    high_watermark: int


@dataclass
class GroupDescription:
    """A consumer group's committed offsets, keyed ``"topic-partition"``."""

    group_id: str
    offsets: dict[str, int] = field(default_factory=dict)


@dataclass
class ClusterDescription:
    brokers: list[int]
    controller: int | None
    partitions: list[PartitionDescription]
    groups: list[GroupDescription] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> ClusterDescription:
        data = json.loads(text)
        return cls(
            brokers=data["brokers"],
            controller=data["controller"],
            partitions=[PartitionDescription(**p) for p in data["partitions"]],
            groups=[GroupDescription(**g) for g in data["groups"]],
        )


def describe_cluster(
    bootstrap_servers: str = "127.0.0.1:9092",
    topics: list[str] | None = None,
    groups: list[str] | None = None,
) -> ClusterDescription:
    """Capture a running cluster's description through the admin client: ``topics`` (default: every
    topic but the internal ones) and ``groups`` (default: every group the brokers coordinate)."""
    admin = KafkaAdminClient(bootstrap_servers)
    try:
        cluster = admin.describe_cluster()
        wanted = topics if topics is not None else [t for t in cluster.topics() if not t.startswith("__")]
        infos = sorted(
            (info for tp, info in cluster.partitions.items() if tp[0] in wanted),
            key=lambda info: (info.topic, info.partition),
        )
        tps = [(info.topic, info.partition) for info in infos]
        earliest = admin.list_offsets({tp: OffsetSpec.earliest() for tp in tps})
        latest = admin.list_offsets({tp: OffsetSpec.latest() for tp in tps})
        partitions = [
            PartitionDescription(
                info.topic,
                info.partition,
                list(info.replicas),
                info.leader.id if info.leader is not None else None,
                list(info.in_sync_replicas),
                earliest[tp].offset,
                latest[tp].offset,
            )
            for info, tp in zip(infos, tps, strict=True)
        ]
        group_ids = groups if groups is not None else [g.group_id for g in admin.list_consumer_groups()]
        described = [
            GroupDescription(
                group_id,
                {
                    f"{tp[0]}-{tp[1]}": committed.offset
                    for tp, committed in sorted(admin.list_consumer_group_offsets(group_id).items())
                    if tp[0] in wanted
                },
            )
            for group_id in group_ids
        ]
        return ClusterDescription(
            sorted(cluster.nodes),
            cluster.controller.id if cluster.controller is not None else None,
            partitions,
            described,
        )
    finally:
        admin.close()


def _replica_cell(p: PartitionDescription, broker: int) -> str:
    if broker not in p.replicas:
        return "<td> </td>"
    if broker == p.leader:
        return f'<td bgcolor="{LEADER}">leader</td>'
    if broker in p.isr:
        return f'<td bgcolor="{IN_SYNC}">follower<br/>in the ISR</td>'
    return f'<td bgcolor="{OUT_OF_SYNC}">follower<br/>out of the ISR</td>'


def _group_cell(p: PartitionDescription, group: GroupDescription) -> str:
    committed = group.offsets.get(f"{p.topic}-{p.partition}")
    if committed is None:
        return "<td>none</td>"
    return f"<td>{committed}<br/>lag {p.high_watermark - committed}</td>"


def cluster_diagram(description: ClusterDescription) -> graphviz.Digraph:
    """One row per partition: where each of its replicas lives (the leader, the followers in the ISR,
    the ones out of it), the offsets a consumer may read (log start offset to HW), and each group's
    committed offset with its lag (HW minus committed: what the group has yet to read)."""
    d = description
    # A broker that is down is in no Metadata answer, but its replicas still are.
    brokers = sorted(set(d.brokers).union(*(p.replicas for p in d.partitions)))
    controller = f", controller: broker {d.controller}" if d.controller is not None else ", no controller"
    columns = 2 + len(brokers) + len(d.groups)
    rows = [
        f'<tr><td colspan="{columns}" bgcolor="{HEAD}">brokers running: {", ".join(map(str, d.brokers))}'
        f"{html.escape(controller)}</td></tr>",
        f'<tr><td bgcolor="{HEAD}">partition</td>'
        + "".join(
            f'<td bgcolor="{HEAD}">broker {b}{"" if b in d.brokers else "<br/>(down)"}</td>' for b in brokers
        )
        + f'<td bgcolor="{HEAD}">offsets readable<br/>(start, HW)</td>'
        + "".join(
            f'<td bgcolor="{HEAD}">group {html.escape(g.group_id)}<br/>committed</td>' for g in d.groups
        )
        + "</tr>",
    ]
    for p in d.partitions:
        leader = f"leader {p.leader}" if p.leader is not None else "no leader"
        readable = (
            f"{p.log_start_offset}-{p.high_watermark - 1}"
            if p.high_watermark > p.log_start_offset
            else "none"
        )
        rows.append(
            f"<tr><td>{html.escape(p.topic)}-{p.partition}<br/>{leader}, ISR {p.isr}</td>"
            + "".join(_replica_cell(p, b) for b in brokers)
            + f"<td>{readable}<br/>HW {p.high_watermark}</td>"
            + "".join(_group_cell(p, g) for g in d.groups)
            + "</tr>"
        )
    rows.append(
        f'<tr><td colspan="{columns}" border="0">green: the leader and the followers in the ISR   '
        "red: a follower out of the ISR   lag: HW minus committed</td></tr>"
    )
    g = new_graph("cluster", fontsize=10)
    g.attr("node", shape="plain")
    g.node("cluster", TABLE.format("".join(rows)))
    return g


def concepts() -> graphviz.Digraph:
    """The concepts page's picture: the recording of a three-broker cluster (``cluster_example.json``).

    To draw your own cluster instead, start it (``kafka-lite cluster up``) and, in another shell::

        python -c "from kafka_lite.diagrams.cluster import *; print(cluster_diagram(describe_cluster()).source)" | dot -Tsvg > cluster.svg
    """
    return cluster_diagram(ClusterDescription.from_json(RECORDING.read_text(encoding="utf-8")))
