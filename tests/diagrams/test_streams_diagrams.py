"""The Streams pictures: a topology's sub-topologies, nodes, stores and topics; a thread model's
threads, tasks and partitions. Each is drawn from live objects, and the tests read the DOT back."""

from __future__ import annotations

import re

import pytest

from kafka_lite.common.topic_partition import TopicPartition
from kafka_lite.diagrams.streams import example_threads, thread_model, topology_diagram
from kafka_lite.streams.examples.word_count_processor_demo import word_count_topology
from kafka_lite.streams.examples.wordcount import dsl_word_count
from kafka_lite.streams.kstream import KStreamBuilder
from kafka_lite.streams.processor.thread_metadata import TaskMetadata, ThreadMetadata

pytestmark = pytest.mark.unit


def _clusters(source: str) -> dict[str, str]:
    """Each cluster's label and the DOT text between its opening and the next cluster's."""
    parts = re.split(r"subgraph (cluster_\w+) \{", source)
    return {re.search(r'label="([^"]*)"', body).group(1): body for body in parts[2::2]}


def _edges(source: str) -> set[tuple[str, str]]:
    return {
        (a.strip('"'), b.strip('"'))
        for a, b in re.findall(r'^\s*("[^"]+"|[\w-]+) -> ("[^"]+"|[\w-]+)', source, re.M)
    }


def test_the_dsl_word_count_is_two_sub_topologies_cut_at_the_repartition_topic():
    builder = dsl_word_count()
    builder.set_application_id("wc")
    g = topology_diagram(builder)
    clusters = _clusters(g.source)
    assert list(clusters) == ["sub-topology 0", "sub-topology 1"]
    assert "KSTREAM-FLATMAPVALUES-0000000001" in clusters["sub-topology 0"]
    assert "KSTREAM-AGGREGATE-0000000003" in clusters["sub-topology 1"]
    assert "Counts" in clusters["sub-topology 1"] and "Counts" not in clusters["sub-topology 0"]
    edges = _edges(g.source)
    # One sub-topology writes the internal topic, the other reads it: nothing else connects them.
    assert ("KSTREAM-SINK-0000000004", "topic wc-Counts-repartition") in edges
    assert ("topic wc-Counts-repartition", "KSTREAM-SOURCE-0000000006") in edges
    assert "(internal topic)" in g.source
    assert ("store Counts", "topic wc-Counts-changelog") in edges
    assert ("KSTREAM-AGGREGATE-0000000003", "store Counts") in edges
    assert ("topic streams-plaintext-input", "KSTREAM-SOURCE-0000000000") in edges


def test_every_node_and_edge_of_the_builder_is_drawn():
    builder = word_count_topology()
    g = topology_diagram(builder)
    assert list(_clusters(g.source)) == ["sub-topology 0"]
    assert _edges(g.source) == {
        ("topic streams-file-input", "Source"),
        ("Source", "Process"),
        ("Process", "Sink"),
        ("Sink", "topic streams-wordcount-processor-output"),
        ("Process", "store Counts"),
        # Without an application id the changelog is named by its pattern.
        ("store Counts", "topic <application.id>-Counts-changelog"),
    }
    for shape, node in (
        ("invhouse", "Source"),
        ("box", "Process"),
        ("house", "Sink"),
        ("cylinder", "Counts"),
    ):
        assert re.search(rf"\b{node}\b[^\n]*shape={shape}", g.source), (node, shape)


def test_a_tables_store_restores_from_its_source_topic_and_has_no_changelog():
    builder = KStreamBuilder()
    builder.table("users", "users-store")
    g = topology_diagram(builder)
    assert ("topic users", "store users-store") in _edges(g.source)
    assert "changelog" not in g.source


def test_the_thread_model_groups_threads_by_instance_and_marks_standbys():
    g = thread_model(example_threads())
    clusters = _clusters(g.source)
    assert [label for label in clusters if label.startswith("instance")] == [
        "instance wordcount-1",
        "instance wordcount-2",
    ]
    assert "task 0_0\nstreams-plaintext-input-0" in g.source
    assert "standby 1_1\nwordcount-Counts-repartition-1" in g.source
    standby_nodes = re.findall(r'"[^"]+ standby (\d_\d)" \[label=[^]]*style=dashed', g.source)
    assert sorted(standby_nodes) == ["1_0", "1_1"]
    assert g.source.count("(RUNNING)") == 3


def test_threads_without_an_instance_prefix_and_idle_threads_are_drawn():
    tp = TopicPartition("t", 3)
    threads = [
        ThreadMetadata("worker-a", "RUNNING", frozenset({TaskMetadata("2_3", frozenset({tp}))}), frozenset()),
        ThreadMetadata("worker-b", "PARTITIONS_REVOKED", frozenset(), frozenset()),
    ]
    g = thread_model(threads)
    assert not any(label.startswith("instance") for label in _clusters(g.source))
    assert "task 2_3\nt-3" in g.source
    assert "worker-b\n(PARTITIONS_REVOKED)" in g.source and "no tasks" in g.source
