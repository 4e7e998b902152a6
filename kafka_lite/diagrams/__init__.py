"""Diagrams of kafka_lite's structures, drawn from the code's own data with graphviz.

No Kafka twin: the pictures of the chapter guides and notebooks. Each function returns a
``graphviz.Digraph`` built from live data (a header field table, a real segment written for the
picture, a state machine's transition table, a live timer's wheels), so the docs' pictures change
when the code does.
``DIAGRAMS`` lists what the docs build renders to ``site/diagrams/<name>.svg``.

This package sits on top of the layers, beside ``cli/`` and ``grading/``: it may import any of
them, and nothing in the broker or the clients imports it, so they run without graphviz.
"""

from __future__ import annotations

from collections.abc import Callable

import graphviz

from kafka_lite.diagrams.cluster import cluster_diagram, concepts, describe_cluster
from kafka_lite.diagrams.connect import (
    MirrorMakerShape,
    connect_cluster,
    connect_cluster_diagram,
    connect_workers_from_status,
    mirror_maker,
    mirror_maker_diagram,
)
from kafka_lite.diagrams.kraft_fencing import kraft_fencing
from kafka_lite.diagrams.log import log_diagram, segment_diagram, segment_with_index
from kafka_lite.diagrams.network import socket_server_threads
from kafka_lite.diagrams.producer import accumulator_diagram, record_accumulator
from kafka_lite.diagrams.raft_election import raft_election
from kafka_lite.diagrams.record import record_batch_v2
from kafka_lite.diagrams.replication import replication, replication_diagram
from kafka_lite.diagrams.replication_round import replication_round, replication_round_diagram
from kafka_lite.diagrams.spark import micro_batch, micro_batch_diagram
from kafka_lite.diagrams.state_machines import (
    group_state_machine,
    partition_state_machine,
    raft_state_machine,
    replica_state_machine,
    sasl_state_machine,
    state_machine,
    transaction_state_machine,
)
from kafka_lite.diagrams.streams import (
    streams_thread_model,
    thread_model,
    topology_diagram,
    word_count_topology,
)
from kafka_lite.diagrams.timer import timer_diagram, timing_wheel
from kafka_lite.diagrams.transaction_timeline import (
    aborted_read_0_11,
    aborted_read_kip_890,
    hanging_0_11,
    hanging_kip_890,
    timeline_diagram,
)

__all__ = [
    "DIAGRAMS",
    "MirrorMakerShape",
    "aborted_read_0_11",
    "aborted_read_kip_890",
    "accumulator_diagram",
    "cluster_diagram",
    "concepts",
    "connect_cluster",
    "connect_cluster_diagram",
    "connect_workers_from_status",
    "describe_cluster",
    "group_state_machine",
    "hanging_0_11",
    "hanging_kip_890",
    "kraft_fencing",
    "log_diagram",
    "micro_batch",
    "micro_batch_diagram",
    "mirror_maker",
    "mirror_maker_diagram",
    "partition_state_machine",
    "raft_election",
    "raft_state_machine",
    "record_accumulator",
    "record_batch_v2",
    "replica_state_machine",
    "replication",
    "replication_diagram",
    "replication_round",
    "replication_round_diagram",
    "sasl_state_machine",
    "segment_diagram",
    "segment_with_index",
    "socket_server_threads",
    "state_machine",
    "streams_thread_model",
    "thread_model",
    "timeline_diagram",
    "timer_diagram",
    "timing_wheel",
    "topology_diagram",
    "transaction_state_machine",
    "word_count_topology",
]

DIAGRAMS: dict[str, Callable[[], graphviz.Digraph]] = {
    "aborted_read_0_11": aborted_read_0_11,
    "aborted_read_kip_890": aborted_read_kip_890,
    "cluster": concepts,
    "connect_cluster": connect_cluster,
    "group_state_machine": group_state_machine,
    "hanging_0_11": hanging_0_11,
    "hanging_kip_890": hanging_kip_890,
    "kraft_fencing": kraft_fencing,
    "micro_batch": micro_batch,
    "mirror_maker": mirror_maker,
    "partition_state_machine": partition_state_machine,
    "raft_election": raft_election,
    "raft_state_machine": raft_state_machine,
    "replica_state_machine": replica_state_machine,
    "record_accumulator": record_accumulator,
    "record_batch_v2": record_batch_v2,
    "replication": replication,
    "replication_round": replication_round,
    "sasl_state_machine": sasl_state_machine,
    "segment_with_index": segment_with_index,
    "socket_server_threads": lambda: socket_server_threads(3, 4),
    "streams_thread_model": streams_thread_model,
    "timing_wheel": timing_wheel,
    "transaction_state_machine": transaction_state_machine,
    "word_count_topology": word_count_topology,
}
