"""The topology builder: what it builds, the errors it gives while a topology is described (with
Kafka's wording, naming the node), and how it splits a topology into sub-topologies and topics."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafka_lite.streams.errors import TopologyBuilderException
from kafka_lite.streams.processor import AbstractProcessor, TaskId, TopologyBuilder
from kafka_lite.streams.processor.internals.sink_node import SinkNode
from kafka_lite.streams.processor.internals.source_node import SourceNode

pytestmark = pytest.mark.unit


class Passthrough(AbstractProcessor):
    def process(self, key, value):
        self.context().forward(key, value)


class Supplier:
    """A state store supplier obeying the contract; its "stores" are only named, never run here."""

    def __init__(self, name, logging=True, log_config=None):
        self.name = name
        self._logging = logging
        self._log_config = log_config or {}

    def get(self):
        return SimpleNamespace(name=self.name)

    def logging_enabled(self):
        return self._logging

    def log_config(self):
        return self._log_config


def test_build_links_sources_processors_and_sinks_in_the_order_they_were_added():
    builder = TopologyBuilder()
    builder.add_source("src", "in-a", "in-b")
    builder.add_processor("left", Passthrough, "src")
    builder.add_processor("right", Passthrough, "src")
    builder.add_sink("out", "result", "left", "right")
    topology = builder.build()
    assert [n.name for n in topology.processors()] == ["src", "left", "right", "out"]
    src = topology.source("in-a")
    assert isinstance(src, SourceNode) and topology.source("in-b") is src
    assert [c.name for c in src.children] == ["left", "right"]
    assert isinstance(topology.sink("result"), SinkNode)
    assert [c.name for c in src.children[0].children] == ["out"]
    assert topology.source_topics() == {"in-a", "in-b"} and topology.sink_topics() == {"result"}


def test_each_build_makes_new_processors_from_the_supplier():
    builder = TopologyBuilder().add_source("src", "in").add_processor("p", Passthrough, "src")
    first, second = builder.build(), builder.build()
    assert first.processors()[1].processor is not second.processors()[1].processor


def _with_source_processor_and_sink():
    builder = TopologyBuilder()
    builder.add_source("src", "in")
    builder.add_processor("proc", Passthrough, "src")
    builder.add_sink("sink", "out", "proc")
    return builder


@pytest.mark.parametrize(
    ("describe", "message"),
    [
        (lambda b: b.add_processor("proc", Passthrough, "src"), "Processor proc is already added."),
        (lambda b: b.add_source("sink", "other"), "Processor sink is already added."),
        (lambda b: b.add_processor("p2", Passthrough, "nope"), "Parent processor nope is not added yet."),
        (lambda b: b.add_sink("s2", "t", "nope"), "Parent processor nope is not added yet."),
        (lambda b: b.add_processor("p2", Passthrough, "p2"), "Processor p2 cannot be a parent of itself."),
        (lambda b: b.add_source("src2", "in"), "Topic in has already been registered by another source."),
        (lambda b: b.add_source("src2"), "You must provide at least one topic"),
        (
            lambda b: b.add_processor("after", Passthrough, "sink"),
            "Processor after cannot be a child of sink sink: sink node does not allow addChild.",
        ),
        (
            lambda b: b.connect_processor_and_state_stores("proc", "counts"),
            "StateStore counts is not added yet.",
        ),
        (lambda b: b.add_state_store(Supplier("counts"), "ghost"), "Processor ghost is not added yet."),
        (
            lambda b: b.add_state_store(Supplier("counts"), "src"),
            "cannot connect a state store counts to a source node or a sink node.",
        ),
        (
            lambda b: [b.add_state_store(Supplier("counts")), b.add_state_store(Supplier("counts"))],
            "StateStore counts is already added.",
        ),
    ],
)
def test_a_mistake_is_reported_when_it_is_made_with_kafkas_wording(describe, message):
    builder = _with_source_processor_and_sink()
    with pytest.raises(TopologyBuilderException) as error:
        describe(builder)
    assert str(error.value) == "Invalid topology building: " + message


def _two_subtopologies():
    """Sub-topology 0: a -> count(store counts) -> to-b; sub-topology 1: b -> enrich -> to-c,
    plus 'audit' on source z, joined to sub-topology 0 by sharing the store 'counts'."""
    builder = TopologyBuilder().set_application_id("app")
    builder.add_source("source-b", "topic-b")
    builder.add_source("source-a", "topic-a")
    builder.add_source("source-z", "topic-z")
    builder.add_processor("count", Passthrough, "source-a")
    builder.add_state_store(Supplier("counts", log_config={"segment.bytes": "1024"}), "count")
    builder.add_sink("to-b", "topic-b", "count")
    builder.add_processor("enrich", Passthrough, "source-b")
    builder.add_state_store(Supplier("cache", logging=False), "enrich")
    builder.add_sink("to-c", "topic-c", "enrich")
    builder.add_processor("audit", Passthrough, "source-z")
    builder.connect_processor_and_state_stores("audit", "counts")
    return builder


def test_node_groups_are_the_connected_components_numbered_by_sorted_source_names():
    groups = _two_subtopologies().node_groups()
    assert groups == {
        0: {"source-a", "count", "to-b", "source-z", "audit"},
        1: {"source-b", "enrich", "to-c"},
    }


def test_topic_groups_list_each_groups_sources_sinks_and_changelogs():
    groups = _two_subtopologies().topic_groups()
    assert set(groups) == {0, 1}
    assert groups[0].source_topics == {"topic-a", "topic-z"}
    assert groups[0].sink_topics == {"topic-b"}
    assert groups[0].state_changelog_topics == {"app-counts-changelog": {"segment.bytes": "1024"}}
    assert groups[1].source_topics == {"topic-b"}
    assert groups[1].sink_topics == {"topic-c"}
    assert groups[1].state_changelog_topics == {}, "a store with logging disabled has no changelog"


def test_a_changelog_needs_the_application_id():
    builder = _with_source_processor_and_sink()
    builder.add_state_store(Supplier("counts"), "proc")
    with pytest.raises(TopologyBuilderException, match="applicationId hasn't been set"):
        builder.topic_groups()


def test_build_of_one_group_holds_only_its_nodes():
    topology = _two_subtopologies().build(1)
    assert [n.name for n in topology.processors()] == ["source-b", "enrich", "to-c"]
    assert topology.source_topics() == {"topic-b"}
    assert [s.name for s in topology.state_stores()] == ["cache"], "each task gets the stores of its group"


def test_task_id_reads_and_writes_kafkas_form():
    assert str(TaskId(1, 3)) == "1_3"
    assert TaskId.parse("12_0") == TaskId(12, 0)
    with pytest.raises(ValueError, match="Task id cannot be parsed correctly from 12"):
        TaskId.parse("12")


def internal_topic_builder():
    builder = TopologyBuilder()
    builder.add_source("src", "in")
    builder.add_sink("to-repartition", "store-repartition", "src")
    builder.add_source("from-repartition", "store-repartition")
    builder.add_processor("agg", Passthrough, "from-repartition")
    builder.add_internal_topic("store-repartition")
    return builder


def test_an_internal_topic_is_prefixed_with_the_application_id_everywhere():
    builder = internal_topic_builder().set_application_id("app")
    topology = builder.build()
    assert topology.sink("app-store-repartition").name == "to-repartition"
    assert topology.source("app-store-repartition").name == "from-repartition"
    assert topology.source_topics() == {"in", "app-store-repartition"} == builder.source_topics()
    groups = builder.topic_groups()
    # Group 0 is "from-repartition"'s (sources by sorted name), group 1 "src"'s.
    assert groups[1].sink_topics == {"app-store-repartition"} and groups[1].inter_source_topics == {}
    assert groups[0].source_topics == {"app-store-repartition"}
    assert groups[0].inter_source_topics == {"app-store-repartition": {"cleanup.policy": "delete"}}


def test_an_internal_topic_needs_the_application_id():
    with pytest.raises(TopologyBuilderException, match="Call setApplicationId first"):
        internal_topic_builder().build()
