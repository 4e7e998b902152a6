"""A Streams topology and a Streams application's threads, drawn from the library's own objects.

No Kafka twin: pictures of what Kafka 1.0's ``Topology.describe()`` prints as text (sub-topologies,
sources, processors, sinks, stores) and of what ``KafkaStreams.localThreadsMetadata()`` returns
(threads, their active and standby tasks, the partitions of each task).
Book:    chapter 9, 9.1.2 (the processing topology), 9.1.3 (the thread model)

``topology_diagram`` reads a live ``TopologyBuilder`` (or ``KStreamBuilder``): its node groups are
the sub-topologies, each a box; a topic is drawn once, outside them, so a repartition topic written
by one sub-topology and read by another shows where the topology is cut. Stores hang off the
processors connected to them, with the changelog each one is logged to.

``thread_model`` draws a list of ``ThreadMetadata``: one box per thread, grouped by instance (the
client id before ``-StreamThread-`` in Kafka's thread names), each task with the partitions it reads.
The guide's picture is ``streams_thread_model`` below, built from values written out by hand; to draw
a running instance's instead, give ``thread_model`` its ``KafkaStreams.local_threads_metadata()``.
"""

from __future__ import annotations

import itertools

import graphviz

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.diagrams.style import new_graph
from kafka_lite.streams.examples.wordcount import dsl_word_count
from kafka_lite.streams.processor.internals.processor_state_manager import store_changelog_topic
from kafka_lite.streams.processor.thread_metadata import TaskMetadata, ThreadMetadata
from kafka_lite.streams.processor.topology_builder import TopologyBuilder

SOURCE_COLOUR = "#dbeafe"
PROCESSOR_COLOUR = "#dcfce7"
SINK_COLOUR = "#fde68a"
STORE_COLOUR = "#f3e8ff"
INTERNAL_TOPIC_COLOUR = "#fed7aa"
THREAD_SEPARATOR = "-StreamThread-"


def _topic_id(topic: str) -> str:
    return "topic " + topic


def _topic_node(g: graphviz.Digraph, topic: str, internal: bool, changelog: bool = False) -> None:
    if internal:
        label, style = f"{topic}\n(internal topic)", {"style": "filled", "fillcolor": INTERNAL_TOPIC_COLOUR}
    elif changelog:
        label, style = f"{topic}\n(changelog)", {"style": "filled,dashed", "fillcolor": "#f9fafb"}
    else:
        label, style = topic, {"style": "filled", "fillcolor": "#f9fafb"}
    g.node(_topic_id(topic), label, shape="cds", **style)


def topology_diagram(builder: TopologyBuilder, name: str = "topology") -> graphviz.Digraph:
    """The topology ``builder`` describes: each sub-topology (node group) a box holding its source,
    processor and sink nodes and its stores; topics outside, internal ones marked; each logged
    store's changelog. Internal and changelog topics carry the ``application.id`` prefix once the
    builder has one (``set_application_id``), as every instance of the application names them."""
    app = builder.application_id

    def decorated(topic: str) -> str:
        if topic in builder.internal_topic_names and app is not None:
            return f"{app}-{topic}"
        return topic

    g = new_graph(name, rankdir="TB", fontsize=10, nodesep="0.3", ranksep="0.35")
    drawn_topics: set[str] = set()

    def topic(t: str) -> str:
        if t not in drawn_topics:
            _topic_node(g, decorated(t), internal=t in builder.internal_topic_names)
            drawn_topics.add(t)
        return _topic_id(decorated(t))

    for group_id, nodes in builder.node_groups().items():
        with g.subgraph(name=f"cluster_{group_id}") as sub:
            sub.attr(label=f"sub-topology {group_id}", style="rounded", color="#6b7280", fontsize="10")
            # In the order added: a topological order, so each chain reads top to bottom.
            for node in (n for n in builder.node_factories if n in nodes):
                if node in builder.node_to_source_topics:
                    sub.node(node, node, shape="invhouse", style="filled", fillcolor=SOURCE_COLOUR)
                elif node in builder.node_to_sink_topic:
                    sub.node(node, node, shape="house", style="filled", fillcolor=SINK_COLOUR)
                else:
                    sub.node(node, node, shape="box", style="rounded,filled", fillcolor=PROCESSOR_COLOUR)
            for store_name, factory in builder.state_factories.items():
                if factory.users and factory.users[0] in nodes:
                    sub.node("store " + store_name, store_name, shape="cylinder",
                             style="filled", fillcolor=STORE_COLOUR)  # fmt: skip

    for node, factory in builder.node_factories.items():
        for parent in getattr(factory, "parents", ()):
            g.edge(parent, node)
        for t in builder.node_to_source_topics.get(node, ()):
            g.edge(topic(t), node)
        if node in builder.node_to_sink_topic:
            g.edge(node, topic(builder.node_to_sink_topic[node]))

    for store_name, factory in builder.state_factories.items():
        for user in factory.users:
            g.edge(user, "store " + store_name, dir="both", style="dashed", arrowsize="0.6")
        supplier = factory.supplier
        if supplier.logging_enabled():
            changelog = store_changelog_topic(app or "<application.id>", store_name)
            _topic_node(g, changelog, internal=False, changelog=True)
            g.edge("store " + store_name, _topic_id(changelog), style="dotted", label="every put")
        elif store_name in builder.source_store_to_source_topic:
            # A KTable's store: its source topic is its changelog (restored from it, never written).
            g.edge(topic(builder.source_store_to_source_topic[store_name]), "store " + store_name,
                   style="dotted", label="restores from")  # fmt: skip
    return g


