"""A KRaft broker's registration, heartbeats and fencing as a sequence diagram: two brokers, the
active controller and the metadata log as lanes, each request, answer and committed record a row.

No Kafka twin: a picture of one run of the quorum controller on ``QuorumControllerTestEnv`` (the
controller tests' environment: controllers over one in-memory log, on a ``MockTime``).
Book:    beyond the book: chapter 12 (KRaft)

Nothing here is drawn by hand: ``fencing_timeline`` runs the controller, on simulated time, so every
build draws the same run. Two brokers register and heartbeat until they are unfenced; a topic is
placed on both; then broker 2 falls silent, broker 1 heartbeats on, and once broker 2's session
(``broker.session.timeout.ms``) has passed the controller takes it out of every ISR and leadership
and fences it. The rows are the brokers' requests as the controller answers them, and the records
as the log commits them; ``timeline_diagram`` (chapter 10's) draws them.
"""

from __future__ import annotations

import random

import graphviz

from kafka_lite.common.metadata import (
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from kafka_lite.diagrams.transaction_timeline import timeline_diagram
from kafka_lite.metadata.placement.striped_replica_placer import StripedReplicaPlacer
from kafka_lite.testing.quorum_controller_test_env import QuorumControllerTestEnv

BROKERS = (1, 2)
SESSION_TIMEOUT_MS = 9000  # broker.session.timeout.ms, Kafka's default
HEARTBEAT_INTERVAL_MS = 2000  # broker.heartbeat.interval.ms, Kafka's default
CONTROLLER, LOG = "active controller", "metadata log"


def fencing_timeline() -> dict:
    """The run as a timeline (``timeline_diagram``'s shape, times in seconds)."""
    env = QuorumControllerTestEnv(
        1, session_timeout_ms=SESSION_TIMEOUT_MS, replica_placer=StripedReplicaPlacer(random.Random(1))
    )
    env.poll()
    controller = env.elect(0)
    start = env.time.milliseconds()
    rows: list[dict] = []
    shown = env.shared.end_offset  # the log's records below it are shown (or are the set-up's)
    epochs: dict[int, int] = {}

    def row(sender: str, receiver: str, text: str, kind: str) -> None:
        rows.append({"t": (env.time.milliseconds() - start) / 1000, "from": sender, "to": receiver,
                     "text": text, "kind": kind})  # fmt: skip

    def committed() -> None:
        """A row for each record committed since the last call."""
        nonlocal shown
        for offset, _, message in env.shared.entries(shown):
            if offset < env.shared.high_watermark:
                row(CONTROLLER, LOG, f"{offset}: {_describe(message)}", "request")
        shown = max(shown, env.shared.high_watermark)

    def register(broker_id: int) -> None:
        row(f"broker {broker_id}", CONTROLLER, "BrokerRegistration", "request")
        future = env.register_broker(broker_id, incarnation=broker_id)
        env.poll()
        epochs[broker_id] = future.result(timeout=0).epoch
        committed()
        row(CONTROLLER, f"broker {broker_id}", f"registered, broker epoch {epochs[broker_id]}", "answer")

    def heartbeat(broker_id: int) -> None:
        offset = controller.last_committed_offset()
        row(f"broker {broker_id}", CONTROLLER, f"BrokerHeartbeat: replayed to offset {offset}", "request")
        reply = env.heartbeat(broker_id, epochs[broker_id], offset)
        committed()
        row(CONTROLLER, f"broker {broker_id}", "fenced" if reply.is_fenced else "unfenced", "answer")

    committed()  # the controller's first records (the metadata.version)
    for broker_id in BROKERS:
        register(broker_id)
    for broker_id in BROKERS:
        heartbeat(broker_id)
    controller.create_topics({
        "create_topic_requests": [{"topic": "orders", "num_partitions": 2, "replication_factor": 2,
                                   "replica_assignment": [], "config_entries": []}],
        "timeout": 30_000, "validate_only": False,
    })  # fmt: skip
    env.poll()
    committed()
    # Broker 2 falls silent; broker 1 heartbeats every interval until broker 2 is fenced.
    silent_ms = 0
    while controller.cluster_control.unfenced(2):
        env.advance(1000)
        silent_ms += 1000
        committed()  # the controller's own doing: the fencing, once broker 2's session is over
        if silent_ms % HEARTBEAT_INTERVAL_MS == 0:
            heartbeat(1)
    return {
        "title": "Two brokers register and are unfenced; broker 2 falls silent and is fenced "
        f"({SESSION_TIMEOUT_MS // 1000} s session)",
        "parties": ["broker 1", "broker 2", CONTROLLER, LOG],
        "rows": rows,
    }


def _describe(message) -> str:
    """A committed record in a few words."""
    if isinstance(message, RegisterBrokerRecord):
        return f"RegisterBroker {message.broker_id} (epoch {message.broker_epoch}, fenced)"
    if isinstance(message, UnfenceBrokerRecord):
        return f"UnfenceBroker {message.id}"
    if isinstance(message, FenceBrokerRecord):
        return f"FenceBroker {message.id}"
    if isinstance(message, PartitionChangeRecord):
        return f"PartitionChange {message.partition_id}: ISR {message.isr}, leader {message.leader}"
    if isinstance(message, PartitionRecord):
        return f"Partition {message.partition_id}: replicas {message.replicas}, leader {message.leader}"
    if isinstance(message, TopicRecord):
        return f"Topic {message.name}"
    if isinstance(message, FeatureLevelRecord):
        return f"FeatureLevel {message.name} = {message.feature_level}"
    return type(message).__name__


def kraft_fencing() -> graphviz.Digraph:
    """The run, as a sequence diagram."""
    legend = "blue: a request, or a record the controller writes; green: an answer"
    return timeline_diagram(
        fencing_timeline(), name="kraft_fencing", time_header="s", time_format="{:.0f}", legend=legend
    )
