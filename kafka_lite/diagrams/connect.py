"""MirrorMaker's threads and a Connect cluster's workers, drawn from what the running objects report.

No Kafka twin: pictures of chapter 8. ``MirrorMakerShape.of`` reads a running ``MirrorMaker`` (its
threads, each thread's consumer and the partitions the group gave it, the one producer they
share); ``connect_workers_from_status`` reads the JSON of Connect's REST API
(``GET /connectors/{name}/status`` of each connector), which says which worker runs each connector
and task.
Book:    chapter 8, 8.1.2 (how the copy runs) and 8.3.3 (Connect's architecture)

The guide's pictures (``mirror_maker`` and ``connect_cluster`` below) are drawn from example
values written out by hand, because the docs build runs no cluster; the chapter's notebooks draw
the same pictures of the clusters they run.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import graphviz

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.diagrams.style import new_graph
from kafka_lite.tools.mirror_maker import MirrorMaker

CLUSTER_COLOUR = "#f9fafb"
THREAD_COLOUR = "#dcfce7"
PRODUCER_COLOUR = "#fde68a"
CONNECTOR_COLOUR = "#dbeafe"
TASK_COLOUR = "#dcfce7"
INTERNAL_TOPIC_COLOUR = "#fed7aa"


# -- MirrorMaker -------------------------------------------------------------------------------------


@dataclass
class MirrorThread:
    name: str  # mirrormaker-thread-N
    client_id: str  # its consumer's
    partitions: list[TopicPartition] = field(default_factory=list)


@dataclass
class MirrorMakerShape:
    source: str  # the source cluster's bootstrap servers, or a name
    target: str
    whitelist: str
    group_id: str
    producer_client_id: str
    threads: list[MirrorThread]

    @classmethod
    def of(cls, mm: MirrorMaker, source: str, target: str, whitelist: str) -> MirrorMakerShape:
        """What a running MirrorMaker is: its threads, the partitions each one's consumer was given
        by the group at its last rebalance, and the producer they share."""
        threads = []
        for thread in mm.threads:
            consumer = thread.consumer.consumer
            partitions = sorted(
                consumer.subscriptions.assigned_partitions(), key=lambda tp: (tp.topic, tp.partition)
            )
            threads.append(MirrorThread(thread.name, consumer.client_id, partitions))
        group_id = mm.threads[0].consumer.consumer.group_id if mm.threads else ""
        return cls(source, target, whitelist, group_id, mm.producer.producer.client_id, threads)


def mirror_maker_diagram(shape: MirrorMakerShape, name: str = "mirror_maker") -> graphviz.Digraph:
    """The source cluster, one box per thread (its consumer and its partitions) inside the consumer
    group, the one producer every thread sends through, and the target cluster. The dashed edge back
    from the producer is the flush each thread waits on before it commits its offsets."""
    g = new_graph(name, rankdir="LR", fontsize=10, nodesep="0.2", ranksep="0.3")
    g.node("source", f"source\n{shape.source}\n\nwhitelist\n{shape.whitelist}", shape="box3d",
           style="filled", fillcolor=CLUSTER_COLOUR)  # fmt: skip
    g.node("target", f"target\n{shape.target}", shape="box3d", style="filled", fillcolor=CLUSTER_COLOUR)
    g.node("producer", f"KafkaProducer\n{shape.producer_client_id}\n(shared)", shape="box",
           style="rounded,filled", fillcolor=PRODUCER_COLOUR)  # fmt: skip
    with g.subgraph(name="cluster_group") as group:
        group.attr(label=f"consumer group {shape.group_id}", style="rounded", color="#6b7280", fontsize="10")
        for thread in shape.threads:
            partitions = [f"{tp.topic}-{tp.partition}" for tp in thread.partitions] or ["(no partitions yet)"]
            label = "\n".join([thread.name, f"consumer {thread.client_id}", *partitions])
            group.node(thread.name, label, shape="box", style="rounded,filled", fillcolor=THREAD_COLOUR)
    for thread in shape.threads:
        g.edge("source", thread.name, label="poll")
        g.edge(thread.name, "producer", label="send")
    g.edge("producer", "target", label="acks=all")
    if shape.threads:
        g.edge("producer", shape.threads[0].name, style="dashed", arrowsize="0.6", constraint="false",
               label="flush,\nthen commit")  # fmt: skip
    return g


def mirror_maker() -> graphviz.Digraph:
    """The guide's picture: ``kafka-lite mirror-maker --num.streams 3 --whitelist 'orders.*,payments'``
    copying topic ``orders`` (4 partitions) and ``payments`` (2)."""

    def tps(*pairs: tuple[str, int]) -> list[TopicPartition]:
        return [TopicPartition(t, p) for t, p in pairs]

    shape = MirrorMakerShape(
        source="127.0.0.1:9092",
        target="127.0.0.1:9192",
        whitelist="orders.*,payments",
        group_id="mirror",
        producer_client_id="mirror-producer",
        threads=[
            MirrorThread("mirrormaker-thread-0", "mirror-0", tps(("orders", 0), ("orders", 1))),
            MirrorThread("mirrormaker-thread-1", "mirror-1", tps(("orders", 2), ("orders", 3))),
            MirrorThread("mirrormaker-thread-2", "mirror-2", tps(("payments", 0), ("payments", 1))),
        ],
    )
    return mirror_maker_diagram(shape, "mirror_maker")


# -- Connect -----------------------------------------------------------------------------------------


@dataclass
class WorkerShape:
    worker_id: str  # host:port of its REST server
    connectors: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)  # "name-N"
    leader: bool = False


def connect_workers_from_status(
    statuses: list[dict[str, Any]], leader: str | None = None
) -> list[WorkerShape]:
    """Workers from the bodies of ``GET /connectors/{name}/status``: each connector and task under
    the worker its status names (a worker running nothing does not appear)."""
    workers: dict[str, WorkerShape] = {}

    def worker(worker_id: str) -> WorkerShape:
        return workers.setdefault(worker_id, WorkerShape(worker_id, leader=worker_id == leader))

    for status in statuses:
        worker(status["connector"]["worker_id"]).connectors.append(
            f"{status['name']} ({status['connector']['state']})"
        )
        for task in status["tasks"]:
            worker(task["worker_id"]).tasks.append(f"{status['name']}-{task['id']} ({task['state']})")
    return sorted(workers.values(), key=lambda w: w.worker_id)


def connect_cluster_diagram(
    workers: list[WorkerShape],
    group_id: str,
    internal_topics: tuple[str, str, str],
    name: str = "connect_cluster",
) -> graphviz.Digraph:
    """Each worker of the group (its herder, its connectors and tasks) and the three compacted
    topics every worker reads to its end: configs, offsets, statuses."""
    g = new_graph(name, rankdir="TB", fontsize=10, nodesep="0.3", ranksep="0.35")
    last_nodes = []
    with g.subgraph(name="cluster_group") as group:
        group.attr(label=f"Connect group {group_id}", style="rounded", color="#6b7280", fontsize="10")
        for i, w in enumerate(workers):
            with group.subgraph(name=f"cluster_worker_{i}") as box:
                role = "leader" if w.leader else "follower"
                box.attr(label=f"worker {w.worker_id}", style="rounded,filled", fillcolor=CLUSTER_COLOUR,
                         color="#9ca3af", fontsize="10")  # fmt: skip
                box.node(f"herder {i}", f"DistributedHerder\n({role})", shape="box", style="rounded")
                nodes = [f"herder {i}"]
                for c in w.connectors:
                    box.node(
                        f"{i} {c}", f"connector\n{c}", shape="box", style="filled", fillcolor=CONNECTOR_COLOUR
                    )
                    nodes.append(f"{i} {c}")
                for t in w.tasks:
                    box.node(f"{i} {t}", f"task\n{t}", shape="box", style="filled", fillcolor=TASK_COLOUR)
                    nodes.append(f"{i} {t}")
                for upper, lower in itertools.pairwise(nodes):
                    box.edge(upper, lower, style="invis")
                last_nodes.append(nodes[-1])
    with g.subgraph(name="cluster_topics") as topics:
        topics.attr(label="Kafka (compacted topics)", style="rounded", color="#6b7280", fontsize="10")
        for topic in internal_topics:
            topics.node("topic " + topic, topic, shape="cds", style="filled", fillcolor=INTERNAL_TOPIC_COLOUR)
    # One edge from each worker's box to the topics' box: every worker reads all three to their end
    # and writes to them (only the leader writes configs).
    g.attr(compound="true")
    middle = "topic " + internal_topics[len(internal_topics) // 2]
    for i, last in enumerate(last_nodes):
        g.edge(last, middle, ltail=f"cluster_worker_{i}", lhead="cluster_topics", dir="both", style="dashed",
               arrowsize="0.6")  # fmt: skip
    return g


def connect_cluster() -> graphviz.Digraph:
    """The guide's picture: two workers of Kafka's ``connect-distributed.properties`` running the
    file source (``tasks.max=2``) and the file sink of the quick start."""
    workers = [
        WorkerShape(
            "127.0.0.1:8083",
            ["local-file-source (RUNNING)"],
            ["local-file-source-1 (RUNNING)", "local-file-sink-0 (RUNNING)"],
            leader=True,
        ),
        WorkerShape("127.0.0.1:8084", ["local-file-sink (RUNNING)"], ["local-file-source-0 (RUNNING)"]),
    ]
    return connect_cluster_diagram(
        workers, "connect-cluster", ("connect-configs", "connect-offsets", "connect-status")
    )