def _instance(thread_name: str) -> str:
    return thread_name.rpartition(THREAD_SEPARATOR)[0] if THREAD_SEPARATOR in thread_name else ""


def _task_label(task: TaskMetadata, standby: bool) -> str:
    partitions = sorted(task.topic_partitions, key=lambda tp: (tp.topic, tp.partition))
    lines = [f"{'standby' if standby else 'task'} {task.task_id}"]
    lines += [f"{tp.topic}-{tp.partition}" for tp in partitions]
    return "\n".join(lines)


def thread_model(threads: list[ThreadMetadata], name: str = "thread_model") -> graphviz.Digraph:
    """Each stream thread (grouped by instance) with its active tasks (filled) and standby tasks
    (dashed), each task with the partitions it stands for: a standby is named by its task's source
    partitions, as Kafka 1.0's ``TaskMetadata`` names it, though it reads only its stores'
    changelog partitions."""
    g = new_graph(name, rankdir="TB", fontsize=10, nodesep="0.25", ranksep="0.2")
    instances: dict[str, list[ThreadMetadata]] = {}
    for thread in threads:
        instances.setdefault(_instance(thread.thread_name), []).append(thread)
    for i, (instance, members) in enumerate(instances.items()):
        outer = g.subgraph(name=f"cluster_instance_{i}") if instance else _Same(g)
        with outer as box:
            if instance:
                box.attr(label=f"instance {instance}", style="rounded", color="#9ca3af", fontsize="11")
            for j, thread in enumerate(members):
                with box.subgraph(name=f"cluster_thread_{i}_{j}") as t:
                    short = thread.thread_name.removeprefix(instance)
                    t.attr(label=f"{short.lstrip('-')}\n({thread.thread_state})", style="rounded,filled",
                           fillcolor="#f9fafb", color="#6b7280", fontsize="10")  # fmt: skip
                    tasks = [(task, False) for task in sorted(thread.active_tasks, key=lambda x: x.task_id)]
                    tasks += [(task, True) for task in sorted(thread.standby_tasks, key=lambda x: x.task_id)]
                    ids = []
                    for task, standby in tasks:
                        node_id = f"{thread.thread_name} {'standby' if standby else 'active'} {task.task_id}"
                        style = {"style": "dashed", "color": "#6b7280"} if standby else {
                            "style": "filled", "fillcolor": PROCESSOR_COLOUR}  # fmt: skip
                        t.node(node_id, _task_label(task, standby), shape="box", **style)
                        ids.append(node_id)
                    if not ids:
                        node_id = f"{thread.thread_name} idle"
                        t.node(node_id, "no tasks", shape="plaintext")
                        ids.append(node_id)
                    # Stack a thread's tasks top to bottom, so threads stand side by side.
                    for upper, lower in itertools.pairwise(ids):
                        t.edge(upper, lower, style="invis")
    return g


class _Same:
    """``with`` over the graph itself, for threads whose names give no instance to group them by."""

    def __init__(self, g: graphviz.Digraph) -> None:
        self.g = g

    def __enter__(self) -> graphviz.Digraph:
        return self.g

    def __exit__(self, *exc: object) -> None:
        return None


# ---- the guide's pictures -------------------------------------------------------------------------


def word_count_topology() -> graphviz.Digraph:
    """The DSL word count (``kafka_lite.streams.examples.wordcount.dsl_word_count``), as the
    application ``wordcount`` names its topics."""
    builder = dsl_word_count()
    builder.set_application_id("wordcount")
    return topology_diagram(builder, "word_count_topology")


def example_threads() -> list[ThreadMetadata]:
    """Two instances of the DSL word count, over an input topic of two partitions, with
    ``num.standby.replicas`` 1: instance ``wordcount-1`` runs two threads, ``wordcount-2`` one.
    Sub-topology 0 (split and re-key) has no store, so only sub-topology 1's tasks have standbys,
    each on the other instance from its active copy."""
    repartition = "wordcount-Counts-repartition"

    def task(task_id: str, topic: str) -> TaskMetadata:
        return TaskMetadata(task_id, frozenset({TopicPartition(topic, int(task_id.split("_")[1]))}))

    def thread(name: str, active: list[TaskMetadata], standby: list[TaskMetadata]) -> ThreadMetadata:
        return ThreadMetadata(name, "RUNNING", frozenset(active), frozenset(standby))

    return [
        thread(
            "wordcount-1-StreamThread-1",
            [task("0_0", "streams-plaintext-input"), task("1_0", repartition)],
            [],
        ),
        thread(
            "wordcount-1-StreamThread-2", [task("0_1", "streams-plaintext-input")], [task("1_1", repartition)]
        ),
        thread("wordcount-2-StreamThread-1", [task("1_1", repartition)], [task("1_0", repartition)]),
    ]


def streams_thread_model() -> graphviz.Digraph:
    """The guide's thread model: ``thread_model`` of ``example_threads``."""
    return thread_model(example_threads(), "streams_thread_model")
